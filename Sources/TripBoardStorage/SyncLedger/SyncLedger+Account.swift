import TripBoardSQLite
import TripBoardKeys
import TripBoardSystem
package import TripBoardModel

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
    /// What this device adds to its clock to stamp edits on the server's time scale: the median of
    /// the last offsets measured at connection (`Store.noteClockSample`); nil before the first.
    public var clockOffsetMilliseconds: Int64?
}

/// One field as the server has it (the shadow), or as a push sends it.
package struct ShadowField: Codable, Equatable {
    /// `JSONValue.canonicalText` of the value.
    package var value: String
    package var stamp: String

    package init(value: String, stamp: String) {
        self.value = value
        self.stamp = stamp
    }
}

extension SyncLedger {
    // MARK: - Account

    /// The account, or nil when this container does not sync.
    public func syncAccount() throws -> SyncAccount? {
        try connection.statement("""
            SELECT server, zone, node, epoch, change_sequence, joined_at, last_sync_at, last_error, clock_samples
            FROM sync_account WHERE only_row = 1
            """).rows { row in
            SyncAccount(server: row.text(0), zone: row.text(1), node: row.text(2), epoch: row.optionalText(3),
                        changeSequence: row.integer(4), joinedAt: row.text(5), lastSyncAt: row.optionalText(6), lastError: row.optionalText(7),
                        clockOffsetMilliseconds: Self.median(of: Self.clockSamples(row.text(8))))
        }.first
    }

    /// How many offsets the median is taken over: one odd answer (a slow round trip, a server
    /// that lies once) moves nothing, and a clock set right is followed after three syncs.
    public static let clockSampleCount = 5

    /// Keeps `sample` (server − device, milliseconds, measured at this sync's connection) among the
    /// last `clockSampleCount` and returns their median: the offset this sync stamps with.
    public func noteClockSample(_ sample: Int64) throws -> Int64 {
        try connection.writeTransaction {
            let kept = try connection.text("SELECT clock_samples FROM sync_account WHERE only_row = 1") ?? ""
            let samples = Array((Self.clockSamples(kept) + [sample]).suffix(Self.clockSampleCount))
            try connection.statement("UPDATE sync_account SET clock_samples = ? WHERE only_row = 1")
                .run([.text(samples.map(String.init).joined(separator: ","))])
            return Self.median(of: samples) ?? 0
        }
    }

    static func clockSamples(_ text: String) -> [Int64] {
        text.split(separator: ",").compactMap { Int64($0) }
    }

    /// The median (the lower of the two middle ones for an even count), or nil for none.
    static func median(of samples: [Int64]) -> Int64? {
        guard !samples.isEmpty else { return nil }
        return samples.sorted()[(samples.count - 1) / 2]
    }

    /// Records that this container syncs with `zone` on `server` from now on, from the start of its feed.
    public func joinSync(server: String, zone: String) throws -> SyncAccount {
        let node = Sodium.hexString(Sodium.randomBytes(count: 8))
        let now = store.stamp()
        try connection.writeTransaction {
            try connection.statement("DELETE FROM sync_shadow").run()
            try connection.statement("DELETE FROM sync_held").run()
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
            // Another device has another clock: its offsets are learned afresh.
            try connection.statement("UPDATE sync_account SET node = ?, clock_samples = '' WHERE only_row = 1").run([.text(node)])
            return connection.changes > 0
        }
    }

    /// Forgets the server: the account, the shadow, records held for a parent that never came,
    /// and a batch never confirmed (its records stay pending). Local data stays as it is. Returns how many unconfirmed batches were dropped.
    @discardableResult
    public func leaveSync() throws -> Int {
        try connection.writeTransaction {
            let dropped = Int(try connection.integer("SELECT count(*) FROM sync_outgoing"))
            try connection.execute("DELETE FROM sync_account; DELETE FROM sync_shadow; DELETE FROM sync_outgoing; DELETE FROM sync_held")
            return dropped
        }
    }

