@testable import TripBoardBackup
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem

/// ``AgeWriter`` and ``AgeReader`` on their own: the format they write, round trips at every
/// chunk boundary, and one distinct ``AgeError`` for each way a file can be wrong.
/// (`AgeTestKitTests` holds the published vectors, `AgeInteropTests` the other implementations.)
struct AgeTests {
    static let passphrase = "correct horse battery staple"
    static let chunk = PayloadStream.chunkLength

    /// An age file of `plaintext`, written in pieces of `pieceSize` bytes (all at once when nil).
    static func encrypt(_ plaintext: [UInt8], passphrase: String = passphrase, workFactor: Int = 10,
                        pieceSize: Int? = nil) throws -> [UInt8] {
        let sink = MemorySink()
        let writer = try AgeWriter(passphrase: try SecureBytes(copying: Array(passphrase.utf8)), output: sink, workFactor: workFactor)
        var offset = 0
        repeat {
            let end = min(plaintext.count, offset + (pieceSize ?? max(plaintext.count, 1)))
            try plaintext[offset..<end].withUnsafeBytes { try writer.write(all: $0) }
            offset = end
        } while offset < plaintext.count
        try writer.finish()
        return sink.bytes
    }

    /// The plaintext released before the reader stopped, and the ``AgeError`` that stopped it.
    static func decrypt(_ file: [UInt8], passphrase: String = passphrase,
                        maximumWorkFactor: Int = 22) throws -> (plaintext: [UInt8], error: AgeError?) {
        var plaintext: [UInt8] = []
        do {
            let reader = try AgeReader(passphrase: try SecureBytes(copying: Array(passphrase.utf8)), input: MemorySource(file),
                                       maximumWorkFactor: maximumWorkFactor)
            var buffer = [UInt8](repeating: 0, count: 10_000)
            while true {
                let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                if count == 0 { return (plaintext, nil) }
                plaintext += buffer[0..<count]
            }
        } catch let error as AgeError {
            return (plaintext, error)
        }
    }

    /// Where the payload (the 16-byte nonce) starts: after the LF that ends the `---` line.
    static func payloadOffset(_ file: [UInt8]) throws -> Int {
        let mac = try #require((0..<(file.count - 4)).first { file[$0] == 0x0A && file[($0 + 1)...($0 + 3)].elementsEqual("---".utf8) })
        return try #require(file[(mac + 1)...].firstIndex(of: 0x0A)) + 1
    }

    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    // MARK: - Writing

