import Foundation
import Testing

/// The store and the keychain's database sealed page by page (docs/security.md, "Sealed stores"),
/// with the built executables: no byte of what the user typed reaches a file of the container in
/// the clear — locked or unlocked, after kills mid-write — and `app container protect` seals a
/// container an earlier build left in the clear, resumably.
@Suite struct SealedStoreTests {
    static let canary = "CANARY-\(UUID().uuidString.prefix(8))"

    /// Every file under the container whose bytes hold `needle` (relative paths); the
    /// preferences are in the clear by design and hold none of it.
    static func filesHolding(_ needle: String, in container: TestContainer) -> [String] {
        var found: [String] = []
        let root = container.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: root + "/" + relative) else { continue }
            if data.range(of: Data(needle.utf8)) != nil { found.append(relative) }
        }
        return found
    }

    /// timeline: a device with a passcode writes trips, notes, bookings and keychain items that
    /// carry the canary; every file is scanned while unlocked, after a lock, and after writers
    /// killed at random moments (mid-transaction, mid-checkpoint: the last writer to close
    /// checkpoints) and by name right after a checkpoint's first page — the canary is in none of
    /// them; the store still checks and reads, and a checkpoint killed loses nothing committed.
    @Test func noFileOfTheContainerHoldsWhatTheUserTyped() throws {
        let container = try TestContainer(device: "a")
        let passcode = "river-stone"
        try container.appOK("device", "passcode", "set", stdin: passcode + "\n")
        let trip = try container.appOK("trip", "add", "--name", "\(Self.canary) trip", "--start", "2026-12-12", "--end", "2026-12-15",
                                       "--notes", "\(Self.canary) notes")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "\(Self.canary) hotel",
                            "--reference", "\(Self.canary.suffix(6))REF")
        #expect(try container.app(arguments: ["keychain", "set", "\(Self.canary)-service", "\(Self.canary)-account"], stdin: "secret-value\n").status == 0)
        #expect(Self.filesHolding(Self.canary, in: container) == [], "unlocked")
        try container.appOK("device", "lock")
        #expect(try container.appOK("trip", "list").contains(Self.canary), "the store is until-first-unlock: it reads while locked")
        #expect(Self.filesHolding(Self.canary, in: container) == [], "locked")
        // Writers killed mid-write, at random moments: each an import of 3,000 trips.
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0 ... .max, using: &generator)
        print("noFileOfTheContainerHoldsWhatTheUserTyped seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let document = container.root.path + "/trips.json"
        let trips = (0..<3000).map { #"{"name":"\#(Self.canary) \#($0)","startDate":"2027-01-01","endDate":"2027-01-02"}"# }
        try Data(("{\"trips\":[" + trips.joined(separator: ",") + "]}").utf8).write(to: URL(fileURLWithPath: document))
        for round in 0..<4 {
            let writer = try ProcessRunner.start("app", ["import", document], environment: container.environment)
            usleep(UInt32(20_000 + random.next() % 400_000))
            writer.kill()
            _ = writer.wait()
            #expect(Self.filesHolding(Self.canary, in: container) == [], "after kill \(round)")
        }
        // Killed mid-checkpoint, by name: right after the first page copied from the WAL back into
        // the store (the import's last connection checkpoints as it closes).
        // The import had committed: its trips are all there after the kill.
        for round in 0..<2 {
            let before = try container.appOK("trip", "list").split(separator: "\n").count
            let killed = try container.app(arguments: ["import", document], environment: ["TRIPBOARD_CRASH_AT": "store.checkpoint-page-written"])
            #expect(killed.wasSignaled && killed.status == SIGKILL, "killed mid-checkpoint \(round): \(killed)")
            #expect(Self.filesHolding(Self.canary, in: container) == [], "after a kill mid-checkpoint \(round)")
            #expect(try container.integrity() == "ok")
            #expect(try container.appOK("trip", "list").split(separator: "\n").count == before + 3000, "round \(round)")
        }
        #expect(try container.integrity() == "ok")
        try container.appOK("device", "unlock", stdin: passcode + "\n")
        #expect(try container.appOK("keychain", "get", "\(Self.canary)-service", "\(Self.canary)-account") == "secret-value")
        #expect(Self.filesHolding(Self.canary, in: container) == [], "at the end")
    }

    /// timeline: a container whose store and keychain database an earlier build left in the
    /// clear → `container protect` killed after its sealed copy (the store still in the clear and
    /// usable) → killed after the swap, before the key file moved (the next command finishes it)
    /// → run to completion: no canary anywhere, `container info` says sealed, every record and
    /// item reads, the widget too.
    @Test func protectSealsAnEarlierBuildsDatabasesResumably() throws {
        let container = try TestContainer(device: "a")
        let trip = try container.appOK("trip", "add", "--name", "\(Self.canary) trip", "--start", "2026-12-12", "--end", "2026-12-15")
        #expect(try container.app(arguments: ["keychain", "set", "api", "\(Self.canary)-account"], stdin: "secret-value\n").status == 0)
        try container.unsealDatabases()
        #expect(Self.filesHolding(Self.canary, in: container).sorted() == ["keychain/Keychain.sqlite", "store/TripBoard.sqlite"],
                "an earlier build's container: \(Self.filesHolding(Self.canary, in: container))")
        let before = try container.appOK("container", "info", "--json")
        #expect(before.contains(#""store" : "none""#) && before.contains(#""keychainDatabase" : "none""#) && before.contains(#""needsProtect" : true"#), "\(before)")

        let copied = try container.app(arguments: ["container", "protect"], environment: ["TRIPBOARD_CRASH_AT": "protect.copied"])
        #expect(copied.wasSignaled, "\(copied)")
        #expect(try container.appOK("trip", "list").contains(Self.canary), "killed before the swap: the store is as it was")
        #expect(try container.appOK("container", "info", "--json").contains(#""store" : "none""#))

        let swapped = try container.app(arguments: ["container", "protect"], environment: ["TRIPBOARD_CRASH_AT": "protect.swapped"])
        #expect(swapped.wasSignaled, "\(swapped)")
        #expect(!Self.filesHolding(Self.canary, in: container).contains("store/TripBoard.sqlite"), "swapped: the store is sealed")
        #expect(try container.appOK("trip", "list").contains(Self.canary), "the next command moves the key file into place")

        let done = try container.app(arguments: ["container", "protect", "--json"])
        #expect(done.status == 0, "\(done)")
        #expect(done.stdout.contains("keychain/Keychain.sqlite"), "\(done)")
        #expect(Self.filesHolding(Self.canary, in: container) == [], "\(Self.filesHolding(Self.canary, in: container))")
        let after = try container.appOK("container", "info", "--json")
        #expect(after.contains(#""store" : "until-first-unlock""#) && after.contains(#""keychainDatabase" : "until-first-unlock""#), "\(after)")
        #expect(try container.appOK("trip", "show", trip).contains(Self.canary))
        #expect(try container.appOK("keychain", "get", "api", "\(Self.canary)-account") == "secret-value")
        #expect(try ProcessRunner.run("widget", ["--now", "2026-12-01T00:00:00Z"], environment: container.environment).stdout.contains(Self.canary))
        #expect(try container.integrity() == "ok")
        let again = try container.app(arguments: ["container", "protect", "--json"])
        #expect(again.status == 0 && !again.stdout.contains("TripBoard.sqlite"), "nothing left to seal: \(again)")
        #expect(!FileManager.default.fileExists(atPath: container.path + "/store/sealing"))
    }

    /// The archive's store is an ordinary SQLite file (pages opened on the way in), and a
    /// restore seals it again under the target device's keys.
    @Test func aBackupHoldsTheStoreInTheClearAndARestoreSealsIt() throws {
        let container = try TestContainer(device: "a")
        try container.appOK("trip", "add", "--name", "\(Self.canary) trip", "--start", "2026-12-12", "--end", "2026-12-15")
        let file = container.root.path + "/backup.age"
        #expect(try container.app(arguments: ["backup", "--output", file], stdin: BackupRestoreTests.passphrase + "\n",
                                  environment: BackupRestoreTests.fast).status == 0)
        let out = container.root.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        #expect(try ProcessRunner.run("/usr/bin/python3", [BackupRestoreTests.agePTY, "/bin/sh", "-c", "age -d '\(file)' | tar -x -C '\(out)'"],
                                      environment: ProcessRunner.environment(container: nil, extra: ["AGE_PASSPHRASE": BackupRestoreTests.passphrase])).status == 0)
        let names = try ProcessRunner.run("/usr/bin/sqlite3", ["-readonly", out + "/store/TripBoard.sqlite", "SELECT name FROM trips"],
                                          environment: ProcessRunner.environment(container: nil))
        #expect(names.trimmedStdout == "\(Self.canary) trip", "\(names)")
        let target = container.root.path + "/restored"
        let restored = try container.app(arguments: ["restore", file], stdin: BackupRestoreTests.passphrase + "\n",
                                         environment: BackupRestoreTests.fast.merging(["TRIPBOARD_CONTAINER": target]) { $1 })
        #expect(restored.status == 0, "\(restored)")
        for name in ["store/TripBoard.sqlite", "store/TripBoard.sqlite-key"] {
            #expect(FileManager.default.fileExists(atPath: target + "/" + name), "\(name)")
        }
        let restoredFiles = try FileManager.default.subpathsOfDirectory(atPath: target).filter {
            FileManager.default.contents(atPath: target + "/" + $0)?.range(of: Data(Self.canary.utf8)) != nil
        }
        #expect(restoredFiles == [], "the restored container is sealed: \(restoredFiles)")
        #expect(try container.app(arguments: ["trip", "list"], environment: ["TRIPBOARD_CONTAINER": target]).stdout.contains(Self.canary))
    }
}