    /// Drops the batches saved for sending: the server they were made for is gone (records
    /// stay pending, the reconcile sends them again against what the server has now).
    package func dropOutgoing() throws {
        try connection.statement("DELETE FROM sync_outgoing").run()
    }

    /// Notes how the last sync ended (`nil`: it succeeded).
    public func noteSyncEnded(error: String?) throws {
        try connection.writeTransaction {
            if error == nil {
                try connection.statement("UPDATE sync_account SET last_sync_at = ?, last_error = NULL").run([.text(store.stamp())])
            } else {
                try connection.statement("UPDATE sync_account SET last_error = ?").run([.optional(error)])
            }
        }
    }

    /// The change token, inside the caller's transaction with the changes it covers; `record`, the
    /// last record it covers (`SyncCheck.tokenRecord`), when the page had one.
    package func setChangeToken(epoch: String, sequence: Int64, record: SyncVersionedRecord? = nil) throws {
        try connection.statement("UPDATE sync_account SET epoch = ?, change_sequence = ?").run([.text(epoch), .integer(sequence)])
        if let record {
            try connection.statement("UPDATE sync_account SET token_record = ?").run([.text(record.text)])
        }
    }

    /// The mutation id of the last batch the server answered, inside the transaction that records
    /// its answers (`SyncCheck.lastMutation`).
    package func setLastMutation(_ mutationID: String?) throws {
        try connection.statement("UPDATE sync_account SET last_mutation = ?").run([.optional(mutationID)])
    }

    /// What the server is asked before a sync (`SyncCheck`), to tell whether it lost changes it
    /// had acknowledged: the last batch it answered, and the last record the change token covers.
    package func syncCheckpoint() throws -> (lastMutation: String?, tokenRecord: SyncVersionedRecord?) {
        try connection.statement("SELECT last_mutation, token_record FROM sync_account WHERE only_row = 1").rows { row in
            (row.optionalText(0), row.optionalText(1).flatMap(SyncVersionedRecord.init(text:)))
        }.first ?? (nil, nil)
    }

    /// Trips, places, bookings and attachments waiting for the server; of those, attachments;
    /// pulled attachments still without their file; saved batches not confirmed.
    public func syncBacklog() throws -> (records: Int, attachments: Int, awaitingFile: Int, unconfirmedBatches: Int) {
        try connection.readTransaction {
            let records = try SyncRecord.kinds.reduce(0) { $0 + Int(try connection.integer("SELECT count(*) FROM \($1.table) WHERE \(Self.pending($1))")) }
            let attachments = Int(try connection.integer("SELECT count(*) FROM attachments WHERE \(Self.pending(.attachment))"))
            let awaiting = Int(try connection.integer("""
                SELECT count(*) FROM attachments a JOIN sync_shadow s ON s.kind = 'attachment' AND s.id = a.id AND s.field = 'blob'
                WHERE a.state = 'missing' AND a.trashed_at IS NULL
                """))
            return (records, attachments, awaiting, Int(try connection.integer("SELECT count(*) FROM sync_outgoing")))
        }
    }

    // MARK: - Shadow

    package func shadow(_ kind: RecordKind, id: String) throws -> [String: ShadowField] {
        var fields: [String: ShadowField] = [:]
        try connection.statement("SELECT field, value, stamp FROM sync_shadow WHERE kind = ? AND id = ?")
            .rows([.text(kind.rawValue), .text(id)]) { ($0.text(0), ShadowField(value: $0.text(1), stamp: $0.text(2))) }
            .forEach { fields[$0.0] = $0.1 }
        return fields
    }

