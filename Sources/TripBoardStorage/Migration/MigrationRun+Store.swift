import Glibc

extension MigrationRun {
    /// The store step: the legacy store is copied through SQLite's online backup API (which reads
    /// what is still only in its `-wal`) into `migration/legacy-copy.sqlite`, and the copy's records
    /// are converted to the current schema. Three ways to publish them, by what the container has:
    ///
    /// - no store yet (the usual first launch): the new store is built whole in
    ///   `migration/new-store.sqlite` (`buildStore`), fsynced, and renamed into `store/` — nobody
    ///   can have a file open that does not exist, and the exclusive lock keeps it so;
    /// - a store with no record: the built store is published into it with the backup API, one
    ///   write transaction, so a reader sees all of it or nothing;
    /// - a store with records (`--merge`): the legacy records whose id is absent are added in one
    ///   checked transaction.
    ///
    /// Repeating the step adds nothing twice: after a crash the store has the records, and the
    /// third way finds every id present.
    func publishStore() throws -> (added: MigrationCounts, digest: String) {
        let (legacy, _) = try legacySource()
        try removeStagingStores()
        let copyName = MigrationJournal.stagingStoreFile
        try createPrivateFile(copyName)
        report("store", done: 0, total: plan.storeBytes)
        try legacy.connection.backup(to: migrationDirectory.childPath(copyName))
        CrashPoint.reach("migration.store-staged")
        let copy = try LegacyStore(directory: migrationDirectory, fileName: copyName)
        let result: (added: MigrationCounts, digest: String)
        if try containerHasNoStore() {
            result = try buildStore(from: copy) { _ in }
            report("store", done: plan.storeBytes / 2, total: plan.storeBytes)
            try renameBuiltStoreIntoPlace()
            _ = try container()  // sets the container up around it (WAL, manifest)
        } else {
            let store = try container().store
            if try Self.holdsNoRecord(store.connection) {
                result = try buildStore(from: copy) { built in
                    report("store", done: plan.storeBytes / 2, total: plan.storeBytes)
                    try built.backup(into: store.connection)
                    try store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  // the -wal keeps no second copy
                }
            } else {
                result = try insertRecords(from: copy, into: store)
            }
        }
        try removeStagingStores()
        report("store", done: plan.storeBytes, total: plan.storeBytes)
        return result
    }

    /// True when the container has no store file yet (and this run has not set it up).
    private func containerHasNoStore() throws -> Bool {
        guard openedContainer == nil else { return false }
        guard try root.status(of: ContainerLayout.storeDirectory)?.kind == .directory else { return true }
        return try Container.storeFileKind(in: root.openDirectory(ContainerLayout.storeDirectory)) == nil
    }

