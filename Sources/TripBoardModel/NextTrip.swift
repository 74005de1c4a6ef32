public import TripBoardSQLite
public import TripBoardSystem

/// The widget's question: which trip is next, and what is its next booking?
public struct NextTrip: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        /// A trip includes today.
        case ongoing
        /// No trip includes today; this one starts soonest.
        case upcoming
    }

    public var status: Status
    public var trip: Trip
    /// The trip's earliest booking that starts at or after `now` (undated bookings never).
    public var nextBooking: Booking?
    /// `today` as the query saw it.
    public var today: CivilDate

    /// Days from today to the start (upcoming), else nil.
    public var daysUntilStart: Int? { status == .upcoming ? today.days(until: trip.startDate) : nil }
    /// 1-based day of the trip (ongoing), else nil.
    public var dayOfTrip: Int? { status == .ongoing ? trip.startDate.days(until: today) + 1 : nil }

    /// Finds the next trip on `today` (the local date) and its next booking after `now`.
    ///
    /// Every lookup is an index probe, so the cost does not grow with the number of trips:
    /// upcoming is the first entry of `trips_live_by_start` after today; a trip in progress must
    /// have started within the longest live trip's length of today (read from
    /// `trips_live_by_length`), which bounds that range scan. `EXPLAIN QUERY PLAN` output is in
    /// docs/performance.md.
    public static func find(in connection: Connection, today: CivilDate, now: Timestamp) throws -> NextTrip? {
        let longest = try connection.statement(Query.longestTrip).rows { $0.isNull(0) ? nil : Int($0.real(0)) }.first ?? nil
        guard let longest else { return nil }
        let todayText = today.description
        let ongoing = try connection.statement(Query.tripInProgress)
            .rows([.text(today.adding(days: -longest).description), .text(todayText)], RecordRows.trip(from:)).first
        let found: (Status, Trip)
        if let ongoing {
            found = (.ongoing, ongoing)
        } else if let upcoming = try connection.statement(Query.upcomingTrip).rows([.text(todayText)], RecordRows.trip(from:)).first {
            found = (.upcoming, upcoming)
        } else {
            return nil
        }
        let booking = try connection.statement(Query.nextBooking)
            .rows([.text(found.1.id), .integer(now.secondsSinceEpoch)], RecordRows.booking(from:)).first
        return NextTrip(status: found.0, trip: found.1, nextBooking: booking, today: today)
    }

    /// The widget's four lookups, each one index probe (`QueryPlanTests` checks their plans).
    package enum Query {
        package static let longestTrip = "SELECT max(julianday(end_date) - julianday(start_date)) FROM trips WHERE \(RecordRows.live)"
        package static let tripInProgress = """
            SELECT \(RecordRows.tripColumns) FROM trips
            WHERE \(RecordRows.live) AND start_date BETWEEN ?1 AND ?2 AND end_date >= ?2
            ORDER BY start_date, end_date, id LIMIT 1
            """
        package static let upcomingTrip = """
            SELECT \(RecordRows.tripColumns) FROM trips
            WHERE \(RecordRows.live) AND start_date > ?1
            ORDER BY start_date, end_date, id LIMIT 1
            """
        package static let nextBooking = """
            SELECT \(RecordRows.bookingColumns) FROM bookings
            WHERE trip_id = ?1 AND starts_at_epoch >= ?2 AND \(RecordRows.live)
            ORDER BY starts_at_epoch LIMIT 1
            """
    }
}
