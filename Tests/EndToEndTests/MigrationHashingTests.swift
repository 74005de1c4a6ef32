import Foundation
import Testing
import TripBoardSystem

/// The container migration moves files without reading them and hashes them after the container
/// is usable (`AttachmentHashing`). Killed during that pass, the container is usable all the
/// same, its rows not hashed yet say so (`contentHash` null), and the next `app` write, `app
/// container check` or `container-migration` finishes the pass: every hash recorded and right,
/// nothing lost, no row twice.
@Suite struct MigrationHashingTests {
    /// 150 trips with two attachments each (one file missing): 299 files, more than one batch
    /// of the pass (256 rows), so a kill after the first leaves rows unverified.
    static let fixture = LegacyFixture.standard(trips: 150, fileSize: 200)

    /// Timeline:
    ///
    ///     container-migration   plan … commit, delete │ hashing: batch 1 recorded ✝ (SIGKILL)
    ///     widget                                        shows the next trip (exit 0)
    ///     app attachment list                           unverified rows: "contentHash": null
    ///     FINISHER (app trip add | app container check | container-migration)
    ///                                                   hashes the rest, removes hashing.json
    @Test(arguments: [("hashing.partial", "app"), ("hashing.partial", "check"), ("hashing.partial", "migration"),
                      ("hashing.recorded", "app")])
    func aKilledHashingPassIsFinishedByTheNextWriteOrCheck(point: String, finisher: String) throws {
        let setup = try MigrationSetup(Self.fixture)
        let crashed = try setup.migrate(environment: ["TRIPBOARD_CRASH_AT": point])
        #expect(crashed.wasSignaled && crashed.status == SIGKILL, "\(point): \(crashed)")
        let marker = setup.container.path + "/migration/hashing.json"
        #expect(FileManager.default.fileExists(atPath: marker), "the pass is still due")
        #expect(try setup.problems(final: false) == [], "the container is complete: only hashes are missing")
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-01T08:00:00Z"], environment: setup.environment)
        #expect(widget.status == 0, "the container is usable: \(widget)")
        let unverified = try setup.container.sqlite(
            "SELECT count(*) FROM attachments WHERE content_hash = '' AND state = 'present'", readOnly: true).trimmedStdout
        #expect(unverified == (point == "hashing.partial" ? "43" : "0"), "299 files, 256 hashed before the kill: \(unverified)")
        if point == "hashing.partial" {
            let list = try setup.container.app(arguments: ["attachment", "list", "--json"], environment: setup.environment)
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "\(list)")
            #expect(rows.filter { $0["contentHash"] is NSNull }.count == 43, "an unverified row's hash is null in the JSON contract")
            #expect(rows.filter { $0["state"] as? String == "missing" }.allSatisfy { $0["contentHash"] as? String == "" })
        }

        switch finisher {
        case "app":
            let added = try setup.container.app(arguments: ["trip", "add", "--name", "After", "--start", "2027-05-01", "--end", "2027-05-02"],
                                                environment: setup.environment)
            #expect(added.status == 0, "\(added)")
            // The trip this write added is not the migration's: out of the comparison with version 1.
            #expect(try setup.container.sqlite("DELETE FROM trips WHERE name = 'After'").status == 0)
        case "check":
            let check = try setup.container.app(arguments: ["container", "check", "--json"], environment: setup.environment)
            #expect(check.status == 0, "\(check)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check)")
            #expect(report["hashesRecorded"] as? Int == (point == "hashing.partial" ? 43 : 0), "\(check)")
            #expect((report["damagedFiles"] as? [String]) == [], "\(check)")
        default:
            let again = try setup.migrate(["--json"])
            #expect(again.status == 0 && again.stdout.contains("nothing to migrate"), "\(again)")
            #expect(again.stdout.contains(#""hashedFiles" : 43"#), "\(again)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker), "\(finisher) finished the pass")
        #expect(try setup.problems(final: true) == [], "every hash recorded and right, after \(finisher)")
        #expect(try setup.leftovers() == [])
        #expect(try setup.container.sqlite("SELECT count(*), count(DISTINCT id) FROM attachments", readOnly: true).trimmedStdout == "300|300")
    }

