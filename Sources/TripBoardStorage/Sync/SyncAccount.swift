import TripBoardSodium
import TripBoardSystem
import TripBoardReadPath

/// The server and zone this container syncs with, and where it is in the zone's change feed.
/// `sync status --json` prints this object.
public struct SyncAccount: Sendable, Equatable, Codable {
    /// The conninfo `sync setup` was given (never with a password in it: that is in the keychain).
    public var server: String
    public var zone: String
    /// This device's node in the hybrid clock (random, made at setup).
    public var node: String
    /// The change token: the zone's epoch and the last change sequence applied here.
    public var epoch: String?
    public var changeSequence: Int64
    public var joinedAt: String
    public var lastSyncAt: String?
    public var lastError: String?
}

/// One field as the server has it (the shadow), or as a push sends it.
struct ShadowField: Codable, Equatable {
    /// `JSONValue.canonicalText` of the value.
    var value: String
    var stamp: String
}

/// What `app` remembers of a batch it pushed, to record the server's answer locally.
struct OutgoingEntry: Codable {
    var kind: String
    var id: String
    /// The record's `updated_at` when the batch was made: an edit after it keeps the record pending.
    var updatedAt: String
    var deleted: Bool
    var fields: [String: ShadowField]
}

extension Store {
    // MARK: - Account

    /// The account, or nil when this container does not sync.
    public func syncAccount() throws -> SyncAccount? {
        try connection.statement("""
            SELECT server, zone, node, epoch, change_sequence, joined_at, last_sync_at, last_error FROM sync_account WHERE only_row = 1
            """).rows { row in
            SyncAccount(server: row.text(0), zone: row.text(1), node: row.text(2), epoch: row.optionalText(3),
                        changeSequence: row.integer(4), joinedAt: row.text(5), lastSyncAt: row.optionalText(6), lastError: row.optionalText(7))
        }.first
    }

    /// Records that this container syncs with `zone` on `server` from now on, from the start of its feed.
    public func joinSync(server: String, zone: String) throws -> SyncAccount {
        let node = Sodium.hexString(Sodium.randomBytes(count: 8))
        let now = stamp()
        try connection.writeTransaction {
            try connection.statement("DELETE FROM sync_shadow").run()
            try connection.statement("INSERT INTO sync_account (only_row, server, zone, node, joined_at) VALUES (1, ?, ?, ?, ?)")
                .run([.text(server), .text(zone), .text(node), .text(now)])
        }
        return SyncAccount(server: server, zone: zone, node: node, epoch: nil, changeSequence: 0, joinedAt: now)
    }

    /// A restored container is another device for sync: it keeps its server, zone, change token
    /// and shadow, but takes a new random clock node, so its edits are never stamped as those of
    /// the device the backup came from (two devices with one node would order their concurrent
    /// edits by chance). Returns whether the container syncs at all.
    @discardableResult
    public func takeNewSyncIdentity() throws -> Bool {
        let node = Sodium.hexString(Sodium.randomBytes(count: 8))
        return try connection.writeTransaction {
            try connection.statement("UPDATE sync_account SET node = ? WHERE only_row = 1").run([.text(node)])
            return connection.changes > 0
        }
    }

    /// Forgets the server: the account, the shadow, and a batch never confirmed (its records
    /// stay pending). Local data stays as it is. Returns how many unconfirmed batches were dropped.
    @discardableResult
    public func leaveSync() throws -> Int {
        try connection.writeTransaction {
            let dropped = Int(try connection.integer("SELECT count(*) FROM sync_outgoing"))
            try connection.execute("DELETE FROM sync_account; DELETE FROM sync_shadow; DELETE FROM sync_outgoing")
            return dropped
        }
    }

    /// Drops the batches saved for sending: the server they were made for is gone (records
    /// stay pending, the reconcile sends them again against what the server has now).
    func dropOutgoing() throws {
        try connection.statement("DELETE FROM sync_outgoing").run()
    }

    /// Notes how the last sync ended (`nil`: it succeeded).
    public func noteSyncEnded(error: String?) throws {
        try connection.writeTransaction {
            if error == nil {
                try connection.statement("UPDATE sync_account SET last_sync_at = ?, last_error = NULL").run([.text(stamp())])
            } else {
                try connection.statement("UPDATE sync_account SET last_error = ?").run([.optional(error)])
            }
        }
    }

