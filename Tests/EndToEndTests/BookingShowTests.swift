import Foundation
import Testing

/// `app booking show ID [--json]`: one booking with its trip and its attachments, by id or
/// unique prefix; a booking in the trash or unknown is not found (66), touching nothing.
@Suite struct BookingShowTests {
    @Test func aBookingIsShownWithItsTripAndItsTicket() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let pass = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "pass.pdf")
        let shared = try container.share([pass, "--trip", trip])
        #expect(shared.status == 0, "\(shared)")
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("booking", "list", "--json").utf8)) as? [[String: Any]])
        let booking = try #require(listed.first)
        let id = try #require(booking["id"] as? String)

        let shown = try container.appOK("booking", "show", String(id.prefix(8)))
        let lines = shown.split(separator: "\n").map(String.init)
        #expect(lines.first == booking["title"] as? String, "\(shown)")
        #expect(lines.contains("  id:       \(id)") && lines.contains("  trip:     Lisbon  (\(trip.prefix(8)))"), "\(shown)")
        #expect(lines.contains("  ref:      X7K2QP") && lines.contains("  seat:     12A") && lines.contains("  attachments:"), "\(shown)")
        #expect(lines.contains { $0.hasPrefix("    pass.pdf · ") }, "the ticket it was filed from: \(shown)")

        let json = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("booking", "show", id, "--json").utf8)) as? [String: Any])
        #expect(Set(json.keys) == Set(booking.keys).union(["tripName", "attachments"]), "the booking's keys, as `booking list --json` writes them, and two more")
        #expect(json["tripName"] as? String == "Lisbon" && json["seat"] as? String == "12A")
        #expect((json["attachments"] as? [[String: Any]])?.first?["originalFilename"] as? String == "pass.pdf")
    }

    @Test func aBookingThatIsNotLiveIsNotFound() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let id = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Memmo Alfama")
        try container.appOK("booking", "delete", id)
        let before = try container.state()
        for words in [["booking", "show", id], ["booking", "show", "00000000"]] {
            let result = try container.app(arguments: words)
            #expect(result.status == 66 && result.stderrLines.count == 1 && result.stdout.isEmpty, "\(words): \(result)")
        }
        #expect(try container.app("booking", "show", "not-an-id").status == 64)
        #expect(try container.state() == before, "showing changes nothing")
    }
}
