import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `NextTrip.find`: the widget's question, asked of a real store.
struct NextTripTests {
    /// An instant the test knows is valid.
    private func instant(_ text: String) throws -> Timestamp { try #require(Timestamp(iso8601: text)) }

    private func find(_ fixture: StoreFixture, today: String, now: String = "2026-12-01T00:00Z",
                      viewer: String = "UTC") throws -> NextTrip? {
        try NextTrip.find(in: fixture.store.connection, today: day(today), now: instant(now), viewer: TimeZoneRules.named(viewer))
    }

    /// A trip the server has, then deleted here: a `pendingDeletion` tombstone.
    @discardableResult
    private func tombstone(_ fixture: StoreFixture, _ name: String, from start: String, to end: String) throws -> Trip {
        let trip = try fixture.addTrip(name, from: start, to: end)
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 1)
        #expect(try fixture.store.deleteTrip(id: trip.id).syncState == .pendingDeletion)
        return trip
    }

    // MARK: - Which trip

    /// Trips: Autumn 11-01…11-05, Lisbon 12-12…12-15, Porto 2027-01-10…01-12.
    @Test(arguments: [
        ("2026-10-01", "Autumn", NextTrip.Status.upcoming, 31 as Int?, nil as Int?),
        ("2026-11-03", "Autumn", .ongoing, nil, 3),
        ("2026-12-01", "Lisbon", .upcoming, 11, nil),
        ("2026-12-11", "Lisbon", .upcoming, 1, nil),
        ("2026-12-12", "Lisbon", .ongoing, nil, 1),
        ("2026-12-13", "Lisbon", .ongoing, nil, 2),
        ("2026-12-15", "Lisbon", .ongoing, nil, 4),  // the last day still counts
        ("2026-12-16", "Porto", .upcoming, 25, nil),
        ("2027-01-12", "Porto", .ongoing, nil, 3),
    ])
    func ongoingTripWinsElseTheSoonestUpcoming(today: String, name: String, status: NextTrip.Status,
                                               daysUntilStart: Int?, dayOfTrip: Int?) throws {
        let fixture = try StoreFixture()
        try fixture.addTrip("Porto", from: "2027-01-10", to: "2027-01-12")
        try fixture.addTrip("Lisbon", from: "2026-12-12", to: "2026-12-15")
        try fixture.addTrip("Autumn", from: "2026-11-01", to: "2026-11-05")

        let next = try #require(try find(fixture, today: today))

        #expect(next.trip.name == name)
        #expect(next.status == status)
        #expect(next.daysUntilStart == daysUntilStart)
        #expect(next.dayOfTrip == dayOfTrip)
        #expect(next.today == (try day(today)))
    }

    @Test func nothingWhenEveryTripIsOverOrThereAreNone() throws {
        let fixture = try StoreFixture()
        #expect(try find(fixture, today: "2026-12-01") == nil)
        try fixture.addTrip("Past", from: "2026-01-01", to: "2026-01-05")
        #expect(try find(fixture, today: "2026-12-01") == nil)
    }

    @Test func ofTwoOngoingTripsTheOneThatStartedFirstIsShown() throws {
        let fixture = try StoreFixture()
        try fixture.addTrip("Conference", from: "2026-12-13", to: "2026-12-14")
        try fixture.addTrip("Holiday", from: "2026-12-10", to: "2026-12-20")
        #expect(try find(fixture, today: "2026-12-13")?.trip.name == "Holiday")
    }

    @Test func ofTwoTripsStartingTheSameDayTheShorterIsShown() throws {
        let fixture = try StoreFixture()
        try fixture.addTrip("Long", from: "2026-12-20", to: "2026-12-30")
        try fixture.addTrip("Short", from: "2026-12-20", to: "2026-12-21")
        #expect(try find(fixture, today: "2026-12-01")?.trip.name == "Short")
    }

