import TripBoardSQLite
import TripBoardDevice
package import TripBoardSystem
import TripBoardModel

extension Container {
    /// Sets up the layout, creates or migrates the store, and writes the manifest. Idempotent; runs
    /// under the exclusive lock, so it re-reads everything.
    ///
    /// A first setup (no manifest, no store yet) that fails part of the way — SQLite cannot use
    /// the filesystem, the disk is full — takes back what it made, so no half-made container
    /// with an empty store is left to be mistaken for a real one later (see `FirstSetUp`).
    /// Returns true when it created the container (there was no manifest).
    /// What a store migration step has to tell the user is appended to `notices`.
    @discardableResult
    static func setUp(root: Directory, options: ContainerOptions, notices: inout [String]) throws -> Bool {
        let existing = try Manifest.read(from: root)
        if existing?.storeCreated == true, try root.status(of: ContainerLayout.storeDirectory) == nil {
            // Checked before anything is created: an empty store/ would hide the loss.
            throw StoreError.missing(path: root.childPath(ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile))
        }
        var firstSetUp = existing == nil ? try FirstSetUp(root: root) : nil
        do {
            notices += try setUpLayoutAndStore(root: root, existing: existing, options: options, firstSetUp: &firstSetUp)
        } catch {
            firstSetUp?.undo()
            throw error
        }
        return existing == nil
    }

    private static func setUpLayoutAndStore(root: Directory, existing: Manifest?, options: ContainerOptions,
                                            firstSetUp: inout FirstSetUp?) throws -> [String] {
        try createLayoutDirectories(in: root)
        let staging = try root.openDirectory(ContainerLayout.stagingDirectory)
        let storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory)
        let storePath = storeDirectory.childPath(ContainerLayout.storeFile)
        // A `container protect` killed between its two renames: the sealed store's key file
        // is moved into place before anything reads the store.
        try DatabaseSealing.finishInterrupted(ContainerLayout.storeFile, in: storeDirectory)
        if try storeFileKind(in: storeDirectory) == nil {
            if existing?.storeCreated == true { throw StoreError.missing(path: storePath) }
            // Created here, before SQLite opens it, so that the store (and the -wal and -shm that
            // SQLite gives the same mode) is 0600 whatever the umask.
            _ = try storeDirectory.openFile(ContainerLayout.storeFile, .readWrite, creating: .newFile, mode: 0o600)
            firstSetUp?.createdStore = true
        }
        let notices = try createOrMigrateStore(storeDirectory: storeDirectory, existing: existing, keys: options.fileKeys)
        if existing?.storeCreated != true || existing?.layoutVersion != ContainerLayout.version {
            let manifest = Manifest(layoutVersion: ContainerLayout.version,
                                    createdAt: existing?.createdAt ?? options.clock().utcStamp,
                                    createdBy: existing?.createdBy ?? options.processName, storeCreated: true)
            try manifest.write(to: root, staging: staging)
        }
        return notices
    }

    /// The layout's directories (0700) that are missing in `root`.
    package static func createLayoutDirectories(in root: Directory) throws {
        for name in ContainerLayout.directories {
            var directory = root
            for component in name.split(separator: "/") {
                directory = try directory.openDirectory(String(component), create: true)
            }
        }
    }

    /// Opens the store, refuses one that must not be touched, switches it to WAL and brings its
    /// schema up to date (returning what its steps have to tell). The connection is closed before this returns.
    /// A new store is sealed from its creation: its key file is made before its first page.
    private static func createOrMigrateStore(storeDirectory: Directory, existing: Manifest?, keys: any FileKeys) throws -> [String] {
        let storePath = storeDirectory.childPath(ContainerLayout.storeFile)
        let connection = try openStoreConnection(storeDirectory: storeDirectory, keys: keys, sealingIfNew: existing?.storeCreated != true)
        // Read the version before anything writes: a foreign or damaged file fails here untouched.
        let version = try Schema.version(of: connection)
        if version == 0 && existing?.storeCreated == true {
            // The manifest says this container had a store: an empty one now means the data was
            // lost (a truncated or replaced file). Migrating it would hide that.
            throw StoreError.corrupt(path: storePath, detail: "the store is empty although this container had one")
        }
        do {
            do {
                try connection.enableWriteAheadLog()
            } catch let error as SQLiteError where !error.isCorruption && !error.isBusy {
                throw ContainerError.unusable(path: storePath, reason: "SQLite cannot use its write-ahead log here (\(error.message)); the container needs a local filesystem with shared memory and file locking")
            }
            try connection.execute("PRAGMA foreign_keys = ON")
            return try Schema.migrate(connection)
        } catch let error as SQLiteError where error.isCorruption {
            throw StoreError.corrupt(path: storePath, detail: error.message)
        }
    }
}

/// What a container's first setup made, so that a setup that fails can take it back: the store
/// file it created (with the `-wal` and `-shm` SQLite added; they hold nothing — no transaction
/// of a failed first setup was ever acknowledged) and the layout directories that were not
/// there before, if they are still empty. `container.lock` stays: other processes may hold it
/// open, and a lock file must never be replaced under them.
struct FirstSetUp {
    let root: Directory
    /// The layout directories that already existed when setup started.
    let existedBefore: Set<String>
    var createdStore = false

    init(root: Directory) throws {
        self.root = root
        var existing: Set<String> = []
        for name in ContainerLayout.directories where try Container.status(of: name, in: root) != nil {
            existing.insert(name)
        }
        existedBefore = existing
    }

    /// Best effort: whatever cannot be removed is left as it is (never anything but what setup made).
    func undo() {
        if createdStore, let storeDirectory = try? root.openDirectory(ContainerLayout.storeDirectory) {
            for suffix in ["-wal", "-shm", "", DatabaseKeyFile.suffix] {
                try? storeDirectory.removeFile(ContainerLayout.storeFile + suffix)
            }
        }
        for name in ContainerLayout.directories.reversed() where !existedBefore.contains(name) {
            let components = name.split(separator: "/").map(String.init)
            var parent: Directory? = root
            for component in components.dropLast() { parent = try? parent?.openDirectory(component) }
            // unlinkat(AT_REMOVEDIR) removes only an empty directory.
            try? parent?.removeDirectory(components.last!)
        }
        try? root.synchronize()
    }
}