    /// The server's values of several fields of one record, as `ShadowField`s, in one statement.
    package func setShadow(_ kind: RecordKind, id: String, fields: [String: ShadowField]) throws {
        guard !fields.isEmpty else { return }
        // One statement per number of fields (a kind has at most seven), each prepared once.
        let rows = Array(repeating: "(?, ?, ?, ?, ?)", count: fields.count).joined(separator: ", ")
        var values: [SQLValue] = []
        values.reserveCapacity(fields.count * 5)
        for (field, value) in fields {
            values += [.text(kind.rawValue), .text(id), .text(field), .text(value.value), .text(value.stamp)]
        }
        try connection.statement("INSERT OR REPLACE INTO sync_shadow (kind, id, field, value, stamp) VALUES \(rows)").run(values)
    }

    /// `setShadow` for many records of one kind: 64 rows to a statement, the rest one by one.
    package func setShadows(_ kind: RecordKind, _ records: [(id: String, fields: [String: ShadowField])]) throws {
        let perStatement = 64
        let sql = "INSERT OR REPLACE INTO sync_shadow (kind, id, field, value, stamp) VALUES "
        let full = try connection.statement(sql + Array(repeating: "(?, ?, ?, ?, ?)", count: perStatement).joined(separator: ", "))
        let kindText = SQLValue.text(kind.rawValue)
        var values: [SQLValue] = []
        values.reserveCapacity(perStatement * 5)
        for (id, fields) in records {
            for (field, value) in fields {
                values.append(kindText)
                values.append(.text(id))
                values.append(.text(field))
                values.append(.text(value.value))
                values.append(.text(value.stamp))
                if values.count == perStatement * 5 {
                    try full.run(values)
                    values.removeAll(keepingCapacity: true)
                }
            }
        }
        let one = try connection.statement(sql + "(?, ?, ?, ?, ?)")
        for start in stride(from: 0, to: values.count, by: 5) { try one.run(Array(values[start..<start + 5])) }
    }

    /// What a deletion leaves of a record's shadow: an attachment's blob name, so that a restore
    /// can name the blob it never fetched (the name is keyed by the file's bytes), sending the
    /// record and fetching the file. A shadow of nothing else is sent whole (`isOnlyKept`).
    package static let fieldKeptThroughDeletion = "blob"
    package static let keptThroughDeletion = "field = '\(fieldKeptThroughDeletion)'"

    /// Whether a shadow holds nothing but what a deletion keeps: the server knows none of the
    /// record's fields.
    package static func isOnlyKept(_ shadow: [String: ShadowField]) -> Bool {
        shadow.keys.allSatisfy { $0 == fieldKeptThroughDeletion }
    }

    /// Forgets what the server has of the record. Its incarnation, when only the shadow holds it,
    /// is kept (`incarnation`) unless the caller writes a shadow that names it (`pinningIncarnation`).
    /// (`keeping`: an SQL condition on the rows to keep.)
    package func clearShadow(_ kind: RecordKind, id: String, pinningIncarnation: Bool = true, keeping: String = "0") throws {
        if pinningIncarnation { try connection.statement("""
            INSERT OR IGNORE INTO sync_incarnations (kind, id, incarnation)
            SELECT kind, id, json_extract(value, '$') FROM sync_shadow WHERE kind = ?1 AND id = ?2 AND field = 'incarnation'
            """).run([.text(kind.rawValue), .text(id)]) }
        try connection.statement("DELETE FROM sync_shadow WHERE kind = ? AND id = ? AND NOT (\(keeping))").run([.text(kind.rawValue), .text(id)])
        try sentWhole(kind, id: id)
    }

    /// `clearShadow` for many records of one kind, set-based: the incarnations of those in
    /// `pinning` kept, then every shadow row of `ids` forgotten and their "send whole" marks
    /// dropped.
    package func clearShadows(_ kind: RecordKind, ids: [String], pinning: [String]) throws {
        if !pinning.isEmpty {
            try connection.statement("""
                INSERT OR IGNORE INTO sync_incarnations (kind, id, incarnation)
                SELECT kind, id, json_extract(value, '$') FROM sync_shadow
                WHERE kind = ?1 AND id IN (SELECT value FROM json_each(?2)) AND field = 'incarnation'
                """).run([.text(kind.rawValue), .text(JSONWriter.array(of: pinning))])
        }
        let list = JSONWriter.array(of: ids)
        try connection.statement("DELETE FROM sync_shadow WHERE kind = ?1 AND id IN (SELECT value FROM json_each(?2))")
            .run([.text(kind.rawValue), .text(list)])
        try sentWhole(kind, ids: list)
    }