    /// The built store, made durable, becomes `store/TripBoard.sqlite`; both directories are
    /// fsynced before the step can be recorded.
    private func renameBuiltStoreIntoPlace() throws {
        let name = MigrationJournal.builtStoreFile
        try migrationDirectory.openFile(name, flags: O_RDWR).synchronize()
        let storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory, create: true)
        try migrationDirectory.rename(name, to: storeDirectory, as: ContainerLayout.storeFile)
        try storeDirectory.synchronize()
        try migrationDirectory.synchronize()
    }

    /// The copy, the built store and their SQLite companions, left by an earlier attempt or by
    /// this one.
    func removeStagingStores() throws {
        for name in [MigrationJournal.stagingStoreFile, MigrationJournal.builtStoreFile] {
            for suffix in ["", "-wal", "-shm", "-journal"] { try migrationDirectory.removeFile(name + suffix) }
        }
    }

    /// Created with mode 0600 before SQLite opens it, as the container's own store is.
    private func createPrivateFile(_ name: String) throws {
        _ = try migrationDirectory.openFile(name, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
    }

    /// True when no table of the store has a row: publishing a whole store over it loses nothing.
    static func holdsNoRecord(_ connection: Connection) throws -> Bool {
        let tables = try connection.statement("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .rows { $0.text(0) }
        for table in tables where try connection.integer("SELECT EXISTS (SELECT 1 FROM \"\(table)\")") != 0 {
            return false
        }
        return true
    }

    /// The new store, built in `migration/` from the copy's records: the current schema, every
    /// record converted, foreign keys and counts checked. It needs no durability of its own (a
    /// crash leaves a file the next attempt deletes): no journal, no fsync. The secondary indexes
    /// are dropped while the rows go in and created again after — one sort each instead of an
    /// insertion at a random place per row — from their own `CREATE INDEX` text, so the schema is
    /// the one `Schema` writes. The records are converted inside SQLite (`LegacySQLConversion`);
    /// the digest to verify them against is the plan's. A plan written without one (by an
    /// earlier TripBoard) gets the record-by-record conversion, which takes its own.
    /// `publish` is called with the built store still open; it is closed on return.
    private func buildStore(from copy: LegacyStore,
                            publish: (Connection) throws -> Void) throws -> (added: MigrationCounts, digest: String) {
        let name = MigrationJournal.builtStoreFile
        try createPrivateFile(name)
        let connection = try Connection(path: migrationDirectory.childPath(name), mode: .readWrite)
        try connection.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF")
        try Schema.migrate(connection)
        let indexes = try connection.statement("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid")
            .rows { ($0.text(0), $0.text(1)) }
        for (index, _) in indexes { try connection.execute("DROP INDEX \"\(index)\"") }
        let (added, digest) = try connection.withPageCache(kibibytes: Self.pageCacheKibibytes) {
            try connection.writeTransaction { () throws -> (MigrationCounts, String) in
                let result: (MigrationCounts, String)
                if let digest = plan.recordDigest {
                    try LegacySQLConversion.convert(legacyCopy: copy.path, files: plan.attachments, migratedAt: plan.migratedAt,
                                                    into: connection)
                    result = (try MigrationCounts(counting: connection), digest)
                } else {
                    result = try convertRecords(from: copy, into: Store(connection: connection)) { _, _ in true }
                }
                for (_, sql) in indexes { try connection.execute(sql) }
                try checkConverted(connection, against: copy)
                return result
            }
        }
        try publish(connection)
        return (added, digest)
    }

    /// `--merge` into a store that has records: the legacy records whose id is absent are added in
    /// one transaction that also checks them, so its commit publishes all of them at once.
    private func insertRecords(from copy: LegacyStore, into store: Store) throws -> (added: MigrationCounts, digest: String) {
        let connection = store.connection
        return try connection.withPageCache(kibibytes: Self.pageCacheKibibytes) {
            try connection.writeTransaction {
                let result = try convertRecords(from: copy, into: store) { table, id in
                    try connection.integer("SELECT count(*) FROM \(table) WHERE id = ?", [.text(id)]) == 0
                }
                try checkConverted(connection, against: copy)
                return result
            }
        }
    }

    /// The page cache of the store step, whatever the store's size: the migration's memory stays
    /// flat. 4 MiB holds the primary-key indexes the rows go into (the other indexes are built
    /// after them); 16 MiB measured no faster on 10,000 attachments and a 117 MB store.
    static let pageCacheKibibytes = 4 << 10

    /// Converts every record of the copy, in rowid order, and inserts those `isAbsent` accepts;
    /// returns what was added and the digest of every converted record (`MigrationDigest`).
    private func convertRecords(from copy: LegacyStore, into store: Store,
                                isAbsent: (_ table: String, _ id: String) throws -> Bool) throws -> (MigrationCounts, String) {
        let converter = LegacyConverter(storePath: copy.path, migratedAt: plan.migratedAt)
        let files = Dictionary(uniqueKeysWithValues: plan.attachments.map { ($0.attachmentID ?? "", $0) })
        var added = MigrationCounts()
        var digest = MigrationDigest()
        try copy.forEachRow("trips") { row in
            let trip = try converter.trip(row)
            digest.add(trip)
            if try isAbsent("trips", trip.id) { try store.insert(trip); added.trips += 1 }
        }
        try copy.forEachRow("places") { row in
            let place = try converter.place(row)
            digest.add(place)
            if try isAbsent("places", place.id) { try store.insert(place); added.places += 1 }
        }
        try copy.forEachRow("bookings") { row in
            let booking = try converter.booking(row).booking
            digest.add(booking)
            if try isAbsent("bookings", booking.id) { try store.insert(booking); added.bookings += 1 }
        }
        for row in try copy.attachmentRows() {
            let attachment = try converter.attachment(row, file: files[row.id.lowercased()])
            digest.add(attachment)
            if try isAbsent("attachments", attachment.id) { try store.insert(attachment); added.attachments += 1 }
        }
        return (added, digest.finish())
    }

    /// Checked before the commit: no dangling reference, and (unless merging, where the
    /// destination's own records count too) exactly the copy's number of records.
    private func checkConverted(_ connection: Connection, against copy: LegacyStore) throws {
        if let problem = try connection.statement("PRAGMA foreign_key_check").rows({ "\($0.text(0)) row \($0.integer(1))" }).first {
            throw MigrationError.verificationFailed(detail: "the new store has a dangling reference in \(problem)")
        }
        let expected = try MigrationCounts(counting: copy.connection)
        let after = try MigrationCounts(counting: connection)
        if plan.merge ? after.trips < expected.trips : after != expected {
            throw MigrationError.verificationFailed(detail: "the new store holds \(after) records, the copy \(expected)")
        }
    }
}
