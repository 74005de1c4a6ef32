import TripBoardSQLite
import TripBoardDevice
import TripBoardSystem
import TripBoardModel

/// What `app container salvage` did.
public struct SalvageReport: Sendable, Codable {
    public struct Table: Sendable, Codable {
        public var table: String
        /// Rows copied into the new store.
        public var copied: Int
        /// Rowid ranges that could not be read, e.g. `121–180`: the rows in them are lost.
        public var unreadableRanges: [String]
        /// At most this many rows were in those ranges (rowids are given in order, so the width of
        /// each range bounds what it held; a range after the last row read is bounded by `lost`).
        public var lostAtMost: Int
        /// Exactly this many rows were lost, counted on the table's primary-key index when that
        /// still reads (it lists every row, damaged or not); nil when it does not.
        public var lost: Int?
        /// Rows that could be read but break a rule of the schema (a damaged value), left out.
        public var refused: Int
    }

    /// What the salvage came to; the raw values are the JSON contract's `outcome`.
    public enum Outcome: String, Sendable, Codable {
        /// The store was copied into a new one, which replaced it.
        case salvaged
        /// The store is sound: nothing was done.
        case nothingToSalvage = "nothing to salvage"
        /// An interrupted salvage was completed.
        case finished
    }

    public var outcome: Outcome
    public var tables: [Table] = []
    /// Records recreated with their lost parent's id so that their children are kept:
    /// `trip <id>` / `booking <id>`, named as such in their title.
    public var placeholders: [String] = []
    /// Where the damaged store was moved, relative to the container (kept, never deleted).
    public var damagedStoreKeptIn: String?
}

/// Copies what can still be read out of a damaged store into a new one, row by row where it
/// must, then puts the new store in place and keeps the damaged one in `store/damaged-<stamp>/`.
///
/// Steps, each one safe to interrupt (a kill anywhere leaves either the damaged store in place
/// with the mark that keeps writers away, or the new one):
/// 1. build `store/salvage-<stamp>.partial` (no durability needed: a leftover is deleted by the
///    next attempt), verify it (`integrity_check`, `foreign_key_check`), fsync it, and rename it
///    to `store/salvaged-<stamp>.sqlite`: from then on the salvage only has to be published;
/// 2. publish (`StoreSalvage.publish`, resumed by the next run if killed): hard-link the damaged
///    store and its `-wal`/`-shm` into `store/damaged-<stamp>/`, unlink the originals' `-wal` and
///    `-shm` (their bytes stay under the new names), rename the salvaged file over the store, and
///    remove the damage mark last.
/// Runs under the exclusive container lock, with no connection of this process to the store
/// open while its files are linked and renamed (docs/storage.md §3.1).
public enum StoreSalvage {
    static let salvagedPrefix = "salvaged-"
    static let partialPrefix = "salvage-"
    static let damagedPrefix = "damaged-"

    /// Salvages the store of `container` (opened with `StoreRequirement.none`).
    public static func run(container: Container) throws -> SalvageReport {
        try container.withExclusiveLock {
            let storeDirectory = try container.directory(ContainerLayout.storeDirectory)
            if let stamp = try pendingPublication(in: storeDirectory) {
                var report = SalvageReport(outcome: .finished)
                report.damagedStoreKeptIn = try publish(stamp: stamp, in: storeDirectory, container: container)
                return report
            }
            let stamp = container.options.clock().utcStamp.filter { $0 != ":" && $0 != "-" && $0 != "." }
            guard var report = try build(stamp: stamp, in: storeDirectory, container: container) else {
                try container.clearStoreDamage()
                return SalvageReport(outcome: .nothingToSalvage)
            }
            report.damagedStoreKeptIn = try publish(stamp: stamp, in: storeDirectory, container: container)
            return report
        }
    }

    /// The stamp of a salvaged store built but not yet published (an interrupted run).
    static func pendingPublication(in storeDirectory: Directory) throws -> String? {
        try storeDirectory.entries().first { $0.hasPrefix(salvagedPrefix) && $0.hasSuffix(".sqlite") }
            .map { String($0.dropFirst(salvagedPrefix.count).dropLast(".sqlite".count)) }
    }

