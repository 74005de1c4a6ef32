import TripBoardKeychain
import Foundation
import Testing

/// What a restore believes inside a well-formed archive (docs/backup.md, Restoring): archives made
/// with Python's tarfile around a store changed with the sqlite3 CLI, sealed by `age -p` — what a
/// hostile or rotted backup looks like. Each is refused with 65, one line, nothing written.
@Suite struct RestoreTrustTests {
    /// A seeded container (BackupRestoreTests.seed) on device "a".
    static func seeded() throws -> (test: TestContainer, device: [String: String]) {
        let test = try TestContainer(device: "a")
        let device = try BackupRestoreTests.device(test, "a")
        _ = try BackupRestoreTests.seed(test, device: device)
        return (test, device)
    }

    /// An archive of `test`'s container whose store is a copy changed by `storeSQL` (the sqlite3
    /// CLI), written with tarfile and sealed by `age -p`; returns its path.
    /// `walSQL`: run after `storeSQL` on the copy in WAL mode, left in its `-wal`, which the
    /// archive holds last, after the tickets (as a tar of a live container may).
    static func craftedArchive(_ test: TestContainer, storeSQL: String, preferences: Data? = nil, keychain: String? = nil,
                               storeBytes: Data? = nil, walSQL: String? = nil, tickets: TicketChange? = nil,
                               name: String = "crafted") throws -> String {
        let work = test.root.path + "/" + name
        try FileManager.default.createDirectory(atPath: work + "/store", withIntermediateDirectories: true)
        if let keychain {
            try FileManager.default.createDirectory(atPath: work + "/keychain", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: keychain, toPath: work + "/keychain/Keychain.sqlite")
        }
        if let preferences {
            try FileManager.default.createDirectory(atPath: work + "/preferences", withIntermediateDirectories: true)
            try preferences.write(to: URL(fileURLWithPath: work + "/preferences/preferences.json"))
        }
        let store = work + "/store/TripBoard.sqlite"
        let environment = ProcessRunner.environment(container: nil)
        // The sealed store's pages, opened, into a plain copy (the backup API through the shell).
        let copy = try test.sqlite(".backup '\(store)'")
        #expect(copy.status == 0, "\(copy)")
        let changed = try ProcessRunner.run("/usr/bin/sqlite3", [store, "PRAGMA journal_mode = DELETE; " + storeSQL], environment: environment)
        #expect(changed.status == 0, "\(changed)")
        if let storeBytes { try storeBytes.write(to: URL(fileURLWithPath: store)) }
        let tarPath = work + ".tar", file = work + ".age"
        let script = """
            import os, tarfile, sys
            container, work, out, wal_sql, tickets = sys.argv[1:6]
            t = tarfile.open(out, 'w', format=tarfile.PAX_FORMAT)
            t.add(container + '/container.json', 'container.json')
            store = work + '/store/TripBoard.sqlite'
            if wal_sql:
                import sqlite3, shutil
                held = sqlite3.connect(store, isolation_level=None)
                held.execute('PRAGMA journal_mode = WAL')
                held.execute('PRAGMA wal_autocheckpoint = 0')
                held.executescript('BEGIN; ' + wal_sql + '; COMMIT;')
                # Copied while the connection is open: the rows stay in the -wal.
                shutil.copy(store, work + '/frozen.sqlite')
                shutil.copy(store + '-wal', work + '/frozen.sqlite-wal')
                store = work + '/frozen.sqlite'
            t.add(store, 'store/TripBoard.sqlite')
            if os.path.exists(work + '/keychain/Keychain.sqlite'):
                t.add(work + '/keychain/Keychain.sqlite', 'keychain/Keychain.sqlite')
            if os.path.exists(work + '/preferences/preferences.json'):
                t.add(work + '/preferences/preferences.json', 'preferences/preferences.json')
            import io, sealed_file
            keys = sealed_file.class_keys(os.path.dirname(container) + '/device-a', os.path.dirname(container) + '/machine-id-a')
            for shard in sorted(os.listdir(container + '/attachments')):
                for entry in sorted(os.listdir(container + '/attachments/' + shard)):
                    # The plaintext, as a backup holds it (the container's file is sealed).
                    data = sealed_file.open_sealed(open(container + '/attachments/' + shard + '/' + entry, 'rb').read(), *keys)
                    if tickets == 'flipByte':
                        data = data[:100] + bytes([data[100] ^ 0xff]) + data[101:]
                    info = tarfile.TarInfo('attachments/' + shard + '/' + entry)
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
                    if tickets == 'longName':
                        info = tarfile.TarInfo('attachments/' + shard + '/' + 'x' * 256)
                        info.size = len(data)
                        t.addfile(info, io.BytesIO(data))
            if wal_sql:
                t.add(work + '/frozen.sqlite-wal', 'store/TripBoard.sqlite-wal')
            t.close()
            """
        var pythonEnvironment = environment
        pythonEnvironment["PYTHONPATH"] = LegacyFixture.toolsLibrary
        let tar = try ProcessRunner.run("/usr/bin/python3", ["-c", script, test.path, work, tarPath, walSQL ?? "", tickets?.rawValue ?? ""], environment: pythonEnvironment)
        #expect(tar.status == 0, "\(tar)")
        let sealed = try ProcessRunner.run("/usr/bin/python3", [BackupRestoreTests.agePTY, "/usr/bin/age", "-p", "-o", file, tarPath],
                                           environment: ProcessRunner.environment(container: nil, extra: ["AGE_PASSPHRASE": BackupRestoreTests.passphrase]))
        #expect(sealed.status == 0, "\(sealed)")
        return file
    }

