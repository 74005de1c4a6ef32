import Foundation
import Testing
@testable import TripBoardStorage

/// `trip delete` and friends move to the trash; `trash list`, `trash restore`, `trash empty` —
/// run as the real executables on fresh containers.
@Suite struct TrashTests {
    /// A trip with a place and a ticket shared into it (a booking, an attachment, a thumbnail).
    static func sharedTrip(_ container: TestContainer) throws -> (trip: String, attachment: String, relative: String, pdf: Data) {
        let trip = try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        try container.appOK("place", "add", "--trip", trip, "--name", "Louvre")
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let shared = try container.shareOK(try container.input(pdf, as: "boarding.pdf"))
        let attachment = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        return (trip, attachment, "attachments/\(attachment.prefix(2))/\(attachment).pdf", pdf)
    }

    @Test func aDeletedTripGoesToTheTrashWithItsChildrenAndComesBackWhole() throws {
        let container = try TestContainer()
        let (trip, attachment, relative, pdf) = try Self.sharedTrip(container)
        #expect(container.thumbnails == [attachment])

        let deleted = try container.app("trip", "delete", String(trip.prefix(8)))

        #expect(deleted.status == 0 && deleted.stdout.isEmpty, "\(deleted)")
        #expect(deleted.stderr.contains("moved trip Paris with 1 place, 1 booking, 1 attachment to the trash"), "\(deleted)")
        #expect(container.thumbnails.isEmpty, "its thumbnail went at once")
        #expect(try container.unsealed("container/" + relative) == pdf, "its file stays until the purge")
        #expect(try container.appOK("trip", "list").hasPrefix("No trips yet"))
        #expect(try container.appOK("attachment", "list") == "No attachments.")
        #expect(try container.app("trip", "show", trip).status == 66)
        #expect(try container.app("attachment", "export", attachment, container.root.path + "/out.pdf").status == 66)
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-11T10:00Z", "--json"], environment: container.environment)
        #expect(widget.stdout.contains("\"status\" : \"none\""), "\(widget)")
        let entries = try container.trashList()
        #expect(entries.count == 1)
        #expect(entries.first?["kind"] as? String == "trip" && entries.first?["id"] as? String == trip)
        #expect(entries.first?["contents"] as? [String: Int] == ["places": 1, "bookings": 1, "attachments": 1])
        #expect(try container.appOK("trash", "list").contains("Paris"))
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")

        try container.appOK("trash", "restore", String(trip.prefix(6)))

        #expect(try container.appOK("place", "list", "--trip", trip).contains("Louvre"))
        #expect(try container.appOK("booking", "list", "--trip", trip).contains("TP 1351"))
        #expect(try container.appOK("attachment", "list", "--trip", trip).contains("boarding.pdf"))
        #expect(try container.unsealed("container/" + relative) == pdf, "byte-identical")
        #expect(try container.app("attachment", "thumbnail", attachment, container.root.path + "/out.png").status == 0)
        #expect(container.thumbnails == [attachment], "the thumbnail is made again")
        #expect(try ProcessRunner.run("widget", ["--now", "2026-12-11T10:00Z"], environment: container.environment).stdout.hasPrefix("Paris"))
        #expect(try container.appOK("trash", "list") == "The trash is empty.")
        let pending = try #require(try container.appJSON("sync", "pending") as? [[String: Any]])
        #expect(Set(pending.compactMap { $0["kind"] as? String }) == ["trip", "place", "booking", "attachment"])
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")
    }

    @Test func emptyingTheTrashRemovesRowsFilesAndThumbnailsAndAsksFirst() throws {
        let container = try TestContainer()
        let (trip, _, _, _) = try Self.sharedTrip(container)
        let (other, _, _) = try container.tripWithAttachments(3, name: "Porto")
        try container.appOK("trip", "delete", trip)
        try container.appOK("trip", "delete", other)
        let before = try container.state()

        let refused = try container.app("trash", "empty")
        #expect(refused.status == 64 && refused.stderr.contains("pass --yes"), "\(refused)")
        #expect(try container.state() == before, "refused without a terminal to ask on: nothing changed")

        let emptied = try container.app("trash", "empty", "--yes")

        #expect(emptied.status == 0, "\(emptied)")
        #expect(emptied.stderr.contains("deleted for good: trip Porto (with 1 booking, 3 attachments), trip Paris"), "\(emptied)")
        #expect(try container.sqlite("SELECT (SELECT count(*) FROM trips) + (SELECT count(*) FROM places) + (SELECT count(*) FROM bookings) + (SELECT count(*) FROM attachments)").trimmedStdout == "0")
        #expect(container.regularFiles(under: "attachments").isEmpty)
        #expect(container.thumbnails.isEmpty)
        #expect(try container.appOK("trash", "list") == "The trash is empty.")
        #expect(try container.appOK("trash", "empty", "--yes") == "The trash is empty.")
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")
    }