    /// The search for a trip in progress is bounded by the longest live trip; a 400-day trip that
    /// started 394 days ago must still be inside that bound.
    @Test func veryLongTripThatStartedLongAgoIsStillOngoing() throws {
        let fixture = try StoreFixture()
        let start = try day("2025-11-01")
        let long = try fixture.store.addTrip(TripDraft(name: "Sabbatical", startDate: start, endDate: start.adding(days: 399)))
        try fixture.addTrip("Weekend", from: "2026-12-06", to: "2026-12-07")
        try fixture.addTrip("Earlier", from: "2026-11-20", to: "2026-11-22")
        #expect(long.dayCount == 400)
        #expect(long.endDate == (try day("2026-12-05")))

        let next = try #require(try find(fixture, today: "2026-11-30"))

        #expect(next.trip.id == long.id)
        #expect(next.status == .ongoing)
        #expect(next.dayOfTrip == 395)
        #expect(try find(fixture, today: "2026-12-05")?.trip.name == "Sabbatical", "its last day")
        #expect(try find(fixture, today: "2026-12-06")?.trip.name == "Weekend")
    }

    @Test func tombstonedTripsAreIgnored() throws {
        let fixture = try StoreFixture()
        try tombstone(fixture, "Deleted now", from: "2026-12-12", to: "2026-12-15")
        try tombstone(fixture, "Deleted long", from: "2020-01-01", to: "2029-12-31")
        try tombstone(fixture, "Deleted soon", from: "2026-12-14", to: "2026-12-14")
        #expect(try find(fixture, today: "2026-12-13") == nil)

        try fixture.addTrip("Porto", from: "2027-01-10", to: "2027-01-12")
        let next = try #require(try find(fixture, today: "2026-12-13"))
        #expect(next.trip.name == "Porto")
        #expect(next.status == .upcoming)
    }

    // MARK: - Which booking

    /// Lisbon 12-12…12-15 with a flight at 07:35Z, a hotel at 15:00Z, a train on the 15th, and a
    /// museum visit with no time; and a flight of another trip in between.
    @Test(arguments: [
        ("2026-12-01T00:00Z", "Flight" as String?),
        ("2026-12-12T07:34:59Z", "Flight"),
        ("2026-12-12T07:35Z", "Flight"),  // at `now` counts
        ("2026-12-12T08:35+01:00", "Flight"),  // the same instant in another zone
        ("2026-12-12T07:35:01Z", "Hotel"),
        ("2026-12-12T16:00+01:00", "Hotel"),
        ("2026-12-12T16:00:01+01:00", "Train"),
        ("2026-12-15T09:00Z", "Train"),
        ("2026-12-15T09:00:01Z", nil),  // only the undated museum is left: never chosen
    ])
    func nextBookingIsTheFirstAtOrAfterNow(now: String, title: String?) throws {
        let fixture = try StoreFixture()
        let lisbon = try fixture.addTrip("Lisbon", from: "2026-12-12", to: "2026-12-15")
        let porto = try fixture.addTrip("Porto", from: "2027-01-10", to: "2027-01-12")
        let drafts = [
            BookingDraft(tripId: lisbon.id, kind: .event, title: "Museum"),
            BookingDraft(tripId: lisbon.id, kind: .train, title: "Train", startsAt: try instant("2026-12-15T10:00+01:00")),
            BookingDraft(tripId: lisbon.id, kind: .hotel, title: "Hotel", startsAt: try instant("2026-12-12T15:00Z")),
            BookingDraft(tripId: porto.id, kind: .flight, title: "Other trip", startsAt: try instant("2026-12-12T10:00Z")),
            BookingDraft(tripId: lisbon.id, kind: .flight, title: "Flight", startsAt: try instant("2026-12-12T07:35+00:00")),
        ]
        for draft in drafts { _ = try fixture.store.addBooking(draft) }

        let next = try #require(try find(fixture, today: "2026-12-12", now: now))

        #expect(next.trip.name == "Lisbon")
        #expect(next.nextBooking?.title == title)
    }

