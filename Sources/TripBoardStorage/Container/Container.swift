package import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel
public import TripBoardDevice

/// How hard a commit is pushed to disk.
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=NORMAL` in WAL: a commit survives the process being killed at any point; the
    /// last commits before a power loss or kernel crash may be rolled back (never corrupted).
    case normal
    /// `synchronous=FULL`: every commit is fsynced before it is acknowledged; survives power loss.
    case full
}

/// Options for opening a container.
public struct ContainerOptions: Sendable {
    /// How long to wait for the container lock before failing with `LockBusyError`.
    public var lockTimeout: Double
    public var durability: Durability
    /// Stamps `updatedAt`; tests inject a fixed clock.
    public var clock: @Sendable () -> Timestamp
    /// Recorded in the manifest of a container this process creates.
    public var processName: String
    /// Whether this process may create the container and its store, or migrate the schema. The
    /// app may; an extension may not: it refuses (`ContainerError.notFound`, `StoreError.notReady`)
    /// and leaves setup to the app, so it never creates an empty store anywhere.
    public var mayCreate = true
    /// What the command needs of the store (see `StoreRequirement`).
    public var storeRequirement = StoreRequirement.required
    /// Whether a container may be created where there is none (no directory, or an empty one):
    /// true for the commands that write something new; false for the ones that only read or
    /// change existing records, which then fail with `ContainerError.notFound` and create
    /// nothing, so a mistyped `--container` does not leave a new container behind.
    public var createsContainer = true
    /// Where the keys of the container's sealed files (tickets, thumbnails) come from: the lock
    /// of the device the environment names (`FileProtection`), or a test's keys.
    public var fileKeys: any FileKeys

    public init(lockTimeout: Double = 5, durability: Durability = .normal,
                clock: @escaping @Sendable () -> Timestamp = Timestamp.now, processName: String = "app",
                fileKeys: (any FileKeys)? = nil) {
        self.lockTimeout = lockTimeout
        self.durability = durability
        self.clock = clock
        self.processName = processName
        self.fileKeys = fileKeys ?? ((try? FileProtection.keys(environment: ProcessSetup.environment()))
            ?? UnavailableFileKeys(error: .invalidArgument("TRIPBOARD_KEYRING must be user or session")))
    }

    /// The options the environment sets for any process that opens the container for writing
    /// (docs/cli.md, Environment): `TRIPBOARD_LOCK_TIMEOUT`, `TRIPBOARD_DURABILITY` and, for
    /// tests, `TRIPBOARD_NOW`. A malformed value is a usage error (`StoreError.invalidArgument`).
    public init(processName: String, environment: [String: String]) throws {
        self.init(processName: processName, fileKeys: try FileProtection.keys(environment: environment))
        if let text = environment["TRIPBOARD_LOCK_TIMEOUT"], !text.isEmpty {
            // Digits with at most one decimal point (`5`, `0.25`): not `0x10`, `1e3`, `+5` or `.5`,
            // which `Double` would also read.
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            let isDecimal = parts.count <= 2 && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }
            guard isDecimal, let seconds = Double(text), seconds >= 0, seconds <= 3600 else {
                throw StoreError.invalidArgument("TRIPBOARD_LOCK_TIMEOUT must be a number of seconds (0–3600)")
            }
            lockTimeout = seconds
        }
        if let text = environment["TRIPBOARD_DURABILITY"], !text.isEmpty {
            guard let durability = Durability(rawValue: text) else {
                throw StoreError.invalidArgument("TRIPBOARD_DURABILITY must be normal or full")
            }
            self.durability = durability
        }
        if let now = try Self.fixedNow(environment: environment) { clock = { now } }
    }

    /// `TRIPBOARD_NOW` (tests only, docs/cli.md): the clock of every stamp this process writes,
    /// and so of the trash's 30 days, as `clock` is for in-process tests; `nil` when unset.
    public static func fixedNow(environment: [String: String]) throws -> Timestamp? {
        guard let text = environment["TRIPBOARD_NOW"], !text.isEmpty else { return nil }
        guard let now = Timestamp(iso8601: text) else { throw StoreError.invalidArgument("TRIPBOARD_NOW must be an ISO 8601 time") }
        return now
    }
}

/// What a command needs of the store when it opens the container.
public enum StoreRequirement: Sendable {
    /// A healthy store at the current schema: anything else fails the open (the default).
    case required
    /// Not the store at all (the keychain, preferences, the cache): the store is not opened, and
    /// a store that is damaged, missing or newer does not stop the command.
    case none
    /// The store if it can be opened at all, a damage mark notwithstanding, and otherwise why
    /// not (`Container.storeProblem`): for the commands that look at a store in trouble —
    /// `container info`, `check`, `diagnose`, `salvage`.
    case inspection
}

/// The shared container, opened by a writer: the directory, its lock (held shared for as long as
/// this object lives) and the store, schema up to date.
///
/// Opening follows docs/storage.md §1–2: the shared lock for ordinary work; setup and schema migration
/// only under the exclusive lock, taken after dropping the shared one (flock cannot upgrade
/// atomically), after which everything decided before is checked again.
public final class Container {
    public let path: String
    let root: Directory
    let lock: FileLock
    private let openedStore: Store?
    /// Why the store is not open, for a container opened with `StoreRequirement.inspection` (or
    /// `.none`, when setting the container up met it): damaged, newer, missing, unreadable.
    public let storeProblem: (any Error)?
    public let options: ContainerOptions
    /// True when this process created the container (its manifest) while opening it.
    public private(set) var wasCreated = false
    /// What migrating the store to this build's schema has to tell the user, once: the command
    /// that opened the container and migrated it prints these.
    public private(set) var setUpNotices: [String] = []

    private init(path: String, root: Directory, lock: FileLock, store: Store?, storeProblem: (any Error)? = nil,
                 options: ContainerOptions) {
        self.path = path
        self.root = root
        self.lock = lock
        self.openedStore = store
        self.storeProblem = storeProblem
        self.options = options
    }

    /// The store; for a container opened without one (`StoreRequirement.none`, or a store in
    /// trouble under `.inspection`), the reason it is not there.
    public var store: Store {
        get throws {
            if let openedStore { return openedStore }
            throw storeProblem ?? StoreError.notOpened
        }
    }

    deinit { lock.unlock() }

    /// Opens the container at `path` for reading and writing, creating it (and its store) if it
    /// does not exist yet. Holds the shared lock until released.
    public static func openForWriting(at path: String, options: ContainerOptions = ContainerOptions()) throws -> Container {
        // A container's store is sealed under this device's keys from its creation, and every
        // store is read through them: without a device (no HOME, no TRIPBOARD_DEVICE_DIR) the
        // command is refused before anything is created.
        if let unavailable = options.fileKeys as? UnavailableFileKeys { throw unavailable.error }
        let root = try prepareRoot(path, creating: options.mayCreate && options.createsContainer)
        try refuseUnlessOpenable(root, options: options)
        let lockFile = try root.openFile(ContainerLayout.lockFile, .readWrite, creating: .ifAbsent, mode: 0o600)
        let lock = FileLock(descriptor: lockFile)
        var created = false
        var notices: [String] = []
        for _ in 0..<3 {
            try lock.lock(.shared, timeout: options.lockTimeout)
            if let container = try openHoldingSharedLock(root: root, lock: lock, options: options, created: created) {
                container.setUpNotices = notices
                return container
            }
            if let container = try setUpTakingExclusiveLock(root: root, lock: lock, options: options, created: &created, notices: &notices) {
                container.setUpNotices = notices
                return container
            }
        }
        throw StoreError.notReady(path: root.childPath(ContainerLayout.storeDirectory))
    }

    /// Refuses, before any lock, a container this process may not open: for an extension
    /// (`mayCreate` false) one whose migration is unfinished or that was never set up; for a
    /// command that creates no container, a directory that was never set up.
    private static func refuseUnlessOpenable(_ root: Directory, options: ContainerOptions) throws {
        if !options.mayCreate {
            // A container migration that has not finished: the app finishes it, not an extension.
            if try ContainerLayout.migrationIsUnfinished(in: root) { throw StoreError.notReady(path: root.path) }
            guard try root.status(of: ContainerLayout.manifestFile) != nil else { throw ContainerError.notFound(path: root.path) }
        } else if !options.createsContainer, try !hasManifestOrStore(root) {
            // Never set up (a first setup that failed leaves only its lock file): only a command
            // that may create a container sets it up.
            throw ContainerError.notFound(path: root.path)
        }
    }

    /// Under the shared lock: the container, its store open as `options` asks, or `nil` when it
    /// must be set up first (the shared lock still held, for the caller to drop). Releases the
    /// lock before refusing the container.
    private static func openHoldingSharedLock(root: Directory, lock: FileLock, options: ContainerOptions,
                                              created: Bool) throws -> Container? {
        if try ContainerLayout.migrationIsUnfinished(in: root) {
            // Only `container-migration` (or the app's first launch, which runs it) may open the
            // container until the migration's commit marker is written.
            lock.unlock()
            throw StoreError.notReady(path: root.path)
        }
        let opened: Connection?
        do {
            // (Right after this process set the store up it is opened all the same: closing it,
            // configured, checkpoints setup's WAL frames, which a later reader must not do.)
            if options.storeRequirement == .none, !created, try isSetUp(root) {
                return Container(path: root.path, root: root, lock: lock, store: nil, options: options)
            }
            opened = try openReadyStore(root: root, options: options)
        } catch where options.storeRequirement != .required && isStoreProblem(error, root: root) {
            return Container(path: root.path, root: root, lock: lock, store: nil, storeProblem: error, options: options)
        }
        if let connection = opened {
            if options.storeRequirement == .required, let damage = try Manifest.read(from: root)?.storeDamage {
                lock.unlock()
                throw StoreError.damaged(path: connection.path, foundAt: damage.foundAt, detail: damage.detail)
            }
            let container = Container(path: root.path, root: root, lock: lock, store: Store(connection: connection, clock: options.clock),
                                      options: options)
            container.wasCreated = created
            return container
        }
        guard options.mayCreate else {
            defer { lock.unlock() }
            throw try whyNotReady(root: root)
        }
        return nil
    }

    /// Drops the shared lock, takes the exclusive one (flock cannot upgrade atomically) and sets
    /// the container up, then lets it go, so the caller opens it again under the shared lock
    /// (`nil`); sets `created` when this process created it. A store problem a command can live
    /// with (`StoreRequirement` other than `.required`) gives the container without its store,
    /// the shared lock held again: set up as far as the store, the keychain and preferences work.
    private static func setUpTakingExclusiveLock(root: Directory, lock: FileLock, options: ContainerOptions,
                                                 created: inout Bool, notices: inout [String]) throws -> Container? {
        lock.unlock()
        try lock.lock(.exclusive, timeout: options.lockTimeout)
        do {
            defer { lock.unlock() }
            if try setUp(root: root, options: options, notices: &notices) { created = true }
        } catch where options.storeRequirement != .required && isStoreProblem(error, root: root) {
            try lock.lock(.shared, timeout: options.lockTimeout)
            return Container(path: root.path, root: root, lock: lock, store: nil, storeProblem: error, options: options)
        }
        return nil
    }

    /// True when the manifest says the container is set up at this layout with a store.
    static func isSetUp(_ root: Directory) throws -> Bool {
        guard let manifest = try Manifest.read(from: root) else { return false }
        return manifest.storeCreated && manifest.layoutVersion == ContainerLayout.version
    }

    /// True for an error that is about the store itself — damaged, newer, missing, unreadable,
    /// not a regular file — as opposed to the container (its manifest, its lock, the disk).
    static func isStoreProblem(_ error: any Error, root: Directory) -> Bool {
        switch error {
        case let error as StoreError:
            if case .notReady = error { return false }
            return true
        case let error as SQLiteError:
            return error.isCorruption
        case is DeviceError:
            // The store's key file does not open here: another device's, the device not unlocked
            // since it started, a damaged key file. (Not when there is no store: making one
            // failed, and nothing of the container is usable.)
            return ((try? root.status(of: ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile)) ?? nil) != nil
        case ContainerError.unusable(let path, _):
            return path.hasPrefix(root.childPath(ContainerLayout.storeDirectory) + "/")
        case let error as FileSystemError:
            // `store/` or a file in it cannot be opened (its permissions, say).
            let storeDirectory = root.childPath(ContainerLayout.storeDirectory)
            return error.path == storeDirectory || error.path.hasPrefix(storeDirectory + "/")
        default:
            return false
        }
    }

    /// Records in the manifest that a damaged page was met in the store, so that writers refuse
    /// it from now on (`StoreError.damaged`) until `container check --repair` finds it sound or
    /// `container salvage` replaces it. Best effort: the command that met the damage fails anyway.
    public func recordStoreDamage(detail: String) {
        // The command reports its own error; the next one that meets the damage tries again.
        try? markStoreDamaged(detail: detail)
    }

    /// Writes the damage mark (unless one is there already); throws when it cannot.
    func markStoreDamaged(detail: String) throws {
        guard var manifest = try Manifest.read(from: root), manifest.storeDamage == nil else { return }
        manifest.storeDamage = StoreDamage(foundAt: options.clock().utcStamp, detail: detail)
        try manifest.write(to: root, staging: try stagingDirectory())
    }

    /// Removes the damage mark (the store passed `integrity_check`, or was salvaged).
    func clearStoreDamage() throws {
        guard var manifest = try Manifest.read(from: root), manifest.storeDamage != nil else { return }
        manifest.storeDamage = nil
        try manifest.write(to: root, staging: try stagingDirectory())
    }

    /// Why a store that is not ready cannot be used by a process that may not set it up, found
    /// without changing anything: lost (the manifest says a store was created, and it is gone or
    /// emptied — the app would say the same), else not ready yet (the app has setup or a schema
    /// migration to do).
    static func whyNotReady(root: Directory) throws -> StoreError {
        let storeDirectoryPath = root.childPath(ContainerLayout.storeDirectory)
        let storePath = storeDirectoryPath + "/" + ContainerLayout.storeFile
        guard try Manifest.read(from: root)?.storeCreated == true else { return .notReady(path: storeDirectoryPath) }
        guard try root.status(of: ContainerLayout.storeDirectory)?.kind == .directory else { return .missing(path: storePath) }
        let storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory)
        guard let store = try storeDirectory.status(of: ContainerLayout.storeFile) else { return .missing(path: storePath) }
        let walBytes = try storeDirectory.status(of: ContainerLayout.storeFile + "-wal")?.size ?? 0
        if store.kind == .regular && store.size == 0 && walBytes == 0 {
            return .corrupt(path: storePath, detail: "the store is empty although this container had one")
        }
        return .notReady(path: storeDirectoryPath)
    }

    /// Runs `body` with the container lock held exclusively (maintenance: migration, restore,
    /// repair), then returns to the shared lock. Should the shared lock not be had back (another
    /// process took the container exclusively in between: flock cannot convert a lock
    /// atomically), that is thrown once `body` is done — what `body` did stands, complete — so
    /// the command stops rather than go on without a lock.
    public func withExclusiveLock<T>(_ body: () throws -> T) throws -> T {
        // Already exclusive (a container opened for the migration): keep it so.
        if lock.mode == .exclusive { return try body() }
        lock.unlock()
        let result: T
        do {
            try lock.lock(.exclusive, timeout: options.lockTimeout)
            result = try body()
        } catch {
            // The error reported is this one; the shared lock back is best effort.
            lock.unlock()
            try? lock.lock(.shared, timeout: options.lockTimeout)
            throw error
        }
        lock.unlock()
        try lock.lock(.shared, timeout: options.lockTimeout)
        return result
    }

    /// The container root and its lock, held exclusively, without setting anything up: for the
    /// container migration, which records its journal before the layout and store exist.
    package static func lockExclusively(at path: String, options: ContainerOptions) throws -> (root: Directory, lock: FileLock) {
        let root = try prepareRoot(path, creating: true)
        let lock = FileLock(descriptor: try root.openFile(ContainerLayout.lockFile, .readWrite, creating: .ifAbsent, mode: 0o600))
        try lock.lock(.exclusive, timeout: options.lockTimeout)
        return (root, lock)
    }

    /// Sets up the container whose exclusive lock the caller holds (see `lockExclusively`) and
    /// opens its store. The lock stays exclusive for as long as the returned container lives.
    package static func setUpHoldingExclusiveLock(path: String, root: Directory, lock: FileLock, options: ContainerOptions) throws -> Container {
        precondition(lock.mode == .exclusive, "setUpHoldingExclusiveLock needs the exclusive lock")
        var notices: [String] = []
        _ = try setUp(root: root, options: options, notices: &notices)
        guard let connection = try openReadyStore(root: root, options: options) else {
            throw StoreError.notReady(path: root.childPath(ContainerLayout.storeDirectory))
        }
        let container = Container(path: root.path, root: root, lock: lock, store: Store(connection: connection, clock: options.clock),
                                  options: options)
        container.setUpNotices = notices
        return container
    }

    /// An open subdirectory of the container (symbolic links refused).
    public func directory(_ relativePath: String) throws -> Directory {
        var directory = root
        for component in relativePath.split(separator: "/") {
            directory = try directory.openDirectory(String(component))
        }
        return directory
    }

    /// The container's staging directory, for temp files that are renamed into place.
    public func stagingDirectory() throws -> Directory { try directory(ContainerLayout.stagingDirectory) }

    /// The manifest as it is on disk.
    public func manifest() throws -> Manifest? { try Manifest.read(from: root) }

    /// The status of a file or directory inside the container (`nil` when absent).
    public func status(of relativePath: String) throws -> FileStatus? { try Self.status(of: relativePath, in: root) }

    package static func status(of relativePath: String, in root: Directory) throws -> FileStatus? {
        let components = relativePath.split(separator: "/").map(String.init)
        var directory = root
        for component in components.dropLast() {
            guard (try directory.status(of: component))?.kind == .directory else { return nil }
            directory = try directory.openDirectory(component)
        }
        return try directory.status(of: components.last ?? ".")
    }

    // MARK: - Opening

    /// Opens the root directory — creating it (and missing parents, 0700) when `creating` and
    /// there is none — and checks that we may use it: ours, and either a container already, or
    /// empty. The root is named by its canonical path from here on (see `openResolvingLinks`),
    /// so a container reached through a symbolic link (a linked `$HOME`, say) works while links
    /// *inside* it are still refused. A directory TripBoard did not create keeps its mode: the
    /// container's own entries are 0700 and 0600 whatever the root's mode is.
    static func prepareRoot(_ path: String, creating: Bool) throws -> Directory {
        let root: Directory
        var created = false
        do {
            if creating, try Directory.createIfAbsent(path: path, mode: 0o700) { created = true }
            root = try Directory.openResolvingLinks(path: path)
        } catch {
            // (A `catch … where` on a typed error crashes the 6.3 compiler here.)
            if error.code == .notADirectory || error.code == .alreadyExists {
                throw ContainerError.unusable(path: path, reason: "it is not a directory")
            }
            if error.code == .notFound { throw ContainerError.notFound(path: path) }
            throw error
        }
        let status = try root.status()
        guard status.isOwnedByCurrentUser else {
            throw ContainerError.unusable(path: root.path, reason: "it belongs to another user (uid \(status.ownerUserID))")
        }
        if !created {
            switch try presence(in: root) {
            case .container: break
            case .emptyDirectory: if !creating { throw ContainerError.notFound(path: root.path) }
            case .foreignDirectory:
                throw ContainerError.unusable(path: root.path, reason: "it is a directory with other files in it and no TripBoard container; choose a new or empty directory")
            }
        }
        return root
    }

    /// True when the directory at `path` holds a container's manifest (the app has set it up);
    /// false when it or the manifest is missing. Opens nothing else.
    public static func hasManifest(at path: String) throws -> Bool {
        guard let root = try Directory.openIfPresent(path: path) else { return false }
        return try root.status(of: ContainerLayout.manifestFile) != nil
    }

    /// True when the container has been set up: a manifest, or a store (one copied into an empty
    /// directory, or a container whose manifest was removed, is set up again around it).
    static func hasManifestOrStore(_ root: Directory) throws -> Bool {
        if try root.status(of: ContainerLayout.manifestFile) != nil { return true }
        return try status(of: ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile, in: root) != nil
    }

    /// What an existing directory holds, judged by names alone (nothing is opened).
    package enum Presence { case container, emptyDirectory, foreignDirectory }

    /// The names only a TripBoard container has: one of them makes a directory a container,
    /// even one whose manifest was removed or that holds a store copied into it.
    static let ownEntries: Set<String> = [ContainerLayout.manifestFile, ContainerLayout.lockFile, ContainerLayout.storeDirectory,
                                          ContainerLayout.keychainDirectory, ContainerLayout.attachmentsDirectory,
                                          ContainerLayout.migrationDirectory]

    package static func presence(in root: Directory) throws -> Presence {
        let entries = try root.entries()
        if entries.isEmpty { return .emptyDirectory }
        return entries.contains(where: ownEntries.contains) ? .container : .foreignDirectory
    }

    /// Opens the store if the container is fully set up at the current schema; `nil` when setup or
    /// migration is needed (which takes the exclusive lock). Throws for a store that must not be
    /// touched (corrupt, newer, missing).
    static func openReadyStore(root: Directory, options: ContainerOptions) throws -> Connection? {
        guard let manifest = try Manifest.read(from: root), manifest.layoutVersion == ContainerLayout.version,
              manifest.storeCreated,
              try root.status(of: ContainerLayout.storeDirectory)?.kind == .directory
        else { return nil }
        let storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory)
        guard try storeFileKind(in: storeDirectory) != nil, try !DatabaseSealing.isInterrupted(in: storeDirectory)
        else { return nil }
        let connection = try openStoreConnection(storeDirectory: storeDirectory, keys: options.fileKeys)
        let version = try Schema.version(of: connection)
        // A foreign tool may have switched the store out of WAL: setup switches it back.
        guard version == Schema.currentVersion, try connection.text("PRAGMA journal_mode")?.lowercased() == "wal" else { return nil }
        try configure(connection, durability: options.durability)
        return connection
    }

    /// `.regular` when the store file exists, `nil` when it does not; anything else (a symbolic
    /// link, a directory) is refused.
    package static func storeFileKind(in storeDirectory: Directory) throws -> FileStatus.Kind? {
        guard let status = try storeDirectory.status(of: ContainerLayout.storeFile) else { return nil }
        let path = storeDirectory.childPath(ContainerLayout.storeFile)
        switch status.kind {
        case .regular: return .regular
        case .symbolicLink:
            throw ContainerError.unusable(path: path, reason: "the store is a symbolic link, and links are not followed inside the container")
        default:
            throw ContainerError.unusable(path: path, reason: "the store is not a regular file")
        }
    }

    /// `supported`: the newest schema version of that database this build reads (the keychain
    /// has its own numbering).
    /// `keys`: the device's, which open the database's key file (`DatabaseKeyFile`): a database
    /// with one is read through the sealed-page VFS; nil for a database that is never sealed
    /// (TripBoard 1's), whose key file is not looked for. `sealingIfNew`: an empty database without
    /// a key file gets one now (a store or keychain being created, under the exclusive container lock).
    package static func openStoreConnection(storeDirectory: Directory, fileName: String = ContainerLayout.storeFile,
                                            supported: Int64 = Schema.currentVersion, keys: (any FileKeys)?,
                                            sealingIfNew: Bool = false) throws -> Connection {
        let storePath = storeDirectory.childPath(fileName)
        var sealing = try keys.flatMap { try DatabaseKeyFile.read(in: storeDirectory, database: fileName, keys: $0, refreshing: true) }
        if sealing == nil, sealingIfNew, let keys, try storeDirectory.status(of: fileName)?.size == 0 {
            sealing = try DatabaseKeyFile.create(in: storeDirectory, database: fileName, keys: keys)
        }
        // SQLite opens the -wal and -shm itself: what stands there is looked at first, so that a
        // link is said as one (73), not as a store that cannot be opened.
        for suffix in ["-wal", "-shm"] {
            guard let status = try storeDirectory.status(of: fileName + suffix), status.kind != .regular else { continue }
            throw ContainerError.unusable(path: storeDirectory.childPath(fileName + suffix), reason: status.kind == .symbolicLink
                ? "a symbolic link where the store's \(suffix) file belongs, and links are not followed inside the container"
                : "not a regular file where the store's \(suffix) file belongs")
        }
        if try storeDirectory.status(of: fileName + "-wal") == nil {
            // Opening a WAL store without its -wal creates one. Look first, through an immutable
            // connection that creates nothing, so a refused store is left exactly as it was
            // (with no -wal, everything committed is in the main file, so this read is complete).
            let preflight: Connection
            do {
                preflight = try Connection(path: "file:\(SQLiteURI.escapedPath(storePath))?immutable=1",
                                           mode: .readOnly, uri: true, sealing: sealing)
            } catch let error as SQLiteError {
                throw StoreError.unreadable(path: storePath, detail: error.message)
            }
            _ = try Schema.version(of: preflight, path: storePath, supported: supported)
        }
        let connection: Connection
        do {
            connection = try Connection(path: storePath, mode: .readWrite, sealing: sealing)
        } catch let error as SQLiteError {
            throw StoreError.unreadable(path: storePath, detail: error.message)
        }
        if connection.isReadOnly {
            throw StoreError.unreadable(path: storePath, detail: "the file is not writable")
        }
        // Before anything reads the file: if it is refused (damaged, newer), closing must neither
        // checkpoint into it nor delete its -wal and -shm. `configure` turns checkpoints back on.
        try connection.persistWriteAheadLog()
        try connection.setCheckpointOnClose(false)
        return connection
    }

    /// Per-connection settings for a writer (docs/storage.md §1.2).
    package static func configure(_ connection: Connection, durability: Durability) throws {
        try connection.setCheckpointOnClose(true)
        // journal_size_limit >= 0 with a persistent WAL makes the last connection to close
        // truncate the -wal to zero bytes after its checkpoint (sqlite3WalClose), so a reader that
        // opens next has no stale frames to scan when it rebuilds the WAL index.
        try connection.execute("""
            PRAGMA foreign_keys = ON; PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL");
            PRAGMA journal_size_limit = 4194304
            """)
        let journalMode = try connection.text("PRAGMA journal_mode")
        guard journalMode?.lowercased() == "wal" else {
            throw StoreError.corrupt(path: connection.path, detail: "journal mode is \(journalMode ?? "unknown"), not wal")
        }
    }
}
