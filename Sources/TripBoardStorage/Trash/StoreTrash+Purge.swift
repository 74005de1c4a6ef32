import TripBoardSQLite
public import TripBoardModel
/// Restoring and purging (docs/storage.md §4.4 and §6).
extension StoreTrash {
    /// Puts an entry back where it was, with everything that went with it, in one transaction.
    /// Every restored record becomes `pendingUpload` with a new stamp: one the server had is
    /// uploaded as a new version. Files never moved, so there is nothing else to do. Refused
    /// (`invalidData`) when its place is gone: a place or booking whose trip — an attachment
    /// whose booking — is in the trash too (restore that first) or was deleted for good.
    @discardableResult
    public func restoreFromTrash(_ kind: RecordKind, id: String) throws -> TrashEntry {
        let now = store.stamp()
        return try connection.writeTransaction {
            guard let entry = try trashEntries().first(where: { $0.id == id && $0.kind == kind }) else {
                throw StoreError.notInTrash(id: id)
            }
            try requireRestorablePlace(of: entry)
            for (member, scope) in Self.memberScopes(of: kind, liveOnly: false) {
                // A deletion that never left this device (unsent, in no saved batch) is undone: the
                // server and every other device still hold this incarnation, and a deletion of it
                // made elsewhere still takes it (delete beats edit). One that may have left comes
                // back as a new incarnation: a deletion of the old one, replayed, cannot take it.
                var unsent = Set<String>()
                for candidate in try connection.statement("""
                    SELECT id FROM \(member.table) WHERE \(scope) AND trashed_with = ?2 AND sync_state = 'pendingDeletion'
                    """).rows([.text(now), .text(id)], { $0.text(0) }) where try !store.syncLedger.deletionInFlight(member, id: candidate) {
                    unsent.insert(candidate)
                }
                let restored = try connection.statement("""
                    UPDATE \(member.table) SET trashed_at = NULL, trashed_with = NULL, sync_state = 'pendingUpload', updated_at = ?1
                    WHERE \(scope) AND trashed_with = ?2 RETURNING id
                    """).rows([.text(now), .text(id)]) { $0.text(0) }
                for restoredID in restored where !unsent.contains(restoredID) { try store.syncLedger.endIncarnation(member, id: restoredID) }
            }
            return entry
        }
    }

    private func requireRestorablePlace(of entry: TrashEntry) throws {
        guard entry.kind != .trip else { return }
        let parentKind: RecordKind = entry.kind == .attachment ? .booking : .trip
        let what = "\(entry.kind.rawValue) \(entry.id.prefix(8)) (\(entry.name)) cannot be put back"
        let parent = try entry.parentId.flatMap { parentId in
            try connection.statement("SELECT sync_state, trashed_with FROM \(parentKind.table) WHERE id = ?")
                .rows([.text(parentId)]) { ($0.text(0), $0.optionalText(1)) }.first
        }
        guard let parent, parent.0 != SyncState.pendingDeletion.rawValue || parent.1 != nil else {
            throw StoreError.invalidData("\(what): its \(parentKind.rawValue) was deleted for good")
        }
        if let holder = parent.1 {
            throw StoreError.invalidData("""
                \(what): its \(parentKind.rawValue) \(entry.parentName ?? "") is in the trash too; restore that first: \
                app trash restore \(holder.prefix(8))
                """)
        }
        // A booking holds a file once (`attachment move`, `share-extension`): one moved or filed
        // there while this copy was in the trash keeps its place.
        if entry.kind == .attachment, let copy = try connection.statement("""
            SELECT c.id FROM attachments a JOIN attachments c ON c.booking_id = a.booking_id AND c.content_hash = a.content_hash AND c.id <> a.id
            WHERE a.id = ? AND a.content_hash <> '' AND c.state <> 'deleting' AND c.sync_state <> 'pendingDeletion' AND c.trashed_at IS NULL
            """).rows([.text(entry.id)], { $0.text(0) }).first {
            throw StoreError.invalidData("\(what): its booking \(entry.parentName ?? "") has the same file already, as attachment \(copy.prefix(8))")
        }
    }