    /// What `craftedArchive` does to the tickets it archives.
    enum TicketChange: String {
        /// One byte of each ticket flipped: no longer the bytes its row's hash names.
        case flipByte
        /// Beside each ticket, a copy under a 256-byte name, which no filesystem keeps.
        case longName
    }

    static func restore(_ test: TestContainer, _ file: String, into target: String, device: [String: String], extra: [String] = []) throws -> ProcessResult {
        try test.app(arguments: ["restore", file] + extra, stdin: BackupRestoreTests.passphrase + "\n",
                     environment: device.merging(["TRIPBOARD_CONTAINER": target]) { $1 })
    }

    /// Schema objects this build does not make at the store's version — a trigger that deletes
    /// every new trip, one that makes every edit fail, a view, an index, an index taken away, a
    /// version that claims another schema than the tables hold — are a damaged store: the restore
    /// and its dry run refuse it (65, one line, naming the object), writing nothing.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")), arguments: [
        ("CREATE TRIGGER eat_new_trips AFTER INSERT ON trips BEGIN DELETE FROM trips WHERE id = NEW.id; END;", "trigger eat_new_trips on trips"),
        ("CREATE TRIGGER no_edits BEFORE UPDATE ON trips BEGIN SELECT RAISE(ABORT, 'no'); END;", "trigger no_edits on trips"),
        ("CREATE VIEW everything AS SELECT * FROM trips;", "view everything"),
        ("CREATE INDEX trips_by_notes ON trips (notes);", "index trips_by_notes"),
        ("DROP INDEX trips_live_by_start;", "index trips_live_by_start on trips is missing"),
        ("PRAGMA user_version = 1;", "is not as schema 1 makes it"),
    ])
    func aStoreWithSchemaObjectsThisBuildDoesNotMakeIsRefused(sql: String, named: String) throws {
        let (test, device) = try Self.seeded()
        try Self.expectRefused(try Self.craftedArchive(test, storeSQL: sql), test, device: device,
                               saying: ["its schema is not the one this build makes", named])
    }

    /// The restore of `file` and its dry run both refused (65, one line holding each of
    /// `saying`), and nothing written under the test's root.
    static func expectRefused(_ file: String, _ test: TestContainer, device: [String: String], saying: [String]) throws {
        let before = BackupRestoreTests.snapshot(test.root.path)
        for extra in [["--dry-run"], []] {
            let result = try restore(test, file, into: test.root.path + "/restored", device: device, extra: extra)
            #expect(result.status == 65 && result.stderrLines.count == 1 && saying.allSatisfy(result.stderr.contains), "\(extra): \(result)")
        }
        #expect(BackupRestoreTests.snapshot(test.root.path) == before, "a refused restore wrote something")
    }

    /// A ticket whose bytes are not its row's, and a file under a name no filesystem keeps, are
    /// refused by the restore and by its dry run alike (65, one line, nothing written): the dry
    /// run, which keeps no ticket (docs/backup.md), checks each as it goes by.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")), arguments: [
        (TicketChange.flipByte, "does not match its recorded hash"),
        (TicketChange.longName, "is not a path this archive may contain"),
    ])
    func aTicketTheArchiveHoldsWronglyIsRefusedByTheDryRunToo(change: TicketChange, saying: String) throws {
        let (test, device) = try Self.seeded()
        try Self.expectRefused(try Self.craftedArchive(test, storeSQL: "SELECT 1;", tickets: change), test, device: device,
                               saying: [saying])
    }

    static let newTrip = "INSERT INTO trips (id, name, start_date, end_date, notes, sync_state, remote_version, updated_at) VALUES "

    /// Rows no command could have written — an id that is no UUID, a day that does not exist, a
    /// name past its limit, a place sharing its trip's id, an attachment whose path names the
    /// store — make the restore refuse the backup (65, naming the row and the rule), writing
    /// nothing; `container check` reports such a row in a live container.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")), arguments: [
        (newTrip + "('not-a-uuid', 'X', '2027-01-01', '2027-01-02', '', 'pendingUpload', NULL, '2026-12-01T00:00:00.000Z');", "trip not-a-uuid: id"),
        (newTrip + "('0d4c1f7e-8c52-4f1b-9a51-4b1c8f9e2a10', 'X', '2026-02-30', '2026-03-02', '', 'pendingUpload', NULL, '2026-12-01T00:00:00.000Z');",
         "startDate is not a day"),
        (newTrip + "('0d4c1f7e-8c52-4f1b-9a51-4b1c8f9e2a11', substr(replace(hex(zeroblob(2500)), '0', 'x'), 1, 5000), '2027-01-01', '2027-01-02', '', "
            + "'pendingUpload', NULL, '2026-12-01T00:00:00.000Z');", "name"),
        ("INSERT INTO places (id, trip_id, name, city, visited, sync_state, remote_version, updated_at) SELECT id, id, 'Twin', NULL, 0, "
            + "'pendingUpload', NULL, '2026-12-01T00:00:00.000Z' FROM trips LIMIT 1;", "an id two records share"),
        ("UPDATE attachments SET relative_path = 'store/TripBoard.sqlite';", "relativePath must be attachments/"),
    ])
    func aStoreWithRowsThatBreakTheRulesIsRefused(sql: String, named: String) throws {
        let (test, device) = try Self.seeded()
        try Self.expectRefused(try Self.craftedArchive(test, storeSQL: sql), test, device: device, saying: ["a row breaks TripBoard's rules", named])
        // The same row in a live container: reported by `container check`.
        #expect(try test.sqlite(sql).status == 0)
        let check = try test.app(arguments: ["container", "check"])
        #expect(check.status == 65 && check.stdout.contains("a row breaks a rule: ") && check.stdout.contains(named), "\(check)")
    }

    /// A preferences file over 1 MiB, or one that is not a JSON object, is refused in an archive
    /// (65, nothing written); in a live container it is moved aside wherever it is met — `prefs`,
    /// `export`, `backup` (which says so, and holds none) — and the command goes on.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")))
    func preferencesOverOneMebibyteAreRefusedInABackupAndMovedAsideInAContainer() throws {
        let (test, device) = try Self.seeded()
        let large = Data(("{\"theme\": \"" + String(repeating: "x", count: 1_100_000) + "\"}\n").utf8)
        for (bytes, says) in [(large, "is larger than 1 MiB"), (Data("[1, 2]".utf8), "is not a JSON object")] {
            let file = try Self.craftedArchive(test, storeSQL: "SELECT 1;", preferences: bytes, name: "prefs-\(bytes.count)")
            let before = BackupRestoreTests.snapshot(test.root.path)
            let result = try Self.restore(test, file, into: test.root.path + "/restored", device: device)
            #expect(result.status == 65 && result.stderrLines.count == 1 && result.stderr.contains("preferences/preferences.json \(says)"), "\(result)")
            #expect(BackupRestoreTests.snapshot(test.root.path) == before)
        }
        let preferences = test.path + "/preferences/preferences.json"
        for args in [["prefs", "list"], ["export"], ["backup", "--output", test.root.path + "/after.age"]] {
            try large.write(to: URL(fileURLWithPath: preferences))
            let result = try test.app(arguments: args, stdin: BackupRestoreTests.passphrase + "\n", environment: device.merging(BackupRestoreTests.fast) { $1 })
            #expect(result.status == 0 && result.stderr.contains("is larger than 1 MiB and was moved aside"), "\(args): \(result)")
            #expect(!FileManager.default.fileExists(atPath: preferences))
            try FileManager.default.contentsOfDirectory(atPath: test.path + "/preferences").forEach {
                try FileManager.default.removeItem(atPath: test.path + "/preferences/" + $0)
            }
        }
    }

    /// A backup's keychain that the real restore would refuse — one from another backup (its
    /// container key wrapped under another passphrase), one of a newer schema, one with a table
    /// of someone else's — is refused by the dry run too (65), and neither writes anything, in
    /// the device directory either (no device key, no generation file).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")), arguments: [
        ("", "the keychain is from another backup"),
        ("PRAGMA user_version = 99;", "newer than this build understands"),
        ("CREATE TABLE leak (x);", "table leak is not part of schema"),
    ])
    func aKeychainTheRestoreWouldRefuseIsRefusedByTheDryRunAndWritesNothing(sql: String, says: String) throws {
        let (test, device) = try Self.seeded()
        // The keychain of another backup of the same container, made with another passphrase.
        let other = test.root.path + "/other.age", out = test.root.path + "/other"
        let made = try test.app(arguments: ["backup", "--output", other], stdin: "another passphrase\n",
                                environment: device.merging(BackupRestoreTests.fast) { $1 })
        #expect(made.status == 0, "\(made)")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let opened = try ProcessRunner.run("/usr/bin/python3", [BackupRestoreTests.agePTY, "/bin/sh", "-c", "age -d '\(other)' | tar -x -C '\(out)'"],
                                           environment: ProcessRunner.environment(container: nil, extra: ["AGE_PASSPHRASE": "another passphrase"]))
        #expect(opened.status == 0, "\(opened)")
        let keychain = out + "/keychain/Keychain.sqlite"
        if !sql.isEmpty {
            // This backup's own keychain, changed: decrypted the same way, with this passphrase.
            let mine = test.root.path + "/mine.age", mineOut = test.root.path + "/mine"
            #expect(try test.app(arguments: ["backup", "--output", mine], stdin: BackupRestoreTests.passphrase + "\n",
                                 environment: device.merging(BackupRestoreTests.fast) { $1 }).status == 0)
            try FileManager.default.createDirectory(atPath: mineOut, withIntermediateDirectories: true)
            #expect(try ProcessRunner.run("/usr/bin/python3", [BackupRestoreTests.agePTY, "/bin/sh", "-c", "age -d '\(mine)' | tar -x -C '\(mineOut)'"],
                                          environment: ProcessRunner.environment(container: nil, extra: ["AGE_PASSPHRASE": BackupRestoreTests.passphrase])).status == 0)
            try FileManager.default.removeItem(atPath: keychain)
            try FileManager.default.copyItem(atPath: mineOut + "/keychain/Keychain.sqlite", toPath: keychain)
            #expect(try ProcessRunner.run("/usr/bin/sqlite3", [keychain, sql], environment: ProcessRunner.environment(container: nil)).status == 0)
        }
        let file = try Self.craftedArchive(test, storeSQL: "SELECT 1;", keychain: keychain)
        // A device that has never run TripBoard: its directory must stay empty.
        let fresh = try BackupRestoreTests.device(test, "fresh")
        let before = BackupRestoreTests.snapshot(test.root.path)
        for extra in [["--dry-run"], []] {
            let result = try Self.restore(test, file, into: test.root.path + "/restored", device: fresh, extra: extra)
            #expect(result.status == 65 && result.stderrLines.count == 1 && result.stderr.contains("the backup's keychain cannot be used")
                    && result.stderr.contains(says), "\(extra): \(result)")
        }
        #expect(BackupRestoreTests.snapshot(test.root.path) == before, "a refused restore wrote something")
        #expect(!FileManager.default.fileExists(atPath: fresh["TRIPBOARD_DEVICE_DIR"]!), "nothing in the device directory")
    }

    /// A store that is not a database is the backup's damage, said as such: never advice to move
    /// aside a file of the staging directory, which is gone by then.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")))
    func aStoreThatIsNoDatabaseIsTheBackupsDamageAndNamesNoStagingPath() throws {
        let (test, device) = try Self.seeded()
        let file = try Self.craftedArchive(test, storeSQL: "SELECT 1;", storeBytes: Data(repeating: 0x41, count: 8192))
        let result = try Self.restore(test, file, into: test.root.path + "/restored", device: device)
        #expect(result.status == 65 && result.stderr.hasPrefix("error: the backup's store is damaged") && !result.stderr.contains(".restoring-")
                && !result.stderr.contains("aside"), "\(result)")
    }

    /// A link where TripBoard expects a file or a directory is said as one, 73: a symbolic link in
    /// place of the store's -wal (not "cannot be opened; check its permissions", 66), and a
    /// restore target that is a link to nothing (not "holds a TripBoard container").
    @Test func linksAreSaidAsLinks() throws {
        let (test, device) = try Self.seeded()
        let wal = test.storePath + "-wal"
        try FileManager.default.moveItem(atPath: wal, toPath: test.root.path + "/wal-elsewhere")
        try FileManager.default.createSymbolicLink(atPath: wal, withDestinationPath: test.root.path + "/wal-elsewhere")
        let linked = try test.app(arguments: ["trip", "list"])
        #expect(linked.status == 73 && linked.stderr.contains("a symbolic link where the store's -wal file belongs"), "\(linked)")
        try FileManager.default.removeItem(atPath: wal)
        try FileManager.default.moveItem(atPath: test.root.path + "/wal-elsewhere", toPath: wal)
        let made = try test.app(arguments: ["backup", "--output", test.root.path + "/b.age"], stdin: BackupRestoreTests.passphrase + "\n",
                                environment: device.merging(BackupRestoreTests.fast) { $1 })
        #expect(made.status == 0, "\(made)")
        let dangling = test.root.path + "/dangling"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: test.root.path + "/nowhere")
        let result = try Self.restore(test, test.root.path + "/b.age", into: dangling, device: device)
        #expect(result.status == 73 && result.stderr.contains("is a symbolic link to a path that does not exist"), "\(result)")
    }

    /// The same archive without the change restores (the crafting itself is sound).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")))
    func theCraftedArchiveWithoutAChangeRestores() throws {
        let (test, device) = try Self.seeded()
        let file = try Self.craftedArchive(test, storeSQL: "SELECT 1;")
        let target = test.root.path + "/restored"
        let result = try Self.restore(test, file, into: target, device: device)
        #expect(result.status == 0, "\(result)")
        #expect(try test.app(arguments: ["container", "check"], environment: ["TRIPBOARD_CONTAINER": target]).trimmedStdout == "The container is consistent.")
    }

    /// A store in WAL mode whose `-wal` comes last, after the tickets: the store's checks wait
    /// for it (they begin early, beside the staging, only on a store not in WAL mode, which they
    /// cannot change), and what only the log holds is restored.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age")))
    func aStoreWhoseLogComesAfterTheTicketsIsRestoredWithIt() throws {
        let (test, device) = try Self.seeded()
        let file = try Self.craftedArchive(test, storeSQL: "SELECT 1;", walSQL: "UPDATE trips SET name = 'Renamed in the log'")
        let target = test.root.path + "/restored"
        let result = try Self.restore(test, file, into: target, device: device)
        #expect(result.status == 0, "\(result)")
        let there = ["TRIPBOARD_CONTAINER": target]
        #expect(try test.app(arguments: ["trip", "list"], environment: there).stdout.contains("Renamed in the log"))
        #expect(try test.app(arguments: ["container", "check"], environment: there).trimmedStdout == "The container is consistent.")
    }

    /// `container check` compares the schema too: an extra trigger in a live store is reported
    /// (65), `--repair` marks the store damaged, and `container salvage` makes it anew with
    /// exactly this build's schema, every trip kept.
    @Test func containerCheckFindsASchemaObjectThisBuildDoesNotMakeAndSalvageRemovesIt() throws {
        let test = try TestContainer()
        try test.addTrip("Lisbon")
        #expect(try test.sqlite("CREATE TRIGGER eat_new_trips AFTER INSERT ON trips BEGIN DELETE FROM trips WHERE id = NEW.id; END;").status == 0)
        let check = try test.app(arguments: ["container", "check"])
        #expect(check.status == 65 && check.stdout.contains("trigger eat_new_trips on trips is not part of schema"), "\(check)")
        #expect(try test.app(arguments: ["container", "check", "--repair"]).status != 0)
        let salvage = try test.app(arguments: ["container", "salvage"])
        #expect(salvage.status == 0, "\(salvage)")
        #expect(try test.appOK("container", "check") == "The container is consistent.")
        let added = try test.addTrip("Porto")
        #expect(try test.appOK("trip", "list").contains("Porto") && !added.isEmpty)
        #expect(try test.appOK("trip", "list").contains("Lisbon"))
    }
}
