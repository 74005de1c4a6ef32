import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel

/// A value that lost a merge: a field edited here and on another device, where the other
/// edit's stamp was later (`lostOn == .here`: this device's edit lost) or this one's was
/// (`.elsewhere`: the other device's value, as the server had it, lost). The losing value is
/// never dropped silently: it is kept on the device that merged, and `sync conflicts` lists it.
/// `sync conflicts --json` prints an array of these.
public struct SyncConflict: Sendable, Equatable, Encodable {
    public enum Side: String, Sendable, Codable {
        case here, elsewhere
    }

    public var id: String
    public var kind: RecordKind
    public var recordId: String
    public var field: String
    /// The value the record has now (the winner), and its stamp.
    public var kept: JSONValue
    public var keptStamp: String
    /// The value that lost, and its stamp (time, counter and the node that made it).
    public var lost: JSONValue
    public var lostStamp: String
    public var lostOn: Side
    public var detectedAt: String
    /// What the record is called now (a trip's or place's name, a booking's title, an
    /// attachment's file name); nil when it is no longer here.
    public var recordName: String?

    /// The value as one line for a table: a string as it is, anything else as compact JSON.
    public static func displayText(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return value.canonicalText
    }
}

extension SyncLedger {
    /// Keeps the value that lost a merge, inside the caller's transaction (the pulled page's).
    package func keepConflict(_ kind: RecordKind, id: String, field: String, kept: ShadowField, lost: ShadowField,
                      lostOn: SyncConflict.Side, at now: String) throws {
        try connection.statement("""
            INSERT INTO sync_conflicts (id, kind, record_id, field, kept_value, kept_stamp, lost_value, lost_stamp, lost_on, detected_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run([.text(Identifier.make()), .text(kind.rawValue), .text(id), .text(field), .text(kept.value), .text(kept.stamp),
                      .text(lost.value), .text(lost.stamp), .text(lostOn.rawValue), .text(now)])
    }

    /// Keeps a value of this device's that lost a merge on another device, as that device told
    /// (`lostEdits`), unless it is kept already (a record pulled again).
    package func keepConflictToldByAnotherDevice(_ kind: RecordKind, id: String, field: String, kept: ShadowField, lost: ShadowField,
                                                 at now: String) throws {
        let known = try connection.statement("""
            SELECT 1 FROM sync_conflicts WHERE kind = ? AND record_id = ? AND field = ? AND lost_stamp = ?
            """).rows([.text(kind.rawValue), .text(id), .text(field), .text(lost.stamp)]) { _ in true }.first ?? false
        if !known { try keepConflict(kind, id: id, field: field, kept: kept, lost: lost, lostOn: .here, at: now) }
    }

    /// Values of other devices that lost a merge here and that their devices have not been told
    /// of yet, by `kind/id`: the next push of each record carries them (`lostEdits`).
    package func untoldConflicts() throws -> [String: [(field: String, lost: ShadowField, keptStamp: String)]] {
        var untold: [String: [(field: String, lost: ShadowField, keptStamp: String)]] = [:]
        try connection.statement("""
            SELECT kind, record_id, field, lost_value, lost_stamp, kept_stamp FROM sync_conflicts
            WHERE lost_on = 'elsewhere' AND told = 0 ORDER BY detected_at, id
            """).rows { row in
            (row.text(0) + "/" + row.text(1), (row.text(2), ShadowField(value: row.text(3), stamp: row.text(4)), row.text(5)))
        }.forEach { untold[$0.0, default: []].append($0.1) }
        return untold
    }

    /// The server has record `kind` `id` with the losing values it carried: their devices are told.
    package func markConflictsTold(_ kind: RecordKind, id: String) throws {
        try connection.statement("UPDATE sync_conflicts SET told = 1 WHERE kind = ? AND record_id = ? AND lost_on = 'elsewhere'")
            .run([.text(kind.rawValue), .text(id)])
    }

    /// The values that lost a merge, oldest first, one at a time as they are read.
    public func syncConflictRows() -> StoreCursor<SyncConflict> {
        StoreCursor(RowCursor(connection: connection, sql: """
            SELECT c.id, c.kind, c.record_id, c.field, c.kept_value, c.kept_stamp, c.lost_value, c.lost_stamp, c.lost_on, c.detected_at,
                CASE c.kind WHEN 'trip' THEN (SELECT name FROM trips WHERE id = c.record_id)
                            WHEN 'place' THEN (SELECT name FROM places WHERE id = c.record_id)
                            WHEN 'booking' THEN (SELECT title FROM bookings WHERE id = c.record_id)
                            ELSE (SELECT original_filename FROM attachments WHERE id = c.record_id) END
            FROM sync_conflicts c ORDER BY c.detected_at, c.id
            """) { row in
            SyncConflict(id: row.text(0), kind: RecordKind(rawValue: row.text(1)) ?? .trip, recordId: row.text(2), field: row.text(3),
                         kept: (try? JSONValue.parse(Array(row.text(4).utf8))) ?? .string(row.text(4)), keptStamp: row.text(5),
                         lost: (try? JSONValue.parse(Array(row.text(6).utf8))) ?? .string(row.text(6)), lostStamp: row.text(7),
                         lostOn: SyncConflict.Side(rawValue: row.text(8)) ?? .here, detectedAt: row.text(9), recordName: row.optionalText(10))
        })
    }

    /// How many values that lost a merge are kept.
    public func syncConflictCount() throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM sync_conflicts"))
    }

    /// Removes the kept conflict whose id starts with `prefix` (one match): the user has read it.
    /// Returns its full id, or nil when no kept conflict has that prefix (`dismissSyncConflict`
    /// says so as a sync error).
    package func removeSyncConflict(prefix: String) throws -> String? {
        try connection.writeTransaction {
            let ids = try connection.statement("SELECT id FROM sync_conflicts WHERE substr(id, 1, ?) = ? LIMIT 2")
                .rows([.integer(Int64(prefix.utf8.count)), .text(prefix)]) { $0.text(0) }
            guard let id = ids.first else { return nil }
            guard ids.count == 1 else { throw StoreError.invalidArgument("id prefix '\(prefix)' matches several kept conflicts; give more characters") }
            try connection.statement("DELETE FROM sync_conflicts WHERE id = ?").run([.text(id)])
            return id
        }
    }
}
