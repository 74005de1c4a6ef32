import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardSQLite
import TripBoardModel

/// The checks a restore runs on its staging directory before anything is put in place: the
/// store opens, is at a schema this build knows, passes `integrity_check` and
/// `foreign_key_check`; every attachment file matches its row's size and hash; the manifest, if
/// any, is one this build reads. A row whose file the archive does not hold is kept `missing`
/// (never invented); a file no row names is kept (a later `container check --repair` quarantines it).
struct RestoreVerification {
    let staging: RestoreStaging
    let passphrase: SecureBytes

    /// What the checks of the store alone found (`checkStore(at:key:)`).
    struct StoreChecked: Sendable {
        /// The store's records, when its rows were checked against this build's rules; `nil` for
        /// a store of an older schema, whose rows are checked once it is brought to this build's.
        let counts: StoreCounts?
    }

    /// The summary, and the container key the backup's keychain wraps (unwrapped once, here).
    /// `storeChecks`: `checkStore(at:key:)` of the staged store, run while the attachments were
    /// staged (`RestoreStaging.storeChecks`); `nil`: run here.
    func verify(storeChecks: BackgroundResult<StoreChecked>? = nil) throws -> (RestoreSummary, Keychain.BackupKey?) {
        try Self.saidAsTheBackups { try verifyAll(storeChecks: storeChecks) }
    }

