public import TripBoardSQLite
public import TripBoardSystem
public import TripBoardReadPath

/// The fields of a new trip.
public struct TripDraft: Sendable, Equatable {
    public var name: String
    public var startDate: CivilDate
    public var endDate: CivilDate
    public var notes: String

    public init(name: String, startDate: CivilDate, endDate: CivilDate, notes: String = "") {
        self.name = name
        self.startDate = startDate
        self.endDate = endDate
        self.notes = notes
    }
}

/// A partial edit: `nil` leaves a field as it is.
public struct TripChanges: Sendable, Equatable {
    public var name: String?
    public var startDate: CivilDate?
    public var endDate: CivilDate?
    public var notes: String?

    public init(name: String? = nil, startDate: CivilDate? = nil, endDate: CivilDate? = nil, notes: String? = nil) {
        self.name = name
        self.startDate = startDate
        self.endDate = endDate
        self.notes = notes
    }

    public var isEmpty: Bool { name == nil && startDate == nil && endDate == nil && notes == nil }
}

extension Store {
    /// Creates a trip (pendingUpload) and returns it.
    public func addTrip(_ draft: TripDraft) throws -> Trip {
        let trip = try Trip(id: Identifier.make(), name: draft.name, startDate: draft.startDate, endDate: draft.endDate,
                            notes: draft.notes, syncState: .pendingUpload, remoteVersion: nil, updatedAt: stamp()).validated()
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
        if !idIsUnused { try requireUnusedID(trip.id, for: .trip) }
        try connection.statement(Self.tripInsert).run(TripColumn.values(of: trip))
    }

    static let tripInsert = TripColumn.insert(into: "trips")

    /// Live trips, soonest first.
    public func trips() throws -> [Trip] { try tripRows().collect() }

    /// Live trips, soonest first, one at a time as they are read (`trip list`).
    public func tripRows() -> RowCursor<Trip> {
        RowCursor(connection: connection, sql: """
            SELECT \(RecordRows.tripColumns) FROM trips WHERE \(RecordRows.live)
            ORDER BY start_date, end_date, name, id
            """, transform: RecordRows.trip(from:))
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
    public func trip(id: String) throws -> Trip {
        let rows = try connection.statement(
            "SELECT \(RecordRows.tripColumns) FROM trips WHERE id = ? AND \(RecordRows.live)"
        ).rows([.text(id)], RecordRows.trip(from:))
        guard let trip = rows.first else { throw StoreError.notFound(kind: .trip, id: id) }
        return trip
    }

    /// Applies `changes` in one transaction. With `expectedUpdatedAt`, refuses (`.conflict`) when
    /// another process has changed the trip since it was read. Unchanged fields are not rewritten,
    /// and an edit that changes nothing leaves the sync state alone.
    @discardableResult
    public func editTrip(id: String, changes: TripChanges, expectedUpdatedAt: String? = nil) throws -> Trip {
        try connection.writeTransaction {
            let current = try trip(id: id)
            if let expectedUpdatedAt, current.updatedAt != expectedUpdatedAt {
                throw StoreError.conflict("trip \(id) was changed by another process while you were editing it (at \(current.updatedAt)); nothing was changed")
            }
            var updated = current
            if let name = changes.name { updated.name = try FieldRules.line(name, field: "name") }
            if let startDate = changes.startDate { updated.startDate = startDate }
            if let endDate = changes.endDate { updated.endDate = endDate }
            if let notes = changes.notes { updated.notes = try FieldRules.notes(notes) }
            try FieldRules.dateRange(start: updated.startDate, end: updated.endDate)
            guard updated != current else { return current }
            updated.syncState = .pendingUpload
            updated.updatedAt = stamp()
            try connection.statement("""
                UPDATE trips SET name = ?, start_date = ?, end_date = ?, notes = ?, sync_state = ?, updated_at = ?
                WHERE id = ?
                """).run([
                .text(updated.name), .text(updated.startDate.description), .text(updated.endDate.description),
                .text(updated.notes), .text(updated.syncState.rawValue), .text(updated.updatedAt), .text(id),
            ])
            var changed: [String] = []
            if updated.name != current.name { changed.append("name") }
            if updated.startDate != current.startDate || updated.endDate != current.endDate { changed.append("dates") }
            if updated.notes != current.notes { changed.append("notes") }
            try noteFieldEdits(.trip, id: id, changed: changed, before: current.updatedAt, at: updated.updatedAt)
            return updated
        }
    }

    /// Deletes a trip: it goes to the trash with its live places, bookings and their attachments,
    /// in one transaction (see `moveToTrash`).
    @discardableResult
    public func deleteTrip(id: String) throws -> TrashEntry { try moveToTrash(.trip, id: id) }
}