    /// The server has the record again (a pull wrote its shadow, or a push of it was answered):
    /// it is no longer to be sent whole (`markSentWhole`).
    package func sentWhole(_ kind: RecordKind, id: String) throws {
        try connection.statement("DELETE FROM sync_send_whole WHERE kind = ? AND id = ?").run([.text(kind.rawValue), .text(id)])
    }

    /// `sentWhole` for many records of one kind: `ids` is a JSON array of their ids.
    package func sentWhole(_ kind: RecordKind, ids: String) throws {
        try connection.statement("DELETE FROM sync_send_whole WHERE kind = ?1 AND id IN (SELECT value FROM json_each(?2))")
            .run([.text(kind.rawValue), .text(ids)])
    }

    /// Whether this device knows any record as the server has it (a shadow row).
    package func hasShadow() throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM sync_shadow)") == 1
    }

    /// The server knows none of the record's values (it lost the record, or this device refuses
    /// what it served): the record goes again whole, each field still as this device knew it
    /// with that value's own stamp (never lower: docs/sync.md, No going back), one edited here
    /// stamped as an edit. The shadow keeps the values and stamps known (merges go on comparing
    /// against them); what else it held of the record (its incarnation, pinned as `clearShadow`
    /// does; a blob's name) is forgotten, unless `forgetting` is false (the server has the
    /// record, with a field older than this device's: that field goes with its own stamp). Until
    /// the server has the record again (`sentWhole`).
    package func markSentWhole(_ kind: RecordKind, id: String, forgetting: Bool = true) throws {
        if forgetting {
            // The blob's name goes too: a server that lost the record may have lost its file,
            // which the push then uploads again (one it still has is not sent twice). Its stamp
            // stays, so the name sent again is stamped above the one this device held, never
            // below (the sync model, seed 1741678424: a stamp made again from the record's time
            // went back a millisecond).
            let names = SyncRecord.fieldNames(kind).map { "'\($0)'" }.joined(separator: ", ")
            try clearShadow(kind, id: id, keeping: "field IN (\(names))")
            try connection.statement("UPDATE sync_shadow SET value = '' WHERE kind = ? AND id = ? AND field = 'blob'")
                .run([.text(kind.rawValue), .text(id)])
        }
        try connection.statement("INSERT OR IGNORE INTO sync_send_whole (kind, id) VALUES (?, ?)").run([.text(kind.rawValue), .text(id)])
    }

    package func hasRecordsToSendWhole() throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM sync_send_whole)") == 1
    }

    package func isToSendWhole(_ kind: RecordKind, id: String) throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM sync_send_whole WHERE kind = ? AND id = ?)",
                               [.text(kind.rawValue), .text(id)]) == 1
    }

    // MARK: - Outgoing batch

    /// Saves a batch: `request` is its records as JSON (`WireJSON.records`), `local` what this
    /// device records once the server answers (`OutgoingEntry`s, as JSON). The store keeps both
    /// as the text they are; the sync engine reads them.
    package func saveOutgoing(mutationID: String, request: [UInt8], local: [UInt8]) throws {
        let requestText = String(decoding: request, as: UTF8.self)
        let localText = String(decoding: local, as: UTF8.self)
        try connection.writeTransaction {
            try connection.statement("INSERT INTO sync_outgoing (mutation_id, request, local, created_at) VALUES (?, ?, ?, ?)")
                .run([.text(mutationID), .text(requestText), .text(localText), .text(store.stamp())])
        }
    }

    /// The oldest saved batch, as `saveOutgoing` was given it.
    package func outgoing() throws -> (mutationID: String, request: [UInt8], local: [UInt8])? {
        guard let row = try connection.statement("SELECT mutation_id, request, local FROM sync_outgoing ORDER BY created_at LIMIT 1")
            .rows({ ($0.text(0), $0.text(1), $0.text(2)) }).first else { return nil }
        return (row.0, Array(row.1.utf8), Array(row.2.utf8))
    }

    /// Whether a saved batch (sent or not, its answer not recorded yet) carries the deletion of
    /// the record: the server may have it.
    package func deletionInFlight(_ kind: RecordKind, id: String) throws -> Bool {
        try connection.integer("""
            SELECT EXISTS (SELECT 1 FROM sync_outgoing, json_each(sync_outgoing.local) AS entry
                           WHERE json_extract(entry.value, '$.kind') = ? AND json_extract(entry.value, '$.id') = ? AND json_extract(entry.value, '$.deleted'))
            """, [.text(kind.rawValue), .text(id)]) == 1
    }

    /// Removes the saved batch `mutationID`, inside the transaction that records its answers.
    /// Its pages go to the free list as they are (`secure_delete = FAST`): they hold what the same
    /// transaction records (the batch's values, and their sealed copies), and zeroing each —
    /// `secure_delete = ON`, the default of Debian's SQLite — wrote every page of a batch a second
    /// time. The connection's setting is put back afterwards.
    package func removeOutgoing(mutationID: String) throws {
        let previous = try connection.integer("PRAGMA secure_delete")
        try connection.execute("PRAGMA secure_delete = FAST")
        let restore = "PRAGMA secure_delete = \(previous == 2 ? "FAST" : String(previous))"
        do {
            try connection.statement("DELETE FROM sync_outgoing WHERE mutation_id = ?").run([.text(mutationID)])
        } catch {
            try connection.execute(restore)
            throw error
        }
        try connection.execute(restore)
    }
}

