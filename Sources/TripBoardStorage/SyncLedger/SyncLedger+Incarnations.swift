import TripBoardSQLite
import TripBoardKeys
package import TripBoardModel

/// Incarnations (store schema 12; docs/sync.md, Deletions sealed to an incarnation): which
/// lifetime of a record this device holds, and which lifetimes it knows are over.
extension SyncLedger {
    /// The incarnation of a record an earlier build made, which no incarnation field names.
    package static let legacyIncarnation = ""

    /// A new random incarnation (16 bytes, hex).
    package static func newIncarnation() -> String { Sodium.hexString(Sodium.randomBytes(count: 16)) }

    /// This device's current incarnation of the record, or nil when it has none on record (a
    /// record never pushed, or one an earlier build synced: `legacyIncarnation`). One made here
    /// (or pinned: `clearShadow`) is in `sync_incarnations`; one pulled with the record is the
    /// shadow's `incarnation` field, so that a pull writes no row more per record.
    package func incarnation(_ kind: RecordKind, id: String) throws -> String? {
        try connection.statement("""
            SELECT coalesce((SELECT incarnation FROM sync_incarnations WHERE kind = ?1 AND id = ?2),
                            (SELECT json_extract(value, '$') FROM sync_shadow WHERE kind = ?1 AND id = ?2 AND field = 'incarnation'))
            """).rows([.text(kind.rawValue), .text(id)]) { $0.optionalText(0) }.first ?? nil
    }

    /// Whether any record has an incarnation made (or pinned) here.
    package func hasIncarnationsMadeHere() throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM sync_incarnations)") == 1
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

    /// Whether this device has seen the sealed deletion of the record stamped `stamp` before.
    package func sawDeletion(_ kind: RecordKind, id: String, stamp: String) throws -> Bool {
        try connection.integer("SELECT count(*) FROM sync_deletions_seen WHERE kind = ? AND id = ? AND stamp = ?",
                               [.text(kind.rawValue), .text(id), .text(stamp)]) > 0
    }

    /// Whether this device has seen any sealed deletion of the record (its own acknowledged by
    /// the server, or one it pulled).
    package func sawAnyDeletion(_ kind: RecordKind, id: String) throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM sync_deletions_seen WHERE kind = ? AND id = ?)",
                               [.text(kind.rawValue), .text(id)]) == 1
    }

    /// Records that this device has seen the sealed deletion of the record stamped `stamp`.
    package func noteDeletionSeen(_ kind: RecordKind, id: String, stamp: String) throws {
        try connection.statement("INSERT OR IGNORE INTO sync_deletions_seen (kind, id, stamp) VALUES (?, ?, ?)")
            .run([.text(kind.rawValue), .text(id), .text(stamp)])
    }

    /// The record's current incarnation is over (a restore replaces it): noted dead, and a new
    /// one made, which its next push seals.
    package func endIncarnation(_ kind: RecordKind, id: String) throws {
        try noteDead(kind, id: id, incarnation: try incarnation(kind, id: id) ?? Self.legacyIncarnation)
        try setIncarnation(kind, id: id, Self.newIncarnation())
    }

    /// The change sequence at or below which a tombstone without a sealed deletion is believed.
    package func unsealedDeletionsBefore() throws -> Int64 {
        try connection.integer("SELECT coalesce(max(unsealed_before), 0) FROM sync_account")
    }
}