    /// On a terminal `trash empty` asks, and only "y" or "yes" deletes (through script(1)'s pty).
    @Test(arguments: [("n\n", false), ("y\n", true)])
    func onATerminalEmptyingAsksFirst(answer: String, deletes: Bool) throws {
        let container = try TestContainer()
        let (trip, _, files) = try container.tripWithAttachments(2)
        try container.appOK("trip", "delete", trip)
        let command = "'\(ProcessRunner.executable("app"))' trash empty"
        let result = try ProcessRunner.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: container.environment,
                                           stdin: Array(answer.utf8))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Delete trip Lisbon (with 1 booking, 2 attachments) for good? This cannot be undone. [y/N]"),
                "\(result)")
        #expect(container.regularFiles(under: "attachments").count == (deletes ? 0 : files.count))
        #expect(try container.trashList().count == (deletes ? 0 : 1))
    }

    @Test func onlyWholeEntriesAreRestoredAndOnlyWhereTheyCanGo() throws {
        let container = try TestContainer()
        let (trip, booking, _) = try container.tripWithAttachments(1)
        let place = try container.appOK("place", "add", "--trip", trip, "--name", "Belém")
        try container.appOK("place", "delete", place)
        try container.appOK("trip", "delete", trip)

        let intoATrashedTrip = try container.app("trash", "restore", place)
        #expect(intoATrashedTrip.status == 65, "\(intoATrashedTrip)")
        #expect(intoATrashedTrip.stderr.contains("its trip Lisbon is in the trash too; restore that first: app trash restore \(trip.prefix(8))"),
                "\(intoATrashedTrip)")
        let aMember = try container.app("trash", "restore", booking)
        #expect(aMember.status == 65 && aMember.stderr.contains("went to the trash with trip \(trip)"), "\(aMember)")
        #expect(try container.app("trash", "restore", "ffff").status == 66)
        #expect(try container.app("trash", "restore", "not-an-id").status == 64)

        try container.appOK("trash", "restore", trip)
        #expect(try container.appOK("place", "list", "--trip", trip).contains("Belém") == false, "deleted on its own: still in the trash")
        try container.appOK("trash", "restore", place)
        #expect(try container.appOK("place", "list", "--trip", trip).contains("Belém"))
    }

    /// The server had them: deleted, they are tombstones for sync at once — the attachment too.
    @Test func aTrashedUploadedAttachmentIsTombstonedWithItsBooking() throws {
        let container = try TestContainer()
        let (trip, booking, files) = try container.tripWithAttachments(1)
        let attachment = try #require(files.keys.first.map { String($0.split(separator: "/")[2].prefix(36)) })
        for id in [trip, booking, attachment] { try container.appOK("sync", "ack", id, "--version", "1") }

        let deleted = try container.app("booking", "delete", booking)

        #expect(deleted.stderr.contains("the server will be told at the next sync"), "\(deleted)")
        let pending = try #require(try container.appJSON("sync", "pending") as? [[String: Any]])
        #expect(Set(pending.map { "\($0["kind"] as? String ?? "") \($0["syncState"] as? String ?? "")" })
                == ["booking pendingDeletion", "attachment pendingDeletion"])
        try container.appOK("trash", "restore", booking)
        let restored = try #require(try container.appJSON("sync", "pending") as? [[String: Any]])
        #expect(Set(restored.map { "\($0["kind"] as? String ?? "") \($0["syncState"] as? String ?? "") \($0["remoteVersion"] as? Int ?? 0)" })
                == ["booking pendingUpload 1", "attachment pendingUpload 1"], "restored: a new version of what the server had")
    }

    /// Killed after the deletion's commit, before its thumbnails went: the cache entry of an
    /// attachment in the trash is stale for `container check`, and `--repair` removes it.
    @Test func aThumbnailLeftByAKilledDeleteIsAStaleCacheEntry() throws {
        let container = try TestContainer()
        let (trip, attachment, _, _) = try Self.sharedTrip(container)
        let killed = try container.app("trip", "delete", trip, environment: ["TRIPBOARD_CRASH_AT": "trash.moved"])
        #expect(killed.wasSignaled, "\(killed)")
        #expect(try container.trashList().count == 1, "committed")
        #expect(container.thumbnails == [attachment])

        let check = try container.app("container", "check", "--grace", "0")
        #expect(check.status == 65 && check.stdout.contains("stale cache entry: caches/thumbnails/\(attachment).png.sealed"), "\(check)")
        #expect(try container.app("container", "check", "--repair", "--grace", "0").status == 0)
        #expect(container.thumbnails.isEmpty)
        try container.expectNothingLeftBehind("after the repair")
    }
}
