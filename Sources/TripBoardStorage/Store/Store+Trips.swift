import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel

/// The fields of a new trip: a `Trip` the store has not given an id, a state or a stamp yet.
/// Every field of the declaration is set through it (`draft.notes = …`).
@dynamicMemberLookup
public struct TripDraft: Sendable, Equatable {
    package var trip: Trip

    public init(name: String, startDate: CivilDate, endDate: CivilDate, notes: String = "") {
        trip = Trip(id: RecordID(ImportDocument.placeholderID), name: name, startDate: startDate, endDate: endDate, notes: notes,
                    syncState: .pendingUpload, remoteVersion: nil, updatedAt: Timestamp(stored: ImportDocument.placeholderStamp))
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<Trip, Value>) -> Value {
        get { trip[keyPath: field] }
        set { trip[keyPath: field] = newValue }
    }

    /// The rules a new trip can be held to before any store is opened (its id and stamps are the
    /// store's to make): `trip add` checks them first, so a refused draft creates no container.
    public func checked() throws -> TripDraft {
        var draft = self
        draft.trip = try trip.validated()
        return draft
    }
}

/// A partial edit: `nil` leaves a field as it is. Any column of the declaration can be set by
/// its case (`changes.entered[.notes]`).
public struct TripChanges: Sendable, Equatable {
    package var entered = EnteredValues<TripColumn>()

    public init(name: String? = nil, startDate: CivilDate? = nil, endDate: CivilDate? = nil, notes: String? = nil) {
        entered[.name] = name
        entered[.startDate] = startDate?.description
        entered[.endDate] = endDate?.description
        entered[.notes] = notes
    }

    public var name: String? { get { entered[.name] } set { entered[.name] = newValue } }
    public var startDate: CivilDate? { get { entered[.startDate].flatMap { CivilDate($0) } } set { entered[.startDate] = newValue?.description } }
    public var endDate: CivilDate? { get { entered[.endDate].flatMap { CivilDate($0) } } set { entered[.endDate] = newValue?.description } }
    public var notes: String? { get { entered[.notes] } set { entered[.notes] = newValue } }
    public var isEmpty: Bool { entered.isEmpty }
}

extension Store {
    /// Creates a trip (pendingUpload) and returns it.
    public func addTrip(_ draft: TripDraft) throws -> Trip {
        var trip = draft.trip
        trip.id = .make()
        trip.updatedAt = now()
        trip = try trip.validated()
        try connection.writeTransaction { try insert(trip) }
        return trip
    }

    /// Inserts `trip` in the form `validated()` gives it, refusing an id any record has. Call
    /// inside a write transaction.
    package func insert(_ trip: Trip) throws { try insert(validated: try trip.validated()) }

    /// Inserts a trip `validated()` returned (an import validates its records first, naming each
    /// one); the checks that need the store still run, but for `idIsUnused`: the caller knows no
    /// record has the id (an import into an empty store, its document free of repeated ids).
    func insert(validated trip: Trip, idIsUnused: Bool = false) throws {
        if !idIsUnused { try requireUnusedID(trip.id.text, for: .trip) }
        try connection.statement(Self.tripInsert).run(TripColumn.values(of: trip))
    }

    static let tripInsert = TripColumn.insert(into: "trips")

    /// Live trips, soonest first.
    public func trips() throws -> [Trip] { try tripRows().collect() }

    /// Live trips, soonest first, one at a time as they are read (`trip list`).
    public func tripRows() -> StoreCursor<Trip> {
        StoreCursor(RowCursor(connection: connection, sql: """
            SELECT \(RecordRows.tripColumns) FROM trips WHERE \(RecordRows.live)
            ORDER BY start_date, end_date, name, id
            """, transform: RecordRows.trip(from:)))
    }

    /// The live trips whose dates contain `date`, earliest first.
    public func trips(containing date: CivilDate) throws -> [Trip] {
        try connection.statement("""
            SELECT \(RecordRows.tripColumns) FROM trips
            WHERE \(RecordRows.live) AND start_date <= ?1 AND end_date >= ?1
            ORDER BY start_date, end_date, id
            """).rows([.text(date.description)], RecordRows.trip(from:))
    }

    /// Up to `limit` live trips that have not ended by `date`, earliest first.
    public func trips(endingOnOrAfter date: CivilDate, limit: Int) throws -> [Trip] {
        try connection.statement("""
            SELECT \(RecordRows.tripColumns) FROM trips
            WHERE \(RecordRows.live) AND end_date >= ?1
            ORDER BY start_date, end_date, id LIMIT ?2
            """).rows([.text(date.description), .integer(Int64(limit))], RecordRows.trip(from:))
    }

    /// The live trip with exactly this id.
    public func trip(id: Trip.ID) throws -> Trip {
        let rows = try connection.statement(
            "SELECT \(RecordRows.tripColumns) FROM trips WHERE id = ? AND \(RecordRows.live)"
        ).rows([.text(id.text)], RecordRows.trip(from:))
        guard let trip = rows.first else { throw StoreError.notFound(kind: .trip, id: id.text) }
        return trip
    }

    /// Applies `changes` in one transaction. With `expectedUpdatedAt`, refuses (`.conflict`) when
    /// another process has changed the trip since it was read. An edit that changes nothing writes
    /// nothing and leaves the sync state alone.
    @discardableResult
    public func editTrip(id: Trip.ID, changes: TripChanges, expectedUpdatedAt: Timestamp? = nil) throws -> Trip {
        try connection.writeTransaction {
            let current = try trip(id: id)
            if let expectedUpdatedAt, current.updatedAt != expectedUpdatedAt {
                throw StoreError.conflict("trip \(id) was changed by another process while you were editing it (at \(current.updatedAt.utcStamp)); nothing was changed")
            }
            return try writeEdit(TripColumn.self, current, try TripColumn.validated(changes.entered.applied(to: current)))
        }
    }

    /// Deletes a trip: it goes to the trash with its live places, bookings and their attachments,
    /// in one transaction (see `moveToTrash`).
    @discardableResult
    public func deleteTrip(id: Trip.ID) throws -> TrashEntry { try trash.moveToTrash(.trip, id: id.text) }
}