    @Test func theHeaderIsOneScryptStanzaAndAMACInAgeV1Form() throws {
        let file = try Self.encrypt(Array("hello".utf8), workFactor: 12)
        let header = String(decoding: file[0..<(try Self.payloadOffset(file))], as: UTF8.self)
        let lines = header.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5, "version, stanza arguments, body, MAC, and the empty rest: \(header)")
        #expect(lines[0] == "age-encryption.org/v1")
        let arguments = lines[1].split(separator: " ")
        #expect(arguments.count == 4 && arguments[0] == "->" && arguments[1] == "scrypt" && arguments[3] == "12")
        #expect(Base64.decodeUnpadded(Array(arguments[2].utf8))?.count == 16, "a 16-byte salt")
        #expect(Base64.decodeUnpadded(Array(lines[2].utf8))?.count == 32, "the sealed 16-byte file key and its tag, on one short line")
        #expect(lines[3].hasPrefix("--- ") && lines[3].count == 47)
        // Header, 16-byte nonce, one final chunk of 5 bytes and its tag.
        #expect(file.count == header.utf8.count + 16 + 5 + 16)
    }

    @Test func everyFileHasAFreshSaltFileKeyAndNonce() throws {
        let first = try Self.encrypt([1, 2, 3])
        let second = try Self.encrypt([1, 2, 3])
        #expect(first.count == second.count)
        #expect(first[22..<60] != second[22..<60], "the salts differ")
        #expect(first.suffix(35) != second.suffix(35), "the nonce and the chunk differ")
    }

    /// Sizes around every boundary: empty (one empty final chunk), inside one chunk, exactly one
    /// chunk (final and full), one byte more (a full chunk then a one-byte final chunk), and more.
    @Test(arguments: [0, 1, 100, 65_535, 65_536, 65_537, 2 * 65_536, 3 * 65_536 + 7])
    func roundTripsAndSealsTheExpectedNumberOfChunks(size: Int) throws {
        let plaintext = Self.pattern(size)
        for pieceSize in [nil, 1000, Self.chunk, 7] as [Int?] where pieceSize != 7 || size < 70_000 {
            let file = try Self.encrypt(plaintext, pieceSize: pieceSize)
            let chunks = max(1, (size + Self.chunk - 1) / Self.chunk)
            #expect(file.count == (try Self.payloadOffset(file)) + 16 + size + 16 * chunks, "size \(size), pieces \(pieceSize ?? size)")
            let (decrypted, error) = try Self.decrypt(file)
            #expect(error == nil)
            #expect(decrypted == plaintext)
        }
    }

    @Test func chunksComeOutWholeAndVerified() throws {
        let plaintext = Self.pattern(2 * Self.chunk + 10)
        let reader = try AgeReader(passphrase: try SecureBytes(copying: Array(Self.passphrase.utf8)),
                                   input: MemorySource(try Self.encrypt(plaintext)))
        var sizes: [Int] = []
        var joined: [UInt8] = []
        while try reader.withNextChunk({ (piece: UnsafeRawBufferPointer) -> Void in
            sizes.append(piece.count)
            joined += piece
        }) != nil {}
        #expect(sizes == [Self.chunk, Self.chunk, 10])
        #expect(joined == plaintext)
        #expect(try reader.withNextChunk { _ in 1 } == nil, "the end stays the end")
    }

    @Test func theWriterHoldsAtMostOneChunkBackByDesign() throws {
        // Memory stays flat: a full chunk is written as soon as one more byte shows it is not the
        // last, so the writer never holds more than one chunk, whatever the stream's length.
        let sink = MemorySink()
        let writer = try AgeWriter(passphrase: try SecureBytes(copying: [1]), output: sink, workFactor: 10)
        let headerAndNonce = sink.bytes.count
        let piece = Self.pattern(Self.chunk)
        try piece.withUnsafeBytes { try writer.write(all: $0) }
        #expect(sink.bytes.count == headerAndNonce, "a full chunk is held: it may still be the final one")
        try [UInt8(9)].withUnsafeBytes { try writer.write(all: $0) }
        #expect(sink.bytes.count == headerAndNonce + Self.chunk + 16, "one more byte: the held chunk goes out, non-final")
        for _ in 0..<5 { try piece.withUnsafeBytes { try writer.write(all: $0) } }
        #expect(sink.bytes.count == headerAndNonce + 6 * (Self.chunk + 16), "each chunk leaves as the next one starts")
        try writer.finish()
        #expect(sink.bytes.count == headerAndNonce + 6 * (Self.chunk + 16) + 1 + 16)
    }

    @Test func theReaderReadsOneChunkAndOneByteAhead() throws {
        let file = try Self.encrypt(Self.pattern(5 * Self.chunk))
        let source = CountingSource(file)
        let reader = try AgeReader(passphrase: try SecureBytes(copying: Array(Self.passphrase.utf8)), input: source)
        var byte: UInt8 = 0
        _ = try withUnsafeMutableBytes(of: &byte) { try reader.read(into: $0) }
        #expect(source.consumed <= (try Self.payloadOffset(file)) + 16 + Self.chunk + 16 + 1,
                "after the first byte: the header, the nonce, one sealed chunk and one byte of lookahead")
    }

    @Test func anEmptyPassphraseIsRefused() throws {
        #expect(throws: AgeError.emptyPassphrase) { _ = try Self.encrypt([1], passphrase: "") }
    }

    // MARK: - Reading what is wrong

    @Test func aWrongPassphraseIsToldApartFromDamage() throws {
        let file = try Self.encrypt([1, 2, 3])
        #expect(try Self.decrypt(file, passphrase: "Correct horse battery staple").error == .wrongPassphrase)
        #expect(try Self.decrypt(file, passphrase: "").error == .wrongPassphrase)
    }

    @Test func anAlteredHeaderMACIsRefused() throws {
        var file = try Self.encrypt([1, 2, 3])
        let macStart = try Self.payloadOffset(file) - 44
        // The first character carries six full bits: changing it keeps the base64 canonical.
        file[macStart] = file[macStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try Self.decrypt(file).error == .headerAuthenticationFailed)
    }

    @Test func aWorkFactorAboveTheLimitIsRefusedBeforeScryptRuns() throws {
        let file = try Self.encrypt([1], workFactor: 12)
        #expect(try Self.decrypt(file, maximumWorkFactor: 11).error == .workFactorTooHigh(logN: 12, maximum: 11))
        #expect(try Self.decrypt(file, maximumWorkFactor: 12).error == nil)
    }

    @Test(arguments: [
        ("", AgeError.truncated(.header)),
        ("age-encrypt", .truncated(.header)),
        ("PK\u{3}\u{4} a zip file", .notAnAgeFile),
        ("-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n-----END AGE ENCRYPTED FILE-----\n", .armored),
        ("age-encryption.org/v2\n", .unsupportedVersion),
        ("age-encryption.org/v1\n--- AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", .malformedHeader("no recipient stanza before the MAC line")),
        ("age-encryption.org/v1\n-> X25519 AAAA\nAAAA\n--- AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", .notPassphraseEncrypted),
    ])
    func inputsThatAreNotPassphraseAgeFilesAreNamed(text: String, expected: AgeError) throws {
        #expect(try Self.decrypt(Array(text.utf8)).error == expected)
    }

    @Test func aHeaderLongerThanTheLimitIsRefused() throws {
        let longStanza = "age-encryption.org/v1\n-> x\n" + String(repeating: String(repeating: "A", count: 64) + "\n", count: 1100)
        #expect(try Self.decrypt(Array(longStanza.utf8)).error == .headerTooLong(maximum: AgeReader.maximumHeaderLength))
    }
}

/// A source over bytes that counts how many have been read from it.
final class CountingSource: ByteSource {
    private let source: MemorySource
    private(set) var consumed = 0

    init(_ bytes: [UInt8]) { source = MemorySource(bytes) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = source.read(into: buffer)
        consumed += count
        return count
    }
}
