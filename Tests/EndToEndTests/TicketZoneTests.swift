import Foundation
import Testing

/// Which zone a shared ticket's times are read in (docs/cli.md, "Which zone a ticket's times are
/// in"): `--zone`; the departure airport the ticket names; the trip's booking nearest in time
/// that has a zone; the sharer's TZ last — and the output says which.
@Suite struct TicketZoneTests {
    static let fromNewYork = ["TZ": "America/New_York"]

    static func share(_ container: TestContainer, _ lines: [String], _ extra: [String] = [], trip: String) throws -> [String: Any] {
        let pdf = try container.input(TicketPDF.make(lines: lines, salt: extra.joined()), as: "ticket.pdf")
        let result = try container.share([pdf, "--trip", trip, "--json"] + extra, environment: fromNewYork)
        try #require(result.status == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test func aFlightSharedFromNewYorkIsInItsDepartureAirportsZone() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let answer = try Self.share(container, TicketPDF.boardingPass, trip: trip)
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2026-12-12T07:35:00+00:00" && booking["zone"] as? String == "Europe/Lisbon", "\(booking)")
        let zone = try #require(answer["zone"] as? [String: Any])
        #expect(zone["source"] as? String == "departureAirport" && zone["from"] as? String == "LIS" && zone["name"] as? String == "Europe/Lisbon")

        let pdf = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass, salt: "human"), as: "again.pdf")
        let other = try container.addTrip("Other", start: "2026-12-01", end: "2026-12-20")
        let human = try container.share([pdf, "--trip", other], environment: Self.fromNewYork)
        #expect(human.status == 0 && human.stdout.contains("  zone:       Europe/Lisbon (the departure airport, LIS)\n"), "\(human)")
    }

    @Test func zoneOptionWinsAndABadOneIsRefused() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let answer = try Self.share(container, TicketPDF.boardingPass, ["--zone", "Asia/Tokyo"], trip: trip)
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2026-12-12T07:35:00+09:00" && booking["zone"] as? String == "Asia/Tokyo", "\(booking)")
        #expect((answer["zone"] as? [String: Any])?["source"] as? String == "option")

        let pdf = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass, salt: "bad"), as: "bad.pdf")
        let before = try container.state()
        for zone in ["Mars/Olympus", "../etc/passwd", "", "localtime", "posixrules", "posix/Europe/Lisbon", "right/Europe/Lisbon"] {
            let refused = try container.share([pdf, "--trip", trip, "--zone", zone])
            #expect(refused.status == 64 && refused.stderrLines.count == 1 && refused.stderr.contains("--zone"), "\(zone): \(refused)")
        }
        #expect(try container.state() == before)
    }

    /// A train ticket names no airport: the trip's booking nearest in time that has a zone decides.
    @Test func aTicketWithNoKnownPlaceTakesTheNearestBookingsZone() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        let far = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Far",
                                      "--starts-at", "2026-12-19T15:00", "--zone", "Europe/Madrid")
        let near = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Near",
                                       "--starts-at", "2026-12-13T15:00", "--zone", "Europe/Lisbon")
        _ = far
        let train = ["COMBOIOS DE PORTUGAL", "Train IC 523", "Zorvath Central - Quelmir Norte", "Date 14 DEC 2026 Departure 09:09"]
        let answer = try Self.share(container, train, trip: trip)
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2026-12-14T09:09:00+00:00" && booking["zone"] as? String == "Europe/Lisbon", "\(booking)")
        let zone = try #require(answer["zone"] as? [String: Any])
        #expect(zone["source"] as? String == "tripBooking" && zone["from"] as? String == near, "\(zone)")
    }

    /// A booking's zone this machine's database does not hold (one synced from a device with
    /// newer rules; here a `TZDIR` without it) is passed over: the times are read in the zone the
    /// output names — the next source's, here TZ's — never in TZ's under the booking's name.
    @Test func aNearestBookingsZoneThisMachineCannotLoadIsPassedOver() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        _ = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Near",
                                "--starts-at", "2026-12-13T15:00", "--zone", "Europe/Lisbon")
        let database = container.root.path + "/zoneinfo"
        try FileManager.default.createDirectory(atPath: database + "/America", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/America/New_York", toPath: database + "/America/New_York")
        let train = ["COMBOIOS DE PORTUGAL", "Train IC 523", "Zorvath Central - Quelmir Norte", "Date 14 DEC 2026 Departure 09:09"]
        let pdf = try container.input(TicketPDF.make(lines: train), as: "train.pdf")
        let result = try container.share([pdf, "--trip", trip, "--json"], environment: Self.fromNewYork.merging(["TZDIR": database]) { $1 })
        try #require(result.status == 0, "\(result)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let zone = try #require(answer["zone"] as? [String: Any])
        #expect(zone["source"] as? String == "sharer" && zone["name"] as? String == "America/New_York", "\(zone)")
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2026-12-14T09:09:00-05:00" && booking["zone"] as? String == "America/New_York", "\(booking)")
    }

    /// A train ticket's departure station, and a hotel's name, name their city: its zone.
    @Test(arguments: [
        (["COMBOIOS DE PORTUGAL", "Train IC 523", "From Lisboa Santa Apolónia to Porto Campanhã", "Date 14 DEC 2026 Departure 09:09"],
         "2026-12-14T09:09:00+00:00", "Europe/Lisbon", "Lisboa"),
        (["Booking confirmation", "Pousada de Lisboa", "Check-in 14 Dec 2026 15:00", "Confirmation number 84122394"],
         "2026-12-14T15:00:00+00:00", "Europe/Lisbon", "Lisboa"),
    ])
    func aStationOrAHotelNamesItsCity(lines: [String], startsAt: String, zone: String, place: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Away", start: "2026-12-10", end: "2026-12-20")
        let answer = try Self.share(container, lines, trip: trip)
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == startsAt && booking["zone"] as? String == zone, "\(answer["detected"] ?? "")")
        let decided = try #require(answer["zone"] as? [String: Any])
        #expect(decided["source"] as? String == "ticketPlace" && decided["from"] as? String == place, "\(decided)")
    }

    /// No place on the ticket and no booking with a zone: the city of one of the trip's places.
    @Test func thenTheCityOfOneOfTheTripsPlaces() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        let place = try container.appOK("place", "add", "--trip", trip, "--name", "Palácio da Pena", "--city", "Sintra")
        let answer = try Self.share(container, ["TICKET", "Date 14 DEC 2026 Departure 09:09", "Booking reference QX7Y2Z"], trip: trip)
        let decided = try #require(answer["zone"] as? [String: Any])
        #expect(decided["source"] as? String == "tripPlace" && decided["from"] as? String == place && decided["name"] as? String == "Europe/Lisbon",
                "\(decided)")
    }

    /// A ticket dated outside the trip it is filed in: kept, with a one-line warning.
    @Test func aTicketDatedOutsideItsTripIsKeptWithAWarning() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Later", start: "2027-03-25", end: "2027-03-30")
        let pdf = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "early.pdf")
        let result = try container.share([pdf, "--trip", trip], environment: Self.fromNewYork)
        #expect(result.status == 0 && result.stderrLines.count == 1
                && result.stderr.hasPrefix("warning: the ticket's date, 2026-12-12, is outside trip Later (2027-03-25 – 2027-03-30)"),
                "\(result)")
    }

    /// Nothing to go by: the sharer's TZ, and the output says so.
    @Test func otherwiseTheSharersZoneAndTheOutputSaysSo() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let train = ["COMBOIOS DE PORTUGAL", "Train IC 523", "Zorvath Central - Quelmir Norte", "Date 14 DEC 2026 Departure 09:09"]
        let pdf = try container.input(TicketPDF.make(lines: train), as: "train.pdf")
        let result = try container.share([pdf, "--trip", trip], environment: Self.fromNewYork)
        #expect(result.status == 0 && result.stdout.contains("  zone:       America/New_York (TZ, this computer's"), "\(result)")
        let booking = try #require((try JSONSerialization.jsonObject(with: Data(try container.appOK("booking", "list", "--json").utf8)) as? [[String: Any]])?.first)
        #expect(booking["startsAt"] as? String == "2026-12-14T09:09:00-05:00" && booking["zone"] as? String == "America/New_York", "\(booking)")
    }

    /// A journey's arrival, when the ticket labels it, is its end, on the clock of where it
    /// arrives: the arrival airport's zone (or the destination's name's), kept as the end's own
    /// zone and shown as such; a night train's arrival the next morning is the next day.
    @Test func theArrivalIsTheEndInTheZoneOfWhereItArrives() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Japan", start: "2027-04-01", end: "2027-04-12")
        let flight = ["Japan Airlines", "Boarding pass", "JL 44   London (LHR) -> Tokyo Haneda (HND)", "Departure: 01 Apr 2027 19:00",
                      "Arrival: 02 Apr 2027 15:20", "Booking reference: QJ7T2K"]
        let answer = try TicketZoneTests.share(container, flight, trip: trip)
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2027-04-01T19:00:00+01:00" && booking["zone"] as? String == "Europe/London", "\(booking)")
        #expect(booking["endsAt"] as? String == "2027-04-02T15:20:00+09:00" && booking["endZone"] as? String == "Asia/Tokyo", "\(booking)")
        let detected = try #require(answer["detected"] as? [String: Any])
        #expect(detected["arrivalDate"] as? String == "2027-04-02" && detected["arrivalTime"] as? String == "15:20", "\(detected)")
        let list = try container.appOK("booking", "list", "--trip", trip)
        #expect(list.contains("Thu 1 Apr 19:00 BST") && list.contains("Fri 2 Apr 15:20 JST"), "the arrival on Tokyo's clock: \(list)")

        // A night train: the arrival is printed without a date, earlier than the departure.
        let night = ["ÖBB Nightjet", "Train NJ 40490", "Wien Hbf -> Paris Est", "Abfahrt 05.04.2027 19:12", "Ankunft 09:41"]
        let train = try #require(try TicketZoneTests.share(container, night, trip: trip)["booking"] as? [String: Any])
        #expect(train["startsAt"] as? String == "2027-04-05T19:12:00+02:00" && train["endsAt"] as? String == "2027-04-06T09:41:00+02:00",
                "\(train)")
        #expect(train["endZone"] as? String == "Europe/Paris", "Paris's zone, on Vienna's clock that night: \(train)")

        // An arrival whose place has no known zone is left out rather than guessed.
        let nowhere = ["Ferry ticket", "Route: Harbourtown -> Xyzzyville", "Departure 10.04.2027 08:00", "Arrival 12:30"]
        let ferry = try #require(try TicketZoneTests.share(container, nowhere, ["--zone", "Europe/Lisbon"], trip: trip)["booking"] as? [String: Any])
        #expect(ferry["endsAt"] is NSNull, "\(ferry)")
    }

    /// What an independent run of 75 tickets found: the arrival's own line names where it
    /// arrives; an itinerary ends with its last arrival; a yearless arrival date, a day marker
    /// and the date line decide its day; a sentence with the word "arrival" is no arrival.
    @Test(arguments: [
        // No route: the place on the arrival's line.
        (["FlixBus", "Booking number 3012345678", "Departure Sat 12 Jun 2027, 22:15 Berlin ZOB", "Arrival 06:45 Praha UAN Florenc"],
         "2027-06-13T06:45:00+02:00", "Europe/Prague"),
        // An itinerary: its last arrival, on that place's clock.
        (["Route LHR -> LAX", "Flight BA 117", "Departure 12 JUN 2027 08:20 London Heathrow", "Arrival 12 JUN 2027 11:15 New York JFK",
          "Flight AA 1", "Departure 12 JUN 2027 14:00 New York JFK", "Arrival 12 JUN 2027 17:25 Los Angeles"],
         "2027-06-12T17:25:00-07:00", "America/Los_Angeles"),
        // Across the date line: a yearless date, a marker, or neither (the day before is the first after departure).
        (["Flight NZ 10 AKL -> HNL", "Departure 15 JUN 2027 00:30", "Arrival 14 JUN 10:30"], "2027-06-14T10:30:00-10:00", "Pacific/Honolulu"),
        (["Flight NZ 10 AKL -> HNL", "Departure 15 JUN 2027 00:30", "Arrival 10:30 (-1)"], "2027-06-14T10:30:00-10:00", "Pacific/Honolulu"),
        (["Flight NZ 10 AKL -> HNL", "Departure 15 JUN 2027 00:30", "Arrival 10:30"], "2027-06-14T10:30:00-10:00", "Pacific/Honolulu"),
        (["Flight QF 12 LAX -> SYD", "Departure 14 JUN 2027 22:00", "Arrival 16 JUN 06:30"], "2027-06-16T06:30:00+10:00", "Australia/Sydney"),
        (["Flight QF 12 LAX -> SYD", "Departure 14 JUN 2027 22:00", "Arrival 06:30 (+2)"], "2027-06-16T06:30:00+10:00", "Australia/Sydney"),
        // A station joined to its city by a hyphen.
        (["Eurostar 9316", "Vertrek 14 jun 2027 10:15 Bruxelles-Midi", "Aankomst 13:35 Amsterdam Centraal"], "2027-06-14T13:35:00+02:00",
         "Europe/Amsterdam"),
    ] as [([String], String, String)])
    func anArrivalIsReadWhereItIsPrinted(lines: [String], endsAt: String, endZone: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Away", start: "2027-06-01", end: "2027-06-30")
        // A ticket that names no departure place is read as shared from Berlin.
        let departsFromAPlace = lines.contains { $0.contains("->") }
        let answer = try TicketZoneTests.share(container, lines, departsFromAPlace ? [] : ["--zone", "Europe/Berlin"], trip: trip)
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["endsAt"] as? String == endsAt && (booking["endZone"] as? String ?? booking["zone"] as? String) == endZone,
                "\(lines): \(booking)")
    }

    /// A slashed date both readings fit is read month first on a journey from the United States,
    /// day first from anywhere else, the clock notwithstanding.
    @Test func theDepartureCountryDecidesASlashedDate() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Spring", start: "2027-04-01", end: "2027-05-31")
        let american = try #require(try TicketZoneTests.share(container, ["American Airlines", "AA 100 JFK -> LAX", "Departure 05/04/2027 07:05"],
                                                              trip: trip)["booking"] as? [String: Any])
        #expect(american["startsAt"] as? String == "2027-05-04T07:05:00-04:00", "\(american)")
        let british = try #require(try TicketZoneTests.share(container, ["British Airways", "BA 117 LHR -> JFK", "Departure 05/04/2027 7:05 PM"],
                                                             trip: trip)["booking"] as? [String: Any])
        #expect(british["startsAt"] as? String == "2027-04-05T19:05:00+01:00", "\(british)")
    }

    /// A hotel whose name names no place is where its address says.
    @Test func aHotelIsWhereItsAddressSays() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2027-03-25", end: "2027-03-31")
        let lines = ["Memmo Alfama", "Booking confirmation", "Address: Travessa das Merceeiras 27,", "1100-348 Lisboa, Portugal",
                     "Check-in: 28 Mar 2027 15:00", "Confirmation number: 48213377"]
        let answer = try TicketZoneTests.share(container, lines, trip: trip)
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2027-03-28T15:00:00+01:00" && booking["zone"] as? String == "Europe/Lisbon", "\(booking)")
        #expect((answer["zone"] as? [String: Any])?["source"] as? String == "ticketPlace", "\(answer)")
    }

    @Test func aSentenceWithTheWordArrivalIsNoArrival() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Away", start: "2027-06-01", end: "2027-06-30")
        for line in ["Please ensure your arrival at the gate by 15:50", "Arrival at the airport no later than 14:30"] {
            let lines = ["BA 5 LHR -> HND", "Departure 12 JUN 2027 16:30", line]
            let booking = try #require(try TicketZoneTests.share(container, lines, trip: trip)["booking"] as? [String: Any])
            #expect(booking["endsAt"] is NSNull, "\(line): \(booking)")
        }
    }

}


