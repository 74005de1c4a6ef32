import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel

/// The fields of a new booking: a `Booking` the store has not given an id, a state or a stamp
/// yet. Every field of the declaration is set through it (`draft.reference = …`); the start
/// and end as `BookingTime`s.
@dynamicMemberLookup
public struct BookingDraft: Sendable, Equatable {
    package var booking: Booking

    public init(tripId: Trip.ID, kind: BookingKind, title: String, start: BookingTime?, end: BookingTime? = nil,
                reference: String? = nil, zone: String? = nil) {
        booking = Booking(id: RecordID(ImportDocument.placeholderID), tripId: tripId, kind: kind, title: title, startsAt: start,
                          reference: reference, syncState: .pendingUpload, remoteVersion: nil, updatedAt: Timestamp(stored: ImportDocument.placeholderStamp),
                          endsAt: end, zone: zone)
    }

    /// A booking that starts at an instant (or is undated), with no end.
    public init(tripId: Trip.ID, kind: BookingKind, title: String, startsAt: Timestamp? = nil, reference: String? = nil) {
        self.init(tripId: tripId, kind: kind, title: title, start: startsAt.map { .instant($0) }, reference: reference)
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<Booking, Value>) -> Value {
        get { booking[keyPath: field] }
        set { booking[keyPath: field] = newValue }
    }

    public var start: BookingTime? {
        get { booking.startsAt }
        set { booking.startsAt = newValue }
    }
    public var end: BookingTime? {
        get { booking.endsAt }
        set { booking.endsAt = newValue }
    }
}

extension Store {
    // MARK: - Places

    /// Adds a place to a live trip.
    public func addPlace(tripId: Trip.ID, name: String, city: String?) throws -> Place {
        let place = try Place(id: .make(), tripId: tripId, name: name, city: city, visited: false,
                              syncState: .pendingUpload, remoteVersion: nil, updatedAt: now()).validated()
        try connection.writeTransaction {
            _ = try trip(id: tripId)
            try insert(place)
        }
        return place
    }

    /// Inserts `place` in the form `validated()` gives it: refused when its id is any record's, or
    /// when it is live and its trip is a tombstone. Call inside a write transaction. (A booking's
    /// insert, below, is deliberately like this one: another table, its own columns.)
    package func insert(_ place: Place) throws { try insert(validated: try place.validated()) }

    /// Inserts a place `validated()` returned; the checks that need the store still run (see
    /// `insert(validated:idIsUnused:)` for trips).
    func insert(validated place: Place, idIsUnused: Bool = false) throws {
        if !idIsUnused { try requireUnusedID(place.id.text, for: .place) }
        try requireLiveTrip(place.tripId, forLive: .place, id: place.id.text, state: place.syncState)
        try connection.statement(Self.placeInsert).run(PlaceColumn.values(of: place))
    }

    /// The live places of a live trip, in the order they were added.
    public func places(tripId: Trip.ID) throws -> [Place] { try placeRows(tripId: tripId).collect() }

    /// `places(tripId:)` one at a time as they are read; the trip is looked up (`.notFound`)
    /// when the cursor is walked. `includingVisited` false: the places not visited yet only.
    public func placeRows(tripId: Trip.ID, includingVisited: Bool = true) -> StoreCursor<Place> {
        StoreCursor(RowCursor(connection: connection, prepare: { [self] in
            _ = try trip(id: tripId)
            return (try connection.statement("""
                SELECT \(RecordRows.placeColumns) FROM places WHERE trip_id = ? AND \(RecordRows.live)\(includingVisited ? "" : " AND visited = 0")
                ORDER BY rowid
                """), [.text(tripId.text)])
        }, transform: RecordRows.place(from:)))
    }

