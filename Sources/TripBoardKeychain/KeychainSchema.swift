import TripBoardStorage
import TripBoardSQLite
import TripBoardModel

/// `keychain/Keychain.sqlite`: the sealed items and the wrapped container key. A database of its
/// own, apart from the store, so that exports and store backups never hold even ciphertext, and
/// the widget, which never opens the keychain, cannot.
enum KeychainSchema {
    static let directory = ContainerLayout.keychainDirectory
    static let fileName = ContainerLayout.keychainFile
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
        // Version 3: sync of migratable items (docs/sync.md, "Keychain items"). Per item: whether
        // it waits for the server, the server's version, the stamp and keyed digest of the value
        // the server has (the shadow), the version a refused push met. Tombstones of items the
        // server has and this device deleted or made this-device-only; the saved push batch; the
        // change token the keychain has applied up to (its own: it commits apart from the store).
        """
        ALTER TABLE items ADD COLUMN sync_pending INTEGER NOT NULL DEFAULT 0 CHECK (sync_pending IN (0, 1));
        ALTER TABLE items ADD COLUMN sync_version INTEGER CHECK (sync_version >= 1);
        ALTER TABLE items ADD COLUMN sync_stamp TEXT;
        ALTER TABLE items ADD COLUMN sync_digest TEXT;
        ALTER TABLE items ADD COLUMN sync_conflict_version INTEGER;
        UPDATE items SET sync_pending = 1 WHERE accessibility = 'migratable';
        CREATE TABLE sync_tombstones (
            service TEXT NOT NULL,
            account TEXT NOT NULL,
            remote_version INTEGER NOT NULL CHECK (remote_version >= 1),
            deleted_at TEXT NOT NULL,
            PRIMARY KEY (service, account)
        );
        CREATE TABLE sync_outgoing (
            mutation_id TEXT PRIMARY KEY,
            request TEXT NOT NULL,
            local TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE sync_token (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            zone TEXT NOT NULL,
            epoch TEXT NOT NULL,
            change_sequence INTEGER NOT NULL CHECK (change_sequence >= 0)
        );
        """,
        // Version 4: deletions sealed to an incarnation (docs/sync.md, Deletions sealed to an
        // incarnation). Per item the incarnation it is (made at its first push, made anew when it
        // is set again after a deletion), the incarnation a tombstone deletes, the ledger of
        // incarnations that are over, and the keychain's change sequence at or below which an
        // earlier build's unsealed tombstone is believed.
        """
        ALTER TABLE items ADD COLUMN sync_incarnation TEXT;
        ALTER TABLE sync_tombstones ADD COLUMN incarnation TEXT;
        CREATE TABLE sync_dead (
            service TEXT NOT NULL,
            account TEXT NOT NULL,
            incarnation TEXT NOT NULL,
            PRIMARY KEY (service, account, incarnation)
        );
        CREATE TABLE sync_unsealed (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            before INTEGER NOT NULL
        );
        INSERT INTO sync_unsealed (singleton, before) VALUES (1, coalesce((SELECT change_sequence FROM sync_token WHERE singleton = 1), 0));
        """,
        // Version 5: the sealed deletions this keychain has seen (pulled and believed, or pushed
        // and acknowledged), by their stamps: one served again after the item was set anew is a
        // replay, refused and counted (the store's `sync_deletions_seen`).
        """
        CREATE TABLE sync_deletions_seen (
            service TEXT NOT NULL,
            account TEXT NOT NULL,
            stamp TEXT NOT NULL,
            PRIMARY KEY (service, account, stamp)
        );
        """,
        // Version 6: accessibility by protection class (docs/security.md, "Keychain
        // accessibility"). `protection` is when the item can be read; NULL marks an item sealed
        // before classes (read as after-first-unlock, converted at its first open by a device that
        // can). `keybag_id` names the keybag whose class key seals a this-device-only item, so
        // that one a passcode reset left behind is told from a damaged one.
        """
        ALTER TABLE items ADD COLUMN protection TEXT CHECK (protection IN ('when-unlocked', 'after-first-unlock'));
        ALTER TABLE items ADD COLUMN keybag_id TEXT;
        """,
    ]

    /// Opens the keychain database, creating or migrating it under the exclusive container lock
    /// when needed. Same settings as the store: WAL, NOFOLLOW, BEGIN IMMEDIATE, 0600.
    static func open(in container: Container) throws -> Connection {
        if let ready = try openIfReady(container) { return ready }
        try container.withExclusiveLock {
            let directory = try container.directory(directory)
            try DatabaseSealing.finishInterrupted(fileName, in: directory)
            if try directory.status(of: fileName) == nil {
                _ = try directory.openFile(fileName, .readWrite, creating: .newFile, mode: 0o600)
            }
            // A new keychain database is sealed from its creation, as the store is.
            let connection = try Container.openStoreConnection(storeDirectory: directory, fileName: fileName, supported: currentVersion,
                                                               keys: container.options.fileKeys, sealingIfNew: true)
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
        guard try directory.status(of: fileName) != nil, try !DatabaseSealing.isInterrupted(in: directory) else { return nil }
        let connection = try Container.openStoreConnection(storeDirectory: directory, fileName: fileName, supported: currentVersion,
                                                           keys: container.options.fileKeys)
        let version = try Schema.version(of: connection, path: directory.childPath(fileName), supported: currentVersion)
        guard version == currentVersion, try connection.text("PRAGMA journal_mode")?.lowercased() == "wal" else { return nil }
        try Container.configure(connection, durability: .full)
        return connection
    }
}
