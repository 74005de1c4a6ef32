@testable import TripBoardBackup
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardTestSupport

/// The two layers together, as `app backup` will stack them — tar inside age — against the way
/// a user restores by hand: `age -d FILE | tar x` (age through a pseudo-terminal), or pyrage
/// plus Python's `tarfile` or GNU tar; and the reverse, an archive made by hand with
/// `tar c | age -p`, read by TripBoard.
struct BackupArchiveTests {
    static let passphrase = "backup passphrase"

    /// age(tar(`items`)) written by TripBoard to `directory`/backup.age.
    static func writeBackup(_ items: [TarTests.Item] = TarInteropTests.items, in directory: TemporaryDirectory,
                            workFactor: Int = 10) throws -> String {
        let file = try Directory.open(path: directory.path).openFile("backup.age", .writeOnly, creating: .newFile)
        let age = try AgeWriter(passphrase: try SecureBytes(copying: Array(passphrase.utf8)), output: file, workFactor: workFactor)
        try TarTests.write(items, to: TarWriter(output: age), mtime: TarInteropTests.mtime)
        try age.finish()
        try file.synchronize()
        return directory.child("backup.age")
    }

    /// Every entry of the backup at `path` as TripBoard reads it.
    static func readBackup(_ path: String, passphrase: String = passphrase) throws -> [(entry: TarEntry, content: [UInt8])] {
        let age = try AgeReader(passphrase: try SecureBytes(copying: Array(passphrase.utf8)), input: try FileDescriptor.openForReading(path: path))
        return try TarTests.read([], from: age)
    }

    @Test func aBackupRoundTripsThroughBothLayers() throws {
        let directory = try TemporaryDirectory()
        let entries = try Self.readBackup(try Self.writeBackup(in: directory))
        #expect(entries.map(\.entry.path) == TarInteropTests.items.map(\.path))
        #expect(entries.map(\.content) == TarInteropTests.items.map { $0.content ?? [] })
    }

    @Test(.enabled(if: ExternalTools.hasAge, "needs /usr/bin/age (Debian package age)"))
    func ageDecryptPipedIntoTarExtractRestoresEveryFileByteForByte() throws {
        let directory = try TemporaryDirectory()
        let backup = try Self.writeBackup(in: directory, workFactor: AgeWriter.defaultWorkFactor)
        try directory.makeDirectory("restored")
        let result = try ExternalTools.runOnTerminal(
            ["/bin/sh", "-c", "\(ExternalTools.age) -d '\(backup)' | \(ExternalTools.gnuTar) -x -C '\(directory.child("restored"))'"],
            passphrase: Self.passphrase)
        try #require(result.succeeded, "\(result)")
        try TarInteropTests.expectExtracted(TarInteropTests.items, at: directory.child("restored"), tool: "age -d | tar x")
    }

    @Test(.enabled(if: ExternalTools.pyragePython != nil, "needs a python3 with pyrage (pip install pyrage)"))
    func pyrageThenAnyTarRestoresEveryFileByteForByte() throws {
        let directory = try TemporaryDirectory()
        let backup = try Self.writeBackup(in: directory)
        let decrypted = try #require(try ExternalTools.pyrage("decrypt", input: backup, output: directory.child("backup.tar"), passphrase: Self.passphrase))
        try #require(decrypted.succeeded, "\(decrypted)")
        try TarInteropTests.expectEveryExtractorRestores(directory.child("backup.tar"), holding: TarInteropTests.items, in: directory)
    }

    @Test(.enabled(if: ExternalTools.hasAge, "needs /usr/bin/age (Debian package age)"))
    func aBackupMadeByHandWithTarAndAgeIsReadBack() throws {
        let directory = try TemporaryDirectory()
        try TarInteropTests.writeTree(TarInteropTests.items, in: directory)
        let result = try ExternalTools.runOnTerminal(
            ["/bin/sh", "-c", "\(ExternalTools.gnuTar) --format=posix -cf - -C '\(directory.child("src"))' attachments container.json keychain preferences store"
             + " | \(ExternalTools.age) -p > '\(directory.child("by-hand.age"))'"],
            passphrase: Self.passphrase)
        try #require(result.succeeded, "\(result)")
        let entries = try Self.readBackup(directory.child("by-hand.age"))
        #expect(Set(entries.map(\.entry.path)) == Set(TarInteropTests.items.map(\.path)))
        let contents = Dictionary(uniqueKeysWithValues: entries.map { ($0.entry.path, $0.content) })
        for item in TarInteropTests.items { #expect(contents[item.path] == (item.content ?? []), "\(item.path)") }
    }

    @Test func standardOutputIsASinkOfItsOwn() throws {
        // `--output -`: a backup streamed to a pipe goes through a duplicate of fd 1, which the
        // writer's owner may close without closing the process's standard output.
        let output = try FileDescriptor.standardOutput()
        #expect(output.rawValue > 2 && output.path == "standard output")
        try output.write([UInt8]())
        #expect(fcntl(1, F_GETFD) >= 0 && fcntl(output.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    // MARK: - The age layer's verdict reaches the tar reader

    @Test func theTarReaderEndsOnlyWhenTheAgeStreamHasVerifiedItsEnd() throws {
        let directory = try TemporaryDirectory()
        var backup = Array(try Data(contentsOf: URL(fileURLWithPath: try Self.writeBackup(
            [TarTests.Item(path: "container.json", content: AgeTests.pattern(65_536 - 1024 - 512))], in: directory))))
        // The tar stream is exactly one chunk (header, content, two zero blocks): the age final
        // chunk is full, so bytes appended after it are told as trailing data — and they are only
        // found because the tar reader reads its input to the end before it says "no more entries".
        backup += [0]
        try Data(backup).write(to: URL(fileURLWithPath: directory.child("extended.age")))
        let reader = TarReader(input: try AgeReader(passphrase: try SecureBytes(copying: Array(Self.passphrase.utf8)),
                                                    input: try FileDescriptor.openForReading(path: directory.child("extended.age"))))
        #expect(try reader.nextEntry()?.path == "container.json")
        #expect(throws: AgeError.trailingData) { _ = try reader.nextEntry() }
    }

    @Test func aCutBackupFailsWithTheAgeErrorNotATarOne() throws {
        let directory = try TemporaryDirectory()
        let backup = Array(try Data(contentsOf: URL(fileURLWithPath: try Self.writeBackup(in: directory))))
        // Cut at the end of a chunk in the middle of the big store file: every chunk left is sound.
        let payloadStart = try AgeTests.payloadOffset(backup) + 16
        try Data(backup.prefix(payloadStart + 20 * PayloadStream.sealedChunkLength)).write(to: URL(fileURLWithPath: directory.child("cut.age")))
        #expect(throws: AgeError.missingFinalChunk) { _ = try Self.readBackup(directory.child("cut.age")) }
        #expect(throws: AgeError.wrongPassphrase) { _ = try Self.readBackup(directory.child("cut.age"), passphrase: "other") }
    }
}
