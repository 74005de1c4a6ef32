import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel
import TripBoardDevice

/// The new store, built whole in `migration/new-store.sqlite` from the sealed copy of the legacy
/// store (`migration/legacy-copy.sqlite`), before the store step publishes it.
///
/// It needs no durability of its own — a crash leaves files the next attempt deletes — so it has
/// no journal and no fsync. The schema is `Schema`'s; the secondary indexes are dropped while the
/// rows go in and created again after, from their own `CREATE INDEX` text (one sort each instead
/// of an insertion at a random place per row). The records are converted inside SQLite
/// (`LegacySQLConversion`) in two parts: trips, places and bookings need nothing from the plan, so
/// a fresh migration converts them while the plan lists the files; the attachments need the
/// plan's sizes and destinations.
final class MigrationStoreBuilder {
    let migrationDirectory: Directory
    /// The copy of the legacy store the records come from.
    let copy: LegacyStore
    /// The store being built.
    let connection: Connection
    private let indexes: [(name: String, sql: String)]
    private var convertedBeforeFiles = false

    /// Deletes what an earlier attempt left, copies `legacy` (sealed, `copyLegacyStore`), and creates
    /// the new store with its tables (no secondary index yet). Runs on any one thread:
    /// `legacy` must be a connection no other thread uses meanwhile.
    /// The new store is sealed from its first page (`DatabaseKeyFile`, sealed under `keys`): it
    /// becomes the container's store as it is. It opens with `uri` so that TripBoard 1's copy and
    /// the plan's file list, in the clear, can be attached beside it.
    init(legacy: Connection, migrationDirectory: Directory, keys: any FileKeys) throws {
        self.migrationDirectory = migrationDirectory
        try Self.removeFiles(in: migrationDirectory)
        copy = try Self.copyLegacyStore(legacy, into: migrationDirectory)
        try Self.createPrivateFile(MigrationJournal.builtStoreFile, in: migrationDirectory)
        let key = try DatabaseKeyFile.create(in: migrationDirectory, database: MigrationJournal.builtStoreFile, keys: keys)
        connection = try Connection(path: migrationDirectory.childPath(MigrationJournal.builtStoreFile), mode: .readWrite, uri: true, sealing: key)
        // The connection is this builder's alone: its settings need no restoring.
        try connection.execute("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF;
            PRAGMA cache_size = -\(MigrationRun.pageCacheKibibytes)
            """)
        try Schema.migrate(connection)
        indexes = try connection.statement("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid")
            .rows { (name: $0.text(0), sql: $0.text(1)) }
        for index in indexes { try connection.execute("DROP INDEX \"\(index.name)\"") }
    }

    /// Trips, places and bookings, converted inside SQLite.
    func convertRecordsBeforeFiles(migratedAt: String) throws {
        guard !convertedBeforeFiles else { return }
        try LegacySQLConversion.attach(legacyCopy: copy, to: connection)
        try LegacySQLConversion.convertTripsPlacesAndBookings(migratedAt: migratedAt, in: connection)
        convertedBeforeFiles = true
    }

    /// The attachments (with the plan's file list), then the indexes, then the checks: no dangling
    /// reference, exactly the copy's number of records. Returns the counts.
    func finish(files: MigrationFileList, migratedAt: String) throws -> MigrationCounts {
        try convertRecordsBeforeFiles(migratedAt: migratedAt)
        try LegacySQLConversion.convertAttachments(fileListPath: files.connection.path, migratedAt: migratedAt, in: connection)
        return try finishWithoutConverting()
    }

    /// The indexes and the checks, for records inserted otherwise (`MigrationRun.convertRecords`).
    func finishWithoutConverting() throws -> MigrationCounts {
        for index in indexes { try connection.execute(index.sql) }
        return try Self.checkConverted(Store(connection: connection), against: copy, merge: false)
    }

    /// Checked before publishing: no dangling reference, and (unless merging, where the
    /// destination's own records count too) exactly the copy's number of records. Returns the
    /// counts of `connection`.
    @discardableResult
    static func checkConverted(_ store: Store, against copy: LegacyStore, merge: Bool) throws -> MigrationCounts {
        if let problem = try store.foreignKeyProblems().first {
            throw MigrationError.verificationFailed(detail: "the new store: \(problem)")
        }
        let expected = try MigrationCounts(counting: copy.connection)
        let after = try store.verification.rowCounts()
        if merge ? after.trips < expected.trips : after != expected {
            throw MigrationError.verificationFailed(detail: "the new store holds \(after), the copy \(expected)")
        }
        return after
    }

    /// The copy and the built store, with their SQLite companions.
    static func removeFiles(in migrationDirectory: Directory) throws {
        for name in [MigrationJournal.stagingStoreFile, MigrationJournal.builtStoreFile] {
            for suffix in ["", "-wal", "-shm", "-journal", DatabaseKeyFile.suffix] { try migrationDirectory.removeFile(name + suffix) }
        }
    }

    /// `migration/legacy-copy.sqlite`: TripBoard 1's store copied with `VACUUM INTO`, which reads
    /// a consistent snapshot (what is still only in the legacy `-wal` included), into pages sealed
    /// under a key only this run holds in memory (`PageKey.random`, written nowhere): the copy in
    /// the container reveals nothing, and a run that stops leaves one that the next run deletes
    /// and makes again (`removeFiles`), as it always did.
    static func copyLegacyStore(_ legacy: Connection, into migrationDirectory: Directory) throws -> LegacyStore {
        let name = MigrationJournal.stagingStoreFile
        let key = try PageKey.random()
        try createPrivateFile(name, in: migrationDirectory)
        // `VACUUM INTO` names its sealed target by URI: a connection that reads URIs (the legacy
        // store's immutable one is; one opened beside its -wal is read again through one).
        let source = legacy.path.hasPrefix("file:")
            ? legacy : try Connection(path: "file:" + SQLiteURI.escapedPath(legacy.path), mode: .readOnly, uri: true)
        try source.vacuumSealed(into: migrationDirectory.childPath(name), key: key)
        return try LegacyStore(directory: migrationDirectory, fileName: name, sealing: key)
    }

    /// Created with mode 0600 before SQLite opens it, as the container's own store is.
    private static func createPrivateFile(_ name: String, in directory: Directory) throws {
        _ = try directory.openFile(name, .readWrite, creating: .newFile, mode: 0o600)
    }
}
