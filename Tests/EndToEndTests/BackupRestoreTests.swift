import Foundation
import Testing

/// `app backup` and `app restore` with the built executables: a round trip that loses nothing,
/// another device, standard tools on both sides (Debian's `age` through a pseudo-terminal, GNU
/// tar, the sqlite3 CLI), every refusal with nothing written, `--replace` keeping the old
/// container, kills at every named step, a snapshot taken while writers work.
@Suite struct BackupRestoreTests {
    static let passphrase = "correct horse battery"
    /// 2^10 instead of age's 2^18: the tests make many backups (the format is the same).
    static let fast = ["TRIPBOARD_BACKUP_WORK_FACTOR": "10"]
    static let agePTY = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../tools/lib/age-pty.py").standardized.path

    /// A device of its own (key directory, machine id) for a test container.
    static func device(_ test: TestContainer, _ name: String, machine: String = TestContainer.deviceMachine) throws -> [String: String] {
        let machineID = test.root.path + "/machine-id-" + name
        try Data((machine + "\n").utf8).write(to: URL(fileURLWithPath: machineID))
        return ["TRIPBOARD_DEVICE_DIR": test.root.path + "/device-" + name, "TRIPBOARD_MACHINE_ID_FILE": machineID]
    }

    /// A container with a trip, a place, a booking with a ticket, both kinds of keychain item
    /// and a preference; returns the trip id and the ticket's bytes.
    static func seed(_ test: TestContainer, device: [String: String]) throws -> (String, Data) {
        let trip = try test.addTrip("Lisbon")
        try test.appOK("place", "add", "--trip", trip, "--name", "Belém", "--city", "Lisbon")
        let ticket = TicketPDF.make(lines: TicketPDF.boardingPass)
        // Sealed under this device's class keys, as every file of the container is.
        let shared = try test.share([try test.input(ticket, as: "ticket.pdf"), "--trip", trip], environment: device)
        #expect(shared.status == 0, "\(shared)")
        #expect(try test.app(arguments: ["keychain", "set", "api", "ana"], stdin: "device-secret", environment: device).status == 0)
        #expect(try test.app(arguments: ["keychain", "set", "sync", "ana", "--accessibility", "migratable"], stdin: "travelling-secret",
                             environment: device).status == 0)
        try test.appOK("prefs", "set", "theme", "dark")
        return (trip, ticket)
    }

    func backup(_ test: TestContainer, to file: String, device: [String: String]) throws -> ProcessResult {
        try test.app(arguments: ["backup", "--output", file], stdin: Self.passphrase + "\n", environment: device.merging(Self.fast) { $1 })
    }

    func restore(_ test: TestContainer, _ file: String, into target: String, device: [String: String], extra: [String] = [],
                 passphrase: String = passphrase, crashAt: String? = nil) throws -> ProcessResult {
        var environment = device
        environment["TRIPBOARD_CONTAINER"] = target
        if let crashAt { environment["TRIPBOARD_CRASH_AT"] = crashAt }
        return try test.app(arguments: ["restore", file] + extra, stdin: passphrase + "\n", environment: environment)
    }

    /// A seeded container and its backup, then a trip made after it (`laterTrip`): what a
    /// `--replace` restore replaces.
    func backedUpThenChanged(_ laterTrip: String) throws -> (test: TestContainer, device: [String: String], file: String) {
        let (test, device, file, _) = try backedUp()
        try test.addTrip(laterTrip)
        return (test, device, file)
    }

    /// A fresh container seeded on device "a" (`seed`) and backed up to `backup.age` beside it.
    func backedUp() throws -> (test: TestContainer, device: [String: String], file: String, ticket: Data) {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        let (_, ticket) = try Self.seed(test, device: device)
        let file = test.root.path + "/backup.age"
        let made = try backup(test, to: file, device: device)
        #expect(made.status == 0, "\(made)")
        return (test, device, file, ticket)
    }

    /// The `container.replaced-…` directories beside the test's container that hold a trip named `trip`.
    static func replacedContainers(holding trip: String, in test: TestContainer) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: test.root.path).filter { $0.hasPrefix("container.replaced-") }.filter { name in
            try test.app(arguments: ["trip", "list"], environment: ["TRIPBOARD_CONTAINER": test.root.path + "/" + name]).stdout.contains(trip)
        }
    }

    /// Every file below `directory`, with its bytes (what a refused restore must leave as it was).
    static func snapshot(_ directory: String) -> [String: Data] {
        var found: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            found[relative] = FileManager.default.contents(atPath: directory + "/" + relative) ?? Data()
        }
        return found
    }

    /// A restored container is a device of its own for sync: the same server, zone and change
    /// token, a new hybrid-clock node (the backup's own container keeps its node).
    @Test func aRestoredContainerTakesANewSyncIdentity() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        _ = try Self.seed(test, device: device)
        // As `app sync setup` leaves it (the server itself is not needed to restore).
        #expect(try test.sqlite("""
            INSERT INTO sync_account (only_row, server, zone, node, epoch, change_sequence, joined_at)
            VALUES (1, 'host=/tmp/pg dbname=tb', 'default', '0123456789abcdef', 'e1', 42, '2026-12-01T00:00:00.000Z')
            """).status == 0)
        let file = test.root.path + "/backup.age"
        #expect(try backup(test, to: file, device: device).status == 0)
        let target = test.root.path + "/restored"
        let other = try Self.device(test, "b")
        let restored = try restore(test, file, into: target, device: other)
        #expect(restored.status == 0, "\(restored)")
        let row = try test.sqlite("SELECT server, zone, epoch, change_sequence, node FROM sync_account", database: target + "/store/TripBoard.sqlite",
                                  environment: other)
            .trimmedStdout.split(separator: "|").map(String.init)
        #expect(row.count == 5 && row[0...3] == ["host=/tmp/pg dbname=tb", "default", "e1", "42"], "\(row)")
        #expect(row.last != "0123456789abcdef" && row.last?.count == 16, "a new node: \(row)")
        #expect(try test.sqlite("SELECT node FROM sync_account").trimmedStdout == "0123456789abcdef", "the original keeps its own")
    }

    @Test func aRoundTripOnThisDeviceGivesBackEverything() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        let (_, ticket) = try Self.seed(test, device: device)
        let file = test.root.path + "/backup.age"
        let made = try backup(test, to: file, device: device)
        #expect(made.status == 0, "\(made)")
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let target = test.root.path + "/restored"
        let restored = try restore(test, file, into: target, device: device)
        #expect(restored.status == 0 && restored.stdout.contains("every one checked against its row"), "\(restored)")
        let there = ["TRIPBOARD_CONTAINER": target]
        func app(_ arguments: String...) throws -> ProcessResult { try test.app(arguments: arguments, environment: there.merging(device) { $1 }) }
        #expect(try app("export").stdout.replacingOccurrences(of: #""exportedAt" : "[^"]*""#, with: "", options: .regularExpression)
                == (try test.app("export").stdout.replacingOccurrences(of: #""exportedAt" : "[^"]*""#, with: "", options: .regularExpression)))
        #expect(try app("keychain", "get", "api", "ana").stdout == "device-secret")
        #expect(try app("keychain", "get", "sync", "ana").stdout == "travelling-secret")
        #expect(try app("prefs", "get", "theme").trimmedStdout == "dark")
        #expect(try app("container", "check").trimmedStdout == "The container is consistent.")
        let attachments = test.root.path + "/restored/attachments"
        let files = (FileManager.default.enumerator(atPath: attachments)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".pdf") }
        #expect(files.count == 1 && (try? test.unsealed("restored/attachments/" + files[0], environment: device)) == ticket, "sealed again on this device")
        #expect(!FileManager.default.fileExists(atPath: target + "/caches/thumbnails/x"), "no cache travels")
    }

    @Test func onAnotherDeviceMigratableItemsOpenAndThisDeviceOnlyOnesStayInvisible() throws {
        let (test, _, file, _) = try backedUp()
        let other = try Self.device(test, "b", machine: "fedcba9876543210fedcba9876543210")
        let target = test.root.path + "/elsewhere"
        #expect(try restore(test, file, into: target, device: other).status == 0)
        let there = other.merging(["TRIPBOARD_CONTAINER": target]) { $1 }
        #expect(try test.app(arguments: ["keychain", "get", "sync", "ana"], environment: there).stdout == "travelling-secret")
        let hidden = try test.app(arguments: ["keychain", "get", "api", "ana"], environment: there)
        #expect(hidden.status == 66 && hidden.stderr.contains("another device"), "\(hidden)")
        #expect(try test.app(arguments: ["keychain", "list"], environment: there).stderr.contains("1 item belongs to another device"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")))
    func ageAndTarOpenABackupAndSqliteReadsItsStore() throws {
        let (test, _, file, ticket) = try backedUp()
        let out = test.root.path + "/by-hand"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let byHand = try ProcessRunner.run("/usr/bin/python3", [Self.agePTY, "/bin/sh", "-c", "age -d '\(file)' | tar -x -C '\(out)'"],
                                           environment: ProcessRunner.environment(container: nil, extra: ["AGE_PASSPHRASE": Self.passphrase]))
        #expect(byHand.status == 0, "\(byHand)")
        let names = try ProcessRunner.run("/usr/bin/sqlite3", ["-readonly", out + "/store/TripBoard.sqlite", "SELECT name FROM trips; PRAGMA integrity_check;"],
                                          environment: ProcessRunner.environment(container: nil))
        #expect(names.stdoutLines == ["Lisbon", "ok"], "\(names)")
        let pdfs = (FileManager.default.enumerator(atPath: out + "/attachments")?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".pdf") }
        #expect(pdfs.count == 1 && FileManager.default.contents(atPath: out + "/attachments/" + pdfs[0]) == ticket)
        for absent in ["caches", "tmp", "container.lock", "store/TripBoard.sqlite-wal", "store/TripBoard.sqlite-shm", "migration"] {
            #expect(!FileManager.default.fileExists(atPath: out + "/" + absent), "\(absent) is never in a backup")
        }
    }

    /// A backup made with standard tools only — a TripBoard backup unpacked (`age -d | tar x`),
    /// packed again with tar and encrypted by `age -p` — restores like TripBoard's own. A tar of
    /// a live container does not: its tickets are sealed under that device's keys, not their
    /// plaintext, and the restore says so (65, naming the file), writing nothing.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")))
    func anArchiveMadeWithTarAndAgeRestores() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        _ = try Self.seed(test, device: device)
        let environment = ProcessRunner.environment(container: nil, extra: ["AGE_PASSPHRASE": Self.passphrase])
        let live = test.root.path + "/live.age"
        let tarOfLive = "tar --format=posix -cf - -C '\(test.path)' attachments container.json keychain preferences store | age -p -o '\(live)'"
        #expect(try ProcessRunner.run("/usr/bin/python3", [Self.agePTY, "/bin/sh", "-c", tarOfLive], environment: environment).status == 0)
        let refused = try restore(test, live, into: test.root.path + "/refused", device: device)
        #expect(refused.status == 65 && refused.stderrLines.count == 1 && refused.stderr.contains("sealed file") && refused.stderr.contains("app backup"),
                "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: test.root.path + "/refused"))

        let made = try backup(test, to: test.root.path + "/made.age", device: device)
        #expect(made.status == 0, "\(made)")
        let unpacked = test.root.path + "/unpacked"
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        let file = test.root.path + "/by-hand.age"
        let repack = "age -d '\(test.root.path)/made.age' | tar -x -C '\(unpacked)' && tar --format=posix -cf - -C '\(unpacked)' attachments container.json keychain preferences store | age -p -o '\(file)'"
        let repacked = try ProcessRunner.run("/usr/bin/python3", [Self.agePTY, "/bin/sh", "-c", repack], environment: environment)
        #expect(repacked.status == 0, "\(repacked)")
        let target = test.root.path + "/restored"
        let restored = try restore(test, file, into: target, device: device)
        #expect(restored.status == 0, "\(restored)")
        let there = device.merging(["TRIPBOARD_CONTAINER": target]) { $1 }
        #expect(try test.app(arguments: ["trip", "list"], environment: there).stdout.contains("Lisbon"))
        #expect(try test.app(arguments: ["keychain", "get", "api", "ana"], environment: there).stdout == "device-secret")
        let check = try test.app(arguments: ["container", "check"], environment: there)
        #expect(check.trimmedStdout == "The container is consistent.", "\(check)")
    }

    enum Damage: String, CaseIterable { case wrongPassphrase, truncated, flippedByte, notAnAgeFile, emptyFile }

    @Test(arguments: Damage.allCases)
    func aBadBackupIsRefusedWithNothingWritten(damage: Damage) throws {
        let (test, device, file, _) = try backedUp()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        switch damage {
        case .wrongPassphrase: break
        case .truncated: bytes = bytes.prefix(bytes.count - 100)
        case .flippedByte: bytes[bytes.count - 2000] ^= 0x40
        case .notAnAgeFile: bytes = Data("this is not an age file\n".utf8)
        case .emptyFile: bytes = Data()
        }
        try bytes.write(to: URL(fileURLWithPath: file))
        let before = Self.snapshot(test.root.path)
        let result = try restore(test, file, into: test.root.path + "/restored", device: device,
                                 passphrase: damage == .wrongPassphrase ? "not the passphrase" : Self.passphrase)
        #expect(result.status == 65, "\(damage): \(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(result)")
        #expect(Self.snapshot(test.root.path) == before, "\(damage): a refused restore wrote something")
    }

    /// Archives a restore must refuse whole: a symbolic link, a path that climbs out, a path no
    /// container has. Written with Python's tarfile, encrypted by `age -p`.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")),
          arguments: ["link", "climbs out", "not a container path"])
    func anArchiveWithAPathNoContainerHasIsRefused(entry: String) throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        _ = try Self.seed(test, device: device)
        let tarPath = test.root.path + "/planted.tar", file = test.root.path + "/planted.age"
        let extra = switch entry {
        case "link": "i = tarfile.TarInfo('attachments/ab/x.pdf'); i.type = tarfile.SYMTYPE; i.linkname = '/etc/passwd'; t.addfile(i)"
        case "climbs out": "i = tarfile.TarInfo('store/../../escaped'); i.size = 1; t.addfile(i, io.BytesIO(b'x'))"
        default: "i = tarfile.TarInfo('caches/thumbnails/x.png'); i.size = 1; t.addfile(i, io.BytesIO(b'x'))"
        }
        let script = """
            import io, tarfile, sys
            t = tarfile.open(sys.argv[2], 'w', format=tarfile.PAX_FORMAT)
            for name in ['container.json', 'store/TripBoard.sqlite']: t.add(sys.argv[1] + '/' + name, name)
            \(extra)
            t.close()
            """
        #expect(try ProcessRunner.run("/usr/bin/python3", ["-c", script, test.path, tarPath], environment: ProcessRunner.environment(container: nil)).status == 0)
        let sealed = try ProcessRunner.run("/usr/bin/python3", [Self.agePTY, "/usr/bin/age", "-p", "-o", file, tarPath],
                                           environment: ProcessRunner.environment(container: nil, extra: ["AGE_PASSPHRASE": Self.passphrase]))
        #expect(sealed.status == 0, "\(sealed)")
        let before = Self.snapshot(test.root.path)
        let result = try restore(test, file, into: test.root.path + "/restored", device: device)
        #expect(result.status == 65 && result.stderrLines.count == 1, "\(entry): \(result)")
        #expect(Self.snapshot(test.root.path) == before, "\(entry): a refused restore wrote something")
        #expect(!FileManager.default.fileExists(atPath: test.root.path + "/escaped"))
    }

    @Test func anExistingContainerIsReplacedOnlyWhenAskedAndKept() throws {
        let (test, device, file) = try backedUpThenChanged("Made after the backup")
        let refused = try restore(test, file, into: test.path, device: device)
        #expect(refused.status == 73 && refused.stderr.contains("--replace"), "\(refused)")
        let replaced = try restore(test, file, into: test.path, device: device, extra: ["--replace"])
        #expect(replaced.status == 0, "\(replaced)")
        #expect(!(try test.appOK("trip", "list")).contains("Made after the backup"))
        let kept = try FileManager.default.contentsOfDirectory(atPath: test.root.path).filter { $0.hasPrefix("container.replaced-") }
        #expect(kept.count == 1, "\(kept)")
        let old = try test.app(arguments: ["trip", "list"], environment: ["TRIPBOARD_CONTAINER": test.root.path + "/" + kept[0]])
        #expect(old.stdout.contains("Made after the backup"), "the replaced container is intact: \(old)")
    }

    /// Two restores into one target: the first holds it from before its staging directory is
    /// made until it is published (stopped here at `restore.staged`, its files all written); the
    /// second waits its lock timeout and is refused (75, one line), touching nothing of the
    /// first's staging; the first then publishes a whole container, and a restore after it finds
    /// the target taken (73).
    @Test func aSecondRestoreIntoTheSameTargetWaitsAndNeverTouchesTheFirst() throws {
        let (test, device, file, _) = try backedUp()
        let target = test.root.path + "/restored"
        var environment = ProcessRunner.environment(container: target, extra: device)
        environment["TRIPBOARD_CRASH_AT"] = "restore.staged:stop"
        let first = try ProcessRunner.start("app", ["restore", file], environment: environment, stdin: Array((Self.passphrase + "\n").utf8))
        defer { first.kill(signal: SIGKILL) }
        let pid = first.process.processIdentifier
        #expect(first.waitUntilStopped(), "the first restore reached restore.staged")
        let staging = try #require(try FileManager.default.contentsOfDirectory(atPath: test.root.path).first { $0.hasPrefix(".restored.restoring-") })
        let staged = Self.snapshot(test.root.path + "/" + staging)
        #expect(staged.count > 3, "\(staged.keys)")

        let started = Date()
        let second = try test.app(arguments: ["restore", file], stdin: Self.passphrase + "\n",
                                  environment: device.merging(["TRIPBOARD_CONTAINER": target, "TRIPBOARD_LOCK_TIMEOUT": "1"]) { $1 })
        #expect(second.status == 75 && second.stderr.hasPrefix("error: another restore into ") && second.stderr.split(separator: "\n").count == 1,
                "\(second)")
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(Self.snapshot(test.root.path + "/" + staging) == staged, "the first restore's staging is untouched")

        kill(pid, SIGCONT)
        let finished = first.wait()
        #expect(finished.status == 0, "\(finished)")
        #expect(try test.app(arguments: ["container", "check"], environment: ["TRIPBOARD_CONTAINER": target]).status == 0)
        #expect(try test.app(arguments: ["trip", "list"], environment: ["TRIPBOARD_CONTAINER": target]).stdout.contains("Lisbon"))
        let after = try restore(test, file, into: target, device: device)
        #expect(after.status == 73 && after.stderr.contains("--replace"), "\(after)")
    }

    /// `--output` inside the container (over its live store, say) or the device directory is
    /// refused, 73, one line, whatever the spelling — direct, through `..`, through a symbolic
    /// link to the container — and nothing is written: the container works as before.
    @Test func aBackupIntoTheContainerOrTheDeviceDirectoryIsRefused() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        _ = try Self.seed(test, device: device)
        let link = test.root.path + "/link-to-container"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: test.path)
        let before = Self.snapshot(test.path)
        for output in [test.path + "/store/TripBoard.sqlite", test.path + "/backup.age", test.path + "/attachments/../tmp/x.age",
                       test.root.path + "/container/../container/keychain/k.age", link + "/preferences/p.age",
                       device["TRIPBOARD_DEVICE_DIR"]! + "/backup.age"] {
            let result = try backup(test, to: output, device: device)
            #expect(result.status == 73 && result.stderr.hasPrefix("error: --output names a file inside ")
                    && result.stderr.split(separator: "\n").count == 1, "\(output): \(result)")
        }
        #expect(Self.snapshot(test.path).keys == before.keys, "nothing written in the container")
        #expect(try test.appOK("trip", "list").contains("Lisbon"))
        #expect(try test.app(arguments: ["container", "check"]).status == 0)
    }

    /// A dry run into a path that holds a container checks the backup whole and reports that the
    /// restore would need --replace (exit 0), changing nothing; the restore itself refuses (73).
    @Test func aDryRunOverAContainerSaysTheRestoreWouldNeedReplace() throws {
        let (test, device, file, _) = try backedUp()
        let before = Self.snapshot(test.root.path)
        let result = try restore(test, file, into: test.path, device: device, extra: ["--dry-run"])
        #expect(result.status == 0 && result.stdout.contains("the restore needs --replace"), "\(result)")
        let json = try restore(test, file, into: test.path, device: device, extra: ["--dry-run", "--json"])
        #expect(json.status == 0 && json.stdout.contains("\"wouldNeedReplace\" : true"), "\(json)")
        #expect(Self.snapshot(test.root.path) == before)
        #expect(try restore(test, file, into: test.path, device: device).status == 73)
    }

    @Test func aDryRunVerifiesAndWritesNothing() throws {
        let (test, device, file, _) = try backedUp()
        let before = Self.snapshot(test.root.path)
        let result = try restore(test, file, into: test.root.path + "/restored", device: device, extra: ["--dry-run"])
        #expect(result.status == 0 && result.stdout.contains("Dry run"), "\(result)")
        #expect(Self.snapshot(test.root.path) == before)
    }

    /// A dry run and `backup verify` check every ticket without keeping one: stopped once the
    /// archive is staged (`restore.staged`), the staging directory holds the store, sealed, and
    /// no file under `attachments/`; let go, each says the backup is sound, the ticket counted.
    @Test(arguments: [["restore", "--dry-run"], ["backup", "verify"]])
    func aDryRunStagesNoTicket(command: [String]) throws {
        let (test, device, file, _) = try backedUp()
        var environment = ProcessRunner.environment(container: command[0] == "restore" ? test.root.path + "/restored" : test.path, extra: device)
        environment["TRIPBOARD_CRASH_AT"] = "restore.staged:stop"
        let arguments = command[0] == "restore" ? ["restore", file, "--dry-run"] : ["backup", "verify", file]
        let run = try ProcessRunner.start("app", arguments, environment: environment, stdin: Array((Self.passphrase + "\n").utf8))
        defer { run.kill(signal: SIGKILL) }
        #expect(run.waitUntilStopped(), "\(command) reached restore.staged")
        let staging = try #require(try FileManager.default.contentsOfDirectory(atPath: test.root.path).first { $0.contains(".restoring-") })
        let staged = Self.snapshot(test.root.path + "/" + staging)
        #expect(staged["store/TripBoard.sqlite"] != nil, "\(staged.keys)")
        var isDirectory: ObjCBool = false
        let files = staged.keys.filter { $0.hasPrefix("attachments/") }.filter {
            FileManager.default.fileExists(atPath: test.root.path + "/" + staging + "/" + $0, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        #expect(files.isEmpty, "no ticket staged: \(files)")
        run.kill(signal: SIGCONT)
        let finished = run.wait()
        #expect(finished.status == 0 && finished.stdout.contains("1 attachment file"), "\(finished)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: test.root.path).allSatisfy { !$0.contains(".restoring-") }, "staging removed")
    }

    /// timeline: backup written → restore --replace killed at STEP → afterwards the path holds
    /// the old container or the new one, whole; a second restore finishes; nothing is lost.
    @Test(arguments: ["restore.staged", "restore.built", "restore.exchanged", "restore.published"])
    func aRestoreKilledAtAStepLeavesTheOldContainerOrTheNewOne(step: String) throws {
        let (test, device, file) = try backedUpThenChanged("Old only")
        let killed = try restore(test, file, into: test.path, device: device, extra: ["--replace"], crashAt: step)
        #expect(killed.wasSignaled, "\(step): \(killed)")
        let now = try test.appOK("trip", "list")
        #expect(now.contains("Lisbon"), "\(step): a whole container is at the path")
        #expect(try test.appOK("container", "check") == "The container is consistent.", "\(step)")
        let again = try restore(test, file, into: test.path, device: device, extra: ["--replace"])
        #expect(again.status == 0, "\(step): \(again)")
        let everything = try FileManager.default.contentsOfDirectory(atPath: test.root.path)
        let oldOnes = try Self.replacedContainers(holding: "Old only", in: test)
        #expect(oldOnes.count == 1 || now.contains("Old only"), "\(step): the old container is kept: \(everything)")
        #expect(!everything.contains { $0.hasPrefix(".container.restoring-") }, "\(step): \(everything)")
    }

    /// timeline: backup written → restore --replace whose move of the old container to its
    /// `.replaced-…` name fails with EIO (strace's fault injection on the second renameat2, the
    /// one after the exchange) → exit 74 naming both places; the old container is still whole
    /// where it says, never removed by the failed restore's clean-up; a second restore keeps it.
    @Test func aRestoreThatFailsAfterTheExchangeKeepsTheOldContainerAndSaysWhere() throws {
        let (test, device, file) = try backedUpThenChanged("Old only")
        var environment = test.environment(device)
        environment["TRIPBOARD_CONTAINER"] = test.path
        let failed = try ProcessRunner.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "-e", "trace=renameat2",
                                                               "-e", "inject=renameat2:error=EIO:when=2",
                                                               ProcessRunner.executable("app"), "restore", file, "--replace"],
                                           environment: environment, stdin: Array((Self.passphrase + "\n").utf8))
        #expect(failed.status == 74 && failed.stderrLines.count == 1, "\(failed)")
        #expect(failed.stderr.contains("the backup was restored at \(test.path) and the replaced container is kept at "), "\(failed)")
        let keptAt = try #require(failed.stderr.components(separatedBy: "is kept at ").last?.components(separatedBy: ", but then").first)
        #expect(try test.app(arguments: ["trip", "list"], environment: ["TRIPBOARD_CONTAINER": keptAt]).stdout.contains("Old only"),
                "the old container is whole at \(keptAt)")
        #expect(try test.appOK("trip", "list").contains("Lisbon"), "the restored container is in place")
        // The next restore keeps the leftover old container under a `.replaced-` name.
        #expect(try restore(test, file, into: test.path, device: device, extra: ["--replace"]).status == 0)
        let everything = try FileManager.default.contentsOfDirectory(atPath: test.root.path)
        let oldOnes = try Self.replacedContainers(holding: "Old only", in: test)
        #expect(oldOnes.count == 1, "\(everything)")
    }

    /// timeline: 3 writers add trips and an importer files tickets → backup in the middle →
    /// writers stop → restore: the snapshot is whole (every row has its file, integrity ok).
    @Test func aBackupTakenWhileWritersWorkIsOneConsistentSnapshot() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        let (trip, _) = try Self.seed(test, device: device)
        let script = """
            i=0; while [ $i -lt 40 ]; do "$APP" trip add --name "W$$-$i" --start 2027-01-01 --end 2027-01-02 >/dev/null || exit 1; i=$((i+1)); done
            """
        let writers = try (0..<3).map { _ in
            try ProcessRunner.start("/bin/sh", ["-c", script], environment: test.environment(["APP": ProcessRunner.executable("app")]))
        }
        let importer = try ProcessRunner.start("/bin/sh", ["-c", (0..<6).map { "\"$SHARE\" '\(try test.input(TicketPDF.make(lines: TicketPDF.boardingPass + ["Serial \($0)"]), as: "t\($0).pdf"))' --trip \(trip) >/dev/null" }.joined(separator: " && ")],
                                               environment: test.environment(["SHARE": ProcessRunner.executable("share-extension")]))
        usleep(300_000)
        let file = test.root.path + "/backup.age"
        let made = try backup(test, to: file, device: device)
        for writer in writers { #expect(writer.wait().status == 0) }
        #expect(importer.wait().status == 0)
        #expect(made.status == 0, "\(made)")
        let target = test.root.path + "/restored"
        #expect(try restore(test, file, into: target, device: device).status == 0)
        let check = try test.app(arguments: ["container", "check", "--grace", "0"], environment: ["TRIPBOARD_CONTAINER": target])
        #expect(check.trimmedStdout == "The container is consistent.", "\(check)")
    }

    /// A backup killed after its snapshot or after writing the archive leaves no file at FILE
    /// (only a `FILE.<pid>.<random>.tmp` beside it) and nothing in the container that a repair
    /// does not remove; the next backup works.
    @Test(arguments: ["backup.snapshot", "backup.archived"])
    func aBackupKilledAtAStepLeavesNoFileAtItsName(step: String) throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        _ = try Self.seed(test, device: device)
        let file = test.root.path + "/backup.age"
        let killed = try test.app(arguments: ["backup", "--output", file], stdin: Self.passphrase + "\n",
                                  environment: device.merging(Self.fast) { $1 }.merging(["TRIPBOARD_CRASH_AT": step]) { $1 })
        #expect(killed.wasSignaled, "\(step): \(killed)")
        #expect(!FileManager.default.fileExists(atPath: file), "\(step)")
        #expect(try test.app("container", "check", "--repair", "--grace", "0").status == 0)
        #expect(try test.appOK("container", "check", "--grace", "0") == "The container is consistent.")
        #expect(try backup(test, to: file, device: device).status == 0)
        #expect(try restore(test, file, into: test.root.path + "/restored", device: device).status == 0)
    }

    @Test func aFileThatDoesNotMatchItsRowFailsTheBackupNamingIt() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        _ = try Self.seed(test, device: device)
        let relative = try test.sqlite("SELECT relative_path FROM attachments").trimmedStdout
        // One byte inside the sealed file's first message, flipped (a byte written over it could
        // be the one already there: ciphertext is random).
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: test.path + "/" + relative))
        try handle.seek(toOffset: 200)
        let old = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: 200)
        try handle.write(contentsOf: Data([old ^ 0xff]))
        try handle.close()
        let file = test.root.path + "/backup.age"
        let result = try backup(test, to: file, device: device)
        #expect(result.status == 65 && result.stderr.contains(relative), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try FileManager.default.contentsOfDirectory(atPath: test.root.path).allSatisfy { !$0.hasPrefix("backup.age.") }, "no temporary file left")
    }

    /// Hashes are compared on a thread of their own, a little after each file is archived: a
    /// file that is not its row's is still the one named when a later file fails as well.
    @Test func theFirstFileThatDoesNotMatchItsRowIsTheOneNamed() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        let (trip, _) = try Self.seed(test, device: device)
        let other = TicketPDF.make(lines: ["BOARDING PASS", "A SECOND TICKET"])
        #expect(try test.share([try test.input(other, as: "second.pdf"), "--trip", trip], environment: device).status == 0)
        let paths = try test.sqlite("SELECT relative_path FROM attachments ORDER BY relative_path").stdoutLines
        try #require(paths.count == 2)
        let (first, last) = (paths[0], paths[1])
        let zeros = String(repeating: "0", count: 64)
        #expect(try test.sqlite("UPDATE attachments SET content_hash = '\(zeros)' WHERE relative_path = '\(first)'").status == 0)
        try FileManager.default.removeItem(atPath: test.path + "/" + last)
        let file = test.root.path + "/backup.age"
        let result = try backup(test, to: file, device: device)
        #expect(result.status == 65 && result.stderr.contains(first) && result.stderr.contains("recorded hash"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func theWidgetWatchingAContainerSeesTheRestoredOne() throws {
        let test = try TestContainer(device: "a")
        let device = try Self.device(test, "a")
        try test.addTrip("Before the backup", start: "2027-03-01", end: "2027-03-02")
        let file = test.root.path + "/backup.age"
        #expect(try backup(test, to: file, device: device).status == 0)
        try test.appOK("trip", "delete", try test.sqlite("SELECT id FROM trips").trimmedStdout)
        try test.addTrip("Replaced later", start: "2027-02-01", end: "2027-02-02")
        let widget = try ProcessRunner.start("widget", ["--watch", "--now", "2027-01-01T00:00Z"], environment: test.environment)
        defer { widget.kill(signal: SIGTERM) }
        usleep(500_000)
        #expect(try restore(test, file, into: test.path, device: device, extra: ["--replace"]).status == 0)
        var output = ""
        for _ in 0..<100 where !output.contains("Before the backup") {
            usleep(100_000)
            output = (try? String(contentsOf: widget.outputURL, encoding: .utf8)) ?? ""
        }
        #expect(output.contains("Replaced later") && output.contains("Before the backup"), "\(output)")
    }
}
