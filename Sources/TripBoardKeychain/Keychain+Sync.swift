import TripBoardModel
import TripBoardStorage
import TripBoardSQLite
import TripBoardSodium
package import TripBoardKeys
import TripBoardSystem

/// A migratable item as sync sees it: its name, when it was last written here, and what the
/// server has of it (version, stamp and keyed digest of its value: the shadow). Never its value.
package struct KeychainSyncItem {
    package var service: String
    package var account: String
    package var updatedAt: String
    package var pending: Bool
    package var version: Int64?
    package var stamp: String?
    package var digest: String?
    /// The server's version as a refused push reported it (the server may hold a tombstone this
    /// device never pulled): the next push is made against it.
    package var conflictVersion: Int64?
    /// Which lifetime of the item this is (nil: none yet, or an earlier build's).
    package var incarnation: String?
    /// `when-unlocked` or `after-first-unlock`.
    package var accessibility: KeychainAccessibility
}

/// An item the server has and this device deleted or made this-device-only.
package struct KeychainSyncTombstone {
    package var service: String
    package var account: String
    package var version: Int64
    /// The incarnation it deletes (nil: an earlier build's item).
    package var incarnation: String?
}

/// The keychain's sync bookkeeping (schema version 3), read and written by `SyncEngine` inside
/// the keychain's own write transactions (`write`), so that an item and its bookkeeping always
/// commit together. docs/sync.md, "Keychain items".
extension Keychain {
    /// The incarnation of an item an earlier build synced, which no incarnation field names.
    package static let legacySyncIncarnation = "legacy"

    /// Where the keychain's database is, for the message of an error about what it holds.
    package var databasePath: String { connection.path }

    /// Whether migratable items can be sealed and opened here now: this device has a key, and the
    /// container key is unlocked here (or there is none yet: the first one pulled makes it).
    package var canSyncMigratableItems: Bool { migratableSyncBlocker == nil }

    /// Why migratable items cannot be synced now: `.containerKeyLocked` (no wrap of the container
    /// key for this device: `keychain recover`), `.deviceLocked` (its class keys are not in the
    /// kernel: both classes are synced only while the device is unlocked), or nil.
    package var migratableSyncBlocker: KeychainError? {
        guard let device else { return .containerKeyLocked }
        do {
            // With no container key yet, the first item pulled makes one: that needs both class keys.
            if try containerKey(.of(.complete), device: device, creating: false) == nil {
                _ = try classKey(.complete, device: device, creating: false)
            }
            return nil
        } catch let error as KeychainError {
            if case .deviceLocked = error { return error }
            return .containerKeyLocked
        } catch {
            return .containerKeyLocked
        }
    }

    /// Inside the caller's write transaction: a tombstone for every migratable item matching
    /// `condition` (parameters from `?2`) that the server has, before it is deleted or made
    /// this-device-only. `?1` is the time.
    func tombstoneMigratableItems(where condition: String, _ parameters: [SQLValue], at now: String) throws {
        try connection.statement("""
            INSERT INTO sync_tombstones (service, account, remote_version, deleted_at, incarnation)
            SELECT service, account, sync_version, ?1, sync_incarnation FROM items
            WHERE accessibility = 'migratable' AND sync_version IS NOT NULL AND (\(condition))
            ON CONFLICT (service, account) DO UPDATE SET remote_version = max(remote_version, excluded.remote_version),
                deleted_at = excluded.deleted_at, incarnation = excluded.incarnation
            """).run([.text(now)] + parameters)
    }

    // MARK: - Reading

    /// The change token the keychain has applied up to: zone, epoch, sequence.
    package func secretSyncToken() throws -> (zone: String, epoch: String, sequence: Int64)? {
        try connection.statement("SELECT zone, epoch, change_sequence FROM sync_token WHERE singleton = 1")
            .rows { ($0.text(0), $0.text(1), $0.integer(2)) }.first
    }

    package func syncItems(pendingOnly: Bool = false) throws -> [KeychainSyncItem] {
        try connection.statement("""
            SELECT service, account, updated_at, sync_pending, sync_version, sync_stamp, sync_digest, sync_conflict_version,
                sync_incarnation, protection FROM items
            WHERE accessibility = 'migratable' \(pendingOnly ? "AND sync_pending = 1" : "") ORDER BY updated_at, service, account
            """).rows { row in
            KeychainSyncItem(service: row.text(0), account: row.text(1), updatedAt: row.text(2), pending: row.integer(3) != 0,
                             version: row.optionalInteger(4), stamp: row.optionalText(5), digest: row.optionalText(6),
                             conflictVersion: row.optionalInteger(7), incarnation: row.optionalText(8),
                             accessibility: row.optionalText(9) == "when-unlocked" ? .whenUnlocked : .afterFirstUnlock)
        }
    }

