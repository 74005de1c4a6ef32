import TripBoardSQLite
public import TripBoardModel

/// A pulled record whose trip (or booking) is not here yet, as `sync status --json` lists it.
public struct HeldRecord: Sendable, Equatable, Codable {
    public var kind: RecordKind
    public var id: String
    /// The record it belongs to, which has not arrived.
    public var parentKind: RecordKind
    public var parentId: String
    /// The server's version of the held record.
    public var version: Int64
    /// The parent's deletion arrived instead of the parent: the record waits for its own deletion.
    public var parentDeleted: Bool
    public var heldAt: String
}

/// Records that arrive before the record they belong to (docs/sync.md §3, "Any order of
/// arrival"): a place or booking before its trip, an attachment before its booking. They wait in
/// `sync_held`, as the server sent them (sealed), and are applied in the transaction in which
/// their parent arrives. The engine (TripBoardSync) decides; the SQL stays here.
extension SyncLedger {
    /// Holds `record` (the server's text of it, sealed) until `parent` arrives, in place of any
    /// copy held before: the engine decides which copy is the later (`heldCopy`), by its stamps,
    /// since a server that lost the record numbers a later copy below an earlier one.
    package func hold(_ kind: RecordKind, id: String, parent: (kind: RecordKind, id: String), version: Int64,
                      record: [UInt8], at now: String) throws {
        try connection.statement("""
            INSERT INTO sync_held (kind, id, parent_kind, parent_id, version, record, held_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (kind, id) DO UPDATE SET parent_kind = excluded.parent_kind, parent_id = excluded.parent_id,
                version = excluded.version, record = excluded.record, parent_deleted = 0
            """).run([.text(kind.rawValue), .text(id), .text(parent.kind.rawValue), .text(parent.id), .integer(version),
                      .text(String(decoding: record, as: UTF8.self)), .text(now)])
    }

    /// The copy of `kind` `id` held now, as the server sent it, with the version it came with.
    package func heldCopy(_ kind: RecordKind, id: String) throws -> (version: Int64, record: [UInt8])? {
        try connection.statement("SELECT version, record FROM sync_held WHERE kind = ? AND id = ?")
            .rows([.text(kind.rawValue), .text(id)]) { ($0.integer(0), Array($0.text(1).utf8)) }.first
    }

    /// Forgets the held `kind` `id` (its deletion arrived, or it is being applied).
    package func dropHeld(_ kind: RecordKind, id: String) throws {
        try connection.statement("DELETE FROM sync_held WHERE kind = ? AND id = ?").run([.text(kind.rawValue), .text(id)])
    }

    /// The deletion of `kind` `id`, which never arrived here, arrived: what waits for it now
    /// waits for its own deletion (the device that deleted the parent sends it).
    package func noteHeldParentDeleted(_ kind: RecordKind, id: String) throws {
        try connection.statement("UPDATE sync_held SET parent_deleted = 1 WHERE parent_id = ? AND parent_kind = ?")
            .run([.text(id), .text(kind.rawValue)])
    }

    /// Held records whose parent is here now, oldest version first, taken out of `sync_held`
    /// (the caller applies them in the same transaction).
    package func takeHeldWhoseParentArrived() throws -> [[UInt8]] {
        let ready = try connection.statement("""
            SELECT h.kind, h.id, h.record FROM sync_held h WHERE
                (h.parent_kind = 'trip' AND EXISTS (SELECT 1 FROM trips t WHERE t.id = h.parent_id)) OR
                (h.parent_kind = 'booking' AND EXISTS (SELECT 1 FROM bookings b WHERE b.id = h.parent_id))
            ORDER BY h.version
            """).rows { ($0.text(0), $0.text(1), $0.text(2)) }
        for (kind, id, _) in ready {
            try connection.statement("DELETE FROM sync_held WHERE kind = ? AND id = ?").run([.text(kind), .text(id)])
        }
        return ready.map { Array($0.2.utf8) }
    }

    /// Every held record, oldest first (`sync status`).
    public func heldRecords() throws -> [HeldRecord] {
        try connection.statement("""
            SELECT kind, id, parent_kind, parent_id, version, parent_deleted, held_at FROM sync_held ORDER BY held_at, kind, id
            """).rows { row in
            HeldRecord(kind: RecordKind(rawValue: row.text(0)) ?? .place, id: row.text(1), parentKind: RecordKind(rawValue: row.text(2)) ?? .trip,
                       parentId: row.text(3), version: row.integer(4), parentDeleted: row.integer(5) != 0, heldAt: row.text(6))
        }
    }

    /// How many records are held.
    public func heldCount() throws -> Int { Int(try connection.integer("SELECT count(*) FROM sync_held")) }

    // MARK: - Field edits

    /// When each field of `kind` `id` was last changed here (`updated_at` of that edit), for the
    /// fields changed since the record was made; a field without a row was last set with the
    /// record itself (its `updated_at` then says when).
    package func fieldEdits(_ kind: RecordKind, id: String) throws -> [String: String] {
        var edits: [String: String] = [:]
        try connection.statement("SELECT field, edited_at FROM sync_field_edits WHERE kind = ? AND id = ?")
            .rows([.text(kind.rawValue), .text(id)]) { ($0.text(0), $0.text(1)) }
            .forEach { edits[$0.0] = $0.1 }
        return edits
    }

