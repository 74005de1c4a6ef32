import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardModel

/// Purging the trash: after 30 days by the next writer (never a reader), at once by `trash
/// empty`, through the deletion queue — killed at its named steps and at random moments, and
/// held back by a backup's lock on `attachments/`.
@Suite struct TrashPurgeTests {
    static let deletedAt = "2026-11-01T10:00:00Z"

    static func at(_ time: String) -> [String: String] { ["TRIPBOARD_NOW": time] }

    @Test func theNextWriterPurgesAfter30DaysAndAReaderNever() throws {
        let container = try TestContainer()
        let (trip, _, files) = try container.tripWithAttachments(3)
        #expect(try container.app("trip", "delete", trip, environment: Self.at(Self.deletedAt)).status == 0)
        let entry = try #require(try (container.appJSON("trash", "list", environment: Self.at(Self.deletedAt)) as? [[String: Any]])?.first)
        #expect(entry["trashedAt"] as? String == "2026-11-01T10:00:00.000Z")
        #expect(entry["purgeAfter"] as? String == "2026-12-01T10:00:00.000Z")

        // A reader, however late: nothing changes.
        let before = try container.state()
        _ = try ProcessRunner.run("widget", ["--now", "2027-06-01T00:00Z"], environment: container.environment)
        #expect(try container.state() == before)
        // A writer before the 30 days are over: still there.
        #expect(try container.app("trip", "list", environment: Self.at("2026-12-01T09:59:59Z")).status == 0)
        #expect(try container.sqlite("SELECT count(*) FROM trips WHERE trashed_at IS NOT NULL").trimmedStdout == "1")
        #expect(container.regularFiles(under: "attachments").count == files.count)

        // The first writer after them, whatever its command: gone for good, files included.
        #expect(try container.app("trip", "list", environment: Self.at("2026-12-01T10:00:01Z")).status == 0)
        #expect(container.regularFiles(under: "attachments").isEmpty)
        #expect(try container.sqlite("SELECT count(*) FROM attachments; SELECT count(*) FROM bookings; SELECT count(*) FROM trips").stdoutLines
                == ["0", "0", "0"])
        try container.expectNothingLeftBehind("after the purge")
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")
    }

    @Test(arguments: ["purge.queued", "purge.unlinked"])
    func aPurgeKilledAtANamedStepIsFinishedByTheNextWriter(_ point: String) throws {
        let container = try TestContainer()
        let (trip, _, _) = try container.tripWithAttachments(5)
        try container.appOK("trip", "delete", trip)

        let killed = try container.app("trash", "empty", "--yes", environment: ["TRIPBOARD_CRASH_AT": point])

        // Looked at without `app`, which would finish the work first.
        #expect(killed.wasSignaled && killed.status == SIGKILL, "\(point): \(killed)")
        #expect(try container.sqlite("SELECT count(*) FROM trips; SELECT count(*) FROM attachments WHERE state = 'deleting'").stdoutLines
                == ["0", "5"], "\(point): out of the store from step 1 on, but for the queue")
        #expect(container.regularFiles(under: "attachments").count == (point == "purge.queued" ? 5 : 0))
        try container.expectNothingLeftBehind("\(point), killed", byTheApp: false)
        #expect(try container.app("container", "check").stdout.contains("unfinished deletion"), "\(point): a check only reports it")

        _ = try container.appOK("trip", "list")  // the next writer, doing something else entirely

        #expect(try container.sqlite("SELECT count(*) FROM attachments").trimmedStdout == "0", "\(point)")
        #expect(container.regularFiles(under: "attachments").isEmpty, "\(point)")
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")
    }

    @Test func purgesKilledAtRandomMomentsLeaveNothingBehind() throws {
        let container = try TestContainer()
        var generator = SystemRandomNumberGenerator()
        // The kills land anywhere in a purge as long as this machine takes for one: measured first.
        let (first, _, _) = try container.tripWithAttachments(20, name: "Calibration", size: 64 << 10)
        try container.appOK("trip", "delete", first)
        let started = Date()
        try container.appOK("trash", "empty", "--yes")
        let purgeMicroseconds = UInt32(max(20_000, Date().timeIntervalSince(started) * 1_000_000))
        var killed = 0
        for round in 0..<30 {
            let (trip, _, _) = try container.tripWithAttachments(20, name: "Round \(round)", size: 64 << 10)
            try container.appOK("trip", "delete", trip)
            let purge = try ProcessRunner.start("app", ["trash", "empty", "--yes"], environment: container.environment)
            usleep(UInt32.random(in: 0...purgeMicroseconds, using: &generator))
            purge.kill()
            if purge.wait().wasSignaled { killed += 1 }
            try container.expectNothingLeftBehind("round \(round), killed", byTheApp: false)
            // The next writer finishes a purge that got past step 1; one that did not is still
            // in the trash, and emptying it again finishes it.
            _ = try container.appOK("trip", "list")
            try container.expectNothingLeftBehind("round \(round), next writer")
            try container.appOK("trash", "empty", "--yes")
            #expect(container.regularFiles(under: "attachments").isEmpty, "round \(round)")
            #expect(try container.sqlite("SELECT count(*) FROM attachments").trimmedStdout == "0", "round \(round)")
        }
        #expect(killed >= 10, "the kill must land mid-purge often enough to mean something (killed \(killed))")
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")
    }

    /// A backup holds the deletion lock shared (here `flock -s` on `attachments/`, as
    /// `AttachmentFiles.holdingDeletionsBack` does): the purge leaves the trash at once but its
    /// files stay queued — the command does not fail — until a writer finds the lock free.
    @Test func aPurgeDuringABackupLeavesItsFilesQueuedForTheNextWriter() throws {
        let container = try TestContainer()
        let (trip, _, files) = try container.tripWithAttachments(2)
        try container.appOK("trip", "delete", trip)
        let backup = try ProcessRunner.start("/usr/bin/flock", ["-s", container.path + "/attachments", "sleep", "4"],
                                             environment: container.environment)
        defer { backup.kill() }
        try Self.waitForALock(on: container.path + "/attachments")

        let started = Date()
        let emptied = try container.app("trash", "empty", "--yes", environment: ["TRIPBOARD_LOCK_TIMEOUT": "0.5"])
        #expect(emptied.status == 0, "\(emptied)")
        #expect(emptied.stderr.contains("a backup is running: 2 attachment files will be removed once it has finished"), "\(emptied)")
        #expect(Date().timeIntervalSince(started) < 3, "waited its lock timeout, not for the backup")
        #expect(try container.trashList().isEmpty)
        #expect(container.regularFiles(under: "attachments").count == files.count, "nothing vanished under the backup")
        let writer = Date()
        _ = try container.appOK("trip", "list")
        #expect(Date().timeIntervalSince(writer) < 2, "a writer never waits for the backup")
        #expect(container.regularFiles(under: "attachments").count == files.count)

        backup.kill()
        _ = backup.wait()
        _ = try container.appOK("trip", "list")
        #expect(container.regularFiles(under: "attachments").isEmpty)
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")
    }

    static func waitForALock(on path: String) throws {
        var status = stat()
        try #require(stat(path, &status) == 0)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
            if locks.split(separator: "\n").contains(where: { $0.contains("FLOCK") && $0.hasSuffix(":\(status.st_ino) 0 EOF") }) { return }
            usleep(10_000)
        }
        Issue.record("no flock appeared on \(path)")
    }

    /// A store the previous build made (schema 1): the widget shows "updating" until the next app
    /// writer has migrated it, then every row is there.
    @Test func aVersion1StoreIsMigratedByTheNextAppWriter() throws {
        let container = try TestContainer()
        try container.appOK("container", "init")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: container.storePath + suffix) }
        let trip = "11111111-1111-4111-8111-111111111111"
        let v1 = try container.sqlite("""
            PRAGMA journal_mode = WAL;
            \(Schema.migrations[0])
            INSERT INTO trips VALUES ('\(trip)', 'Lisbon', '2026-12-12', '2026-12-15', '', 'pendingUpload', NULL, '2026-11-01T10:00:00.000Z');
            PRAGMA user_version = 1;
            """)
        #expect(v1.status == 0, "\(v1)")
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-01T00:00Z"], environment: container.environment)
        #expect(widget.status == 75 && widget.stdout.contains("updating"), "\(widget)")

        #expect(try container.appOK("trip", "list").contains("Lisbon"))

        #expect(try container.sqlite("PRAGMA user_version").trimmedStdout == String(Store.schemaVersion))
        #expect(try ProcessRunner.run("widget", ["--now", "2026-12-01T00:00Z"], environment: container.environment).stdout.hasPrefix("Lisbon"))
        try container.appOK("trip", "delete", trip)
        #expect(try container.trashList().count == 1)
    }
}