    package func syncItem(service: String, account: String) throws -> KeychainSyncItem? {
        try syncItems().first { $0.service == service && $0.account == account }
    }

    package func syncTombstones() throws -> [KeychainSyncTombstone] {
        try connection.statement("SELECT service, account, remote_version, incarnation FROM sync_tombstones ORDER BY deleted_at, service, account")
            .rows { KeychainSyncTombstone(service: $0.text(0), account: $0.text(1), version: $0.integer(2), incarnation: $0.optionalText(3)) }
    }

    /// Whether (service, account) holds a this-device-only item (this device's or another's).
    package func holdsThisDeviceOnlyItem(service: String, account: String) throws -> Bool {
        try connection.integer("SELECT count(*) FROM items WHERE service = ? AND account = ? AND accessibility = 'thisDeviceOnly'",
                               [.text(service), .text(account)]) > 0
    }

    /// Migratable items and tombstones waiting for the server, and saved batches not confirmed.
    public func syncBacklog() throws -> (items: Int, batches: Int) {
        try connection.readTransaction {
            let items = try connection.integer("SELECT count(*) FROM items WHERE accessibility = 'migratable' AND sync_pending = 1")
                + connection.integer("SELECT count(*) FROM sync_tombstones")
            return (Int(items), Int(try connection.integer("SELECT count(*) FROM sync_outgoing")))
        }
    }

    // MARK: - Writing, inside the caller's `write`

    package func setSecretSyncToken(zone: String, epoch: String, sequence: Int64) throws {
        try connection.statement("""
            INSERT INTO sync_token (singleton, zone, epoch, change_sequence) VALUES (1, ?1, ?2, ?3)
            ON CONFLICT (singleton) DO UPDATE SET zone = ?1, epoch = ?2, change_sequence = ?3
            """).run([.text(zone), .text(epoch), .integer(sequence)])
    }

    /// Stores a value pulled from the server as a migratable item, bookkeeping left to the caller.
    package func storeFromSync(_ value: SecureBytes, service: String, account: String, accessibility: KeychainAccessibility) throws {
        guard let device, accessibility.isMigratable else { throw KeychainError.containerKeyLocked }
        _ = try store(value, service: service, account: account, accessibility: accessibility, device: device, fromSync: true)
    }

    /// The accessibility of the migratable item (service, account), if there is one.
    package func migratableAccessibility(service: String, account: String) throws -> KeychainAccessibility? {
        guard let row = try itemRow(service: service, account: account), row.accessibility.isMigratable else { return nil }
        return row.accessibility
    }

    /// What the server has of (service, account) now, and whether the item still waits for it.
    package func setSyncState(service: String, account: String, pending: Bool, version: Int64?, stamp: String?, digest: String?,
                      conflictVersion: Int64? = nil) throws {
        try connection.statement("""
            UPDATE items SET sync_pending = ?, sync_version = ?, sync_stamp = ?, sync_digest = ?, sync_conflict_version = ?
            WHERE service = ? AND account = ? AND accessibility = 'migratable'
            """).run([.integer(pending ? 1 : 0), .optional(version), .optional(stamp), .optional(digest), .optional(conflictVersion),
                      .text(service), .text(account)])
    }

    package func setSyncConflictVersion(service: String, account: String, _ version: Int64) throws {
        try connection.statement("UPDATE items SET sync_conflict_version = ? WHERE service = ? AND account = ? AND accessibility = 'migratable'")
            .run([.integer(version), .text(service), .text(account)])
    }

    /// Removes a migratable item deleted on another device (no tombstone: the server has it deleted).
    package func deleteFromSync(service: String, account: String) throws {
        try connection.statement("DELETE FROM items WHERE service = ? AND account = ? AND accessibility = 'migratable'")
            .run([.text(service), .text(account)])
    }

    /// A tombstone of (service, account) against `version` (never lowering the one it has), naming
    /// the incarnation it deletes when given (a deletion sent again); made if there is none.
    package func setSyncTombstone(service: String, account: String, version: Int64, incarnation: String? = nil) throws {
        try connection.statement("""
            INSERT INTO sync_tombstones (service, account, remote_version, deleted_at, incarnation) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (service, account) DO UPDATE SET remote_version = max(remote_version, ?3), incarnation = coalesce(?5, incarnation)
            """).run([.text(service), .text(account), .integer(version), .text(clock().utcStamp), .optional(incarnation)])
    }

