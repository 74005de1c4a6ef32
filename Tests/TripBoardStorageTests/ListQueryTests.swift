import Testing
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `trip list`'s filters and orders, and `booking list` across trips: what each returns, and
/// that the ordered-by-start lists walk an index from where they start and stop at the limit.
struct ListQueryTests {
    static func plan(_ sql: String, _ values: [SQLValue], _ store: Store) throws -> [String] {
        try store.connection.statement("EXPLAIN QUERY PLAN " + sql).rows(values) { $0.text(3) }
    }

    /// Trips of 1–5 days starting every other day through December 2026, some in the trash.
    static func calendar() throws -> StoreFixture {
        let fixture = try StoreFixture()
        for index in 0..<12 {
            let start = try day("2026-12-01").adding(days: index * 2)
            let trip = try fixture.store.addTrip(TripDraft(name: "Trip \(String(format: "%02d", 11 - index))", startDate: start,
                                                           endDate: start.adding(days: index % 5)))
            if index == 3 { try fixture.store.deleteTrip(id: trip.id) }
        }
        return fixture
    }

    static func names(_ store: Store, _ period: TripQuery.Period, _ order: TripQuery.Order = .start, limit: Int? = nil,
                      today: String = "2026-12-10") throws -> [String] {
        try store.trips(TripQuery(period: period, order: order, limit: limit, today: day(today))).map(\.name)
    }

    @Test func upcomingIsWhatHasNotEndedAndPastTheRestMostRecentFirst() throws {
        let fixture = try Self.calendar()
        // Trip 07 (index 4) runs 12-09 → 12-13: in progress on the 10th, so upcoming.
        #expect(try Self.names(fixture.store, .upcoming) == ["Trip 07", "Trip 06", "Trip 05", "Trip 04", "Trip 03", "Trip 02", "Trip 01", "Trip 00"])
        #expect(try Self.names(fixture.store, .upcoming, limit: 2) == ["Trip 07", "Trip 06"])
        #expect(try Self.names(fixture.store, .past) == ["Trip 09", "Trip 10", "Trip 11"], "Trip 08 is in the trash")
        #expect(try Self.names(fixture.store, .past, limit: 1) == ["Trip 09"])
        #expect(try Self.names(fixture.store, .all).count == 11)
    }

    @Test func aRangeFindsEveryTripWithADayInIt() throws {
        let fixture = try Self.calendar()
        let from = try day("2026-12-12"), to = try day("2026-12-14")
        #expect(try Self.names(fixture.store, .overlapping(from: from, to: to)) == ["Trip 07", "Trip 05"], "Trip 06 is over on the 11th")
        #expect(try Self.names(fixture.store, .overlapping(from: nil, to: try day("2026-12-03"))) == ["Trip 11", "Trip 10"])
        #expect(try Self.names(fixture.store, .overlapping(from: try day("2026-12-22"), to: nil)) == ["Trip 02", "Trip 00"])
    }

    @Test func listsSortByNameIgnoringCaseOrByTheLatestChange() throws {
        let fixture = try StoreFixture()
        for name in ["b", "A", "c"] {
            _ = fixture.clock.advance()
            try fixture.addTrip(name)
        }
        #expect(try Self.names(fixture.store, .all, .name) == ["A", "b", "c"])
        #expect(try Self.names(fixture.store, .all, .updated) == ["c", "A", "b"])
    }

    @Test func noLiveTripMeansNoQuery() throws {
        #expect(Store.tripList(TripQuery(today: try day("2026-12-10")), longest: nil) == nil)
    }