    /// The change token, inside the caller's transaction with the changes it covers; `record`, the
    /// last record it covers (`SyncCheck.tokenRecord`), when the page had one.
    func setChangeToken(epoch: String, sequence: Int64, record: WireRecord? = nil) throws {
        try connection.statement("UPDATE sync_account SET epoch = ?, change_sequence = ?").run([.text(epoch), .integer(sequence)])
        if let record, let version = record.version {
            try connection.statement("UPDATE sync_account SET token_record = ?").run([.text("\(record.kind)/\(record.id)/\(version)")])
        }
    }

    /// The mutation id of the last batch the server answered, inside the transaction that records
    /// its answers (`SyncCheck.lastMutation`).
    func setLastMutation(_ mutationID: String?) throws {
        try connection.statement("UPDATE sync_account SET last_mutation = ?").run([.optional(mutationID)])
    }

    /// What the server is asked before a sync, to tell whether it lost changes it had acknowledged.
    public func syncCheck() throws -> SyncCheck {
        try connection.statement("SELECT last_mutation, token_record FROM sync_account WHERE only_row = 1").rows { row in
            SyncCheck(lastMutation: row.optionalText(0), tokenRecord: row.optionalText(1).flatMap(SyncCheck.record(_:)))
        }.first ?? SyncCheck(lastMutation: nil, tokenRecord: nil)
    }

    /// Trips, places, bookings and attachments waiting for the server; of those, attachments;
    /// pulled attachments still without their file; saved batches not confirmed.
    public func syncBacklog() throws -> (records: Int, attachments: Int, awaitingFile: Int, unconfirmedBatches: Int) {
        try connection.readTransaction {
            let records = try SyncRecord.kinds.reduce(0) { $0 + Int(try connection.integer("SELECT count(*) FROM \($1.table) WHERE \(Self.pending)")) }
            let attachments = Int(try connection.integer("SELECT count(*) FROM attachments WHERE \(Self.pending)"))
            let awaiting = Int(try connection.integer("""
                SELECT count(*) FROM attachments a JOIN sync_shadow s ON s.kind = 'attachment' AND s.id = a.id AND s.field = 'blob'
                WHERE a.state = 'missing' AND a.trashed_at IS NULL
                """))
            return (records, attachments, awaiting, Int(try connection.integer("SELECT count(*) FROM sync_outgoing")))
        }
    }

    // MARK: - Shadow

    func shadow(_ kind: RecordKind, id: String) throws -> [String: ShadowField] {
        var fields: [String: ShadowField] = [:]
        try connection.statement("SELECT field, value, stamp FROM sync_shadow WHERE kind = ? AND id = ?")
            .rows([.text(kind.rawValue), .text(id)]) { ($0.text(0), ShadowField(value: $0.text(1), stamp: $0.text(2))) }
            .forEach { fields[$0.0] = $0.1 }
        return fields
    }

    func setShadow(_ kind: RecordKind, id: String, field: String, _ value: ShadowField) throws {
        try connection.statement("INSERT OR REPLACE INTO sync_shadow (kind, id, field, value, stamp) VALUES (?, ?, ?, ?, ?)")
            .run([.text(kind.rawValue), .text(id), .text(field), .text(value.value), .text(value.stamp)])
    }

    func clearShadow(_ kind: RecordKind, id: String) throws {
        try connection.statement("DELETE FROM sync_shadow WHERE kind = ? AND id = ?").run([.text(kind.rawValue), .text(id)])
    }

    // MARK: - Outgoing batch

    /// Saves a batch: `request` is its records as JSON (`WireJSON.records`).
    func saveOutgoing(mutationID: String, request: [UInt8], local: [OutgoingEntry]) throws {
        let requestText = String(decoding: request, as: UTF8.self)
        let localText = String(decoding: WireJSON.entries(local), as: UTF8.self)
        try connection.writeTransaction {
            try connection.statement("INSERT INTO sync_outgoing (mutation_id, request, local, created_at) VALUES (?, ?, ?, ?)")
                .run([.text(mutationID), .text(requestText), .text(localText), .text(stamp())])
        }
    }

    func outgoing() throws -> (mutationID: String, request: [WireRecord], local: [OutgoingEntry])? {
        guard let row = try connection.statement("SELECT mutation_id, request, local FROM sync_outgoing ORDER BY created_at LIMIT 1")
            .rows({ ($0.text(0), $0.text(1), $0.text(2)) }).first else { return nil }
        return (row.0, try JSON.decode([WireRecord].self, from: Array(row.1.utf8)), try JSON.decode([OutgoingEntry].self, from: Array(row.2.utf8)))
    }
}