    /// A reconcile found the server with another version of a deleted item: the deletion is sent
    /// against that one. (One the server has none of is sent as a new deletion: `SyncEngine`.)
    package func settleSyncTombstone(service: String, account: String, serverVersion: Int64) throws {
        try connection.statement("UPDATE sync_tombstones SET remote_version = ? WHERE service = ? AND account = ?")
            .run([.integer(serverVersion), .text(service), .text(account)])
    }

    /// Drops every keychain batch saved for a server that has since forgotten what it knew;
    /// their items are still pending and go out again after the reconcile.
    package func dropSyncOutgoing() throws {
        try write { try connection.statement("DELETE FROM sync_outgoing").run() }
    }

    // MARK: - Incarnations

    package func setSyncIncarnation(service: String, account: String, _ incarnation: String?) throws {
        try connection.statement("UPDATE items SET sync_incarnation = ? WHERE service = ? AND account = ?")
            .run([.optional(incarnation), .text(service), .text(account)])
    }

    /// Whether this device knows that incarnation of the item is over (deleted or replaced).
    package func isDeadIncarnation(service: String, account: String, _ incarnation: String) throws -> Bool {
        try connection.integer("SELECT count(*) FROM sync_dead WHERE service = ? AND account = ? AND incarnation = ?",
                               [.text(service), .text(account), .text(incarnation)]) > 0
    }

    package func noteDeadIncarnation(service: String, account: String, _ incarnation: String) throws {
        try connection.statement("INSERT OR IGNORE INTO sync_dead (service, account, incarnation) VALUES (?, ?, ?)")
            .run([.text(service), .text(account), .text(incarnation)])
    }

    /// Whether this keychain has seen the item's sealed deletion stamped `stamp` before.
    package func sawDeletion(service: String, account: String, stamp: String) throws -> Bool {
        try connection.integer("SELECT count(*) FROM sync_deletions_seen WHERE service = ? AND account = ? AND stamp = ?",
                               [.text(service), .text(account), .text(stamp)]) > 0
    }

    package func sawAnyDeletion(service: String, account: String) throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM sync_deletions_seen WHERE service = ? AND account = ?)",
                               [.text(service), .text(account)]) == 1
    }

    package func noteDeletionSeen(service: String, account: String, stamp: String) throws {
        try connection.statement("INSERT OR IGNORE INTO sync_deletions_seen (service, account, stamp) VALUES (?, ?, ?)")
            .run([.text(service), .text(account), .text(stamp)])
    }

    /// The keychain's change sequence at or below which an unsealed tombstone is believed.
    package func unsealedDeletionsBefore() throws -> Int64 {
        try connection.integer("SELECT coalesce(max(before), 0) FROM sync_unsealed")
    }

    package func deleteSyncTombstone(service: String, account: String) throws {
        try connection.statement("DELETE FROM sync_tombstones WHERE service = ? AND account = ?").run([.text(service), .text(account)])
    }

    // MARK: - The saved push batch

    package func saveSyncOutgoing(mutationID: String, request: String, local: String) throws {
        try write {
            try connection.statement("INSERT INTO sync_outgoing (mutation_id, request, local, created_at) VALUES (?, ?, ?, ?)")
                .run([.text(mutationID), .text(request), .text(local), .text(clock().utcStamp)])
        }
    }

    package func syncOutgoing() throws -> (mutationID: String, request: String, local: String)? {
        try connection.statement("SELECT mutation_id, request, local FROM sync_outgoing ORDER BY created_at, mutation_id LIMIT 1")
            .rows { ($0.text(0), $0.text(1), $0.text(2)) }.first
    }

    package func deleteSyncOutgoing(mutationID: String) throws {
        try connection.statement("DELETE FROM sync_outgoing WHERE mutation_id = ?").run([.text(mutationID)])
    }

    /// `sync leave`: forgets what the server has of every item (they all wait for the next server
    /// joined), the tombstones, a batch never confirmed and the change token. The items stay.
    public func forgetSync() throws {
        try write {
            try connection.execute("""
                UPDATE items SET sync_pending = CASE WHEN accessibility = 'migratable' THEN 1 ELSE 0 END, sync_version = NULL,
                    sync_stamp = NULL, sync_digest = NULL, sync_conflict_version = NULL;
                DELETE FROM sync_tombstones; DELETE FROM sync_outgoing; DELETE FROM sync_token; DELETE FROM sync_dead;
                UPDATE items SET sync_incarnation = NULL; UPDATE sync_unsealed SET before = 0
                """)
        }
    }
}