    /// `--upcoming --limit 20` reads the index from today − the longest trip on, in order, and
    /// stops at 20: no sort, no scan of the past. The range and the limit are in the plan.
    @Test func theUpcomingListWalksTheStartIndexFromItsBound() throws {
        let fixture = try Self.calendar()
        let upcoming = try #require(Store.tripList(TripQuery(period: .upcoming, limit: 20, today: try day("2026-12-10")), longest: 5))
        let plan = try Self.plan(upcoming.sql, upcoming.values, fixture.store)
        #expect(plan.first == "SEARCH trips USING INDEX trips_live_by_start (start_date>?)", "\(plan)")
        // Ties on (start, end) are put in name order in small groups, never by a sort of everything.
        #expect(plan.dropFirst().allSatisfy { $0 == "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY" }, "\(plan)")
        let past = try #require(Store.tripList(TripQuery(period: .past, limit: 20, today: try day("2026-12-10")), longest: 5))
        #expect(try Self.plan(past.sql, past.values, fixture.store).first == "SEARCH trips USING INDEX trips_live_by_start (start_date<?)")
        let range = try #require(Store.tripList(TripQuery(period: .overlapping(from: try day("2026-12-12"), to: try day("2026-12-14")),
                                                          today: try day("2026-12-10")), longest: 5))
        #expect(try Self.plan(range.sql, range.values, fixture.store).first
                == "SEARCH trips USING INDEX trips_live_by_start (start_date>? AND start_date<?)")
    }

    /// A `trip list` table reads `trips_live_by_start` alone, whatever the period: every column it
    /// shows is in the index (no table page per trip), and the rows are the full list's, in its order.
    @Test func theTableOfTripsReadsTheStartIndexAlone() throws {
        let fixture = try Self.calendar()
        let today = try day("2026-12-10")
        for period: TripQuery.Period in [.all, .upcoming, .past, .overlapping(from: try day("2026-12-12"), to: try day("2026-12-14"))] {
            let query = TripQuery(period: period, today: today)
            let table = try #require(Store.tripList(query, longest: 5, columns: RecordRows.tripTableColumns))
            let plan = try Self.plan(table.sql, table.values, fixture.store)
            #expect(plan.first?.hasPrefix("\(period == .all ? "SCAN" : "SEARCH") trips USING COVERING INDEX trips_live_by_start") == true,
                    "\(period): \(plan)")
            var shown: [String] = []
            try fixture.store.tripTableRows(query).forEachRow { row in
                row.withText(TripColumn.name.position) { shown.append(String(decoding: $0, as: UTF8.self)) }
            }
            #expect(shown == (try fixture.store.trips(query)).map(\.name), "\(period)")
        }
    }

    @Test func bookingsAcrossTripsComeInTimeOrderAndUpcomingOnesFromTheirIndex() throws {
        let fixture = try StoreFixture()
        let lisbon = try fixture.addTrip("Lisbon")
        let porto = try fixture.addTrip("Porto", from: "2026-12-20", to: "2026-12-22")
        func instant(_ text: String) throws -> BookingTime { .instant(try #require(Timestamp(iso8601: text))) }
        _ = try fixture.store.addBooking(BookingDraft(tripId: porto.id, kind: .train, title: "Train", start: try instant("2026-12-20T09:00Z")))
        _ = try fixture.store.addBooking(BookingDraft(tripId: lisbon.id, kind: .other, title: "Pass", start: nil))
        _ = try fixture.store.addBooking(BookingDraft(tripId: lisbon.id, kind: .hotel, title: "Hotel", start: .allDay(try day("2026-12-12")),
                                                      end: .allDay(try day("2026-12-15"))))
        _ = try fixture.store.addBooking(BookingDraft(tripId: lisbon.id, kind: .flight, title: "Flight", start: try instant("2026-12-12T07:35Z")))
        let all = try fixture.store.bookingsAcrossTrips()
        #expect(all.map(\.booking.title) == ["Hotel", "Flight", "Train", "Pass"])
        #expect(all.map(\.tripName) == ["Lisbon", "Lisbon", "Porto", "Lisbon"])
        #expect(try fixture.store.bookingsAcrossTrips(limit: 2).map(\.booking.title) == ["Hotel", "Flight"])
        let now = try #require(Timestamp(iso8601: "2026-12-14T12:00Z"))
        #expect(try fixture.store.bookingsAcrossTrips(upcomingAt: now).map(\.booking.title) == ["Hotel", "Train"], "the hotel runs to the 15th")
        #expect(try fixture.store.bookingsAcrossTrips(upcomingAt: now, limit: 1).map(\.booking.title) == ["Hotel"])

        #expect(try Self.plan("SELECT id FROM bookings INDEXED BY bookings_live_by_over WHERE \(RecordRows.live) AND over_at_epoch >= ?1 ORDER BY starts_at_epoch, rowid",
                              [.integer(0)], fixture.store) == ["SEARCH bookings USING INDEX bookings_live_by_over (over_at_epoch>?)", "USE TEMP B-TREE FOR ORDER BY"])
        #expect(try Self.plan("SELECT id FROM bookings WHERE \(RecordRows.live) AND starts_at_epoch IS NOT NULL ORDER BY starts_at_epoch, rowid LIMIT 5",
                              [], fixture.store) == ["SEARCH bookings USING INDEX bookings_live_by_start (starts_at_epoch>?)"])
    }
}