    /// Notes an edit made here of `changed` fields of `kind` `id` at `editedAt`, inside the edit's
    /// transaction; the record's other fields, when this is its first edit since it was made or
    /// last came from the server, were set at `before` (its `updated_at` until now). Every store
    /// method that edits a record's fields calls this (docs/sync.md, Stamps).
    func noteFieldEdits(_ kind: RecordKind, id: String, changed: [String], before: String, at editedAt: String) throws {
        guard !changed.isEmpty else { return }
        let fields = SyncRecord.fieldNames(kind)
        let seeds = Array(repeating: "(?, ?, ?, ?)", count: fields.count).joined(separator: ", ")
        try connection.statement("""
            INSERT INTO sync_field_edits (kind, id, field, edited_at) VALUES \(seeds) ON CONFLICT (kind, id, field) DO NOTHING
            """).run(fields.flatMap { [SQLValue.text(kind.rawValue), .text(id), .text($0), .text(before)] })
        for field in changed { try noteFieldEdit(kind, id: id, field: field, at: editedAt) }
    }

    /// Whether any field edit time is noted at all.
    package func hasFieldEdits() throws -> Bool {
        try connection.statement("SELECT 1 FROM sync_field_edits LIMIT 1").rows { _ in true }.first ?? false
    }

    /// Forgets the edit times of records the server has confirmed (their fields are the server's),
    /// and of records that are gone: one statement per kind over the few rows the table holds.
    package func forgetFieldEditsOfSynchronizedRecords() throws {
        try connection.writeTransaction {
            for kind in SyncRecord.kinds {
                try connection.statement("""
                    DELETE FROM sync_field_edits WHERE kind = '\(kind.rawValue)'
                      AND id NOT IN (SELECT id FROM \(kind.table) WHERE sync_state <> 'synchronized')
                    """).run()
            }
        }
    }

    /// Notes that `field` of `kind` `id` holds a value of `editedAt` that the server must be sent
    /// again (it went back to an older one), inside the caller's transaction.
    package func noteFieldEdit(_ kind: RecordKind, id: String, field: String, at editedAt: String) throws {
        try connection.statement("""
            INSERT INTO sync_field_edits (kind, id, field, edited_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (kind, id, field) DO UPDATE SET edited_at = excluded.edited_at
            """).run([.text(kind.rawValue), .text(id), .text(field), .text(editedAt)])
    }

    // MARK: - Comparison with the server

    /// When this device last compared the server's list of records with its own (nil: never).
    package func lastComparedAt() throws -> String? {
        try connection.statement("SELECT last_compared_at FROM sync_account WHERE only_row = 1").rows { $0.optionalText(0) }.first ?? nil
    }

    /// Notes a comparison, inside the transaction that settled what it found.
    package func setLastComparedAt(_ stamp: String) throws {
        try connection.statement("UPDATE sync_account SET last_compared_at = ?").run([.text(stamp)])
    }

    /// Every record of `kind` here, in any state, by id: whether it is deleted here (a tombstone,
    /// or in the trash); and those held, as not deleted.
    package func knownIDs(_ kind: RecordKind) throws -> [String: Bool] {
        var ids: [String: Bool] = [:]
        try connection.statement("SELECT id, sync_state = 'pendingDeletion' OR trashed_at IS NOT NULL FROM \(kind.table)")
            .rows { ($0.text(0), $0.integer(1) != 0) }.forEach { ids[$0.0] = $0.1 }
        try connection.statement("SELECT id FROM sync_held WHERE kind = ?").rows([.text(kind.rawValue)]) { $0.text(0) }
            .forEach { ids[$0] = ids[$0] ?? false }
        return ids
    }

    // MARK: - Placeholders a salvage made

    /// Records a salvage recreated in place of lost ones, by `kind/id`, with when.
    package func placeholders() throws -> [String: String] {
        var made: [String: String] = [:]
        try connection.statement("SELECT kind, id, made_at FROM sync_placeholders").rows { ($0.text(0) + "/" + $0.text(1), $0.text(2)) }
            .forEach { made[$0.0] = $0.1 }
        return made
    }

    /// `kind` `id` is no placeholder any more: the server's copy replaced it.
    package func dropPlaceholder(_ kind: RecordKind, id: String) throws {
        try connection.statement("DELETE FROM sync_placeholders WHERE kind = ? AND id = ?").run([.text(kind.rawValue), .text(id)])
    }

    /// Removes the placeholder trips that hold nothing any more (what they held went back to the
    /// records the server had) and that nobody edited: a salvage made them, not the user.
    /// Returns how many.
    package func removeEmptyPlaceholderTrips() throws -> Int {
        try connection.writeTransaction {
            let empty = try connection.statement("""
                SELECT p.id FROM sync_placeholders p JOIN trips t ON t.id = p.id
                WHERE p.kind = 'trip' AND t.remote_version IS NULL AND t.trashed_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM sync_field_edits e WHERE e.kind = 'trip' AND e.id = p.id AND e.edited_at > p.made_at)
                  AND NOT EXISTS (SELECT 1 FROM places WHERE trip_id = p.id)
                  AND NOT EXISTS (SELECT 1 FROM bookings WHERE trip_id = p.id)
                """).rows { $0.text(0) }
            for id in empty {
                try connection.statement("DELETE FROM trips WHERE id = ?").run([.text(id)])
                try connection.statement("DELETE FROM sync_placeholders WHERE kind = 'trip' AND id = ?").run([.text(id)])
            }
            return empty.count
        }
    }
}
