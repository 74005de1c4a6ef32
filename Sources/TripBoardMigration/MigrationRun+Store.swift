import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

extension MigrationRun {
    /// The store step: the legacy store is copied by `VACUUM INTO` (which reads what is still only
    /// in its `-wal`), sealed, into `migration/legacy-copy.sqlite`, and the copy's records
    /// are converted to the current schema. Three ways to publish them, by what the container has:
    ///
    /// - no store yet (the usual first launch): the new store is built whole
    ///   (`MigrationStoreBuilder`; a fresh run starts it while the plan lists the files),
    ///   fsynced, and renamed into `store/` — nobody can have a file open that does not exist, and
    ///   the exclusive lock keeps it so;
    /// - a store with no record: the built store is published into it with the backup API, one
    ///   write transaction, so a reader sees all of it or nothing;
    /// - a store with records (`--merge`): the legacy records whose id is absent are added in one
    ///   checked transaction.
    ///
    /// Repeating the step adds nothing twice: after a crash the store has the records, and the
    /// third way finds every id present.
    func publishStore() throws -> (added: MigrationCounts, digest: String) {
        let (legacy, _) = try legacySource()
        report("store", done: 0, total: plan.storeBytes)
        let result: (added: MigrationCounts, digest: String)
        if try containerHasNoStore() {
            result = try buildStore(legacy: legacy)
            report("store", done: plan.storeBytes / 2, total: plan.storeBytes)
            try renameBuiltStoreIntoPlace()
            _ = try container()  // sets the container up around it (WAL, manifest)
        } else {
            let store = try container().store
            if try store.verification.holdsNoRow() {
                result = try buildStore(legacy: legacy) { built in
                    report("store", done: plan.storeBytes / 2, total: plan.storeBytes)
                    try store.verification.replaceWhole(with: built)
                }
            } else {
                prebuilt = nil
                try removeStagingStores()
                let copy = try MigrationStoreBuilder.copyLegacyStore(legacy.connection, into: migrationDirectory)
                CrashPoint.reach("migration.store-staged")
                result = try insertRecords(from: copy, into: store)
            }
        }
        try removeStagingStores()
        report("store", done: plan.storeBytes, total: plan.storeBytes)
        return result
    }

    /// The copy, the built store and their SQLite companions, left by an earlier attempt or by
    /// this one.
    func removeStagingStores() throws { try MigrationStoreBuilder.removeFiles(in: migrationDirectory) }

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
        try migrationDirectory.openFile(name, .readWrite).synchronize()
        let storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory, create: true)
        // Its key file first (over any a crash left there: the container has no store), then
        // the store: a store is never in place without its key.
        try migrationDirectory.rename(DatabaseKeyFile.name(for: name), to: storeDirectory, as: DatabaseKeyFile.name(for: ContainerLayout.storeFile))
        try migrationDirectory.rename(name, to: storeDirectory, as: ContainerLayout.storeFile)
        try storeDirectory.synchronize()
        try migrationDirectory.synchronize()
    }

    /// Finishes the store the plan started building (or builds it now, on a resumed run) and
    /// calls `publish` with it still open; it is closed on return. The digest to verify it
    /// against is the plan's. A plan written without one (by an earlier TripBoard) gets the
    /// record-by-record conversion, which takes its own.
    private func buildStore(legacy: LegacyStore,
                            publish: (Connection) throws -> Void = { _ in }) throws -> (added: MigrationCounts, digest: String) {
        let builder = try prebuilt ?? MigrationStoreBuilder(legacy: legacy.connection, migrationDirectory: migrationDirectory,
                                                            keys: options.container.fileKeys)
        prebuilt = nil
        CrashPoint.reach("migration.store-staged")
        let result: (added: MigrationCounts, digest: String)
        if let digest = plan.recordDigest {
            result = (try builder.finish(files: files, migratedAt: plan.migratedAt), digest)
        } else {
            let (_, digest) = try convertRecords(from: builder.copy, into: Store(connection: builder.connection)) { _, _ in true }
            result = (try builder.finishWithoutConverting(), digest)
        }
        try publish(builder.connection)
        return result
    }

    /// `--merge` into a store that has records: the legacy records whose id is absent are added in
    /// one transaction that also checks them, so its commit publishes all of them at once.
    private func insertRecords(from copy: LegacyStore, into store: Store) throws -> (added: MigrationCounts, digest: String) {
        let connection = store.connection
        return try connection.withPageCache(kibibytes: Self.pageCacheKibibytes) {
            try connection.writeTransaction {
                let result = try convertRecords(from: copy, into: store) { kind, id in try !store.verification.hasRow(kind, id: id) }
                try MigrationStoreBuilder.checkConverted(store, against: copy, merge: plan.merge)
                return result
            }
        }
    }

    /// The page cache of the store step, whatever the store's size: the migration's memory stays
    /// flat. 2 MiB, about SQLite's default (2,000 KiB): 4 MiB (tried to hold the primary-key
    /// indexes the rows go into) and 16 MiB measured no faster on 10,000 attachments and a 117 MB
    /// store, and each MiB of cache is also a MiB of `CREATE INDEX` sort buffer (SQLite sizes one
    /// by the other).
    static let pageCacheKibibytes = 2 << 10

    /// Converts every record of the copy, in rowid order, and inserts those `isAbsent` accepts;
    /// returns what was added and the digest of every converted record (`MigrationDigest`).
    private func convertRecords(from copy: LegacyStore, into store: Store,
                                isAbsent: (_ kind: RecordKind, _ id: String) throws -> Bool) throws -> (MigrationCounts, String) {
        let converter = LegacyConverter(storePath: copy.path, migratedAt: plan.migratedAt)
        var added = MigrationCounts()
        var digest = MigrationDigest()
        try copy.forEachRow("trips") { row in
            let trip = try converter.trip(row)
            digest.add(trip)
            if try isAbsent(.trip, trip.id.text) { try store.insert(trip); added.trips += 1 }
        }
        try copy.forEachRow("places") { row in
            let place = try converter.place(row)
            digest.add(place)
            if try isAbsent(.place, place.id.text) { try store.insert(place); added.places += 1 }
        }
        try copy.forEachRow("bookings") { row in
            let booking = try converter.booking(row).booking
            digest.add(booking)
            if try isAbsent(.booking, booking.id.text) { try store.insert(booking); added.bookings += 1 }
        }
        try copy.forEachAttachmentRow { row in
            let attachment = try converter.attachment(row, file: try files.file(attachmentID: row.id.lowercased()))
            digest.add(attachment)
            if try isAbsent(.attachment, attachment.id.text) { try store.insert(attachment); added.attachments += 1 }
        }
        return (added, digest.finish())
    }
}
