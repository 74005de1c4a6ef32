import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
public import TripBoardKeys
public import TripBoardSystem

/// Decrypts an age v1 file encrypted with a passphrase, as a stream that hands out only
/// authenticated plaintext.
///
///     let reader = try AgeReader(passphrase: passphrase, input: file)   // header checked here
///     while let count = try reader.read(into: buffer), count > 0 { … }  // 0: verified end
///
/// The initialiser parses the header strictly, unwraps the file key (scrypt), verifies the header
/// MAC and reads the payload nonce, so a wrong passphrase or an altered header fails before any
/// payload is read. Then each chunk is verified before a byte of it is handed out; reading
/// returns 0 only once the final chunk has verified and nothing follows it.
///
/// Like age's reference implementation (and as the age test kit checks), a chunk that verifies
/// is handed out even when it shows the stream is wrong — a full chunk not marked final at the end
/// of the input, a final chunk with data after it — and the error comes with the next read. So
/// the bytes read are authentic but provisional until a read returns 0: a restore writes them to
/// a staging place and keeps nothing when an error ends the stream.
///
/// Memory stays flat: one sealed chunk plus one byte of lookahead (to know whether a full chunk
/// is the last one: age.md's final-chunk flag must match), and one chunk of plaintext.
public final class AgeReader: ByteSource {
    /// log2 of the highest scrypt work factor read by default: 22, as `age` itself (2^22 needs
    /// 4 GiB and several seconds; age writes 18).
    public static let defaultMaximumWorkFactor = 22

    private let input: any ByteSource
    private var stream: PayloadStream
    /// Input read ahead, at `0..<inputEnd`: the next sealed chunk and one byte of lookahead.
    private let sealedBuffer: UnsafeMutableRawBufferPointer
    private var inputEnd = 0
    /// How much of `sealedBuffer`'s start the last opened chunk occupied, dropped before the next.
    private var openedLength = 0
    /// The last opened chunk's plaintext; `plaintext` is the part not yet handed out.
    private let plaintextBuffer: UnsafeMutableRawBufferPointer
    private var plaintext: Range<Int> = 0..<0
    private var sawFinalChunk = false
    /// The failure found with the last chunk, thrown once that chunk's authentic plaintext is out.
    private var pendingError: AgeError?

    /// The header must fit in the first buffer load (a passphrase header is about 130 bytes).
    static var maximumHeaderLength: Int { PayloadStream.sealedChunkLength + 1 }

    /// Opens an age file encrypted with `passphrase`. Refuses a work factor above 2^`maximumWorkFactor`
    /// (``AgeError/workFactorTooHigh(logN:maximum:)``) before running scrypt.
    ///
    /// Throws ``AgeError`` for anything wrong with the file or passphrase, or what `input` throws
    /// (``FileSystemError`` for a descriptor).
    public convenience init(passphrase: SecureBytes, input: any ByteSource,
                            maximumWorkFactor: Int = defaultMaximumWorkFactor) throws {
        try self.init(input: input) { header throws(AgeError) in
            try ScryptRecipient.unwrap(header, passphrase: passphrase, maximumWorkFactor: maximumWorkFactor)
        }
    }

