import Foundation
import Testing
import TripBoardModel

/// A booking's seat, the field that proves a new field is a small change (docs/architecture.md,
/// "One declaration per record"): entered, edited and removed on the command line, shown by every
/// list and by the widget, found by search, read from a ticket, and carried by export and import,
/// a backup and sync — all of it derived from `BookingColumn.seat`.
@Suite struct BookingSeatTests {
    func bookings(_ container: TestContainer) throws -> [[String: Any]] {
        let result = try container.app("booking", "list", "--json")
        #expect(result.status == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
    }

    @Test func aSeatIsEnteredShownSearchedEditedAndRemoved() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        // The trip by a prefix of its id, as docs/cli.md shows it.
        let id = try container.appOK("booking", "add", "--trip", String(trip.prefix(6)), "--kind", "flight", "--title", "TP 1351",
                                     "--starts-at", "2026-12-12T07:35+00:00", "--reference", "X7K2QP", "--seat", " 14C ")
        #expect(try bookings(container).first?["seat"] as? String == "14C", "trimmed, as every line is")
        let list = try container.appOK("booking", "list", "--trip", trip)
        #expect(list.hasPrefix("ID") && list.contains("SEAT") && list.contains("14C"), "\(list)")
        #expect(try container.appOK("trip", "show", trip).contains("TP 1351 · Sat 12 Dec 07:35 · ref X7K2QP · seat 14C"))
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-11T10:00Z"], environment: container.environment([:]))
        #expect(widget.stdout.contains("ref X7K2QP · seat 14C"), "\(widget)")
        #expect(try container.appOK("search", "14C").contains("TP 1351"))

        try container.appOK("booking", "edit", id, "--seat", "15D")
        #expect(try bookings(container).first?["seat"] as? String == "15D")
        #expect(try container.appOK("search", "15D").contains("TP 1351") && !(try container.appOK("search", "14C").contains("TP 1351")))
        try container.appOK("booking", "edit", id, "--seat", "")
        #expect(try bookings(container).first?["seat"] is NSNull, "an empty seat removes it")

        // Refused as --reference is (a usage error, 64) before the container is touched: a seat is
        // one line of at most 20 characters.
        let before = try container.state()
        let long = try container.app("booking", "edit", id, "--seat", String(repeating: "9", count: 21))
        #expect(long.status == 64 && long.stderr.contains("--seat is longer than 20 characters"), "\(long)")
        let twoLines = try container.app("booking", "add", "--trip", trip, "--kind", "train", "--title", "Alfa", "--seat", "4\n62")
        #expect(twoLines.status == 64 && twoLines.stderr.contains("single line"), "\(twoLines)")
        #expect(try container.state() == before)
        let help = try container.appOK("booking", "edit", "--help")
        #expect(help.contains("--seat SEAT") && help.replacingOccurrences(of: "\n", with: " ").contains("--end-zone, --reference or --seat"), "\(help)")
    }

    @Test func aSharedBoardingPassFilesItsSeat() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let pass = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "pass.pdf")
        let shared = try container.share([pass, "--trip", trip])
        #expect(shared.status == 0 && shared.stdout.contains("reference X7K2QP, seat 12A"), "\(shared)")
        #expect(try bookings(container).first?["seat"] as? String == "12A")
    }

    @Test func theSeatTravelsThroughExportAndImportAndAnImportedSeatIsChecked() throws {
        let source = try TestContainer()
        let trip = try source.addTrip()
        try source.appOK("booking", "add", "--trip", trip, "--kind", "train", "--title", "Alfa", "--seat", "4/62")
        let exportFile = source.root.appendingPathComponent("export.json").path
        try source.appOK("export", "--output", exportFile)
        let destination = try TestContainer()
        try destination.appOK("import", exportFile)
        #expect(try bookings(destination).first?["seat"] as? String == "4/62")

        let document = source.root.appendingPathComponent("bad.json").path
        try Data("""
            {"trips": [{"id": "11111111-2222-4333-8444-555555555555", "name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"}],
             "bookings": [{"tripId": "11111111-2222-4333-8444-555555555555", "kind": "train", "title": "T", "seat": 14}]}
            """.utf8).write(to: URL(fileURLWithPath: document))
        let before = try destination.state()
        let refused = try destination.app("import", document)
        #expect(refused.status == 65 && refused.stderr.contains("bookings[0].seat"), "\(refused)")
        #expect(try destination.state() == before)
    }

    @Test func theSeatIsBackedUpAndRestored() throws {
        let test = try TestContainer(device: "a")
        let device = try BackupRestoreTests.device(test, "a")
        let trip = try test.addTrip()
        try test.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351", "--seat", "14C")
        let file = test.root.appendingPathComponent("backup.age").path
        #expect(try BackupRestoreTests().backup(test, to: file, device: device).status == 0)
        let target = test.root.appendingPathComponent("restored").path
        let restored = try BackupRestoreTests().restore(test, file, into: target, device: device)
        #expect(restored.status == 0, "\(restored)")
        let list = try test.app(arguments: ["booking", "list", "--json"], environment: ["TRIPBOARD_CONTAINER": target])
        #expect(list.stdout.contains("\"seat\" : \"14C\""), "\(list)")
    }

    @Test func theSeatSyncsSealedAndAnEditReachesTheOtherDevice() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Porto", start: "2026-12-20", end: "2026-12-23")
        let id = try a.ok("booking", "add", "--trip", trip, "--kind", "train", "--title", "Alfa Pendular", "--seat", "4/62")
        _ = try a.sync()
        _ = try b.sync()
        #expect(try b.container.sqlite("SELECT seat FROM bookings").trimmedStdout == "4/62")
        #expect(try !server.psql("SELECT count(*) FROM tripboard.records WHERE fields::text LIKE '%4/62%'").contains("1"),
                "the server holds the seat sealed")
        try b.ok("booking", "edit", id, "--seat", "5/11")
        _ = try b.sync()
        _ = try a.sync()
        #expect(try a.container.sqlite("SELECT seat FROM bookings").trimmedStdout == "5/11")
        #expect(try b.content() == a.content())
    }
}
