import Foundation
import Testing
import TripBoardModel

/// `container-migration` as a process, on version-1 directories written by Python's sqlite3.
@Suite struct MigrationTests {
    @Test func migratesEverythingAndDeletesTheOldLocation() throws {
        let setup = try MigrationSetup()
        #expect(FileManager.default.fileExists(atPath: setup.legacy + "/TripBoard.sqlite-wal"), "half the rows are only in -wal")
        let result = try setup.migrate(["--json"])
        #expect(result.status == 0, "\(result)")
        #expect(try setup.problems(final: true) == [])
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(summary["outcome"] as? String == "migrated")
        #expect((summary["added"] as? [String: Int]) == ["trips": 3, "places": 3, "bookings": 3, "attachments": 6])
        #expect((summary["missing"] as? [String])?.count == 1)
        #expect((summary["recovered"] as? [String]) == ["attachments/recovered/stray-photo.png"])
        #expect(summary["tokensMoved"] as? Int == 2)
        #expect(summary["preferencesRefused"] as? [String] == ["mapStyle"])
        #expect(summary["preferencesUnknown"] as? [String] == ["foo"])
        #expect(summary["bookingKindsChangedToOther"] as? Int == 1)
        #expect(summary["sameFilesystem"] as? Bool == true)
        #expect(!result.stdout.contains(LegacyFixture.accessToken) && !result.stderr.contains(LegacyFixture.accessToken))
        // The container is an ordinary one now: the app and the widget use it, `container check` is clean.
        let check = try setup.container.app(arguments: ["container", "check"], environment: setup.environment)
        #expect(check.status == 0 && check.stdout.contains("consistent"), "a row marked missing is known, not a problem: \(check)")
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-01T08:00:00Z"], environment: setup.environment)
        #expect(widget.status == 0 && widget.stdout.contains("Trip 0"), "\(widget)")
    }

