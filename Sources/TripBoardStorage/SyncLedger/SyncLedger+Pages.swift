import TripBoardSQLite
package import TripBoardModel

/// A pulled record's trip (or booking) is not in the store: found before the record's first write
/// (a record new here), or its write undone with its savepoint (the foreign key refused it). The
/// engine holds the record until the parent arrives.
package struct ParentMissing: Error {
    package init() {}
}

/// A pulled record applied without a savepoint failed after it had written: the page's transaction
/// is undone, and the sync fails with `cause`.
package struct RecordPartlyWritten: Error, CustomStringConvertible {
    package let cause: any Error
    package var description: String { "a pulled record failed half-written (\(cause)); the page was not applied" }
}

/// What the sync engine (TripBoardSync) needs around the store's sync writes: a pulled page, or a
/// batch's acknowledgements, is one write transaction; each pulled record is a savepoint in it,
/// but for one new here that needs none (`inRecordWithoutSavepoint`).
/// The engine composes these; the SQL stays here.
extension SyncLedger {
    /// Runs `body`, the writes of one pulled record, in a savepoint of the page's transaction:
    /// when it throws, what it wrote is undone and the page goes on.
    package func inRecordSavepoint<T>(_ body: () throws -> T) throws -> T {
        // Prepared once (the statement cache), not parsed again for each record.
        try connection.statement("SAVEPOINT sync_record").run()
        do {
            let result = try body()
            try connection.statement("RELEASE sync_record").run()
            return result
        } catch {
            try connection.execute("ROLLBACK TO sync_record")
            try connection.execute("RELEASE sync_record")
            // SQLITE_CONSTRAINT_FOREIGNKEY: the record's trip (or booking) is not here.
            if let error = error as? SQLiteError, error.extendedCode == 787 { throw ParentMissing() }
            throw error
        }
    }

    /// Runs `body`, the writes of one pulled record whose first write is one statement that SQLite
    /// undoes whole when it fails, and before which every check throws (its parent's absence
    /// too: `ParentMissing`): `inRecordSavepoint` without the savepoint, which cost a first sync
    /// of 100,000 records a statement journal of every page each record touched. A failure after
    /// something was written (none is expected: what follows writes the sync tables) fails the
    /// page, whose transaction is undone. Written is judged by `sqlite3_total_changes`, which
    /// also counts the search index's own statements inside a statement that then failed: a
    /// failing write under a search trigger fails the page too, never the other way round.
    package func inRecordWithoutSavepoint<T>(_ body: () throws -> T) throws -> T {
        let before = connection.totalChanges
        do {
            return try body()
        } catch {
            guard connection.totalChanges == before else { throw RecordPartlyWritten(cause: error) }
            throw error
        }
    }

    /// Runs `body`, a pull applying its pages or a push recording its answers, with a page cache
    /// of `kibibytes` and statement journals in memory. A page or a batch touches more index pages
    /// (the records', the shadow's, the search index's) than the default 2 MB cache holds: spilling
    /// them to the WAL mid-transaction, and reading them back for the next batch, costs far more.
    /// Each pulled record's savepoint keeps the pages it changes in a statement journal: in memory
    /// (one record's pages at a time), not a file in /var/tmp written a page at a time.
    /// The WAL is checkpointed every `syncCheckpointPages` pages rather than SQLite's 1,000: each
    /// page or batch commits more than 1,000, so every commit was followed by a checkpoint, which
    /// copied every frame (a table page touched by every batch once per batch) and synced the WAL
    /// and the main file: 164 fsyncs in a push of 100,000 records.
    package func withSyncCache<T>(kibibytes: Int, _ body: () throws -> T) throws -> T {
        try connection.execute("PRAGMA temp_store = MEMORY")
        defer { try? connection.execute("PRAGMA temp_store = DEFAULT") }
        let checkpointPages = try connection.integer("PRAGMA wal_autocheckpoint")
        try connection.execute("PRAGMA wal_autocheckpoint = \(Self.syncCheckpointPages)")
        // Best effort, as for `temp_store`: a connection left at 64 MiB only checkpoints less often.
        defer { try? connection.execute("PRAGMA wal_autocheckpoint = \(checkpointPages)") }
        return try connection.withPageCache(kibibytes: kibibytes, body)
    }

    /// The WAL's size, in pages, at which a sync's commits checkpoint it: 64 MiB of 4 KiB pages.
    package static let syncCheckpointPages = 16_384

    /// Takes `kind` `id` out of the trash, inside the page's transaction: the server has it live
    /// again (restored on another device).
    package func takeOutOfTrash(_ kind: RecordKind, id: String) throws {
        try connection.statement("UPDATE \(kind.table) SET trashed_at = NULL, trashed_with = NULL WHERE id = ?").run([.text(id)])
    }

    /// Attachments a pulled deletion of their booking (or trip) took to the trash as the server
    /// had them (`moveToTrashInTransaction(pulled:)`), once the pull has caught up: one that the
    /// server has live still (its shadow: no deletion of its own came, which clears it but for
    /// the blob's name) and that was not moved to a live booking meanwhile becomes a deletion to send.
    /// Asked after every pull: the write lock is taken only when there is one.
    package func sendOwedAttachmentDeletions() throws {
        let owed = """
            trashed_at IS NOT NULL AND trashed_with <> id AND sync_state = 'synchronized' AND remote_version IS NOT NULL
              AND EXISTS (SELECT 1 FROM sync_shadow s WHERE s.kind = 'attachment' AND s.id = attachments.id
                  AND s.field <> '\(Self.fieldKeptThroughDeletion)')
            """
        guard try connection.statement("SELECT 1 FROM attachments WHERE \(owed) LIMIT 1").rows({ _ in true }).first == true else { return }
        try connection.writeTransaction {
            try connection.statement("UPDATE attachments SET sync_state = 'pendingDeletion' WHERE \(owed)").run()
        }
    }

    /// Puts `kind` `id` in the trash as a member of entry `trashedWith`, inside the page's
    /// transaction: a record pulled into a trip (or booking) that is in the trash here joins it.
    package func placeInTrash(_ kind: RecordKind, id: String, with trashedWith: String, at now: String) throws {
        try connection.statement("UPDATE \(kind.table) SET trashed_at = ?, trashed_with = ? WHERE id = ?")
            .run([.text(now), .text(trashedWith), .text(id)])
    }

    /// Every record of `kind` the server has had, with the version it had: what a reconcile
    /// compares with the server's copy.
    package func uploadedVersions(_ kind: RecordKind) throws -> [(id: String, remoteVersion: Int64)] {
        try connection.statement("SELECT id, remote_version FROM \(kind.table) WHERE remote_version IS NOT NULL")
            .rows { ($0.text(0), $0.integer(1)) }
    }

    /// How many of the records a deletion of `kind` `id` takes to the trash (it and its live
    /// children) were added or changed here and not yet on the server: what a deletion from
    /// another device takes of this device's own work.
    package func unsyncedRecordsUnder(_ kind: RecordKind, id: String) throws -> Int {
        try StoreTrash.memberScopes(of: kind).reduce(0) { count, member in
            count + Int(try connection.integer("""
                SELECT count(*) FROM \(member.member.table) WHERE \(member.scope) AND \(Store.liveCondition(member.member))
                  AND sync_state <> 'synchronized'
                """, [.null, .text(id)]))
        }
    }
}
