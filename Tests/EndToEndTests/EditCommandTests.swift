import Foundation
import Testing
import TripBoardModel

/// `place edit`, `booking edit`, and bookings with an end or all day, run as a user runs them.
@Suite struct EditCommandTests {
    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    static func booking(_ container: TestContainer, _ trip: String, _ id: String) throws -> [String: Any] {
        let listed = try #require(try json(try container.appOK("booking", "list", "--trip", trip, "--json")) as? [[String: Any]])
        return try #require(listed.first { $0["id"] as? String == id })
    }

    @Test func aPlaceIsRenamedAndItsCityChangedOrRemovedAndBecomesPending() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let place = try container.appOK("place", "add", "--trip", trip, "--name", "Belem", "--city", "Lisbon")
        try container.appOK("sync", "ack", place, "--version", "1")
        try container.appOK("place", "edit", String(place.prefix(8)), "--name", "  Torre de Belém ")
        var places = try #require(try Self.json(try container.appOK("place", "list", "--trip", trip, "--json")) as? [[String: Any]])
        #expect(places[0]["name"] as? String == "Torre de Belém", "trimmed, by FieldRules")
        #expect(places[0]["city"] as? String == "Lisbon")
        #expect(places[0]["syncState"] as? String == "pendingUpload")
        #expect(places[0]["remoteVersion"] as? Int == 1)
        try container.appOK("place", "edit", place, "--city", "")
        places = try #require(try Self.json(try container.appOK("place", "list", "--trip", trip, "--json")) as? [[String: Any]])
        #expect(places[0]["city"] is NSNull)
    }

    @Test func anEditThatChangesNothingLeavesTheSyncStateAlone() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let place = try container.appOK("place", "add", "--trip", trip, "--name", "Belém")
        try container.appOK("sync", "ack", place, "--version", "1")
        try container.appOK("place", "edit", place, "--name", "Belém")
        #expect(try container.appOK("sync", "pending").contains(place) == false)
    }

    @Test(arguments: [
        (["place", "edit", "PLACE"], 64, "nothing to change: give --name or --city"),
        (["place", "edit", "PLACE", "--name", " "], 64, "--name must not be empty"),
        (["place", "edit", "PLACE", "--city", "a\nb"], 64, "--city must be a single line"),
        (["place", "edit", "ffff0000", "--name", "X"], 66, "no place with id ffff0000"),
        (["booking", "edit", "BOOKING"], 64, "nothing to change"),
        (["booking", "edit", "BOOKING", "--kind", "boat"], 64, "'boat' is not a booking kind"),
        (["booking", "edit", "BOOKING", "--starts-at", "2026-12-32"], 64, "--starts-at '2026-12-32' does not exist: 2026-12 has 31 days"),
        (["booking", "edit", "BOOKING", "--ends-at", "2026-12-11"], 65, "the booking's end 2026-12-11 is before its start"),
        (["booking", "edit", "BOOKING", "--starts-at", ""], 65, "a booking with an end (endsAt 2026-12-15) needs a start"),
        (["booking", "edit", "BOOKING", "--title", ""], 64, "--title must not be empty"),
    ])
    func aRefusedEditSaysWhyAndChangesNothing(arguments: [String], status: Int32, message: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let place = try container.appOK("place", "add", "--trip", trip, "--name", "Belém")
        let booking = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Avenida",
                                          "--starts-at", "2026-12-12", "--ends-at", "2026-12-15")
        let before = try container.state()
        let words = arguments.map { $0 == "PLACE" ? place : $0 == "BOOKING" ? booking : $0 }
        let result = try container.app(arguments: words)
        #expect(result.status == status, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(try container.state() == before)
    }

    @Test func aBookingIsEditedFieldByFieldAndItsOrderFollowsItsStart() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let flight = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351",
                                         "--starts-at", "2026-12-12T07:35+00:00", "--reference", "X7K2QP")
        let hotel = try container.appOK("booking", "add", "--trip", trip, "--kind", "other", "--title", "Hotel",
                                        "--starts-at", "2026-12-12T15:00+00:00")
        try container.appOK("sync", "ack", hotel, "--version", "4")
        try container.appOK("booking", "edit", String(hotel.prefix(8)), "--kind", "HOTEL", "--title", "Hotel Avenida",
                            "--starts-at", "2026-12-12", "--ends-at", "2026-12-15", "--reference", "AV-1")
        let edited = try Self.booking(container, trip, hotel)
        #expect(edited["kind"] as? String == "hotel")
        #expect(edited["title"] as? String == "Hotel Avenida")
        #expect(edited["startsAt"] as? String == "2026-12-12", "all day")
        #expect(edited["endsAt"] as? String == "2026-12-15")
        #expect(edited["reference"] as? String == "AV-1")
        #expect(edited["syncState"] as? String == "pendingUpload")
        let listed = try #require(try Self.json(try container.appOK("booking", "list", "--trip", trip, "--json")) as? [[String: Any]])
        #expect(listed.map { $0["id"] as? String } == [hotel, flight], "an all-day start counts from 00:00 UTC of its day")

        try container.appOK("booking", "edit", flight, "--reference", "", "--ends-at", "2026-12-12T10:40+01:00")
        let flown = try Self.booking(container, trip, flight)
        #expect(flown["reference"] is NSNull)
        #expect(flown["endsAt"] as? String == "2026-12-12T10:40:00+01:00")
        try container.appOK("booking", "edit", flight, "--ends-at", "", "--starts-at", "")
        #expect(try Self.booking(container, trip, flight)["startsAt"] is NSNull)
        #expect(try container.sqlite("SELECT ifnull(starts_at_epoch, 'null'), ifnull(over_at_epoch, 'null') FROM bookings WHERE id = '\(flight)'")
                .trimmedStdout == "null|null")
    }

    @Test func bookingAddTakesAnEndAndADateAloneAndRefusesAnEndBeforeItsStart() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let hotel = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Avenida",
                                        "--starts-at", "2026-12-12", "--ends-at", "2026-12-15")
        let flight = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351",
                                         "--starts-at", "2026-12-12T07:35", "--ends-at", "2026-12-12T10:40+01:00")
        #expect(try Self.booking(container, trip, flight)["startsAt"] as? String == "2026-12-12T07:35:00+00:00", "local, TZ=UTC")
        #expect(try container.sqlite("SELECT starts_at_epoch, over_at_epoch FROM bookings WHERE id = '\(hotel)'").trimmedStdout
                == "1797033600|1797379200", "from 00:00 UTC of the 12th to the end of the 15th")
        let table = try container.appOK("booking", "list", "--trip", trip)
        let line = { (title: String) in table.split(separator: "\n").first { $0.contains(title) }.map(String.init) ?? "" }
        #expect(line("Avenida").contains("Sat 12 Dec        Tue 15 Dec"), "\(table)")
        #expect(line("TP 1351").contains("Sat 12 Dec 07:35  Sat 12 Dec 10:40 UTC+1"), "an end in another offset is marked: \(table)")
        #expect(try container.appOK("trip", "show", trip).contains("hotel Avenida · Sat 12 Dec → Tue 15 Dec"))

        let before = try container.state()
        for (arguments, status) in [(["--starts-at", "2026-12-12T10:00Z", "--ends-at", "2026-12-12T09:00Z"], Int32(65)),
                                    (["--starts-at", "2026-12-12", "--ends-at", "2026-12-11T23:00Z"], 65),
                                    (["--ends-at", "2026-12-12"], 65),
                                    (["--starts-at", "12/12/2026"], 64),
                                    (["--ends-at", "9999-12-31T23:59-14:00", "--starts-at", "2026-12-12"], 64)] {
            let result = try container.app(arguments: ["booking", "add", "--trip", trip, "--kind", "car", "--title", "Car"] + arguments)
            #expect(result.status == status, "\(arguments): \(result)")
        }
        #expect(try container.state() == before)
    }

    @Test func endsAndAllDayStartsTravelThroughExportAndImport() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Avenida",
                            "--starts-at", "2026-12-12", "--ends-at", "2026-12-15")
        let exported = try container.appOK("export")
        #expect(exported.contains("\"endsAt\" : \"2026-12-15\""))
        let other = try TestContainer()
        let file = other.root.appendingPathComponent("export.json")
        try Data(exported.utf8).write(to: file)
        try other.appOK("import", file.path)
        let booking = try #require(try Self.json(try other.appOK("booking", "list", "--trip", trip, "--json")) as? [[String: Any]]).first
        #expect(booking?["startsAt"] as? String == "2026-12-12")
        #expect(booking?["endsAt"] as? String == "2026-12-15")
        #expect(try other.sqlite("SELECT over_at_epoch FROM bookings").trimmedStdout == "1797379200")

        // An import is held to the same rule: an end before its start is refused, naming the record.
        let bad = other.root.appendingPathComponent("bad.json")
        try Data(#"{"trips": [{"name": "T", "startDate": "2026-12-12", "endDate": "2026-12-13", "id": "7a1c0000-0000-4000-8000-000000000002"}], "bookings": [{"tripId": "7a1c0000-0000-4000-8000-000000000002", "kind": "car", "title": "B", "startsAt": "2026-12-12", "endsAt": "2026-12-10"}]}"#.utf8).write(to: bad)
        let refused = try other.app("import", bad.path)
        #expect(refused.status == 65 && refused.stderr.contains("bookings[0]: the booking's end 2026-12-10 is before its start 2026-12-12"), "\(refused)")
    }

    @Test func theWidgetShowsAnAllDayBookingByItsDay() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try container.appOK("booking", "add", "--trip", trip, "--kind", "event", "--title", "Fado", "--starts-at", "2026-12-13")
        let result = try ProcessRunner.run("widget", ["--now", "2026-12-12T08:00Z"], environment: container.environment)
        #expect(result.status == 0 && result.stdout.contains("Fado · Sun 13 Dec\n"), "\(result)")
    }
}