    /// The store step converts inside SQLite (`LegacySQLConversion`, calling the converter's Swift
    /// code for dates, timestamps and kinds) and the verification compares the result with the
    /// plan's digest of the Swift conversion: awkward values must come out the same both ways,
    /// or the migration would stop at the verification.
    @Test func awkwardValuesConvertTheSameInSQLiteAsInTheConverter() throws {
        var fixture = LegacyFixture.standard()
        fixture.trips[1].updated_at = "2026-01-05T10:00:00+02:00"
        fixture.trips[2].notes = ""
        fixture.bookings[0].starts_at = nil
        fixture.bookings[2].kind = "HOTEL"
        fixture.bookings[2].starts_at = "2027-03-02T07:35:00.250-03:30"
        fixture.attachments[2].created_at = "2026-01-01T11:00:00.500+05:45"
        fixture.attachments[3].relative_path = fixture.attachments[3].relative_path.replacingOccurrences(of: ".jpg", with: ".JPG")
        let setup = try MigrationSetup(fixture)
        try FileManager.default.moveItem(atPath: setup.legacy + "/" + fixture.attachments[3].relative_path.replacingOccurrences(of: ".JPG", with: ".jpg"),
                                         toPath: setup.legacy + "/" + fixture.attachments[3].relative_path)
        let result = try setup.migrate(["--json"])
        #expect(result.status == 0, "\(result)")
        func value(_ sql: String) throws -> String { try setup.container.sqlite(sql, readOnly: true).trimmedStdout }
        #expect(try value("SELECT updated_at FROM trips WHERE id = '\(fixture.trips[1].id)'") == "2026-01-05T08:00:00.000Z")
        #expect(try value("SELECT starts_at IS NULL AND starts_at_epoch IS NULL FROM bookings WHERE id = '\(fixture.bookings[0].id)'") == "1")
        #expect(try value("SELECT kind, starts_at, starts_at_epoch FROM bookings WHERE id = '\(fixture.bookings[2].id)'")
                == "hotel|2027-03-02T07:35:00-03:30|1803985500")
        #expect(try value("SELECT created_at FROM attachments WHERE id = '\(fixture.attachments[2].id)'") == "2026-01-01T05:15:00.500Z")
        #expect(try value("SELECT relative_path FROM attachments WHERE id = '\(fixture.attachments[3].id)'").hasSuffix(".jpg"))
        #expect(try setup.container.integrity() == "ok")
    }

    /// A container that the app set up before the migration has an empty store: the migrated
    /// store is published into it (the backup API, one transaction) rather than renamed over it.
    @Test func aContainerWithAnEmptyStoreTakesTheMigratedRecords() throws {
        let setup = try MigrationSetup()
        let created = try setup.container.app("container", "init")
        #expect(created.status == 0 && FileManager.default.fileExists(atPath: setup.container.storePath), "\(created)")
        let inode = try FileManager.default.attributesOfItem(atPath: setup.container.storePath)[.systemFileNumber] as? Int
        let result = try setup.migrate(["--json"])
        #expect(result.status == 0, "\(result)")
        #expect(try setup.problems(final: true) == [])
        #expect(try FileManager.default.attributesOfItem(atPath: setup.container.storePath)[.systemFileNumber] as? Int == inode,
                "the same file, not a replacement")
    }

    /// `--json` reports the wall time of each step the run performed — the hashing pass last,
    /// after the container was usable — and the time until it was.
    @Test func theSummaryTimesEachStep() throws {
        let setup = try MigrationSetup()
        let result = try setup.migrate(["--json"])
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let steps = try #require(summary["steps"] as? [[String: Any]])
        #expect(steps.compactMap { $0["step"] as? String } == ["plan", "store", "attachments", "preferences", "verify", "commit", "delete", "hash"])
        #expect(steps.allSatisfy { ($0["seconds"] as? Double ?? -1) >= 0 })
        let usable = try #require(summary["usableSeconds"] as? Double)
        #expect(usable > 0 && usable <= (summary["durationSeconds"] as? Double ?? 0))
        #expect(summary["hashedFiles"] as? Int == 5 && summary["unverifiedFiles"] as? Int == 0, "every attachment row but the missing one: \(summary)")
    }

    @Test func runningAgainAfterCompletionHasNothingToMigrate() throws {
        let setup = try MigrationSetup()
        #expect(try setup.migrate().status == 0)
        let before = setup.container.files()
        let again = try setup.migrate()
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("Nothing to migrate"), "\(again)")
        #expect(setup.container.files() == before)
        let json = try setup.migrate(["--json"], from: false)
        #expect(json.status == 0 && json.stdout.contains(#""outcome" : "nothing to migrate""#), "\(json)")
    }

    /// The last run removes journal.json, then plan.json and the temporary files of interrupted
    /// atomic writes: killed in between, a later run finds those and removes them.
    @Test func leftoversOfAFinishedMigrationAreRemovedByTheNextRun() throws {
        let setup = try MigrationSetup()
        #expect(try setup.migrate().status == 0)
        let migration = setup.container.path + "/migration/"
        try Data(#"{"left": "behind"}"#.utf8).write(to: URL(fileURLWithPath: migration + "plan.json"))
        try Data("{".utf8).write(to: URL(fileURLWithPath: migration + "journal.json.123.456.tmp"))
        let again = try setup.migrate(["--json"])
        #expect(again.status == 0 && again.stdout.contains("nothing to migrate"), "\(again)")
        #expect(try setup.leftovers() == [])
        #expect(try setup.problems(final: true) == [])
    }

    @Test func dryRunReportsAndChangesNothing() throws {
        let setup = try MigrationSetup()
        let before = try setup.legacySnapshot()
        let result = try setup.migrate(["--dry-run"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Dry run: would migrate"), "\(result)")
        #expect(result.stdout.contains("3 trips, 3 places, 3 bookings, 6 attachments"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: setup.container.path), "a dry run creates no container")
        #expect(try setup.legacySnapshot().keys == before.keys)
    }

    @Test func theAppMigratesOnFirstLaunch() throws {
        let setup = try MigrationSetup()
        let list = try setup.container.app(arguments: ["trip", "list"], environment: setup.environment)
        #expect(list.status == 0, "\(list)")
        #expect(list.stderr.contains("migrating TripBoard 1's data"), "progress on stderr: \(list)")
        #expect(list.stdout.contains("Trip 0") && list.stdout.contains("pendingUpload"), "\(list)")
        #expect(try setup.problems(final: true) == [])
        let again = try setup.container.app(arguments: ["trip", "list"], environment: setup.environment)
        #expect(again.status == 0 && again.stderr.isEmpty, "the second launch migrates nothing: \(again)")
    }

    /// What sits where TripBoard 1's directory would be but holds no store of it — an empty
    /// directory, a file — is nobody's version-1 data: the app's first launch leaves it alone and
    /// works (it used to try the migration, which could only refuse, on every command), and
    /// `share-extension` files tickets. `container-migration` given it refuses as before.
    @Test(arguments: ["empty directory", "file", "directory of other files"])
    func aTripBoard1DirectoryWithoutItsStoreIsNotMigrated(_ what: String) throws {
        let container = try TestContainer()
        let legacy = container.root.appendingPathComponent("dot-tripboard").path
        switch what {
        case "empty directory": try FileManager.default.createDirectory(atPath: legacy, withIntermediateDirectories: false)
        case "file": try Data("notes\n".utf8).write(to: URL(fileURLWithPath: legacy))
        default:
            try FileManager.default.createDirectory(atPath: legacy, withIntermediateDirectories: false)
            try Data("x".utf8).write(to: URL(fileURLWithPath: legacy + "/notes.txt"))
        }
        let environment = ["TRIPBOARD_LEGACY_DIR": legacy]
        let added = try container.app("trip", "add", "--name", "Paris", "--start", "2026-12-10", "--end", "2026-12-14", environment: environment)
        #expect(added.status == 0 && !added.stderr.contains("migrat"), "\(what): \(added)")
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let shared = try container.share([ticket], environment: environment)
        #expect(shared.status == 0, "\(what): \(shared)")
        #expect(FileManager.default.fileExists(atPath: legacy), "\(what) is left where it is")
        let explicit = try ProcessRunner.run("container-migration", ["--from", legacy], environment: container.environment(environment))
        #expect(explicit.status != 0, "\(what): container-migration still refuses it: \(explicit)")
    }

    /// A container named on the command line (`--container`, `container init DIR`) never receives
    /// TripBoard 1's data by itself: the first such command leaves the version-1 directory alone
    /// and the named container holds only what the command added. The app's own container (the
    /// environment's) still migrates on its first launch, and `container-migration --container`
    /// moves the data wherever it is told.
    @Test func theFirstLaunchNeverMigratesIntoAContainerTheCommandLineNames() throws {
        let setup = try MigrationSetup()
        let before = try setup.legacySnapshot()
        let other = setup.container.root.appendingPathComponent("other").path
        let added = try ProcessRunner.run("app", ["--container", other, "trip", "add", "--name", "Porto", "--start", "2026-12-12", "--end", "2026-12-13"],
                                          environment: setup.environment)
        #expect(added.status == 0 && !added.stderr.contains("migrating"), "\(added)")
        let inited = try ProcessRunner.run("app", ["container", "init", other + "-2"], environment: setup.environment)
        #expect(inited.status == 0 && !inited.stderr.contains("migrating"), "\(inited)")
        let list = try ProcessRunner.run("app", ["--container", other, "trip", "list", "--json"], environment: setup.environment)
        let names = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]).compactMap { $0["name"] as? String }
        #expect(names == ["Porto"], "\(list)")
        #expect(try setup.legacySnapshot() == before, "the version-1 directory is untouched")
        #expect(!FileManager.default.fileExists(atPath: setup.container.path), "the app's own container is not made by those commands")

        let own = try setup.container.app(arguments: ["trip", "list"], environment: setup.environment)
        #expect(own.status == 0 && own.stderr.contains("migrating TripBoard 1's data"), "\(own)")
        #expect(try setup.problems(final: true) == [])
    }

    @Test func containerMigrationMovesTheDataIntoTheContainerItIsGiven() throws {
        let setup = try MigrationSetup()
        let other = setup.container.root.appendingPathComponent("other").path
        let moved = try setup.migrate(["--container", other])
        #expect(moved.status == 0, "\(moved)")
        let list = try ProcessRunner.run("app", ["--container", other, "trip", "list"], environment: setup.environment)
        #expect(list.stdout.contains("Trip 0"), "\(list)")
    }

    /// Crash at every named point (SIGKILL, no cleanup), check that one complete copy of
    /// everything exists (the working copy of the old store sealed), that the widget shows
    /// "updating" until the commit marker, then re-run.
    @Test(arguments: ["plan", "store-staged", "store", "attachments-partial", "attachments", "preferences-partial",
                      "preferences", "verify", "commit", "delete-partial"], [false, true])
    func crashAtEachStepThenResume(point: String, crossDevice: Bool) throws {
        let setup = try MigrationSetup(crossDevice: crossDevice)
        let crashed = try setup.migrate(environment: ["TRIPBOARD_CRASH_AT": "migration." + point])
        #expect(crashed.wasSignaled && crashed.status == SIGKILL, "\(point): \(crashed)")
        #expect(try setup.problems(final: false) == [], "after a crash at \(point)")
        if point == "store-staged" {
            // The working copy of TripBoard 1's store is sealed under a key the killed run held in
            // memory alone: no SQLite header, no trip name, nothing any reader can open.
            let copy = try Data(contentsOf: URL(fileURLWithPath: setup.container.path + "/migration/legacy-copy.sqlite"))
            #expect(copy.count > 0 && !copy.starts(with: Data("SQLite format 3".utf8)), "\(copy.prefix(16) as NSData)")
            #expect(copy.range(of: Data("Trip 1".utf8)) == nil && copy.range(of: Data("Place 1".utf8)) == nil, "a record in the clear")
        }
        let committed = ["commit", "delete-partial"].contains(point)
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-01T08:00:00Z"], environment: setup.environment)
        #expect(widget.status == (committed ? 0 : 75), "\(point): \(widget)")
        let resumed = try setup.migrate(["--json"])
        #expect(resumed.status == 0, "\(point): \(resumed)")
        #expect(resumed.stdout.contains(#""resumed" : true"#), "\(point): \(resumed)")
        #expect(try setup.problems(final: true) == [], "after resuming from \(point)")
        #expect(try setup.leftovers() == [], "after resuming from \(point)")
    }

    /// A file in place that is not private (an attempt of an earlier build renamed files into
    /// place and could be killed before its chmod: 100 random kills found this once) is made
    /// 0600 by the next run.
    @Test func aFileRenamedButNotYetPrivateIsMadePrivateByTheNextRun() throws {
        let setup = try MigrationSetup(crossDevice: false)
        let crashed = try setup.migrate(environment: ["TRIPBOARD_CRASH_AT": "migration.attachments"])
        #expect(crashed.wasSignaled, "\(crashed)")
        let attachments = setup.container.path + "/attachments"
        let moved = try #require(FileManager.default.subpaths(atPath: attachments)?
            .filter { $0.hasSuffix(".pdf") || $0.hasSuffix(".jpg") }.sorted().first, "a file was moved before the crash")
        #expect(chmod(attachments + "/" + moved, 0o644) == 0)
        let resumed = try setup.migrate()
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try setup.problems(final: true) == [])
    }

    /// The verification reads the container's store back and compares it with what the store step
    /// converted: a record changed in between (here by hand, after a crash) stops the migration
    /// before its commit marker, with the old location still complete.
    @Test func aRecordChangedBeforeTheVerificationIsCaught() throws {
        let setup = try MigrationSetup(crossDevice: false)
        let crashed = try setup.migrate(environment: ["TRIPBOARD_CRASH_AT": "migration.attachments"])
        #expect(crashed.wasSignaled, "\(crashed)")
        #expect(try setup.container.sqlite("UPDATE trips SET name = name || ' (changed)' WHERE rowid = 1").status == 0)
        let resumed = try setup.migrate()
        #expect(resumed.status == 65, "\(resumed)")
        #expect(resumed.stderr.contains("differ"), "\(resumed)")
        #expect(try setup.problems(final: false) == [], "the old location is still complete")
    }

    /// Every file is sealed on the way in, so each is read once before the container is usable
    /// (from the old location); no sealed file in the container is read before the commit
    /// marker, and the hashing pass reads each after it.
    @Test func onOneFilesystemEachFileIsReadOnceToBeSealedAndHashedAfterTheCommit() throws {
        let setup = try MigrationSetup()
        let log = setup.container.root.appendingPathComponent("strace.log").path
        // `-y` names each descriptor's file beside it, so a read is recognised by its line alone
        // (whichever thread, and when strace splits a call into "unfinished" and "resumed").
        let result = try ProcessRunner.run("/usr/bin/strace", [
            "-f", "-y", "-o", log, "-e", "trace=read,pread64,readv,preadv,preadv2,mmap,copy_file_range,sendfile,renameat,renameat2",
            ProcessRunner.executable("container-migration"), "--from", setup.legacy,
        ], environment: setup.environment)
        #expect(result.status == 0, "\(result)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        let committed = try #require(lines.firstIndex { $0.contains("rename") && $0.contains(#""committed.json""#) })
        let readsOfAttachments = lines.indices.filter { index in
            let line = lines[index]
            return !line.contains("rename") && (line.contains(".pdf>") || line.contains(".jpg>"))
        }
        let before = readsOfAttachments.filter { $0 < committed }.map { lines[$0] }
        #expect(!before.contains { $0.contains("/container/attachments/") }, "a sealed file read before the container was usable: \(before.prefix(3))")
        let sealedFrom = Set(before.compactMap { line -> String? in
            guard let range = line.range(of: "/legacy/Attachments/") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != ">" })
        })
        #expect(sealedFrom.count == setup.fixture.files.keys.filter { $0.hasSuffix(".pdf") || $0.hasSuffix(".jpg") }.count,
                "every file of the old location read to be sealed: \(sealedFrom)")
        #expect(readsOfAttachments.contains { $0 > committed && lines[$0].contains("/container/attachments/") },
                "the hashing pass reads the sealed files after the commit marker")
        #expect(try setup.problems(final: true) == [])
    }

    /// The same fixture across filesystems: `rename` fails with EXDEV, every file is copied
    /// (`copy_file_range`, else read and write), its size checked and made durable (one `syncfs`
    /// per 500), and the originals go only after the commit marker; the hashes follow in the
    /// hashing pass.
    @Test func migratesAcrossFilesystems() throws {
        let setup = try MigrationSetup(crossDevice: true)
        let result = try setup.migrate(["--json"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains(#""sameFilesystem" : false"#), "\(result)")
        #expect(try setup.problems(final: true) == [])
        #expect(try setup.leftovers() == [], "the copies made while the store step ran were all published")
    }

    /// Across filesystems with an `Attachments/` that holds nothing to move: no copying directory
    /// is made, and none is left.
    @Test func anEmptyAttachmentsDirectoryAcrossFilesystemsLeavesNothing() throws {
        var fixture = LegacyFixture.standard()
        fixture.attachments = []
        fixture.files = [:]
        let setup = try MigrationSetup(fixture, crossDevice: true)
        try FileManager.default.createDirectory(atPath: setup.legacy + "/Attachments", withIntermediateDirectories: true)
        let result = try setup.migrate(["--json"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains(#""sameFilesystem" : false"#), "\(result)")
        #expect(try setup.leftovers() == [])
        #expect(!FileManager.default.fileExists(atPath: setup.legacy), "the old location is gone")
    }

    /// kill -9 at random moments, on one filesystem and across two: whatever the moment, the
    /// interrupted state holds a complete copy and a re-run finishes the migration. Each round
    /// starts from a copy of one fixture per filesystem.
    @Test func killedAtRandomMomentsThenResumed() throws {
        let fixture = LegacyFixture.standard(trips: 2, fileSize: 2000)
        let templates = try [false, true].map { try MigrationSetup(fixture, crossDevice: $0) }
        var generator = SystemRandomNumberGenerator()
        var killed = 0
        for round in 0..<100 {
            let template = templates[round % 3 == 0 ? 1 : 0]
            let setup = try MigrationSetup(fixture, crossDevice: round % 3 == 0, template: template.legacy)
            let migration = try setup.startMigration()
            usleep(UInt32.random(in: 0...30_000, using: &generator))
            migration.kill()
            let first = migration.wait()
            if first.wasSignaled {
                killed += 1
                #expect(try setup.problems(final: false) == [], "round \(round)")
                let resumed = try setup.migrate()
                #expect(resumed.status == 0, "round \(round): \(resumed)")
            } else {
                #expect(first.status == 0, "round \(round): \(first)")
            }
            let problems = try setup.problems(final: true, checkingKeychain: round % 10 == 0)
            #expect(problems == [], "round \(round): \(problems)")
            // A kill inside an atomic write (the manifest, the preferences) leaves its temporary
            // file in tmp/, as it would for any process; `container check --repair` removes it.
            let left = try setup.leftovers().filter { !($0.hasPrefix("tmp/") && $0.hasSuffix(".tmp")) }
            #expect(left == [], "round \(round): \(left)")
        }
        #expect(killed > 20, "the kill must land mid-run often enough to mean something (killed \(killed) of 100)")
    }
}