    @Test func tombstonedBookingIsSkipped() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip("Lisbon", from: "2026-12-12", to: "2026-12-15")
        let early = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .flight, title: "Cancelled",
                                                              startsAt: try instant("2026-12-12T07:35Z")))
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .train, title: "Train",
                                                      startsAt: try instant("2026-12-13T07:35Z")))
        try fixture.store.syncLedger.acknowledge(kind: .booking, id: early.id.text, remoteVersion: 1)
        #expect(try fixture.store.deleteBooking(id: early.id).syncState == .pendingDeletion)

        #expect(try find(fixture, today: "2026-12-01")?.nextBooking?.title == "Train")
    }

    @Test func tripWithOnlyUndatedBookingsHasNoNextBooking() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip("Lisbon", from: "2026-12-12", to: "2026-12-15")
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Somewhere"))
        let next = try #require(try find(fixture, today: "2026-12-01"))
        #expect(next.trip.id == trip.id)
        #expect(next.nextBooking == nil)
    }

    // MARK: - The day a traveller is having

    /// Lisbon 12-12…12-16: a Frankfurt train 09:13–12:30 (+01:00) on the 14th, the Tokyo-zoned
    /// hotel night of the 14th (all day, no end), a flight on the 16th, and a stay over the whole
    /// trip (all day, 12th to 16th) in Lisbon.
    @Test(arguments: [
        // The train that left an hour ago, until its arrival: under way.
        ("2026-12-14T10:13+01:00", "UTC", "Train", true),
        ("2026-12-14T12:30+01:00", "UTC", "Train", true),
        // The train arrived: the hotel night of the 14th in Tokyo (a day: a journey's length) is
        // over at midnight there, 15:00Z; before that it is today's, wherever it is read.
        ("2026-12-14T12:31+01:00", "UTC", "Tokyo night", true),
        ("2026-12-14T14:59Z", "America/New_York", "Tokyo night", true),
        ("2026-12-14T15:00:01Z", "UTC", "Flight", false),
        // Before the train, it is what starts next (the stay under way waits behind it).
        ("2026-12-13T12:00Z", "UTC", "Tokyo night", false),
        // After the flight, only the stay is left: shown under way until the 16th is over in Lisbon.
        ("2026-12-16T18:00Z", "UTC", "Stay", true),
        ("2026-12-17T00:00:01Z", "UTC", nil, false),
    ])
    func whatIsUnderWayOrNext(now: String, viewer: String, title: String?, underWay: Bool) throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip("Lisbon", from: "2026-12-12", to: "2026-12-16")
        let drafts = [
            BookingDraft(tripId: trip.id, kind: .train, title: "Train", start: .instant(try instant("2026-12-14T09:13+01:00")),
                         end: .instant(try instant("2026-12-14T12:30+01:00")), zone: "Europe/Berlin"),
            BookingDraft(tripId: trip.id, kind: .hotel, title: "Tokyo night", start: .allDay(try day("2026-12-14")), zone: "Asia/Tokyo"),
            BookingDraft(tripId: trip.id, kind: .flight, title: "Flight", start: .instant(try instant("2026-12-16T10:00Z")), zone: "Europe/Lisbon"),
            BookingDraft(tripId: trip.id, kind: .hotel, title: "Stay", start: .allDay(try day("2026-12-12")), end: .allDay(try day("2026-12-16")),
                         zone: "Europe/Lisbon"),
        ]
        for draft in drafts { _ = try fixture.store.addBooking(draft) }
        let next = try #require(try find(fixture, today: "2026-12-14", now: now, viewer: viewer))
        #expect(next.nextBooking?.title == title)
        #expect(next.underWay == underWay)
    }

    /// An all-day booking with no zone is the viewer's day: seen from New York at 20:00 on the
    /// 13th it has not begun (it used to be gone by then, counted from 00:00 UTC), and seen from
    /// Tokyo at 10:00 on the 14th it is today's (it used to be over at 09:00).
    @Test(arguments: [
        ("2026-12-14T01:00Z", "America/New_York", "Museum day", false),
        ("2026-12-14T01:00Z", "Asia/Tokyo", "Museum day", true),
        ("2026-12-14T14:59Z", "Asia/Tokyo", "Museum day", true),
        ("2026-12-14T15:00:01Z", "Asia/Tokyo", nil, false),
    ])
    func anAllDayBookingWithNoZoneIsTheViewersDay(now: String, viewer: String, title: String?, underWay: Bool) throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip("Lisbon", from: "2026-12-12", to: "2026-12-16")
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .event, title: "Museum day", start: .allDay(try day("2026-12-14"))))
        let next = try #require(try find(fixture, today: "2026-12-14", now: now, viewer: viewer))
        #expect(next.nextBooking?.title == title && next.underWay == underWay)
    }
}
