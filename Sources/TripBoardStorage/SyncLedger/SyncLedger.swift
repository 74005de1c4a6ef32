import TripBoardSQLite
import TripBoardSystem
public import TripBoardModel

/// What sync keeps in the store, beside the records: the account and its change token, the
/// shadow (each field's last synchronized value and stamp), the batches saved before a push, the
/// records held back until their parents arrive, conflicts, incarnations, and the pending state
/// of every record (docs/sync.md §5). A view of the store over its one connection, so that a
/// page of pulled records and its token commit in one transaction with the records themselves.
/// The engine (TripBoardSync) composes these methods and runs no SQL of its own.
public struct SyncLedger: StoreView {
    package let store: Store
}

extension Store {
    /// What sync keeps in this store (`SyncLedger`).
    public var syncLedger: SyncLedger { SyncLedger(store: self) }
}

extension SyncLedger {
    /// What the server must hear about: every record not `synchronized`, except what is in the
    /// trash without having been uploaded (it waits there to be restored or purged; a trashed
    /// record the server had is a tombstone, and listed). Uses the `*_pending` indexes.
    static let pending = "sync_state <> 'synchronized' AND (trashed_at IS NULL OR sync_state = 'pendingDeletion')"

    /// `pending` for `kind`'s table, leaving out the placeholders a salvage made that nobody has
    /// edited since (docs/sync.md, "Placeholders a salvage made"): never sent, never counted
    /// as waiting. One the user edited is theirs, and goes like any record.
    static func pending(_ kind: RecordKind) -> String {
        pending + """
             AND NOT EXISTS (SELECT 1 FROM sync_placeholders p WHERE p.kind = '\(kind.rawValue)' AND p.id = \(kind.table).id
                AND NOT EXISTS (SELECT 1 FROM sync_field_edits e WHERE e.kind = p.kind AND e.id = p.id AND e.edited_at > p.made_at))
            """
    }

    /// Every record the server has not confirmed: pendingUpload, pendingDeletion and failed, oldest
    /// change first; attachments included (a deleted one the server had is a tombstone too).
    public func pendingChanges() throws -> [PendingChange] { try pendingChangeRows().collect() }

    /// `pendingChanges()` one at a time as they are read (`sync pending`).
    public func pendingChangeRows() -> StoreCursor<PendingChange> {
        let select = { (kind: RecordKind) in
            "SELECT '\(kind.rawValue)', id, sync_state, remote_version, updated_at FROM \(kind.table) WHERE \(Self.pending(kind))"
        }
        return StoreCursor(RowCursor(connection: connection, sql: RecordKind.allCases.map(select).joined(separator: " UNION ALL ") + " ORDER BY 5, 2") { row in
            PendingChange(kind: RecordKind(rawValue: row.text(0)) ?? .trip, id: row.text(1),
                          syncState: SyncState(rawValue: row.text(2)) ?? .failed,
                          remoteVersion: row.optionalInteger(3), updatedAt: Timestamp(stored: row.text(4)))
        })
    }

    /// The server accepted record `id` at `remoteVersion`. A tombstone is then removed for good —
    /// unless it is still in the trash: it stays there, restorable, now `synchronized` (the server
    /// has it deleted; a restore uploads it as a new version) — and any other record becomes
    /// synchronized. With `expectedUpdatedAt`, refuses (`.conflict`) when the record was edited
    /// after the version the server received.
    public func acknowledge(kind: RecordKind, id: String, remoteVersion: Int64, expectedUpdatedAt: String? = nil) throws {
        _ = try FieldRules.remoteVersion(remoteVersion)
        try connection.writeTransaction {
            if try !recordAcknowledgement(kind: kind, id: id, remoteVersion: remoteVersion, expectedUpdatedAt: expectedUpdatedAt) {
                let updatedAt = try connection.statement("SELECT updated_at FROM \(kind.table) WHERE id = ?").rows([.text(id)]) { $0.text(0) }.first ?? ""
                throw StoreError.conflict("\(kind.rawValue) \(id) changed at \(updatedAt), after the uploaded version; it stays pending")
            }
        }
    }

    /// The acknowledgement inside the caller's write transaction (`sync now` records a whole
    /// batch's in one, with the change token). False, and nothing written, when `expectedUpdatedAt`
    /// is given and the record changed after it.
    package func recordAcknowledgement(kind: RecordKind, id: String, remoteVersion: Int64, expectedUpdatedAt: String? = nil) throws -> Bool {
        guard let row = try acknowledgementRow(kind, id: id) else { throw StoreError.notFound(kind: kind, id: id) }
        return try acknowledge(row, kind: kind, id: id, remoteVersion: remoteVersion, expectedUpdatedAt: expectedUpdatedAt)
    }

