public import TripBoardSQLite
package import TripBoardSystem
public import TripBoardDevice

/// The container as the widget sees it: never creates, writes, migrates or repairs anything.
///
/// It opens `container.lock` read-only (flock works on any descriptor), takes the shared lock only
/// for as long as a read lasts, and reads the store through a `SQLITE_OPEN_READONLY` connection.
public final class ReadOnlyContainer {
    /// What was found at the container path.
    public enum Availability {
        /// No container (or no store) yet: nothing to show, and nothing was created.
        case empty
        /// A writer holds the exclusive lock (setup, migration, repair), the store is at an
        /// older schema that a writer has still to migrate, or a container migration is unfinished.
        case updating
        /// Ready to read.
        case ready
    }

    public let path: String
    package let root: Directory
    /// `nil` when `container.lock` is missing although the container exists (it is never deleted
    /// by TripBoard; a writer recreates it). SQLite's own locking still keeps reads consistent.
    package let lock: FileLock?
    private var connection: Connection?
    private var openedStoreInode: UInt64?
    private var storePath = ""
    /// True when the store's `-wal`/`-shm` were missing and the store was opened immutable.
    public private(set) var isImmutableSnapshot = false
    package let lockTimeout: Double
    /// The device's keys, which open the store's key file (`DatabaseKeyFile`).
    let keys: any FileKeys

    private init(path: String, root: Directory, lock: FileLock?, lockTimeout: Double, keys: any FileKeys) {
        self.path = path
        self.root = root
        self.lock = lock
        self.lockTimeout = lockTimeout
        self.keys = keys
    }

    /// Opens the container directory and its lock file if they exist; `nil` when there is no
    /// container (nothing is created). `keys` open a sealed store's key file.
    public static func open(at path: String, lockTimeout: Double, keys: any FileKeys) throws -> ReadOnlyContainer? {
        let root: Directory
        do {
            // Named by its canonical path, as a writer names it (see `Container.prepareRoot`).
            root = try Directory.openResolvingLinks(path: path)
        } catch {
            if error.code == .notFound { return nil }
            if error.code == .notADirectory { throw ContainerError.unusable(path: path, reason: "it is not a directory") }
            throw error
        }
        var lock: FileLock?
        do {
            lock = FileLock(descriptor: try root.openFile(ContainerLayout.lockFile, .readOnly))
        } catch {
            guard error.code == .notFound else { throw error }
            // No lock file: a container that was never set up (nothing to show) — unless a store
            // is there, which is read without the container lock rather than hidden.
            guard try root.status(of: ContainerLayout.manifestFile) != nil else { return nil }
        }
        return ReadOnlyContainer(path: root.path, root: root, lock: lock, lockTimeout: lockTimeout, keys: keys)
    }

    /// True when the container path no longer names the directory this reader opened: it was
    /// replaced (`app restore --replace` exchanges the directories) or removed. A long-lived
    /// reader then opens the path again.
    public var wasReplaced: Bool {
        guard let opened = try? root.status() else { return true }
        guard let now = try? Directory.openResolvingLinks(path: path).status() else { return true }
        return now.inode != opened.inode || now.device != opened.device
    }

    /// Runs `body` on the store inside one read transaction, holding the shared container lock.
    /// Returns `.empty` or `.updating` without calling `body` when there is nothing to read.
    public func read<T>(_ body: (Connection) throws -> T) throws -> (Availability, T?) {
        do {
            try lock?.lock(.shared, timeout: lockTimeout)
        } catch {
            return (.updating, nil)
        }
        defer { lock?.unlock() }
        // A container migration that has not reached its commit marker: the store may be empty or
        // half-filled, so show nothing rather than a partial answer.
        if try ContainerLayout.migrationIsUnfinished(in: root) { return (.updating, nil) }
        // `container protect` is sealing the store (or was killed doing so): its key file may
        // not be in place yet.
        if try root.status(of: ContainerLayout.storeDirectory + "/" + ContainerLayout.sealingDirectory)?.kind == .directory { return (.updating, nil) }
        let first = try readOnce(body)
        // An immutable read takes no SQLite locks. If a writer appeared meanwhile (it recreates
        // -wal first), a checkpoint may have changed the main file under the read: read again,
        // now through an ordinary read-only connection, which the new -wal and -shm allow.
        guard isImmutableSnapshot, try walFilesExist() else { return first }
        return try readOnce(body)
    }

