import Foundation
import Testing

/// `trip list` with its filters, sort and limit, and `booking list` across trips, as a user runs them.
@Suite struct ListCommandTests {
    static func names(_ container: TestContainer, _ arguments: String..., now: String = "2026-12-10T12:00Z") throws -> [String] {
        let result = try container.app(arguments: ["trip", "list", "--json"] + arguments, environment: ["TRIPBOARD_NOW": now])
        #expect(result.status == 0, "\(result)")
        let trips = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return trips.compactMap { $0["name"] as? String }
    }

    static func calendar() throws -> TestContainer {
        let container = try TestContainer()
        try container.addTrip("Lisbon", start: "2026-12-01", end: "2026-12-05")
        try container.addTrip("Porto", start: "2026-12-08", end: "2026-12-11")
        try container.addTrip("kyoto", start: "2027-04-02", end: "2027-04-10")
        try container.addTrip("Berlin", start: "2026-12-20", end: "2026-12-22")
        return container
    }

    @Test func upcomingPastAndARangeChooseTheTripsAndLimitCutsTheList() throws {
        let container = try Self.calendar()
        #expect(try Self.names(container) == ["Lisbon", "Porto", "Berlin", "kyoto"])
        #expect(try Self.names(container, "--upcoming") == ["Porto", "Berlin", "kyoto"], "Porto is in progress")
        #expect(try Self.names(container, "--upcoming", "--limit", "1") == ["Porto"])
        #expect(try Self.names(container, "--past") == ["Lisbon"])
        #expect(try Self.names(container, "--upcoming", now: "2026-12-12T00:30Z") == ["Berlin", "kyoto"])
        #expect(try Self.names(container, "--from", "2026-12-05", "--to", "2026-12-08") == ["Lisbon", "Porto"])
        #expect(try Self.names(container, "--from", "2027-01-01") == ["kyoto"])
        #expect(try Self.names(container, "--sort", "name") == ["Berlin", "kyoto", "Lisbon", "Porto"])
        #expect(try Self.names(container, "--sort", "updated", "--limit", "2") == ["Berlin", "kyoto"])
        let table = try container.app("trip", "list", "--past", "--from", "2026-01-01", environment: [:])
        #expect(table.status == 64)
        let none = try container.app(arguments: ["trip", "list", "--from", "2030-01-01"])
        #expect(none.status == 0 && none.trimmedStdout == "No trips match.", "\(none)")
    }

    @Test(arguments: [
        (["--upcoming", "--past"], "error: --upcoming and --past exclude each other"),
        (["--to", "2026-12-01", "--upcoming"], "error: --upcoming and --to exclude each other"),
        (["--past", "--from=2026-12-01"], "error: --past and --from exclude each other"),
        (["--from", "2026-12-10", "--to", "2026-12-01"], "--to 2026-12-01 is before --from 2026-12-10"),
        (["--sort", "size"], "--sort 'size' is not one of start, name, updated"),
        (["--limit", "0"], "--limit '0' is not a whole number from 1 on"),
        (["--limit", "ten"], "--limit 'ten' is not a whole number from 1 on"),
        (["--from", "12/10/2026"], "--from '12/10/2026' is not a date"),
    ])
    func badFiltersAreUsageErrorsThatTouchNothing(arguments: [String], message: String) throws {
        let container = try TestContainer()
        let result = try container.app(arguments: ["trip", "list"] + arguments)
        #expect(result.status == 64 && result.stderr.contains(message), "\(result)")
        #expect(container.files().isEmpty, "no container is created")
    }

