import Foundation
import Testing

/// Blobs no live record names leave the server (docs/sync.md, Blobs no record names): only
/// after `AgentLimits.blobGraceDays` without an upload, a push naming them or a deletion that
/// stopped naming them — aged here by moving `last_used` back on the real server, as a clock
/// would — and never while the server cannot tell which blob a live record names. What the
/// trash brings back, and a batch that waited on its device past the grace period, get their
/// files uploaded again.
@Suite struct SyncBlobCollectionTests {
    /// A is in zone "default" with two bookings in "Paris", each with a ticket: the boarding
    /// pass shared into the trip (kept), and another ticket filed into a booking made by hand
    /// (the one the tests delete). Both devices have synced both files.
    private static func twoTicketsOnTwoDevices() throws
        -> (server: PostgresServer, a: SyncDevice, b: SyncDevice, kept: String, deleted: (booking: String, attachment: String, pdf: Data)) {
        let (server, a, b) = try SyncTests.twoDevices()
        let (_, attachment) = try SyncAttachmentTests.shareTicket(on: a)
        let kept = try #require(attachment["id"] as? String)
        let trip = try a.container.sqlite("SELECT id FROM trips").trimmedStdout
        let booking = try a.ok("booking", "add", "--trip", trip, "--kind", "train", "--title", "Thalys 9312")
        let pdf = TicketPDF.make(lines: ["TRAIN TICKET", "Thalys 9312"], padding: 40_000, salt: "collected")
        let shared = try a.container.shareOK(try a.container.input(pdf, as: "thalys.pdf"), "--booking", booking)
        let deleted = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        #expect(try a.sync()["blobsUploaded"] as? Int == 2)
        #expect(try b.sync()["blobsDownloaded"] as? Int == 2)
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE kind = 'attachment' AND blob IS NOT NULL") == "2",
                "every attachment record says which blob it names")
        return (server, a, b, kept, (booking, deleted, pdf))
    }

    /// Moves every blob's `last_used` back past the grace period.
    private static func age(_ server: PostgresServer) throws {
        _ = try server.psql("UPDATE tripboard.blobs SET last_used = now() - interval '32 days'")
    }

    private static func blobName(of attachment: String, on server: PostgresServer) throws -> String {
        try server.psql("SELECT blob FROM tripboard.records WHERE kind = 'attachment' AND id = '\(attachment)'")
    }

    @Test func aBlobNoLiveRecordNamesIsRemovedOnlyAfterTheGracePeriod() throws {
        let (server, a, b, kept, deleted) = try Self.twoTicketsOnTwoDevices()
        defer { withExtendedLifetime(server) {} }
        let keptBlob = try Self.blobName(of: kept, on: server)
        let deletedBlob = try Self.blobName(of: deleted.attachment, on: server)

        // Old blobs both, but both named: nothing goes, and both are kept another grace period.
        try Self.age(server)
        #expect(try a.sync()["blobsCollected"] as? Int == 0)
        #expect(try server.psql("SELECT count(*) FROM tripboard.blobs WHERE last_used > now() - interval '1 day'") == "2")

        // The booking deleted (its attachment with it): its blob is unnamed now, but the deletion
        // touched it, so the next syncs keep it for the grace period.
        try a.ok("booking", "delete", deleted.booking)
        #expect(try a.sync()["pushed"] as? Int == 2)
        #expect(try b.sync()["trashed"] as? Int == 1)
        #expect(try a.sync()["blobsCollected"] as? Int == 0)
        #expect(try server.psql("SELECT count(*) FROM tripboard.blobs") == "2")

        // Past the grace period: the unnamed blob goes, chunks and all; the named one stays.
        try Self.age(server)
        let collected = try b.sync()
        #expect(collected["blobsCollected"] as? Int == 1, "\(collected)")
        #expect(try server.psql("SELECT name FROM tripboard.blobs") == keptBlob)
        #expect(try server.psql("SELECT count(*) FROM tripboard.blob_chunks WHERE name = '\(deletedBlob)'") == "0")
        let line = try a.ok("sync", "now")
        #expect(!line.contains("removed from the server"), "nothing is collected twice: \(line)")
        #expect(try b.container.sqlite("SELECT state FROM attachments WHERE id = '\(kept)'").trimmedStdout == "present")
    }

    /// Restored from the trash after its blob was collected: the restoring device uploads the
    /// file again with the record; A takes it out of its trash, and a device joining afterwards
    /// fetches and verifies it.
    @Test func anAttachmentRestoredAfterItsBlobWasCollectedIsUploadedAgain() throws {
        let (server, a, b, _, deleted) = try Self.twoTicketsOnTwoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("booking", "delete", deleted.booking)
        try a.sync()
        try b.sync()
        try Self.age(server)
        #expect(try a.sync()["blobsCollected"] as? Int == 1)

        try b.ok("trash", "restore", deleted.booking)
        let restored = try b.sync()
        #expect(restored["blobsUploaded"] as? Int == 1 && restored["pending"] as? Int == 0, "\(restored)")
        #expect(try server.psql("SELECT count(*), bool_and(complete) FROM tripboard.blobs") == "2|t")
        #expect(try Self.blobName(of: deleted.attachment, on: server).count == 64)
        try a.sync()
        #expect(try a.container.sqlite("SELECT state, trashed_at IS NULL FROM attachments WHERE id = '\(deleted.attachment)'").trimmedStdout
                == "present|1")

        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let joined = try c.sync()
        #expect(joined["blobsDownloaded"] as? Int == 2 && joined["attachmentsMissing"] as? Int == 0, "\(joined)")
        let path = try c.container.sqlite("SELECT relative_path FROM attachments WHERE id = '\(deleted.attachment)'").trimmedStdout
        #expect(try c.container.unsealed("container/" + path) == deleted.pdf)
    }

    /// A batch saved on its device (killed at `sync.batch-saved`, after the file went up) and
    /// sent only after its blob was collected: the server answers that the blob is missing, and
    /// the device uploads it again before the run ends.
    @Test func aBatchThatWaitedPastTheGracePeriodUploadsItsFileAgain() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (pdf, attachment) = try SyncAttachmentTests.shareTicket(on: a)
        let id = try #require(attachment["id"] as? String)
        let killed = try a.app("sync", "now", environment: ["TRIPBOARD_CRASH_AT": "sync.batch-saved"])
        #expect(killed.wasSignaled && killed.status == SIGKILL, "\(killed)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.blobs") == "1" && server.psql("SELECT count(*) FROM tripboard.records") == "0")
        // Nothing names it yet: past the grace period, B's sync collects it.
        try Self.age(server)
        #expect(try b.sync()["blobsCollected"] as? Int == 1)
        #expect(try server.psql("SELECT count(*) FROM tripboard.blobs") == "0")

        let resumed = try a.sync()
        #expect(resumed["replayed"] as? Int == 0 && resumed["pushed"] as? Int == 3, "\(resumed)")
        #expect(resumed["blobsUploaded"] as? Int == 1, "the missing file went up again: \(resumed)")
        #expect(try server.psql("SELECT count(*), bool_and(complete) FROM tripboard.blobs") == "1|t")
        #expect(try b.sync()["blobsDownloaded"] as? Int == 1)
        #expect(try b.container.unsealed("container/attachments/\(id.prefix(2))/\(id).pdf") == pdf)
    }

    /// Records pushed by a client that did not say which blob they name (as before schema 3):
    /// nothing is collected in the zone until a device that has them at the server's version
    /// names them; then only the unnamed blob goes.
    @Test func nothingIsCollectedWhileTheServerCannotTellWhichBlobARecordNames() throws {
        let (server, a, b, kept, deleted) = try Self.twoTicketsOnTwoDevices()
        defer { withExtendedLifetime(server) {} }
        let keptBlob = try Self.blobName(of: kept, on: server)
        try a.ok("booking", "delete", deleted.booking)
        try a.sync()
        _ = try server.psql("UPDATE tripboard.records SET blob = NULL")
        try Self.age(server)

        // B has not pulled the deletion yet, and has the kept attachment at the server's version:
        // it names it, then collects the blob the deleted one named.
        let collected = try b.sync()
        #expect(collected["blobsCollected"] as? Int == 1, "\(collected)")
        #expect(try Self.blobName(of: kept, on: server) == keptBlob)
        #expect(try server.psql("SELECT name FROM tripboard.blobs") == keptBlob)

        // A record nobody can name (its device gone): nothing more is ever collected in the zone.
        _ = try server.psql("UPDATE tripboard.records SET blob = NULL WHERE id = '\(kept)'")
        _ = try server.psql("UPDATE tripboard.records SET version = version + 1 WHERE id = '\(kept)'")
        try Self.age(server)
        #expect(try a.sync()["blobsCollected"] as? Int == 0)
        #expect(try server.psql("SELECT name FROM tripboard.blobs") == keptBlob)
    }
}
