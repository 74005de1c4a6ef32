import TripBoardStorage
import TripBoardKeychain
import TripBoardSQLite
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardModel

/// The parts of a backup taken at one moment before the archive is written: the store and the
/// keychain copied through SQLite's backup API into `tmp/` (each file alone is then the whole
/// database: rollback journal, no `-wal`), sealed under ephemeral keys when the container's are
/// sealed, the manifest and the preferences as bytes. Removed when the backup ends, whatever
/// happened.
final class BackupSnapshot {
    let container: Container
    let keychain: Keychain?
    let passphrase: SecureBytes
    let staging: Directory
    let storeName = Directory.uniqueTemporaryName(for: "backup-store.sqlite")
    let keychainName = Directory.uniqueTemporaryName(for: "backup-keychain.sqlite")
    private(set) var store: Connection?
    /// The ephemeral keys the copies in `tmp/` are sealed under when the container's databases
    /// are sealed (nil: a database an earlier build left in the clear, copied as it is).
    private(set) var storeSealing: PageKey?
    private(set) var keychainSealing: PageKey?
    private(set) var manifest: [UInt8] = []
    private(set) var preferences: [UInt8]?
    /// What reading the preferences had to say (a file over the limit, moved aside).
    private(set) var warnings: [String] = []
    private(set) var keychainState: KeychainBackupState?
    private(set) var counts = StoreCounts(trips: 0, places: 0, bookings: 0, attachments: 0, tombstones: 0, pendingChanges: 0)

    init(container: Container, keychain: Keychain?, passphrase: SecureBytes, staging: Directory) throws {
        self.container = container
        self.keychain = keychain
        self.passphrase = passphrase
        self.staging = staging
    }

    /// Copies everything; the store first, so that every attachment the archive holds is one
    /// its rows name (and no file of them can vanish: the caller holds deletions back).
    func take() throws {
        try createPrivateFile(storeName)
        storeSealing = try container.store.connection.isSealed ? PageKey.random() : nil
        try container.store.connection.scratchCopy(to: staging.childPath(storeName), sealing: storeSealing)
        let copy = try Connection(path: staging.childPath(storeName), mode: .readWrite, sealing: storeSealing)
        try copy.execute("PRAGMA synchronous = OFF; PRAGMA journal_mode = DELETE")
        store = copy
        counts = try Store(connection: copy).counts()
        guard var manifest = try container.manifest() else { throw StoreError.notReady(path: container.path) }
        manifest.storeDamage = nil
        self.manifest = try JSON.encode(manifest) + [0x0a]
        var preferencesFile = try PreferencesFile(container: container)
        preferences = try preferencesFile.rawBytes()
        warnings = preferencesFile.warnings
        if let keychain {
            try createPrivateFile(keychainName)
            keychainSealing = keychain.connection.isSealed ? try PageKey.random() : nil
            keychainState = try keychain.writeBackupCopy(to: staging.childPath(keychainName), passphrase: passphrase, sealing: keychainSealing)
        }
    }

    /// What the archive holds, for a progress bar: the store, the keychain and every file named.
    func archivedBytes() throws -> Int64 {
        var total = try staging.status(of: storeName)?.size ?? 0
        if keychain != nil { total += try staging.status(of: keychainName)?.size ?? 0 }
        if let store {
            total += try store.integer("SELECT coalesce(sum(byte_count), 0) FROM attachments WHERE state = 'present'")
        }
        return total
    }

    /// The copies, their journals included; best effort (what stays is a `tmp/` leftover that
    /// `container check --repair` removes).
    func remove() {
        store = nil
        for name in [storeName, keychainName] {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? staging.removeFile(name + suffix) }
        }
    }

    /// Made 0600 before SQLite opens it, as the container's own databases are.
    private func createPrivateFile(_ name: String) throws {
        _ = try staging.openFile(name, .readWrite, creating: .newFile, mode: 0o600)
    }
}
