import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel

/// Which trips `trip list` shows, in which order, how many.
public struct TripQuery: Sendable, Equatable {
    public enum Period: Sendable, Equatable {
        /// Every live trip.
        case all
        /// Trips that have not ended by `today`: in progress or still to come.
        case upcoming
        /// Trips that ended before `today`.
        case past
        /// Trips with at least one day in `from`…`to` (both included; either may be open).
        case overlapping(from: CivilDate?, to: CivilDate?)
    }

    public enum Order: String, Sendable, CaseIterable {
        /// By start date (then end date, name, id); for `past`, the most recent first.
        case start
        /// By name, ignoring ASCII case, then start date.
        case name
        /// The most recently changed first.
        case updated
    }

    public var period: Period
    public var order: Order
    public var limit: Int?
    /// The local date that `upcoming` and `past` are counted from.
    public var today: CivilDate

    public init(period: Period = .all, order: Order = .start, limit: Int? = nil, today: CivilDate) {
        self.period = period
        self.order = order
        self.limit = limit
        self.today = today
    }
}

extension Store {
    /// The live trips `query` asks for. Ordered by start, a query reads only what it prints:
    /// `trips_live_by_start` is walked from the first start that can qualify — a trip that has not
    /// ended by a date started at most the longest live trip's length before it (the widget's
    /// bound, `NextTrip`) — and the walk stops at the limit, so `--upcoming --limit 20` costs the
    /// same with a hundred trips or a million (`QueryPlanTests`, docs/performance.md).
    public func trips(_ query: TripQuery) throws -> [Trip] {
        try tripRows(query).collect()
    }

    /// The trips of `query`, streamed from the statement (`trip list` prints a million trips
    /// without holding them): the longest trip's length is read in the same snapshot.
    public func tripRows(_ query: TripQuery) -> StoreCursor<Trip> {
        StoreCursor(tripListCursor(query, columns: RecordRows.tripColumns, transform: RecordRows.trip(from:)))
    }

    /// The rows of `tripRows(query)` with only the columns a `trip list` table shows
    /// (`RecordRows.tripTableColumns`, the others NULL), for `forEachRow`: read from
    /// `trips_live_by_start` alone when the order is by start
    /// (`ListQueryTests.theTableOfTripsReadsTheStartIndexAlone`).
    public func tripTableRows(_ query: TripQuery) -> StoreCursor<Void> {
        StoreCursor(tripListCursor(query, columns: RecordRows.tripTableColumns) { _ in })
    }

    private func tripListCursor<Element>(_ query: TripQuery, columns: String,
                                         transform: @escaping (Statement) -> Element) -> RowCursor<Element> {
        RowCursor(connection: connection, prepare: { [self] in
            let longest = try connection.statement(NextTrip.Query.longestTrip).rows { $0.isNull(0) ? nil : Int($0.real(0)) }.first ?? nil
            guard let (sql, values) = Self.tripList(query, longest: longest, columns: columns) else {
                return (try connection.statement("SELECT \(columns) FROM trips WHERE 0"), [])
            }
            return (try connection.statement(sql), values)
        }, transform: transform)
    }

    /// The statement for `query` and its values, given the longest live trip's length in days
    /// (`nil`: there is no live trip); `nil` when no trip can match.
    static func tripList(_ query: TripQuery, longest: Int?, columns: String = RecordRows.tripColumns) -> (sql: String, values: [SQLValue])? {
        var conditions = [RecordRows.live]
        var values: [SQLValue] = []
        func bind(_ value: SQLValue) -> String {
            values.append(value)
            return "?\(values.count)"
        }
        guard let longest else { return nil }
        /// `end_date >= date`, with the start bound that lets the index range scan.
        func notEndedBy(_ date: CivilDate) {
            conditions.append("start_date >= \(bind(.text(date.adding(days: -longest).description)))")
            conditions.append("end_date >= \(bind(.text(date.description)))")
        }
        switch query.period {
        case .all:
            break
        case .upcoming:
            notEndedBy(query.today)
        case .past:
            // end_date >= start_date, so a trip over before today also started before it.
            conditions.append("start_date < \(bind(.text(query.today.description)))")
            conditions.append("end_date < \(bind(.text(query.today.description)))")
        case .overlapping(let from, let to):
            if let from { notEndedBy(from) }
            if let to { conditions.append("start_date <= \(bind(.text(to.description)))") }
        }
        let order = switch (query.order, query.period) {
        case (.start, .past): "start_date DESC, end_date DESC, name DESC, id DESC"
        case (.start, _): "start_date, end_date, name, id"
        case (.name, _): "name COLLATE NOCASE, name, start_date, id"
        case (.updated, _): "updated_at DESC, id"
        }
        let limit = query.limit.map { " LIMIT \(bind(.integer(Int64($0))))" } ?? ""
        return ("SELECT \(columns) FROM trips WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order)\(limit)", values)
    }

