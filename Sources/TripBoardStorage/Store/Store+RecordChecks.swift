package import TripBoardModel
/// The rules that need the store, checked inside the transaction that inserts the record, on
/// every insert path (commands, import, share extension, migration with `--merge`, sync).
extension Store {
    /// Refuses `id` when any record already has it, whatever its kind: ids are unique across
    /// trips, places, bookings and attachments, because `sync ack ID` and the sync server name a
    /// record by its id alone. The ids are the primary keys of the four tables, so this is four
    /// index probes.
    func requireUnusedID(_ id: String, for kind: RecordKind) throws {
        guard let holder = try kindHolding(id: id) else { return }
        if holder == kind { throw StoreError.invalidData("\(kind.rawValue) \(id) already exists in the store") }
        throw StoreError.invalidData("""
            \(kind.rawValue) \(id): \(holder.withArticle) in the store has this id; ids are unique across trips, places, bookings \
            and attachments
            """)
    }

    /// True when the store holds no record of any kind, tombstones included.
    func isEmpty() throws -> Bool {
        try connection.integer("SELECT " + RecordKind.allCases.map { "EXISTS (SELECT 1 FROM \($0.table))" }.joined(separator: " OR ")) == 0
    }

    /// The kind of the record, tombstones included, whose id is exactly `id`; `nil` when none has it.
    package func kindHolding(id: String) throws -> RecordKind? {
        try connection.statement(Self.kindHoldingSQL).rows([.text(id)], { RecordKind(rawValue: $0.text(0)) }).first ?? nil
    }

    /// Made once: an import asks it of every record, and building the text cost more than
    /// running it (callgrind, 10,000 trips).
    private static let kindHoldingSQL = RecordKind.allCases.map { "SELECT '\($0.rawValue)' FROM \($0.table) WHERE id = ?1" }
        .joined(separator: " UNION ALL ") + " LIMIT 1"

    /// A place or booking of a deleted trip (a tombstone) must itself be a tombstone: the app
    /// deletes a trip's children with it, and acknowledging the trip's deletion deletes whatever is
    /// left under it. Nor may a live one join a trip in the trash: restoring the trip brings back
    /// exactly what went with it. A missing trip is left to the foreign key.
    func requireLiveTrip(_ tripId: Trip.ID, forLive kind: RecordKind, id: String, state: SyncState) throws {
        guard state != .pendingDeletion else { return }
        let trip = try connection.statement("SELECT sync_state, trashed_at IS NOT NULL FROM trips WHERE id = ?")
            .rows([.text(tripId.text)]) { ($0.text(0), $0.integer(1) != 0) }.first
        if trip?.0 == SyncState.pendingDeletion.rawValue {
            throw StoreError.invalidData("\(kind.rawValue) \(id) is not deleted, but its trip \(tripId) is (a tombstone waiting for sync)")
        }
        if trip?.1 == true {
            throw StoreError.invalidData("\(kind.rawValue) \(id) cannot join trip \(tripId): the trip is in the trash (`app trash restore` brings it back)")
        }
    }
}

extension RecordKind {
    /// "a trip", "an attachment": for messages.
    package var withArticle: String { (self == .attachment ? "an " : "a ") + rawValue }
}
