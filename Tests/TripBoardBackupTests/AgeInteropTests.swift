@testable import TripBoardBackup
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardTestSupport

/// TripBoard's age files against two independent implementations, both ways, at the sizes where
/// chunking changes: Debian's `age` 1.1 (Go, the reference; driven through a pseudo-terminal,
/// since it reads passphrases only from one) and PyPI's `pyrage` (Rust's rage).
@Suite(.enabled(if: ExternalTools.hasAge, "needs /usr/bin/age (Debian package age)"))
struct AgeInteropTests {
    static let passphrase = "a passphrase for interop, with spaces and ünïcode"
    /// Empty, one byte, exactly one chunk, one chunk and a byte, and a few MiB.
    static let sizes = [0, 1, 65_536, 65_537, 3 << 20 | 5]

    private static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    private static func read(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Our age file of `plaintext` at `path`.
    private static func encryptWithTripBoard(_ plaintext: [UInt8], to path: String, workFactor: Int = 10) throws {
        try write(try AgeTests.encrypt(plaintext, passphrase: passphrase, workFactor: workFactor, pieceSize: 10_000), to: path)
    }

    /// `age -d IN > OUT` on a terminal. Through the shell's redirection rather than `-o`: age
    /// creates its `-o` file on the first write, so an empty payload would leave no file at all.
    private static func decryptWithAge(_ input: String, to output: String, passphrase: String = passphrase) throws -> ExternalTools.Result {
        try ExternalTools.runOnTerminal(["/bin/sh", "-c", "\(ExternalTools.age) -d '\(input)' > '\(output)'"], passphrase: passphrase)
    }

    @Test(arguments: sizes)
    func ageDecryptsWhatTripBoardWrites(size: Int) throws {
        let directory = try TemporaryDirectory()
        let plaintext = AgeTests.pattern(size)
        try Self.encryptWithTripBoard(plaintext, to: directory.child("ours.age"))
        let result = try Self.decryptWithAge(directory.child("ours.age"), to: directory.child("out"))
        try #require(result.succeeded, "\(result)")
        #expect(try Self.read(directory.child("out")) == plaintext)
    }

    @Test(arguments: sizes)
    func tripBoardDecryptsWhatAgeWrites(size: Int) throws {
        let directory = try TemporaryDirectory()
        let plaintext = AgeTests.pattern(size)
        try Self.write(plaintext, to: directory.child("plain"))
        let result = try ExternalTools.runOnTerminal([ExternalTools.age, "-p", "-o", directory.child("theirs.age"), directory.child("plain")],
                                                     passphrase: Self.passphrase)
        try #require(result.succeeded, "\(result)")
        let file = try Self.read(directory.child("theirs.age"))
        #expect(String(decoding: file.prefix(40), as: UTF8.self).contains("-> scrypt "), "age -p writes a scrypt stanza")
        let (decrypted, error) = try AgeTests.decrypt(file, passphrase: Self.passphrase)
        #expect(error == nil)
        #expect(decrypted == plaintext)
    }

    @Test func ageReadsTheDefaultWorkFactorAndRefusesAWrongPassphrase() throws {
        let directory = try TemporaryDirectory()
        try Self.encryptWithTripBoard(Array("default work factor".utf8), to: directory.child("ours.age"), workFactor: AgeWriter.defaultWorkFactor)
        #expect(try Self.read(directory.child("ours.age")).count > 0)
        let good = try Self.decryptWithAge(directory.child("ours.age"), to: directory.child("out"))
        try #require(good.succeeded, "\(good)")
        #expect(try Self.read(directory.child("out")) == Array("default work factor".utf8))
        let bad = try Self.decryptWithAge(directory.child("ours.age"), to: directory.child("out2"), passphrase: "not it")
        #expect(!bad.succeeded, "\(bad)")
    }

    @Test func ageRefusesATruncatedTripBoardFile() throws {
        let directory = try TemporaryDirectory()
        let file = try AgeTests.encrypt(AgeTests.pattern(3 * 65_536), passphrase: Self.passphrase)
        // Cut at a chunk boundary: every remaining chunk is sound, only the final one is missing.
        try Self.write(Array(file.prefix(file.count - PayloadStream.sealedChunkLength)), to: directory.child("cut.age"))
        let result = try Self.decryptWithAge(directory.child("cut.age"), to: directory.child("out"))
        #expect(!result.succeeded, "\(result)")
    }

    // MARK: - pyrage

    @Test(.enabled(if: ExternalTools.pyragePython != nil, "needs a python3 with pyrage (pip install pyrage)"), arguments: sizes)
    func pyrageDecryptsWhatTripBoardWrites(size: Int) throws {
        let directory = try TemporaryDirectory()
        let plaintext = AgeTests.pattern(size)
        try Self.encryptWithTripBoard(plaintext, to: directory.child("ours.age"))
        let result = try #require(try ExternalTools.pyrage("decrypt", input: directory.child("ours.age"), output: directory.child("out"),
                                                           passphrase: Self.passphrase))
        try #require(result.succeeded, "\(result)")
        #expect(try Self.read(directory.child("out")) == plaintext)
    }

    @Test(.enabled(if: ExternalTools.pyragePython != nil, "needs a python3 with pyrage (pip install pyrage)"), arguments: sizes)
    func tripBoardDecryptsWhatPyrageWrites(size: Int) throws {
        let directory = try TemporaryDirectory()
        let plaintext = AgeTests.pattern(size)
        try Self.write(plaintext, to: directory.child("plain"))
        let result = try #require(try ExternalTools.pyrage("encrypt", input: directory.child("plain"), output: directory.child("theirs.age"),
                                                           passphrase: Self.passphrase))
        try #require(result.succeeded, "\(result)")
        let (decrypted, error) = try AgeTests.decrypt(try Self.read(directory.child("theirs.age")), passphrase: Self.passphrase)
        #expect(error == nil)
        #expect(decrypted == plaintext)
        #expect(try AgeTests.decrypt(try Self.read(directory.child("theirs.age")), passphrase: "wrong").error == .wrongPassphrase)
    }
}