    /// Builds and verifies `salvaged-<stamp>.sqlite`; `nil` when the store is sound and nothing
    /// needs salvaging (then nothing is written).
    static func build(stamp: String, in storeDirectory: Directory, container: Container) throws -> SalvageReport? {
        for name in try storeDirectory.entries() where name.hasPrefix(partialPrefix) { try storeDirectory.removeFile(name) }
        let damaged = try openDamagedStore(storeDirectory, keys: container.options.fileKeys)
        if try isSound(damaged) { return nil }
        // From here until the salvaged store is in place, writers must stay away: between
        // unlinking the damaged store's -wal and renaming the new store over it, the main file
        // alone is not the store.
        try container.markStoreDamaged(detail: "a salvage was started (integrity_check failed, or the schema is not this build's)")
        let partialName = partialPrefix + stamp + ".partial"
        // Sealed under the damaged store's key: its key file is the salvaged store's once published.
        try createNewStore(partialName, in: storeDirectory, sealing: damaged.sealing)
        var copier = SalvageCopier(connection: damaged, clock: container.options.clock)
        try damaged.attach(storeDirectory.childPath(partialName), as: "salvage", sealing: damaged.sealing)
        try damaged.execute("PRAGMA salvage.journal_mode = MEMORY; PRAGMA salvage.synchronous = OFF")
        let report = try copier.copyEverything()
        try damaged.execute("DETACH DATABASE salvage")
        // Durable under its final name before anything of the damaged store is moved.
        try storeDirectory.openFile(partialName, .readWrite).synchronize()
        try storeDirectory.rename(partialName, to: storeDirectory, as: salvagedPrefix + stamp + ".sqlite")
        try storeDirectory.synchronize()
        CrashPoint.reach("salvage.built")
        return report
    }

    /// True when `integrity_check` finds nothing wrong (it may fail outright on a damaged page)
    /// and the schema is exactly the one this build makes (`Schema.difference`: a store with an
    /// object of someone else's is made anew too, its rows copied).
    static func isSound(_ connection: Connection) throws -> Bool {
        let statement = try connection.statement("PRAGMA integrity_check(1)")
        do {
            return try statement.rows { $0.text(0) } == ["ok"] && Schema.difference(of: connection) == nil
        } catch let error as SQLiteError where error.isCorruption {
            statement.reset()
            return false
        }
    }

    /// The damaged store, read-write so that the new store can be attached to it, with
    /// checkpoints on close off: nothing is ever written into it.
    static func openDamagedStore(_ storeDirectory: Directory, keys: any FileKeys) throws -> Connection {
        guard try storeDirectory.status(of: ContainerLayout.storeFile)?.kind == .regular else {
            throw StoreError.missing(path: storeDirectory.childPath(ContainerLayout.storeFile))
        }
        let connection = try Container.openStoreConnection(storeDirectory: storeDirectory, keys: keys)
        do {
            let version = try connection.userVersion()
            guard version == Schema.currentVersion else {
                throw StoreError.invalidData("the store has schema version \(version), and this build salvages version \(Schema.currentVersion) only")
            }
            _ = try connection.statement("SELECT count(*) FROM sqlite_master").rows { $0.integer(0) }
        } catch let error as SQLiteError where error.isCorruption {
            throw StoreError.corrupt(path: connection.path, detail: "its first pages, which describe the tables, are damaged (\(error.message)), so nothing can be salvaged; restore it from a backup")
        }
        return connection
    }

    /// A new empty store at the current schema: rollback journal (so that nothing but the main
    /// file exists when it is published), mode 0600.
    static func createNewStore(_ name: String, in storeDirectory: Directory, sealing: PageKey?) throws {
        _ = try storeDirectory.openFile(name, .readWrite, creating: .newFile, mode: 0o600)
        let connection = try Connection(path: storeDirectory.childPath(name), mode: .readWrite, sealing: sealing)
        try connection.execute("PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF")
        try Schema.migrate(connection)
    }

    /// Sets the damaged store aside and puts the salvaged one in its place; idempotent, so an
    /// interrupted run is finished by the next. Returns where the damaged store is kept.
    static func publish(stamp: String, in storeDirectory: Directory, container: Container) throws -> String {
        let keptName = damagedPrefix + stamp
        let kept = try storeDirectory.openDirectory(keptName, create: true)
        let suffixes = ["", "-wal", "-shm", "-journal"]
        // The key file is linked too (the kept store opens with it) and stays: the salvaged store
        // is sealed under the same key.
        for suffix in suffixes + [DatabaseKeyFile.suffix] where try storeDirectory.status(of: ContainerLayout.storeFile + suffix) != nil {
            _ = try storeDirectory.link(ContainerLayout.storeFile + suffix, into: kept, as: ContainerLayout.storeFile + suffix)
        }
        try kept.synchronize()
        try storeDirectory.synchronize()
        CrashPoint.reach("salvage.kept")
        // The damaged store's -wal must not meet the new main file: SQLite would replay it.
        for suffix in suffixes.dropFirst() { try storeDirectory.removeFile(ContainerLayout.storeFile + suffix) }
        CrashPoint.reach("salvage.unlinked")
        try storeDirectory.rename(salvagedPrefix + stamp + ".sqlite", to: storeDirectory, as: ContainerLayout.storeFile)
        try storeDirectory.synchronize()
        CrashPoint.reach("salvage.published")
        try container.clearStoreDamage()
        return ContainerLayout.storeDirectory + "/" + keptName
    }
}
