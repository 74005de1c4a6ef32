import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
public import TripBoardKeys
public import TripBoardSystem

/// Encrypts a stream into an age v1 file for a passphrase (age.md), as `age -p` does: an scrypt
/// stanza, the header MAC, a random payload nonce, then the STREAM of 64 KiB chunks.
///
///     let writer = try AgeWriter(passphrase: passphrase, output: file)
///     try writer.write(all: bytes)      // any number of times, any sizes
///     try writer.finish()               // seals the final chunk: without it the file is invalid
///
/// Memory stays flat whatever the size: one 64 KiB chunk (plus its tag) is buffered and sealed in
/// place. A full chunk is held back until more bytes arrive, because only then is it known not
/// to be the final one (age.md: the final chunk "MUST NOT be empty unless the whole payload is
/// empty"). A writer dropped without ``finish()`` leaves a file whose last chunk is not marked
/// final, which every age reader refuses: an interrupted backup never passes for a complete one.
public final class AgeWriter: ByteSink {
    /// log2 of the scrypt work factor that `age` 1.1 writes (N = 2^18: about 256 MiB and a
    /// second of work), the default here.
    public static let defaultWorkFactor = 18
    /// The work factors a writer accepts: up to 2^22, the most `age` and ``AgeReader`` read by default.
    public static let workFactors: ClosedRange<Int> = 1...22

    private let output: any ByteSink
    private var stream: PayloadStream
    /// One chunk of plaintext, sealed in place: room for 64 KiB and the tag.
    private let buffer: UnsafeMutableRawBufferPointer
    private var bufferedCount = 0
    private var isFinished = false

    /// Starts a file for `passphrase` on `output` and writes its header and payload nonce. Runs
    /// scrypt with N = 2^`workFactor` (a precondition: within ``workFactors``), synchronously.
    ///
    /// Throws ``AgeError/emptyPassphrase``, ``AgeError/keyDerivationFailed(_:)``, or what
    /// `output` throws (``FileSystemError`` for a descriptor).
    public init(passphrase: SecureBytes, output: any ByteSink, workFactor: Int = defaultWorkFactor) throws {
        precondition(Self.workFactors.contains(workFactor), "age work factor out of range")
        guard passphrase.count > 0 else { throw AgeError.emptyPassphrase }
        self.output = output
        // age.md: "The file key MUST be generated as 16 bytes of CSPRNG output."
        let fileKey = try Self.secureRandom(count: ScryptRecipient.fileKeyLength)
        let stanza = try ScryptRecipient.stanza(wrapping: fileKey, passphrase: passphrase, logN: workFactor)
        let header = AgeHeader.encodeUpToMAC(stanzas: [stanza])
        let mac = try AgeHeaderMAC.code(for: header, fileKey: fileKey)
        // age.md: "A new nonce MUST be generated for each file."
        let payloadNonce = Sodium.randomBytes(count: PayloadStream.payloadNonceLength)
        stream = try PayloadStream(fileKey: fileKey, payloadNonce: payloadNonce)
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: PayloadStream.sealedChunkLength, alignment: 64)
        try output.write(header + AgeHeader.encodeMACLine(mac) + payloadNonce)
    }

    deinit {
        // Plaintext of the user's files: wiped like key material, cheaply, before release.
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.deallocate()
    }

    /// Adds `bytes` to the payload. Seals and writes each chunk once it is full and more follows.
    /// Traps after ``finish()``.
    public func write(all bytes: UnsafeRawBufferPointer) throws {
        precondition(!isFinished, "AgeWriter.write after finish")
        var offset = 0
        while offset < bytes.count {
            if bufferedCount == PayloadStream.chunkLength { try sealChunk(isFinal: false) }
            let count = min(bytes.count - offset, PayloadStream.chunkLength - bufferedCount)
            UnsafeMutableRawBufferPointer(rebasing: buffer[bufferedCount..<(bufferedCount + count)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
            bufferedCount += count
            offset += count
        }
    }

    /// Seals what is buffered as the final chunk (empty only when nothing was written) and writes
    /// it. Call once; the file is complete when it returns (flushing and `fsync` are the caller's).
    public func finish() throws {
        precondition(!isFinished, "AgeWriter.finish called twice")
        isFinished = true
        try sealChunk(isFinal: true)
    }

    private func sealChunk(isFinal: Bool) throws {
        stream.sealNext(buffer, plaintextCount: bufferedCount, isFinal: isFinal)
        let sealedCount = bufferedCount + ChaCha20Poly1305.tagLength
        bufferedCount = 0
        try output.write(all: UnsafeRawBufferPointer(rebasing: buffer[0..<sealedCount]))
    }

    private static func secureRandom(count: Int) throws(AgeError) -> SecureBytes {
        do throws(CryptoError) { return try SecureBytes(randomCount: count) } catch { throw .keyDerivationFailed(error) }
    }
}

// Mutable state (the chunk buffer, the counter): one writer belongs to one task.
@available(*, unavailable)
extension AgeWriter: Sendable {}

/// The header MAC (age.md, "Header MAC"): HMAC-SHA-256 under HKDF-SHA-256(ikm = file key,
/// salt = empty, info = "header") over the header up to and including `---`.
enum AgeHeaderMAC {
    static func code(for macInput: some Collection<UInt8>, fileKey: SecureBytes) throws(AgeError) -> [UInt8] {
        let key: SecureBytes
        do throws(CryptoError) {
            key = try HKDF.deriveKey(inputKeyMaterial: fileKey, salt: [], info: Array("header".utf8))
        } catch {
            throw .keyDerivationFailed(error)
        }
        let hmac = HMACSHA256(key: key)
        hmac.update(macInput)
        return hmac.finalize()
    }
}
