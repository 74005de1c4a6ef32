import TripBoardSQLite
import TripBoardReadPath

/// `keychain/Keychain.sqlite`: the sealed items and the wrapped container key. A database of its
/// own, apart from the store, so that exports and store backups never hold even ciphertext, and
/// the widget, which never opens the keychain, cannot.
enum KeychainSchema {
    static let directory = ContainerLayout.keychainDirectory
    static let fileName = "Keychain.sqlite"
    static var currentVersion: Int64 { Int64(migrations.count) }

    static let migrations = [
        """
        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            service TEXT NOT NULL,
            account TEXT NOT NULL,
            accessibility TEXT NOT NULL CHECK (accessibility IN ('thisDeviceOnly', 'migratable')),
            key_id TEXT NOT NULL,
            nonce BLOB NOT NULL,
            ciphertext BLOB NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (service, account)
        );
        CREATE TABLE container_key_wraps (
            id INTEGER PRIMARY KEY,
            container_key_id TEXT NOT NULL,
            wrapped_by TEXT NOT NULL CHECK (wrapped_by IN ('device', 'passphrase')),
            wrapping_key_id TEXT NOT NULL,
            password_hash_parameters TEXT,
            nonce BLOB NOT NULL,
            ciphertext BLOB NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (wrapped_by, wrapping_key_id)
        );
        """,
        // Version 2: the keychain's own random id and the generation it has reached (one more per
        // write transaction), compared with this device's record to catch an older copy put back.
        """
        CREATE TABLE keychain_state (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            keychain_id TEXT NOT NULL,
            generation INTEGER NOT NULL CHECK (generation >= 0)
        );
        INSERT INTO keychain_state (singleton, keychain_id, generation) VALUES (1, lower(hex(randomblob(16))), 0);
        """,
    ]

    /// Opens the keychain database, creating or migrating it under the exclusive container lock
    /// when needed. Same settings as the store: WAL, NOFOLLOW, BEGIN IMMEDIATE, 0600.
    static func open(in container: Container) throws -> Connection {
        if let ready = try openIfReady(container) { return ready }
        try container.withExclusiveLock {
            let directory = try container.directory(directory)
            if try directory.status(of: fileName) == nil {
                _ = try directory.openFile(fileName, .readWrite, creating: .newFile, mode: 0o600)
            }
            let connection = try Container.openStoreConnection(storeDirectory: directory, fileName: fileName, supported: currentVersion)
            try connection.enableWriteAheadLog()
            try Schema.migrate(connection, steps: migrations)
        }
        guard let connection = try openIfReady(container) else {
            throw StoreError.notReady(path: container.path + "/" + directory + "/" + fileName)
        }
        return connection
    }

    private static func openIfReady(_ container: Container) throws -> Connection? {
        let directory = try container.directory(directory)
        guard try directory.status(of: fileName) != nil else { return nil }
        let connection = try Container.openStoreConnection(storeDirectory: directory, fileName: fileName, supported: currentVersion)
        let version = try Schema.version(of: connection, path: directory.childPath(fileName), supported: currentVersion)
        guard version == currentVersion, try connection.text("PRAGMA journal_mode")?.lowercased() == "wal" else { return nil }
        try Container.configure(connection, durability: .full)
        return connection
    }
}