    /// Live bookings across every trip, earliest first (undated ones last, in the order they were
    /// added), each with its trip's name and first day. `upcomingAt`: only those not over by
    /// then (undated ones never), found through `bookings_live_by_over` so that the past costs nothing.
    public func bookingsAcrossTrips(upcomingAt now: Timestamp? = nil, viewer: TimeZoneRules = .local(), limit: Int? = nil) throws -> [BookingOfTrip] {
        try bookingRowsAcrossTrips(upcomingAt: now, viewer: viewer, limit: limit).collect()
    }

    /// `bookingsAcrossTrips` one at a time as they are read, in one snapshot: the columns of
    /// `RecordRows.bookingColumns`, then the trip's name and first day (`BookingOfTrip.tripNameColumn`,
    /// `…tripStartColumn`). The dated ones
    /// come from `bookings_live_by_start` in its order, then the undated ones — two statements,
    /// so that neither sorts the whole list.
    /// `upcomingAt` finds the candidates through the index by their stored end, widened by the
    /// widest zone offset and a day (an all-day booking's end is counted in UTC there; a booking
    /// stored before schema 3 ends at its start), then judges each in its own zone, else
    /// `viewer`'s (`Booking.span`).
    public func bookingRowsAcrossTrips(upcomingAt now: Timestamp? = nil, viewer: TimeZoneRules = .local(), limit: Int? = nil) -> StoreCursor<BookingOfTrip> {
        let select = """
            SELECT \(RecordRows.bookingColumns), (SELECT name FROM trips WHERE trips.id = bookings.trip_id),
                   (SELECT start_date FROM trips WHERE trips.id = bookings.trip_id) FROM bookings
            """
        let limitValue = SQLValue.integer(Int64(limit ?? -1))  // LIMIT -1: no limit
        let sql = if now != nil {
            ["""
             \(select) INDEXED BY bookings_live_by_over
             WHERE \(RecordRows.live) AND over_at_epoch >= ?1 ORDER BY starts_at_epoch, rowid
             """]
        } else {
            ["\(select) WHERE \(RecordRows.live) AND starts_at_epoch IS NOT NULL ORDER BY starts_at_epoch, rowid LIMIT ?1",
             "\(select) WHERE \(RecordRows.live) AND starts_at_epoch IS NULL ORDER BY rowid LIMIT ?1"]
        }
        // A day more than the widest offset: a booking stored before schema 3 has its start as its end.
        let values = now.map { [.integer($0.secondsSinceEpoch - NextTrip.widestOffset - 86_400)] } ?? [limitValue]
        var cursor = RowCursor(connection: connection, parts: sql.map { text in { [connection] in (try connection.statement(text), values) } }) { row in
            BookingOfTrip(booking: RecordRows.booking(from: row), tripName: row.text(BookingOfTrip.tripNameColumn),
                          tripStart: CivilDate(row.text(BookingOfTrip.tripStartColumn)) ?? CivilDate(daysSinceEpoch: 0))
        }
        if let now { cursor.isIncluded = Self.isNotOver(at: now, viewer: viewer) }
        // Each statement is limited too; the cursor's limit stops the second where the first left off.
        cursor.limit = limit
        return StoreCursor(cursor)
    }
}

/// A booking with what a list across trips shows of its trip.
public struct BookingOfTrip: Sendable, Equatable {
    public let booking: Booking
    public let tripName: String
    /// The trip's first day: a booking in another year shows its year.
    public let tripStart: CivilDate

    /// Where `Store.bookingRowsAcrossTrips` puts the trip's name and first day: after the booking's columns.
    package static let tripNameColumn = BookingColumn.count
    package static let tripStartColumn = BookingColumn.count + 1
}