    /// What `recordPushed` did with a record the server took at a version.
    package enum PushedOutcome {
        /// Synchronised at that version (or, a deletion, gone from the store).
        case acknowledged
        /// Edited since the batch was made: only its remote version moved, and it stays pending.
        case changedSince
        /// Already at that version or a later one (a pull brought it meanwhile): nothing written.
        case alreadyNewer
        /// Purged meanwhile: nothing written.
        case gone
    }

    /// The server took record `id` at `remoteVersion`, as it was at `updatedAt`: one read of its
    /// row, then the acknowledgement, inside the caller's write transaction.
    package func recordPushed(kind: RecordKind, id: String, remoteVersion: Int64, updatedAt: String) throws -> PushedOutcome {
        guard let row = try acknowledgementRow(kind, id: id) else { return .gone }
        if let current = row.remoteVersion, current >= remoteVersion { return .alreadyNewer }
        if row.inTrash && row.state != .pendingDeletion {
            // Deleted here while the batch waited for its answer (a run killed after the server
            // took it, or before it was sent): the trash kept it as never uploaded. The server
            // has it now, so it is a deletion to send, like any trashed record the server had.
            try connection.statement("UPDATE \(kind.table) SET sync_state = 'pendingDeletion', remote_version = ? WHERE id = ?")
                .run([.integer(remoteVersion), .text(id)])
            return .changedSince
        }
        if try acknowledge(row, kind: kind, id: id, remoteVersion: remoteVersion, expectedUpdatedAt: updatedAt) { return .acknowledged }
        try connection.statement("UPDATE \(kind.table) SET remote_version = ? WHERE id = ?").run([.integer(remoteVersion), .text(id)])
        return .changedSince
    }

    /// `recordPushed` for many records of one kind at once, in the caller's write transaction:
    /// `rows` is a JSON array of `[id, remoteVersion, updatedAt]`. Acknowledges, set-based, each
    /// one that is here, not in the trash, not a deletion, unchanged since the batch was made
    /// (`updated_at` as given) and below that version, and returns their ids; the others (gone,
    /// edited, trashed or deleted meanwhile, already newer) are left as they were, for
    /// `recordPushed` one at a time.
    package func acknowledgePushed(_ kind: RecordKind, rows: String) throws -> Set<String> {
        Set(try connection.statement("""
            UPDATE \(kind.table) AS t SET sync_state = 'synchronized', remote_version = j.value ->> 1
            FROM json_each(?1) AS j
            WHERE t.id = j.value ->> 0 AND t.updated_at = j.value ->> 2 AND t.trashed_at IS NULL
              AND t.sync_state <> 'pendingDeletion' AND (t.remote_version IS NULL OR t.remote_version < j.value ->> 1)
            RETURNING id
            """).rows([.text(rows)]) { $0.text(0) })
    }

    private typealias AcknowledgementRow = (state: SyncState?, remoteVersion: Int64?, updatedAt: String, inTrash: Bool)

    private func acknowledgementRow(_ kind: RecordKind, id: String) throws -> AcknowledgementRow? {
        try connection.statement(
            "SELECT sync_state, remote_version, updated_at, trashed_at IS NOT NULL FROM \(kind.table) WHERE id = ?"
        ).rows([.text(id)]) { (SyncState(rawValue: $0.text(0)), $0.optionalInteger(1), $0.text(2), $0.integer(3) != 0) }.first
    }

    private func acknowledge(_ row: AcknowledgementRow, kind: RecordKind, id: String, remoteVersion: Int64, expectedUpdatedAt: String?) throws -> Bool {
        let (state, current, updatedAt, inTrash) = row
        if let expectedUpdatedAt, expectedUpdatedAt != updatedAt { return false }
        if let current, remoteVersion < current {
            throw StoreError.invalidData("\(kind.rawValue) \(id) is already at remote version \(current); refusing to go back to \(remoteVersion)")
        }
        if state == .pendingDeletion && !inTrash {
            // A booking's attachments are never deleted with it (ON DELETE SET NULL, and the
            // schema's CHECK lets only queued or trashed rows lose their booking).
            try connection.statement("DELETE FROM \(kind.table) WHERE id = ?").run([.text(id)])
        } else {
            try connection.statement(
                "UPDATE \(kind.table) SET sync_state = 'synchronized', remote_version = ? WHERE id = ?"
            ).run([.integer(remoteVersion), .text(id)])
        }
        return true
    }

    /// The server rejected the upload of record `id`: it stays pending, marked failed.
    public func markFailed(kind: RecordKind, id: String) throws {
        try connection.writeTransaction {
            try connection.statement(
                "UPDATE \(kind.table) SET sync_state = 'failed' WHERE id = ? AND sync_state = 'pendingUpload' AND trashed_at IS NULL"
            ).run([.text(id)])
            if connection.changes == 0 {
                _ = try store.resolveID(kind, id, includingTombstones: true)
                throw StoreError.invalidData("\(kind.rawValue) \(id) is not waiting for upload")
            }
        }
    }
}