    /// Opens an age file whose file key `unwrap` finds in the parsed header. Internal: the
    /// passphrase initialiser, and tests that read the age test kit's vectors with the file key
    /// those vectors publish (their recipients are X25519 keys, which TripBoard does not use).
    init(input: any ByteSource, unwrap: (AgeHeader) throws(AgeError) -> SecureBytes) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maximumHeaderLength, alignment: 64)
        let plaintextBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: PayloadStream.chunkLength, alignment: 64)
        do {
            var end = try input.readFully(into: buffer)
            let header = try Self.parseHeader(Array(buffer[0..<end]), isEndOfInput: end < buffer.count)
            let fileKey = try unwrap(header)
            let expected = try AgeHeaderMAC.code(for: buffer[0..<header.macInputLength], fileKey: fileKey)
            guard HMACSHA256.codesMatch(header.mac, expected) else { throw AgeError.headerAuthenticationFailed }
            end = try Self.consume(header.length, of: buffer, filledTo: end, refillingFrom: input)
            guard end >= PayloadStream.payloadNonceLength else { throw AgeError.truncated(.payloadNonce) }
            stream = try PayloadStream(fileKey: fileKey, payloadNonce: Array(buffer[0..<PayloadStream.payloadNonceLength]))
            inputEnd = try Self.consume(PayloadStream.payloadNonceLength, of: buffer, filledTo: end, refillingFrom: input)
        } catch {
            buffer.deallocate()
            plaintextBuffer.deallocate()
            throw error
        }
        self.input = input
        self.sealedBuffer = buffer
        self.plaintextBuffer = plaintextBuffer
    }

    deinit {
        // Plaintext of the user's files: wiped like key material, cheaply, before release.
        plaintextBuffer.initializeMemory(as: UInt8.self, repeating: 0)
        plaintextBuffer.deallocate()
        sealedBuffer.deallocate()
    }

    /// Copies up to `destination.count` bytes of verified plaintext; returns how many, 0 only at
    /// the verified end of the file. Throws ``AgeError`` for a truncated, damaged or extended
    /// payload (nothing of the offending chunk is handed out), or what the input throws.
    public func read(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        guard destination.count > 0 else { return 0 }
        while plaintext.isEmpty {
            guard try openNextChunk() else { return 0 }
        }
        let count = min(destination.count, plaintext.count)
        destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: plaintextBuffer[plaintext.lowerBound..<(plaintext.lowerBound + count)]))
        plaintext = (plaintext.lowerBound + count)..<plaintext.upperBound
        return count
    }

    /// Calls `body` with the next piece of verified plaintext (the rest of the current chunk, at
    /// most 64 KiB) without copying it; nil at the verified end of the file. The bytes are valid
    /// only during the call.
    public func withNextChunk<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        while plaintext.isEmpty {
            guard try openNextChunk() else { return nil }
        }
        let piece = UnsafeRawBufferPointer(rebasing: plaintextBuffer[plaintext])
        plaintext = plaintext.upperBound..<plaintext.upperBound
        return try body(piece)
    }

    // MARK: - Header

    private static func parseHeader(_ bytes: [UInt8], isEndOfInput: Bool) throws(AgeError) -> AgeHeader {
        do throws(AgeError) {
            return try AgeHeader.parse(bytes)
        } catch .truncated(.header) where !isEndOfInput {
            throw .headerTooLong(maximum: maximumHeaderLength)
        }
    }

    /// Drops `count` consumed bytes from the start of `buffer` (filled to `end`) and reads
    /// `input` until the buffer is full or the input ends; returns the new fill level.
    private static func consume(_ count: Int, of buffer: UnsafeMutableRawBufferPointer, filledTo end: Int,
                                refillingFrom input: any ByteSource) throws -> Int {
        let kept = end - count
        if kept > 0, count > 0 {
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + count, byteCount: kept)
        }
        return try kept + input.readFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer[kept...]))
    }

    // MARK: - Chunks

    /// Verifies and decrypts the next chunk into `plaintextBuffer`; false at the verified end.
    /// Once it has thrown an ``AgeError``, it throws the same error on every later call.
    private func openNextChunk() throws -> Bool {
        if let pendingError { throw pendingError }
        if sawFinalChunk { return false }
        do {
            return try openChunk()
        } catch let error as AgeError {
            pendingError = error
            throw error
        }
    }

    /// A full chunk with at least one byte after it must open as a non-final chunk; the last
    /// piece of the input must open as the final chunk. Each way of failing is told apart by
    /// trying the other flag on the same sealed bytes (a failed open leaves them as they were).
    private func openChunk() throws -> Bool {
        inputEnd = try Self.consume(openedLength, of: sealedBuffer, filledTo: inputEnd, refillingFrom: input)
        openedLength = 0
        let index = stream.chunkIndex
        let sealedLength = PayloadStream.sealedChunkLength
        if inputEnd > sealedLength {
            let sealed = UnsafeRawBufferPointer(rebasing: sealedBuffer[0..<sealedLength])
            if let count = stream.open(sealed, into: plaintextBuffer, isFinal: false) { return accept(count, sealedLength: sealedLength) }
            if let count = stream.open(sealed, into: plaintextBuffer, isFinal: true) {
                pendingError = .trailingData
                return accept(count, sealedLength: sealedLength)
            }
            throw AgeError.damagedChunk(index: index)
        }
        // The input has ended: what is left must be the final chunk.
        guard inputEnd > 0 else { throw index == 0 ? AgeError.truncated(.payloadStart) : AgeError.missingFinalChunk }
        let sealed = UnsafeRawBufferPointer(rebasing: sealedBuffer[0..<inputEnd])
        if let count = stream.open(sealed, into: plaintextBuffer, isFinal: true) {
            // age.md: the final chunk "MUST NOT be empty unless the whole payload is empty".
            if count == 0 && index > 0 { throw AgeError.emptyFinalChunk }
            sawFinalChunk = true
            return accept(count, sealedLength: inputEnd)
        }
        if let count = stream.open(sealed, into: plaintextBuffer, isFinal: false) {
            // A short chunk can only be the final one, so one not marked final is refused as it
            // is; a full one is a sound chunk of a stream cut at a chunk boundary.
            guard inputEnd == sealedLength else { throw AgeError.missingFinalChunk }
            pendingError = .missingFinalChunk
            return accept(count, sealedLength: inputEnd)
        }
        throw inputEnd == sealedLength ? AgeError.damagedChunk(index: index) : AgeError.truncated(.chunk(index: index))
    }

    private func accept(_ plaintextCount: Int, sealedLength: Int) -> Bool {
        plaintext = 0..<plaintextCount
        openedLength = sealedLength
        stream.advance()
        return true
    }
}

// Mutable state (the buffer, the counter): one reader belongs to one task.
@available(*, unavailable)
extension AgeReader: Sendable {}