    /// Store errors said as the backup's: the path is in the staging directory, which is
    /// removed, so the store's own advice ("move it aside") would name a file that is gone.
    static func saidAsTheBackups<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            switch error {
            case .newerSchema(_, let found, let supported): throw RestoreError.newerSchema(found: found, supported: supported)
            case .corrupt(_, let detail), .unreadable(_, let detail), .damaged(_, _, let detail): throw RestoreError.damagedStore(detail: detail)
            case .invalidField, .invalidData, .missing, .notReady: throw RestoreError.damagedStore(detail: error.description)
            default: throw error
            }
        }
    }

    private func verifyAll(storeChecks: BackgroundResult<StoreChecked>?) throws -> (RestoreSummary, Keychain.BackupKey?) {
        let root = staging.root
        let storePath = ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile
        guard try Container.status(of: storePath, in: root)?.kind == .regular else {
            throw RestoreError.noStore
        }
        _ = try Manifest.read(from: root)  // unparsable or newer: refused here (65)
        try checkPreferences()
        let checked = try storeChecks?.value() ?? Self.checkStore(at: root.childPath(storePath), key: staging.pageKeys[storePath])
        // Sealed as it was staged: its key file opens with the staging's transient keys.
        let connection = try Container.openStoreConnection(storeDirectory: try root.openDirectory(ContainerLayout.storeDirectory), keys: staging.keys)
        return try connection.withPageCache(kibibytes: Store.checkPageCacheKibibytes) { try verify(connection, checked: checked) }
    }

    private func verify(_ connection: Connection, checked: StoreChecked) throws -> (RestoreSummary, Keychain.BackupKey?) {
        let root = staging.root
        let counts: StoreCounts
        if let checkedCounts = checked.counts {
            counts = checkedCounts
        } else {
            // An older build's store is brought to this build's schema here, in the staging
            // directory (each step in its transaction, as opening an older container does), so
            // that its rows are read with today's columns and rules; its objects were checked
            // against that older version's (`checkStore`).
            do {
                try Schema.migrate(connection)
            } catch let error as SQLiteError {
                throw RestoreError.damagedStore(detail: "it could not be brought to this build's schema: " + error.message)
            }
            counts = try Self.checkRows(Store(connection: connection))
        }
        var summary = RestoreSummary(container: "", dryRun: false, replacedContainerKeptAt: nil, wouldNeedReplace: false,
                                     counts: counts,
                                     attachmentFiles: 0, attachmentBytes: 0, missingAttachments: 0, filesNoRowNames: 0,
                                     recoveredFiles: staging.recoveredFiles,
                                     preferences: try Container.status(of: ContainerLayout.preferencesDirectory + "/" + ContainerLayout.preferencesFile,
                                                                       in: root) != nil,
                                     keychain: nil, durationSeconds: 0)
        try checkAttachments(connection, into: &summary)
        // The keychain last: its Argon2id unwrap is the slowest check.
        let keychainPath = ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile
        guard try Container.status(of: keychainPath, in: root) != nil else { return (summary, nil) }
        return (summary, try Keychain.checkBackupCopy(at: root.childPath(keychainPath), passphrase: passphrase, sealing: staging.pageKeys[keychainPath]))
    }

    /// The checks of the staged store that read nothing else, on a read-only connection of their
    /// own (no file is written or made beside the store: `RestoreStaging` asks for them early
    /// only for a store not in WAL mode): with SQLite's defensive settings (nothing of its schema
    /// runs), its version must be one this build knows and its tables, indexes, triggers and
    /// views exactly those this build makes at that version; then `integrity_check` and
    /// `foreign_key_check`; then, at this build's schema, every row as import and sync would
    /// have it (`Store.rowsBreakingRules`), and the counts.
    static func checkStore(at path: String, key: PageKey?) throws -> StoreChecked {
        try saidAsTheBackups {
            let look: Connection
            let version: Int64
            do {
                look = try Connection(path: path, mode: .readOnly, sealing: key)
                try look.refuseUntrustedSchema()
                version = try look.userVersion()
                if version > Schema.currentVersion { throw RestoreError.newerSchema(found: version, supported: Schema.currentVersion) }
                if version == 0 { throw RestoreError.damagedStore(detail: "it holds no TripBoard schema") }
                if let difference = try Schema.difference(of: look) {
                    throw RestoreError.damagedStore(detail: "its schema is not the one this build makes: " + difference)
                }
            } catch let error as SQLiteError {
                throw RestoreError.damagedStore(detail: error.message)
            }
            return try look.withPageCache(kibibytes: Store.checkPageCacheKibibytes) {
                do {
                    let problems = try look.statement("PRAGMA integrity_check(20)").rows { $0.text(0) }.filter { $0 != "ok" }
                        + look.statement("PRAGMA foreign_key_check").rows { "a dangling reference in \($0.text(0)) row \($0.integer(1))" }
                    if let problem = problems.first { throw RestoreError.damagedStore(detail: problem) }
                } catch let error as SQLiteError where error.isCorruption {
                    throw RestoreError.damagedStore(detail: error.message)
                }
                guard version == Schema.currentVersion else { return StoreChecked(counts: nil) }
                return StoreChecked(counts: try checkRows(Store(connection: look)))
            }
        }
    }

    /// Every row as import and sync would have it (`Store.rowsBreakingRules`); then the counts.
    private static func checkRows(_ store: Store) throws -> StoreCounts {
        let broken = try store.rowsBreakingRules(limit: 3)
        if !broken.isEmpty { throw RestoreError.damagedStore(detail: "a row breaks TripBoard's rules: " + broken.joined(separator: "; ")) }
        return try store.counts()
    }

    /// The preferences, if any: at most 1 MiB and a JSON object, as every reader wants them
    /// (one that is not would be moved aside at the first read: refused here instead).
    private func checkPreferences() throws {
        let path = ContainerLayout.preferencesDirectory + "/" + ContainerLayout.preferencesFile
        guard try Container.status(of: path, in: staging.root) != nil else { return }
        let directory = try staging.root.openDirectory(ContainerLayout.preferencesDirectory)
        let bytes: [UInt8]
        do {
            bytes = try directory.openFileForReading(ContainerLayout.preferencesFile).readToEnd(limit: PreferencesFile.maximumBytes)
        } catch {
            if error.code == .tooLarge { throw RestoreError.badPreferences(detail: "is larger than 1 MiB") }
            throw error
        }
        guard case .object? = try? JSONValue.parse(bytes) else { throw RestoreError.badPreferences(detail: "is not a JSON object") }
    }

    /// Each row against what the archive held at its path; rows without a file become `missing`.
    private func checkAttachments(_ connection: Connection, into summary: inout RestoreSummary) throws {
        var unmatched = staging.attachments
        var lost: [String] = []
        var unverified: [(id: String, hash: String)] = []
        try connection.statement("SELECT id, relative_path, byte_count, content_hash, state FROM attachments").forEachRow { row in
            let (id, path, byteCount, hash) = (row.text(0), row.text(1), row.integer(2), row.text(3))
            let state = Attachment.State(column: row.text(4))
            guard let (size, digest) = unmatched.removeValue(forKey: path) else {
                if state == .present { lost.append(id) }
                if state != .deleting { summary.missingAttachments += 1 }
                return
            }
            // A row not hashed yet (an archive written before backups recorded hashes) takes the
            // hash of the bytes the archive held, which were checked against its size.
            if hash.isEmpty && state == .present && size == byteCount { unverified.append((id, digest)) }
            guard size == byteCount, digest == hash || hash.isEmpty || state != .present else {
                if staging.sealedInArchive.contains(path) {
                    throw RestoreError.attachmentMismatch(path: path, detail: "is a container's sealed file (copied from a container, not its plaintext: a backup holds the tickets' plaintext); make the archive with `app backup`")
                }
                throw RestoreError.attachmentMismatch(path: path, detail: size == byteCount ? "does not match its recorded hash"
                                                          : "is \(size) bytes, its row says \(byteCount)")
            }
            summary.attachmentFiles += 1
            summary.attachmentBytes += size
        }
        summary.filesNoRowNames = unmatched.count
        guard !lost.isEmpty || !unverified.isEmpty else { return }
        try connection.writeTransaction {
            for id in lost { try connection.statement("UPDATE attachments SET state = 'missing' WHERE id = ?1").run([.text(id)]) }
            for row in unverified {
                try connection.statement("UPDATE attachments SET content_hash = ?2 WHERE id = ?1").run([.text(row.id), .text(row.hash)])
            }
        }
    }
}
