import TripBoardKeychain
import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

extension MigrationRun {
    /// Verifies everything before the commit marker: the store's pages and records (without a
    /// merge: `quick_check` and the digest of every record; with one: `integrity_check`,
    /// `foreign_key_check` and each legacy record looked up and compared); every file at its
    /// destination, the planned file by its identity or the recorded copy by its inode and size (no
    /// byte read: the hashes come after, `AttachmentHashing`); the preferences and tokens.
    func verify() throws {
        let (legacy, _) = try legacySource()
        let container = try container()
        let store = try container.store
        report("finishing", done: 0, total: 1)
        if !plan.merge, let expected = record.storeDigest {
            // Every page of every b-tree is sound (quick_check), and every record, read back in
            // full, is the one the plan converted (the digest). integrity_check would add the
            // index-against-table cross-check: these indexes were made from these rows by
            // CREATE INDEX in the store step, which also ran foreign_key_check on them.
            if let problem = try store.verification.pageProblems().first {
                throw MigrationError.verificationFailed(detail: "the store: \(problem)")
            }
            try verifyByDigest(expected, store: store, legacy: legacy)
        } else {
            if let problem = try store.integrityProblems().first {
                throw MigrationError.verificationFailed(detail: "the store: \(problem)")
            }
            try verifyRecordByRecord(store: store, legacy: legacy)
        }
        var directories: [String: Directory] = [:]
        try files.forEach { file in
            let components = file.destination.split(separator: "/").map(String.init)
            let directory = try directories[components[1]] ?? container.directory(components[0] + "/" + components[1])
            directories[components[1]] = directory
            guard try isInPlace(file, directory: directory, name: components[2]) else {
                throw MigrationError.verificationFailed(detail: "\(file.destination) is missing")
            }
        }
        var preferences = try PreferencesFile(container: container)
        let merged = try preferences.load()
        if let absent = plan.preferences.values.keys.first(where: { !merged.isSet($0) }) {
            throw MigrationError.verificationFailed(detail: "the preference \(absent.rawValue) was not set")
        }
        if (record.tokensMoved ?? 0) > 0 {
            let items = try Keychain(container: container, device: try options.deviceKey(), keyring: options.keyring).list()
            guard items.contains(where: { $0.service == Keychain.accessTokenService || $0.service == Keychain.refreshTokenService }) else {
                throw MigrationError.verificationFailed(detail: "the keychain holds no token")
            }
        }
        report("finishing", done: 1, total: 1)
    }

    /// Without a merge the container's store holds exactly the migrated records, in the order the
    /// store step inserted them: the legacy store's counts must match, and one scan of the store
    /// must give the digest the store step took of the records it converted.
    private func verifyByDigest(_ expected: String, store: Store, legacy: LegacyStore) throws {
        let counts = try store.verification.rowCounts()
        let legacyCounts = try MigrationCounts(counting: legacy.connection)
        guard counts == legacyCounts else {
            throw MigrationError.verificationFailed(detail: "the new store holds \(counts), version 1 \(legacyCounts)")
        }
        var digest = MigrationDigest()
        try store.verification.forEveryRow { digest.add($0) }
        guard digest.finish() == expected else {
            throw MigrationError.verificationFailed(detail: "the new store's records differ from those converted from version 1")
        }
    }

    /// Every legacy record, converted again, is in the destination and (unless merging) equal.
    private func verifyRecordByRecord(store: Store, legacy: LegacyStore) throws {
        let converter = LegacyConverter(storePath: legacy.path, migratedAt: plan.migratedAt)
        try compare(.trip, store: store, in: legacy) { .trip(try converter.trip($0)) }
        try compare(.place, store: store, in: legacy) { .place(try converter.place($0)) }
        try compare(.booking, store: store, in: legacy) { .booking(try converter.booking($0).booking) }
        try legacy.forEachAttachmentRow { row in
            let file = try files.file(attachmentID: row.id.lowercased())
            let expected = try converter.attachment(row, file: file)
            guard let found = try store.verification.anyRecord(.attachment, id: expected.id.text) else {
                throw MigrationError.verificationFailed(detail: "attachment \(expected.id) is not in the new store")
            }
            if file != nil || !plan.merge, found != .attachment(expected) {
                throw MigrationError.verificationFailed(detail: "attachment \(expected.id) differs from the version-1 record")
            }
        }
    }

    /// Every row of the legacy table of `kind` is in the destination; unless merging (where a
    /// record that was there first is kept as it was), equal to its conversion.
    private func compare(_ kind: RecordKind, store: Store, in legacy: LegacyStore,
                         convert: (Statement) throws -> StoreVerification.AnyRecord) throws {
        try legacy.forEachRow(kind.table) { row in
            let expected = try convert(row)
            let id = expected.id
            guard let found = try store.verification.anyRecord(kind, id: id) else {
                throw MigrationError.verificationFailed(detail: "\(kind.table) row \(id) is not in the new store")
            }
            if !plan.merge && found != expected {
                throw MigrationError.verificationFailed(detail: "\(kind.table) row \(id) differs from the version-1 record")
            }
        }
    }
}
