package import TripBoardSystem
package import TripBoardModel

/// One field of a synced record as this device knows it (`app sync fields`): the value and stamp
/// the server had at this device's last sync of the record (its shadow), the incarnation it
/// holds, and whether the field was changed here since and not yet sent. docs/sync.md §3.
package struct SyncFieldState: Sendable, Equatable, Encodable {
    package var kind: RecordKind
    package var id: String
    /// The record's incarnation here ("" for a record's first life).
    package var incarnation: String
    package var field: String
    package var value: JSONValue
    /// The hybrid-clock stamp of `value`: wall-clock milliseconds, counter, the node that made it.
    package var stamp: String
    /// The record here holds another value for the field, not yet sent (an edit made here, or
    /// this device's value kept against an older one the server served).
    package var editedHere: Bool
}

extension SyncLedger {
    /// The fields of the live records this device has synced (in the trash or deleted here:
    /// left out), by kind and id; `id`: only that record's.
    package func syncFieldStates(id only: String? = nil) throws -> [SyncFieldState] {
        try store.readTransaction {
            let keys = try connection.statement(
                "SELECT DISTINCT kind, id FROM sync_shadow WHERE ?1 IS NULL OR id = ?1 ORDER BY kind, id")
                .rows([.optional(only)]) { (RecordKind(rawValue: $0.text(0)), $0.text(1)) }
            var states: [SyncFieldState] = []
            for case let (kind?, id) in keys {
                guard let record = try syncRecord(kind, id: id), !record.isTombstone, !record.isInTrash else { continue }
                let shadow = try shadow(kind, id: id)
                let incarnation = try incarnation(kind, id: id) ?? Self.legacyIncarnation
                for field in SyncRecord.fieldNames(kind) {
                    guard let known = shadow[field] else { continue }
                    let here = record.fields[field].map(\.canonicalText)
                    states.append(SyncFieldState(
                        kind: kind, id: id, incarnation: incarnation, field: field,
                        value: (try? JSONValue.parse(Array(known.value.utf8))) ?? .string(known.value), stamp: known.stamp,
                        editedHere: record.syncState != .synchronized && here != nil && here != known.value))
                }
            }
            return states
        }
    }
}