    /// Step 1 of a purge, in one transaction: the entries leave the trash for good, with
    /// everything under them. A record the server had and has not yet confirmed the deletion of
    /// stays as a plain tombstone (only its trash entry goes); every other row is removed, except
    /// attachments, which join the deletion queue (`deleting`, still marked trashed): their files
    /// go after the commit (`AttachmentDeletion.finishQueued`), then their rows.
    func queuePurge(_ entries: [(kind: RecordKind, id: String)]) throws {
        let now = store.stamp()
        try connection.writeTransaction {
            for (kind, id) in entries {
                for (member, scope) in Self.memberScopes(of: kind, liveOnly: false) {
                    if member == .attachment {
                        // A tombstone whose file the queue already removed is not queued again.
                        try connection.statement("""
                            UPDATE attachments SET state = 'deleting', trashed_at = coalesce(trashed_at, ?1), trashed_with = NULL
                            WHERE \(scope) AND NOT (state = 'deleting' AND trashed_at IS NULL AND sync_state = 'pendingDeletion')
                            """).run([.text(now), .text(id)])
                        continue
                    }
                    try connection.statement("""
                        UPDATE \(member.table) SET trashed_at = NULL, trashed_with = NULL WHERE \(scope) AND sync_state = 'pendingDeletion'
                        """).run([.text(now), .text(id)])
                    // A booking's queued attachments lose it (ON DELETE SET NULL), nothing else.
                    try connection.statement("DELETE FROM \(member.table) WHERE \(scope) AND sync_state <> 'pendingDeletion'")
                        .run([.text(now), .text(id)])
                }
            }
        }
    }

    /// The deletion queue: attachments whose files are to be removed (step 2), then their rows.
    func queuedAttachments() throws -> [Attachment] {
        try connection.statement("""
            SELECT \(Store.attachmentColumns) FROM attachments INDEXED BY attachments_deletion_queue
            WHERE state = 'deleting' AND trashed_at IS NOT NULL ORDER BY id
            """).rows(Store.attachment(from:))
    }

    /// Step 3, once the files are gone: the rows are removed, or kept as sync tombstones (out of
    /// the trash, naming no file) while the server has still to hear of the deletion.
    func finishAttachmentDeletions(ids: [String]) throws {
        try connection.writeTransaction {
            for id in ids {
                try connection.statement("DELETE FROM attachments WHERE id = ? AND state = 'deleting' AND sync_state <> 'pendingDeletion'")
                    .run([.text(id)])
                try connection.statement("""
                    UPDATE attachments SET trashed_at = NULL, trashed_with = NULL
                    WHERE id = ? AND state = 'deleting' AND sync_state = 'pendingDeletion'
                    """).run([.text(id)])
            }
        }
    }

    /// True when a writer has trash work to do: a deletion queue to finish, or something trashed
    /// before `cutoff` (a stamp) to purge. One index probe per table (`*_trashed`, the queue's
    /// partial index), so that opening the container costs next to nothing when there is none.
    /// The indexes are named (`INDEXED BY`): the planner then weighs no other — this is parsed and
    /// planned by every writer that starts — and for the queue it would otherwise walk every
    /// trashed attachment (`attachments_trashed` fits too); a query naming a missing index fails
    /// loudly instead of slowing down.
    func hasTrashWork(purgingBefore cutoff: String) throws -> Bool {
        try connection.integer(Self.trashWorkQuery, [.text(cutoff)]) != 0
    }

    static let trashWorkQuery = """
        SELECT EXISTS (SELECT 1 FROM attachments INDEXED BY attachments_deletion_queue WHERE state = 'deleting' AND trashed_at IS NOT NULL)
            OR EXISTS (SELECT 1 FROM trips INDEXED BY trips_trashed WHERE trashed_at < ?1)
            OR EXISTS (SELECT 1 FROM places INDEXED BY places_trashed WHERE trashed_at < ?1)
            OR EXISTS (SELECT 1 FROM bookings INDEXED BY bookings_trashed WHERE trashed_at < ?1)
            OR EXISTS (SELECT 1 FROM attachments INDEXED BY attachments_trashed WHERE trashed_at < ?1)
        """

    /// The entries trashed before `cutoff`.
    func trashEntries(trashedBefore cutoff: String) throws -> [(kind: RecordKind, id: String)] {
        var due: [(kind: RecordKind, id: String)] = []
        for kind in RecordKind.allCases {
            due += try connection.statement("SELECT id FROM \(kind.table) WHERE trashed_at < ?1 AND trashed_with = id")
                .rows([.text(cutoff)]) { (kind, $0.text(0)) }
        }
        return due
    }

    /// The attachments of a trash entry of `kind`, for removing their thumbnails.
    package func attachmentIDs(inTrashEntry entryID: String, of kind: RecordKind) throws -> [String] {
        guard Self.memberKinds(of: kind).contains(.attachment) else { return [] }
        let scope = kind == .attachment ? "id = ?2" : Self.childScope(.attachment, of: kind, liveOnly: false)
        return try connection.statement("SELECT id FROM attachments WHERE \(scope) AND trashed_with = ?2")
            .rows([.text(entryID), .text(entryID)]) { $0.text(0) }
    }
}
