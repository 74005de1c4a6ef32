@testable import TripBoardBackup
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem

/// What ``AgeReader`` says about a file that was cut, extended or altered after it was written,
/// and what it released first: only whole chunks that verified, never a byte of the bad one.
struct AgeDamageTests {
    static let chunk = PayloadStream.chunkLength
    static let sealed = PayloadStream.sealedChunkLength

    /// A 3-chunk file (two full chunks and a 100-byte final one) and where its payload starts.
    static func threeChunkFile() throws -> (file: [UInt8], plaintext: [UInt8], chunks: Int) {
        let plaintext = AgeTests.pattern(2 * chunk + 100)
        let file = try AgeTests.encrypt(plaintext)
        return (file, plaintext, try AgeTests.payloadOffset(file) + 16)
    }

    /// Cut points and what each must say: inside the header, inside the nonce, right after it,
    /// inside chunk 0, exactly at the end of chunk 0 and of chunk 1 (a boundary: no final chunk),
    /// inside chunk 1, one byte into the final chunk, one byte short of the end.
    @Test func aTruncatedFileSaysWhereItEnds() throws {
        let (file, plaintext, chunks) = try Self.threeChunkFile()
        let cases: [(cut: Int, error: AgeError, released: Int)] = [
            (30, .truncated(.header), 0),
            (chunks - 10, .truncated(.payloadNonce), 0),
            (chunks, .truncated(.payloadStart), 0),
            (chunks + 1, .truncated(.chunk(index: 0)), 0),
            (chunks + 1000, .truncated(.chunk(index: 0)), 0),
            (chunks + Self.sealed, .missingFinalChunk, Self.chunk),
            (chunks + Self.sealed + 500, .truncated(.chunk(index: 1)), Self.chunk),
            (chunks + 2 * Self.sealed, .missingFinalChunk, 2 * Self.chunk),
            (chunks + 2 * Self.sealed + 1, .truncated(.chunk(index: 2)), 2 * Self.chunk),
            (file.count - 1, .truncated(.chunk(index: 2)), 2 * Self.chunk),
        ]
        for (cut, expected, released) in cases {
            let (decrypted, error) = try AgeTests.decrypt(Array(file.prefix(cut)))
            #expect(error == expected, "cut at \(cut)")
            #expect(decrypted == Array(plaintext.prefix(released)), "cut at \(cut): only whole verified chunks are released")
        }
    }

    @Test func dataAfterAFullFinalChunkIsTrailingData() throws {
        let plaintext = AgeTests.pattern(Self.chunk)
        let file = try AgeTests.encrypt(plaintext)
        for extra in [[0], [UInt8](repeating: 0, count: 16), Array(file.suffix(Self.sealed))] as [[UInt8]] {
            let (decrypted, error) = try AgeTests.decrypt(file + extra)
            #expect(error == .trailingData, "\(extra.count) bytes appended")
            #expect(decrypted == plaintext, "the final chunk verified, so it is released before the error")
        }
    }

    @Test func dataAfterAShortFinalChunkCannotBeToldFromDamage() throws {
        // Where a short final chunk ends is known only from the end of the file, so bytes added
        // after one make that chunk fail: reported as an unfinished chunk (the message says "or
        // that chunk is damaged"). age's reference reader fails the same way.
        let file = try AgeTests.encrypt(AgeTests.pattern(100))
        #expect(try AgeTests.decrypt(file + [0]).error == .truncated(.chunk(index: 0)))
    }

    @Test func anAlteredChunkIsRefusedAndNothingOfItIsReleased() throws {
        let (file, plaintext, chunks) = try Self.threeChunkFile()
        let cases: [(offset: Int, error: AgeError, released: Int)] = [
            (chunks, .damagedChunk(index: 0), 0),
            (chunks + Self.sealed - 1, .damagedChunk(index: 0), 0),
            (chunks + Self.sealed + 5, .damagedChunk(index: 1), Self.chunk),
            // The last chunk is short: damage there reads like a cut (see above).
            (file.count - 1, .truncated(.chunk(index: 2)), 2 * Self.chunk),
        ]
        for (offset, expected, released) in cases {
            var altered = file
            altered[offset] ^= 0x01
            let (decrypted, error) = try AgeTests.decrypt(altered)
            #expect(error == expected, "byte \(offset) flipped")
            #expect(decrypted == Array(plaintext.prefix(released)), "byte \(offset) flipped")
        }
    }

    @Test func aDamagedFullFinalChunkIsDamage() throws {
        var file = try AgeTests.encrypt(AgeTests.pattern(2 * Self.chunk))
        file[file.count - 20] ^= 0x40
        #expect(try AgeTests.decrypt(file).error == .damagedChunk(index: 1))
    }

    @Test func reorderedOrRepeatedChunksAreRefused() throws {
        let (file, _, chunks) = try Self.threeChunkFile()
        let first = Array(file[chunks..<(chunks + Self.sealed)])
        let second = Array(file[(chunks + Self.sealed)..<(chunks + 2 * Self.sealed)])
        let rest = Array(file[(chunks + 2 * Self.sealed)...])
        let header = Array(file[..<chunks])
        #expect(try AgeTests.decrypt(header + second + first + rest).error == .damagedChunk(index: 0), "swapped")
        #expect(try AgeTests.decrypt(header + first + first + rest).error == .damagedChunk(index: 1), "repeated")
        #expect(try AgeTests.decrypt(header + first + rest).error == .truncated(.chunk(index: 1)), "one left out")
    }

    @Test func theSameErrorComesBackOnEveryLaterRead() throws {
        let (file, _, chunks) = try Self.threeChunkFile()
        let reader = try AgeReader(passphrase: try SecureBytes(copying: Array(AgeTests.passphrase.utf8)),
                                   input: MemorySource(Array(file.prefix(chunks + 100))))
        for _ in 0..<3 {
            #expect(throws: AgeError.truncated(.chunk(index: 0))) { _ = try reader.withNextChunk { _ in } }
        }
    }

    @Test func everyErrorDescriptionIsOneSafeLine() throws {
        let errors: [AgeError] = [
            .notAnAgeFile, .armored, .unsupportedVersion, .malformedHeader("a reason"), .headerTooLong(maximum: 9),
            .notPassphraseEncrypted, .workFactorTooHigh(logN: 30, maximum: 22), .wrongPassphrase, .headerAuthenticationFailed,
            .truncated(.header), .truncated(.payloadNonce), .truncated(.payloadStart), .truncated(.chunk(index: 4)),
            .missingFinalChunk, .emptyFinalChunk, .damagedChunk(index: 2), .trailingData, .emptyPassphrase,
            .keyDerivationFailed(.passwordHashingFailed),
        ]
        for error in errors {
            #expect(!error.description.isEmpty && !error.description.contains("\n"), "\(error)")
        }
        #expect(Set(errors.map(\.description)).count == errors.count, "each says something different")
    }
}
