import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
import TripBoardKeys

/// The STREAM construction of the age payload (age.md, "Payload"): 64 KiB chunks, each sealed
/// with ChaCha20-Poly1305 under the payload key and a nonce made of an 11-byte big-endian chunk
/// counter and a last-chunk flag byte (0x01 on the final chunk, 0x00 before it).
///
/// Reordering, dropping or duplicating chunks changes their nonces, and cutting the stream
/// loses the one chunk flagged final: every such change fails to authenticate.
struct PayloadStream {
    /// Plaintext bytes per chunk (age.md: "The payload is split in chunks of 64 KiB").
    static let chunkLength = 64 << 10
    /// A full chunk as stored: its plaintext plus the 16-byte tag.
    static var sealedChunkLength: Int { chunkLength + ChaCha20Poly1305.tagLength }
    /// The payload nonce's length (age.md: "It begins with a 16-byte nonce").
    static let payloadNonceLength = 16

    private let key: SecureBytes
    /// The 12-byte ChaCha20-Poly1305 nonce of the current chunk, updated in place.
    private var nonce = [UInt8](repeating: 0, count: 12)
    /// The index of the next chunk to seal or open.
    private(set) var chunkIndex: UInt64 = 0

    /// The stream for `fileKey` and the file's `payloadNonce` (age.md: "payload key =
    /// HKDF-SHA-256(ikm = file key, salt = nonce, info = "payload")").
    init(fileKey: SecureBytes, payloadNonce: [UInt8]) throws(AgeError) {
        precondition(payloadNonce.count == Self.payloadNonceLength, "the payload nonce is 16 bytes")
        do throws(CryptoError) {
            key = try HKDF.deriveKey(inputKeyMaterial: fileKey, salt: payloadNonce, info: Array("payload".utf8))
        } catch {
            throw .keyDerivationFailed(error)
        }
    }

    /// Seals the first `plaintextCount` bytes of `buffer` in place as the next chunk (the tag
    /// follows them), then moves to the next chunk.
    mutating func sealNext(_ buffer: UnsafeMutableRawBufferPointer, plaintextCount: Int, isFinal: Bool) {
        setFlag(isFinal)
        nonce.withUnsafeBytes { ChaCha20Poly1305.sealInPlace(buffer, plaintextCount: plaintextCount, nonce: $0, key: key) }
        advance()
    }

    /// Opens `sealed` as the next chunk, final or not, into `plaintext`; the plaintext length, or
    /// nil if it does not authenticate that way (then `sealed` is unchanged, so the other flag
    /// can be tried). Does not move on: call ``advance()`` once a chunk is accepted.
    mutating func open(_ sealed: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer, isFinal: Bool) -> Int? {
        setFlag(isFinal)
        return nonce.withUnsafeBytes { ChaCha20Poly1305.open(sealed, into: plaintext, nonce: $0, key: key) }
    }

    /// Moves to the next chunk: counter + 1, written big-endian into nonce bytes 0…10.
    mutating func advance() {
        // 2^64 chunks of 64 KiB is a zettabyte: the 11-byte counter's top three bytes stay zero.
        precondition(chunkIndex < UInt64.max, "age payload chunk counter overflow")
        chunkIndex += 1
        var counter = chunkIndex
        for position in stride(from: 10, through: 3, by: -1) {
            nonce[position] = UInt8(truncatingIfNeeded: counter)
            counter >>= 8
        }
    }

    private mutating func setFlag(_ isFinal: Bool) { nonce[11] = isFinal ? 0x01 : 0x00 }
}