/// A departure printed as a day and month without a year (`02JAN`): the year that puts it inside
/// the trip, across New Year; with no trip named, the one trip that contains it.
@Suite struct YearlessTicketDateTests {
    static let year = Calendar(identifier: .gregorian).component(.year, from: Date())

    static func pass(_ day: String) -> [String] {
        ["BOARDING PASS", "TAP Air Portugal", "Flight TP 1351", "From LIS Lisbon To CDG Paris", "Departure \(day) 07:35", "Seat 12A"]
    }

    @Test func theYearThatPutsItInsideTheTripAcrossNewYear() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("New Year", start: "\(Self.year)-12-28", end: "\(Self.year + 1)-01-04")
        let named = try TicketZoneTests.share(container, Self.pass("02JAN"), trip: trip)
        #expect((named["booking"] as? [String: Any])?["startsAt"] as? String == "\(Self.year + 1)-01-02T07:35:00+00:00", "\(named)")

        let pdf = try container.input(TicketPDF.make(lines: Self.pass("30DEC")), as: "unnamed.pdf")
        let unnamed = try container.share([pdf, "--json"], environment: TicketZoneTests.fromNewYork)
        #expect(unnamed.status == 0, "\(unnamed)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(unnamed.stdout.utf8)) as? [String: Any])
        #expect(answer["tripId"] as? String == trip && (answer["booking"] as? [String: Any])?["startsAt"] as? String
                == "\(Self.year)-12-30T07:35:00+00:00", "\(answer)")
    }
}