    @Test func bookingListWithoutATripListsEveryTripsBookingsInTimeOrder() throws {
        let container = try Self.calendar()
        let trips = try #require(try JSONSerialization.jsonObject(with: Data(container.appOK("trip", "list", "--json").utf8)) as? [[String: Any]])
        let ids = Dictionary(uniqueKeysWithValues: trips.map { ($0["name"] as! String, $0["id"] as! String) })
        try container.appOK("booking", "add", "--trip", ids["Berlin"]!, "--kind", "train", "--title", "ICE 1", "--starts-at", "2026-12-20T09:00Z")
        try container.appOK("booking", "add", "--trip", ids["Lisbon"]!, "--kind", "flight", "--title", "TP 1351", "--starts-at", "2026-12-01T07:35Z")
        try container.appOK("booking", "add", "--trip", ids["Porto"]!, "--kind", "hotel", "--title", "Pestana", "--starts-at", "2026-12-08",
                            "--ends-at", "2026-12-11")
        try container.appOK("booking", "add", "--trip", ids["Porto"]!, "--kind", "other", "--title", "Port tasting")
        let all = try container.appOK("booking", "list")
        let lines = all.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ID        TRIP    KIND    TITLE") == true, "\(all)")
        #expect(lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true)[3] } == ["TP", "Pestana", "ICE", "Port"], "\(all)")

        let upcoming = try container.app("booking", "list", "--upcoming", "--json", environment: ["TRIPBOARD_NOW": "2026-12-10T12:00Z"])
        let found = try #require(try JSONSerialization.jsonObject(with: Data(upcoming.stdout.utf8)) as? [[String: Any]])
        #expect(found.map { $0["title"] as? String } == ["Pestana", "ICE 1"], "the hotel runs to the 11th; undated ones are never upcoming")
        let one = try container.app("booking", "list", "--upcoming", "--limit", "1", environment: ["TRIPBOARD_NOW": "2026-12-10T12:00Z"])
        #expect(one.stdoutLines.count == 2 && one.stdout.contains("Pestana"), "\(one)")
        let ofOneTrip = try container.app("booking", "list", "--trip", ids["Porto"]!, "--upcoming", environment: ["TRIPBOARD_NOW": "2026-12-12T00:01Z"])
        #expect(ofOneTrip.trimmedStdout == "ID  KIND  TITLE  STARTS AT  ENDS AT  REFERENCE  SEAT  SYNC", "\(ofOneTrip)")
        let after = try container.app("booking", "list", "--upcoming", environment: ["TRIPBOARD_NOW": "2028-01-01T00:00Z"])
        #expect(after.trimmedStdout == "No upcoming bookings.", "\(after)")
    }

    /// An all-day booking lasts to midnight after its last day in its own zone, else in the
    /// viewer's (TZ): a Tokyo night is over after 15:00 UTC, a New York one after 05:00 UTC the
    /// next day (at the very instant it is still listed, as a timed booking is at its start).
    @Test func anAllDayBookingIsUpcomingUntilMidnightWhereItIs() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Far", start: "2027-03-01", end: "2027-03-10")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Ryokan", "--starts-at", "2027-03-03",
                            "--zone", "Asia/Tokyo")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Motel", "--starts-at", "2027-03-03")
        func upcoming(_ now: String, tz: String, trip: String? = nil) throws -> [String] {
            let result = try container.app(arguments: ["booking", "list", "--upcoming", "--json"] + (trip.map { ["--trip", $0] } ?? []),
                                           environment: ["TRIPBOARD_NOW": now, "TZ": tz])
            try #require(result.status == 0, "\(result)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            return rows.compactMap { $0["title"] as? String }
        }
        for scope in [nil, trip] {
            #expect(try upcoming("2027-03-03T14:59Z", tz: "America/New_York", trip: scope) == ["Ryokan", "Motel"])
            #expect(try upcoming("2027-03-03T15:00:01Z", tz: "America/New_York", trip: scope) == ["Motel"], "past midnight in Tokyo")
            #expect(try upcoming("2027-03-04T04:59Z", tz: "America/New_York", trip: scope) == ["Motel"], "still the 3rd in New York")
            #expect(try upcoming("2027-03-04T05:00:01Z", tz: "America/New_York", trip: scope) == [])
            #expect(try upcoming("2027-03-03T23:59Z", tz: "UTC", trip: scope) == ["Motel"])
            #expect(try upcoming("2027-03-03T12:00Z", tz: "Pacific/Kiritimati", trip: scope) == ["Ryokan"],
                    "UTC+14: the 3rd is over there, not in Tokyo")
        }
    }

    /// A name holding a bidirectional control (U+202E shows `gnp.exe` as `exe.png`) is printed
    /// with the control shown, in lists, `show` and messages; JSON keeps it, as data.
    @Test func bidirectionalControlsAreShownNotObeyed() throws {
        let container = try TestContainer()
        let name = "Trip \u{202E}gnp.exe \u{2066}x\u{2069}"
        let trip = try container.addTrip(name, start: "2027-01-01", end: "2027-01-02")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "other", "--title", "Ticket \u{202E}fdp.exe")
        for words in [["trip", "list"], ["trip", "show", trip], ["booking", "list"], ["booking", "list", "--trip", trip], ["search", "gnp"]] {
            let shown = try container.app(arguments: words)
            #expect(shown.status == 0, "\(words): \(shown)")
            #expect(!shown.stdout.unicodeScalars.contains { [0x202E, 0x2066, 0x2069].contains($0.value) }, "\(words): \(shown.stdout)")
        }
        #expect(try container.appOK("trip", "list").contains("Trip \\u{202E}gnp.exe \\u{2066}x\\u{2069}"))
        #expect(try container.appOK("trip", "list", "--json").contains(name), "JSON keeps the name as it is")
    }
}