    private func walFilesExist() throws -> Bool {
        let storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory)
        return try storeDirectory.status(of: ContainerLayout.storeFile + "-wal") != nil
            && storeDirectory.status(of: ContainerLayout.storeFile + "-shm") != nil
    }

    private func readOnce<T>(_ body: (Connection) throws -> T) throws -> (Availability, T?) {
        guard let connection = try currentConnection() else { return (.empty, nil) }
        let version: Int64
        do {
            version = try Schema.version(of: connection, path: storePath)
        } catch let error as SQLiteError where error.isBusy {
            return (.updating, nil)
        }
        if version == 0, try Manifest.read(from: root)?.storeCreated == true {
            throw StoreError.corrupt(path: storePath, detail: "the store is empty although this container had one")
        }
        guard version == Schema.currentVersion else { return (version == 0 ? .empty : .updating, nil) }
        do {
            let value = try connection.readTransaction { try body(connection) }
            return (.ready, value)
        } catch let error as SQLiteError where error.isCorruption {
            // An immutable read racing a checkpoint can see a torn file: retry once normally.
            if isImmutableSnapshot, try walFilesExist() { return try readOnce(body) }
            throw StoreError.corrupt(path: storePath, detail: error.message)
        } catch let error as SQLiteError where error.isBusy {
            // Past the 250 ms busy timeout (a WAL recovery or exclusive checkpoint in progress).
            return (.updating, nil)
        }
    }

    /// The open connection, (re)opened when the store appeared or was replaced; `nil` when there
    /// is no store.
    private func currentConnection() throws -> Connection? {
        // The manifest is read only when the store is absent: the common path is two stats.
        let storeDirectory: Directory
        do {
            storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory)
        } catch {
            guard error.code == .notFound else { throw error }
            if try Manifest.read(from: root)?.storeCreated == true {
                throw StoreError.missing(path: root.childPath(ContainerLayout.storeDirectory))
            }
            return nil
        }
        let storePath = storeDirectory.childPath(ContainerLayout.storeFile)
        guard let status = try storeDirectory.status(of: ContainerLayout.storeFile) else {
            if try Manifest.read(from: root)?.storeCreated == true { throw StoreError.missing(path: storePath) }
            return nil
        }
        guard status.kind == .regular else {
            throw ContainerError.unusable(path: storePath, reason: "the store is not a regular file")
        }
        let walMissing = try storeDirectory.status(of: ContainerLayout.storeFile + "-wal") == nil
            || storeDirectory.status(of: ContainerLayout.storeFile + "-shm") == nil
        if let connection, openedStoreInode == status.inode, isImmutableSnapshot == walMissing, !walMissing {
            return connection
        }
        self.connection = nil
        let sealing = try DatabaseKeyFile.read(in: storeDirectory, database: ContainerLayout.storeFile, keys: keys)
        // TripBoard's writers keep -wal and -shm (SQLITE_FCNTL_PERSIST_WAL). If a foreign tool
        // removed them on close, a read-only connection would have to create them; instead read the
        // main file as immutable: with no -wal there is no committed data outside it.
        let connection: Connection
        do {
            connection = try Connection(path: walMissing ? "file:\(SQLiteURI.escapedPath(storePath))?immutable=1" : storePath,
                                        mode: .readOnly, busyTimeoutMilliseconds: 250, uri: walMissing, sealing: sealing)
        } catch let error as SQLiteError {
            throw StoreError.unreadable(path: storePath, detail: error.message)
        }
        self.connection = connection
        self.storePath = storePath
        openedStoreInode = status.inode
        isImmutableSnapshot = walMissing
        return connection
    }

    /// The store's directory path, for change notification.
    public var storeDirectoryPath: String { root.childPath(ContainerLayout.storeDirectory) }

    /// `PRAGMA data_version` of the long-lived connection: changes when another connection commits.
    public func dataVersion() throws -> Int64? { try connection?.dataVersion() }

}
