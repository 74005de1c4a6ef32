@testable import TripBoardBackup
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem

/// The age test kit (C2SP CCTV, `Fixtures/age-testkit/`, provenance in `Fixtures/README.md`),
/// table-driven: every kept vector must end the way its `expect:` line says, and the plaintext
/// the reader released before any failure must hash to its `payload:` line ("All the plaintext
/// that would have been released to the application by the API must match this hash, even if
/// the decryption eventually fails").
///
/// Passphrase vectors go through ``AgeReader/init(passphrase:input:maximumWorkFactor:)``; the
/// generic header, MAC and STREAM vectors are addressed to an X25519 key, so they are opened with
/// the file key they publish, which runs the same parser, MAC check and STREAM.
struct AgeTestKitTests {
    /// One test kit file: its header lines and the age file after them.
    struct Vector {
        let expect: String
        let payloadHash: String?
        let passphrase: String?
        let fileKey: [UInt8]?
        let file: [UInt8]

        init(name: String) throws {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: AgeTestKitTests.directory + "/" + name)))
            let separator = try #require(bytes.indices.first { bytes[$0] == 0x0A && $0 + 1 < bytes.count && bytes[$0 + 1] == 0x0A })
            var fields: [String: String] = [:]
            for line in String(decoding: bytes[..<separator], as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2 && fields[parts[0]] == nil { fields[parts[0]] = parts[1] }
            }
            expect = try #require(fields["expect"])
            payloadHash = fields["payload"]
            passphrase = fields["passphrase"]
            fileKey = fields["file key"].flatMap { Sodium.bytes(hex: $0) }
            let body = Array(bytes[(separator + 2)...])
            file = fields["compressed"] == "zlib" ? try ExternalTools.inflate(body) : body
        }
    }

    static let directory = ExternalTools.fixtures + "/age-testkit"
    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()

    /// The test kit's `expect:` value for how the reader ended.
    static func outcome(of error: AgeError?) -> String {
        switch error {
        case nil: "success"
        case .headerAuthenticationFailed: "HMAC failure"
        case .wrongPassphrase, .notPassphraseEncrypted: "no match"
        case .truncated(.chunk), .truncated(.payloadStart), .missingFinalChunk, .emptyFinalChunk, .damagedChunk, .trailingData:
            "payload failure"
        case .notAnAgeFile, .armored, .unsupportedVersion, .malformedHeader, .headerTooLong, .workFactorTooHigh, .truncated:
            "header failure"
        case .emptyPassphrase, .keyDerivationFailed: "unexpected: \(error!)"
        }
    }

    /// Decrypts `vector`; the plaintext released and the error that stopped it, if any.
    static func decrypt(_ vector: Vector) throws -> (released: [UInt8], error: AgeError?) {
        var released: [UInt8] = []
        do {
            let input = MemorySource(vector.file)
            let reader: AgeReader
            if let passphrase = vector.passphrase {
                reader = try AgeReader(passphrase: try SecureBytes(copying: Array(passphrase.utf8)), input: input)
            } else {
                let fileKey = try SecureBytes(copying: try #require(vector.fileKey))
                reader = try AgeReader(input: input) { _ in fileKey }
            }
            while try reader.withNextChunk({ released += $0 }) != nil {}
            return (released, nil)
        } catch let error as AgeError {
            return (released, error)
        }
    }

    @Test func theKeptVectorsAreAllThere() {
        // 25 scrypt vectors and 53 generic ones (Fixtures/README.md says which and why).
        #expect(Self.names.count == 78)
        #expect(Self.names.filter { $0.hasPrefix("scrypt") }.count == 25)
    }

    @Test(arguments: names)
    func vectorEndsAsExpected(name: String) throws {
        let vector = try Vector(name: name)
        let (released, error) = try Self.decrypt(vector)
        #expect(Self.outcome(of: error) == vector.expect, "\(name): \(error.map { "\($0)" } ?? "success")")
        if let payloadHash = vector.payloadHash {
            #expect(Sodium.hexString(sha256(released)) == payloadHash, "\(name): released \(released.count) bytes")
        }
    }
}

extension AgeTestKitTests {
    /// The exact error for the vectors that show each distinct failure a user may meet.
    @Test(arguments: [
        ("empty", AgeError.truncated(.header)),
        ("version_unsupported", .unsupportedVersion),
        ("header_crlf", .malformedHeader("lines end with CR LF instead of LF")),
        ("hmac_bad", .headerAuthenticationFailed),
        ("scrypt_no_match", .wrongPassphrase),
        ("scrypt_uppercase", .notPassphraseEncrypted),
        ("scrypt_double", .malformedHeader("a passphrase (scrypt) stanza must be the only stanza")),
        ("scrypt_and_x25519", .malformedHeader("a passphrase (scrypt) stanza must be the only stanza")),
        ("scrypt_work_factor_23", .workFactorTooHigh(logN: 23, maximum: 22)),
        ("scrypt_long_file_key", .malformedHeader("the scrypt stanza's body is not 32 bytes")),
        ("stream_no_nonce", .truncated(.payloadNonce)),
        ("stream_no_chunks", .truncated(.payloadStart)),
        ("stream_no_final_full", .missingFinalChunk),
        ("stream_no_final", .missingFinalChunk),
        ("stream_last_chunk_empty", .emptyFinalChunk),
        ("stream_trailing_garbage_long", .trailingData),
        ("stream_two_final_chunks", .trailingData),
        ("stream_bad_tag_second_chunk_full", .damagedChunk(index: 1)),
        ("stream_short_second_chunk", .truncated(.chunk(index: 1))),
    ])
    func vectorFailsWithTheDistinctError(name: String, expected: AgeError) throws {
        let (_, error) = try Self.decrypt(try Vector(name: name))
        #expect(error == expected, "\(name)")
    }
}