    /// How many live places of a trip are marked visited.
    public func visitedPlaceCount(tripId: Trip.ID) throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM places WHERE trip_id = ? AND \(RecordRows.live) AND visited <> 0", [.text(tripId.text)]))
    }

    /// Marks a place visited (or not); a change makes it pendingUpload.
    @discardableResult
    public func setVisited(placeId: Place.ID, _ visited: Bool = true) throws -> Place {
        try connection.writeTransaction {
            let current = try place(id: placeId)
            var updated = current
            updated.visited = visited
            return try writeEdit(PlaceColumn.self, current, updated)
        }
    }

    /// Deletes a place: it goes to the trash (see `moveToTrash`).
    @discardableResult
    public func deletePlace(id: Place.ID) throws -> TrashEntry { try trash.moveToTrash(.place, id: id.text) }

    // MARK: - Bookings

    /// Adds a booking to a live trip.
    public func addBooking(_ draft: BookingDraft) throws -> Booking {
        var booking = draft.booking
        booking.id = .make()
        booking.updatedAt = now()
        booking = try booking.validated()
        try connection.writeTransaction {
            _ = try trip(id: draft.tripId)
            try insert(booking)
        }
        return booking
    }

    /// Inserts `booking` in the form `validated()` gives it, with the same refusals as a place's
    /// (deliberately like `insert(_ place:)` above: another table, its own columns).
    /// Call inside a write transaction.
    package func insert(_ booking: Booking) throws { try insert(validated: try booking.validated()) }

    /// Inserts a booking `validated()` returned; the checks that need the store still run (see
    /// `insert(validated:idIsUnused:)` for trips).
    func insert(validated booking: Booking, idIsUnused: Bool = false) throws {
        if !idIsUnused { try requireUnusedID(booking.id.text, for: .booking) }
        try requireLiveTrip(booking.tripId, forLive: .booking, id: booking.id.text, state: booking.syncState)
        try connection.statement(Self.bookingInsert).run(BookingColumn.insertValues(of: booking))
    }

    static let placeInsert = PlaceColumn.insert(into: "places")
    /// With the epochs the lists and the widget order and filter by (`BookingColumn.derived`).
    static let bookingInsert = BookingColumn.insert(into: "bookings")

    /// The live bookings of a live trip, earliest first; undated ones last.
    public func bookings(tripId: Trip.ID) throws -> [Booking] { try bookingRows(tripId: tripId).collect() }

    /// `bookings(tripId:)` one at a time as they are read; the trip is looked up (`.notFound`)
    /// when the cursor is walked. `upcomingAt`: only those not over by then (undated ones never),
    /// as `BookingTime.epochs` counts it from the stored texts; `limit`: at most that many.
    ///
    /// Two statements, the dated bookings in `bookings_by_trip`'s order (`trip_id`,
    /// `starts_at_epoch`, then the rowid every index ends with), then the undated ones: neither
    /// sorts, so a trip of a million bookings is listed in flat memory (one statement ordered by
    /// `starts_at_epoch IS NULL` first sorted them all in memory: temporary data never goes to
    /// disk, where it would be in the clear).
    public func bookingRows(tripId: Trip.ID, upcomingAt now: Timestamp? = nil, viewer: TimeZoneRules = .local(), limit: Int? = nil) -> StoreCursor<Booking> {
        let dated: RowCursor<Booking>.Part = { [self] in
            _ = try trip(id: tripId)
            return (try connection.statement(Self.datedBookingsOfTrip), [.text(tripId.text)])
        }
        let undated: RowCursor<Booking>.Part = { [connection] in (try connection.statement(Self.undatedBookingsOfTrip), [.text(tripId.text)]) }
        // An undated booking is never upcoming: with `upcomingAt`, the dated ones alone.
        var cursor = RowCursor(connection: connection, parts: now == nil ? [dated, undated] : [dated], transform: RecordRows.booking(from:))
        if let now { cursor.isIncluded = Self.isNotOver(at: now, viewer: viewer) }
        cursor.limit = limit
        return StoreCursor(cursor)
    }

    /// A trip's live bookings with a start, earliest first (`bookingRows(tripId:)`); `?1`: the trip.
    static let datedBookingsOfTrip = """
        SELECT \(RecordRows.bookingColumns) FROM bookings WHERE trip_id = ?1 AND \(RecordRows.live) AND starts_at_epoch IS NOT NULL
        ORDER BY starts_at_epoch, rowid
        """
    /// A trip's live bookings without a start, in the order they were added.
    static let undatedBookingsOfTrip = """
        SELECT \(RecordRows.bookingColumns) FROM bookings WHERE trip_id = ?1 AND \(RecordRows.live) AND starts_at_epoch IS NULL
        ORDER BY rowid
        """

    /// Whether a booking row is not over at `now`, judged from its texts (`Booking.span`): an
    /// all-day booking lasts to the end of its last day in its own zone, else `viewer`'s.
    static func isNotOver(at now: Timestamp, viewer: TimeZoneRules) -> (Statement) -> Bool {
        { row in (RecordRows.booking(from: row).span(viewer: viewer)?.over).map { $0 >= now.secondsSinceEpoch } ?? false }
    }

    /// The live booking with exactly this id (deliberately like `attachment(id:)`: one query a
    /// table, each with its own columns and row reader).
    public func booking(id: Booking.ID) throws -> Booking {
        guard let found = try connection.statement("""
            SELECT \(RecordRows.bookingColumns) FROM bookings WHERE id = ? AND \(RecordRows.live)
            """).rows([.text(id.text)], RecordRows.booking(from:)).first else {
            throw StoreError.notFound(kind: .booking, id: id.text)
        }
        return found
    }

    /// Deletes a booking: it goes to the trash with its attachments (see `moveToTrash`).
    @discardableResult
    public func deleteBooking(id: Booking.ID) throws -> TrashEntry { try trash.moveToTrash(.booking, id: id.text) }
}