/// A record named with the version the server has of it: the last record a change token covers,
/// kept as `kind/id/version` in `sync_account.token_record`.
package struct SyncVersionedRecord: Equatable, Sendable {
    package var kind: String
    package var id: String
    package var version: Int64
    /// The change sequence it was written at, and its fields' stamps (`field=stamp,…` in byte
    /// order of the names): what it held, not only its number (nil in a token kept by a build
    /// before schema 9).
    package var sequence: Int64?
    package var stamps: String?
    /// When the server wrote it (`WireRecord.written`); nil in a token kept by an earlier build.
    package var written: Int64?

    package init(kind: String, id: String, version: Int64, sequence: Int64? = nil, stamps: String? = nil, written: Int64? = nil) {
        self.kind = kind
        self.id = id
        self.version = version
        self.sequence = sequence
        self.stamps = stamps
        self.written = written
    }

    /// `kind/id/version[/sequence/stamps]` → the record; nil for anything else.
    init?(text: String) {
        let parts = text.split(separator: "/", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 5, let version = Int64(parts[2]) else { return nil }
        let sequence = parts.count == 5 ? Int64(parts[3]) : nil
        if parts.count == 5 && sequence == nil { return nil }
        // `stamps@written` (stamps hold no `@`); a token of an earlier build has no write time.
        let last = parts.count == 5 ? parts[4].split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false) : []
        let written = last.count == 2 ? Int64(last[1]) : nil
        if last.count == 2 && written == nil { return nil }
        self.init(kind: String(parts[0]), id: String(parts[1]), version: version, sequence: sequence,
                  stamps: last.first.map(String.init), written: written)
    }

    /// As kept in `sync_account.token_record`.
    var text: String {
        "\(kind)/\(id)/\(version)" + (sequence.map { "/\($0)/" + (stamps ?? "") + (written.map { "@\($0)" } ?? "") } ?? "")
    }
}