    /// kill -9 at random moments after the commit marker — while the old location is removed or
    /// the pass hashes: the container is usable and complete at every moment, and `app container
    /// check` finishes the pass: every hash right, none twice. Files of 100 KB make the pass long
    /// enough (tens of milliseconds) to be hit; the kills fall within its measured length.
    @Test func killedAtRandomMomentsOfTheHashingPassThenFinished() throws {
        let fixture = LegacyFixture.standard(trips: 150, fileSize: 100_000)
        let template = try MigrationSetup(fixture)
        let measured = try MigrationSetup(fixture, template: template.legacy)
        let summary = try measured.migrate(["--json"])
        let steps = try #require((try JSONSerialization.jsonObject(with: Data(summary.stdout.utf8)) as? [String: Any])?["steps"]
                                 as? [[String: Any]], "\(summary)")
        let pass = steps.first { $0["step"] as? String == "hash" }?["seconds"] as? Double ?? 0.05
        var generator = SystemRandomNumberGenerator()
        var midPass = 0
        for round in 0..<8 {
            let setup = try MigrationSetup(fixture, template: template.legacy)
            let migration = try setup.startMigration()
            waitUntilFileExists(setup.container.path + "/migration/committed.json", within: 60, polling: 500)
            usleep(UInt32.random(in: 0...UInt32(max(pass, 0.01) * 800_000), using: &generator))
            migration.kill()
            let first = migration.wait()
            let due = FileManager.default.fileExists(atPath: setup.container.path + "/migration/hashing.json")
            if first.wasSignaled && due { midPass += 1 }
            #expect(first.wasSignaled || first.status == 0, "round \(round): \(first)")
            #expect(try setup.problems(final: false) == [], "round \(round): complete, only hashes missing")
            let check = try setup.container.app(arguments: ["container", "check"], environment: setup.environment)
            #expect(check.status == 0, "round \(round): \(check)")
            #expect(!FileManager.default.fileExists(atPath: setup.container.path + "/migration/hashing.json"), "round \(round)")
            #expect(try setup.problems(final: true) == [], "round \(round): every hash recorded and right")
            #expect(try setup.container.sqlite("SELECT count(*), count(DISTINCT id) FROM attachments", readOnly: true).trimmedStdout
                    == "300|300", "round \(round)")
        }
        #expect(midPass > 0, "a kill must land while the pass was due (\(midPass) of 8; the pass took \(pass) s)")
    }

    /// The pass and a writer at once: an `app` write while the migration's pass runs finishes the
    /// pass itself (the marker is there), so two processes hash the same rows side by side; each
    /// records only hashes still missing, and the rows end hashed once and right.
    @Test func aWriterDuringTheHashingPassHashesBesideIt() throws {
        let setup = try MigrationSetup(LegacyFixture.standard(trips: 150, fileSize: 100_000))
        let migration = try setup.startMigration()
        waitUntilFileExists(setup.container.path + "/migration/committed.json", within: 60, polling: 500)
        let added = try setup.container.app(arguments: ["trip", "add", "--name", "During", "--start", "2027-05-01", "--end", "2027-05-02"],
                                            environment: setup.environment)
        #expect(added.status == 0, "\(added)")
        let finished = migration.wait()
        #expect(finished.status == 0, "\(finished)")
        #expect(!FileManager.default.fileExists(atPath: setup.container.path + "/migration/hashing.json"))
        #expect(try setup.container.sqlite("DELETE FROM trips WHERE name = 'During'").status == 0)
        #expect(try setup.problems(final: true) == [], "every hash recorded and right")
    }

    /// A row not hashed yet is hashed on the spot by `app backup`, which writes the hash into the
    /// archived store: the restored container has every hash, checked against its files.
    @Test func aBackupOfAnUnhashedContainerCarriesEveryHash() throws {
        let setup = try MigrationSetup(Self.fixture)
        #expect(try setup.migrate(environment: ["TRIPBOARD_CRASH_AT": "hashing.partial"]).wasSignaled)
        let archive = setup.container.root.appendingPathComponent("backup.age").path
        let environment = setup.environment.merging(["TRIPBOARD_BACKUP_WORK_FACTOR": "10"]) { $1 }
        let backup = try setup.container.app(arguments: ["backup", "--output", archive], stdin: "correct horse battery\n",
                                             environment: environment)
        try #require(backup.status == 0, "\(backup)")
        let restored = setup.container.root.appendingPathComponent("restored").path
        let restore = try setup.container.app(arguments: ["restore", archive], stdin: "correct horse battery\n",
                                              environment: environment.merging(["TRIPBOARD_CONTAINER": restored]) { $1 })
        try #require(restore.status == 0, "\(restore)")
        let hashes = try setup.container.sqlite(
            "SELECT count(*) FROM attachments WHERE content_hash = '' AND state = 'present'", readOnly: true,
            database: restored + "/store/TripBoard.sqlite").trimmedStdout
        #expect(hashes == "0", "the archived store holds every hash")
        let check = try setup.container.app(arguments: ["container", "check"],
                                            environment: environment.merging(["TRIPBOARD_CONTAINER": restored]) { $1 })
        #expect(check.status == 0 && check.stdout.contains("consistent"), "every file matches the hash the backup recorded: \(check)")
    }
}
