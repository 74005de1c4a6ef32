import Glibc

extension MigrationRun {
    /// The store step: the legacy store is copied through SQLite's online backup API (which reads
    /// what is still only in its `-wal`) into `migration/legacy-copy.sqlite`; the copy's records,
    /// converted to the current schema, are added to the destination store in one transaction that
    /// also checks them, so its commit publishes all of them at once. Repeating the step adds
    /// nothing twice: records whose id is present are left as they are.
    func publishStore() throws -> (added: MigrationCounts, digest: String) {
        let (legacy, _) = try legacySource()
        let store = try container().store
        try removeStagingCopy()
        let copyName = MigrationJournal.stagingStoreFile
        // Created here with mode 0600, before SQLite opens it, as the container's own store is.
        _ = try migrationDirectory.openFile(copyName, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        report("store", done: 0, total: plan.storeBytes)
        try legacy.connection.backup(to: migrationDirectory.childPath(copyName))
        CrashPoint.reach("migration.store-staged")
        let added = try insertRecords(from: try LegacyStore(directory: migrationDirectory, fileName: copyName), into: store)
        try removeStagingCopy()
        report("store", done: plan.storeBytes, total: plan.storeBytes)
        return added
    }

    /// The copy and its SQLite companions, left by an earlier attempt or by this one.
    func removeStagingCopy() throws {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try migrationDirectory.removeFile(MigrationJournal.stagingStoreFile + suffix)
        }
    }

    private func insertRecords(from copy: LegacyStore, into store: Store) throws -> (added: MigrationCounts, digest: String) {
        let converter = LegacyConverter(storePath: copy.path, migratedAt: plan.migratedAt)
        let files = Dictionary(uniqueKeysWithValues: plan.attachments.map { ($0.attachmentID ?? "", $0) })
        let attachmentRows = try copy.attachmentRows()
        let connection = store.connection
        let expected = try MigrationCounts(counting: copy.connection)
        // 16 MiB of page cache keeps the migration's memory flat whatever the store's size.
        return try connection.withPageCache(kibibytes: 16 << 10) {
            try connection.writeTransaction {
                var added = MigrationCounts()
                // Into a store with no trips (no merge), every record is new: no lookup per row.
                let empty = try connection.integer("SELECT count(*) FROM trips") == 0
                    && connection.integer("SELECT count(*) FROM attachments") == 0
                func absent(_ table: String, _ id: String) throws -> Bool {
                    if empty { return true }
                    return try connection.integer("SELECT count(*) FROM \(table) WHERE id = ?", [.text(id)]) == 0
                }
                var digest = MigrationDigest()
                try copy.forEachRow("trips") { row in
                    let trip = try converter.trip(row)
                    digest.add(trip)
                    if try absent("trips", trip.id) { try store.insert(trip); added.trips += 1 }
                }
                try copy.forEachRow("places") { row in
                    let place = try converter.place(row)
                    digest.add(place)
                    if try absent("places", place.id) { try store.insert(place); added.places += 1 }
                }
                try copy.forEachRow("bookings") { row in
                    let booking = try converter.booking(row).booking
                    digest.add(booking)
                    if try absent("bookings", booking.id) { try store.insert(booking); added.bookings += 1 }
                }
                for row in attachmentRows {
                    let attachment = try converter.attachment(row, file: files[row.id.lowercased()])
                    digest.add(attachment)
                    if try absent("attachments", attachment.id) { try store.insert(attachment); added.attachments += 1 }
                }
                // Checked before the commit, which is the publication.
                let after = try MigrationCounts(counting: connection)
                if let problem = try connection.statement("PRAGMA foreign_key_check").rows({ "\($0.text(0)) row \($0.integer(1))" }).first {
                    throw MigrationError.verificationFailed(detail: "the new store has a dangling reference in \(problem)")
                }
                if plan.merge ? after.trips < expected.trips : after != expected {
                    throw MigrationError.verificationFailed(detail: "the new store holds \(after) records, the copy \(expected)")
                }
                return (added, digest.finish())
            }
        }
    }
}
