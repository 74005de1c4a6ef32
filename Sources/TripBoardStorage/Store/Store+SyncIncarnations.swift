import TripBoardSQLite
import TripBoardSodium
package import TripBoardReadPath

/// Incarnations (store schema 12; docs/sync.md, Deletions sealed to an incarnation): which
/// lifetime of a record this device holds, and which lifetimes it knows are over.
extension Store {
    /// The incarnation of a record an earlier build made, which no incarnation field names.
    package static let legacyIncarnation = ""

    /// A new random incarnation (16 bytes, hex).
    package static func newIncarnation() -> String { Sodium.hexString(Sodium.randomBytes(count: 16)) }

    /// This device's current incarnation of the record, or nil when it has none on record (a
    /// record never pushed, or one an earlier build synced: `legacyIncarnation`).
    package func incarnation(_ kind: RecordKind, id: String) throws -> String? {
        try connection.statement("SELECT incarnation FROM sync_incarnations WHERE kind = ? AND id = ?")
            .rows([.text(kind.rawValue), .text(id)]) { $0.text(0) }.first
    }

    package func setIncarnation(_ kind: RecordKind, id: String, _ incarnation: String) throws {
        try connection.statement("INSERT OR REPLACE INTO sync_incarnations (kind, id, incarnation) VALUES (?, ?, ?)")
            .run([.text(kind.rawValue), .text(id), .text(incarnation)])
    }

    /// Whether this device knows `incarnation` of the record deleted or replaced.
    package func isDead(_ kind: RecordKind, id: String, incarnation: String) throws -> Bool {
        try connection.integer("SELECT count(*) FROM sync_dead WHERE kind = ? AND id = ? AND incarnation = ?",
                               [.text(kind.rawValue), .text(id), .text(incarnation)]) > 0
    }

    /// Records that `incarnation` of the record is over (deleted, or replaced by another).
    package func noteDead(_ kind: RecordKind, id: String, incarnation: String) throws {
        try connection.statement("INSERT OR IGNORE INTO sync_dead (kind, id, incarnation) VALUES (?, ?, ?)")
            .run([.text(kind.rawValue), .text(id), .text(incarnation)])
    }

    /// The record's current incarnation is over (a deletion took it, or a restore replaces it):
    /// noted dead, and the record has none on record any more (the next push makes a new one).
    package func endIncarnation(_ kind: RecordKind, id: String) throws {
        try noteDead(kind, id: id, incarnation: try incarnation(kind, id: id) ?? Self.legacyIncarnation)
        try connection.statement("DELETE FROM sync_incarnations WHERE kind = ? AND id = ?").run([.text(kind.rawValue), .text(id)])
    }

    /// The change sequence at or below which a tombstone without a sealed deletion is believed.
    package func unsealedDeletionsBefore() throws -> Int64 {
        try connection.integer("SELECT coalesce(max(unsealed_before), 0) FROM sync_account")
    }
}
