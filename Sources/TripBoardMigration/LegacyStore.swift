public import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// The version-1 location: `TripBoard.sqlite` (WAL, `user_version` 1), `Attachments/<id>.<ext>`,
/// `Thumbnails/` (a cache) and `preferences.json`. docs/migration.md describes the format.
public enum LegacyLayout {
    static let storeFile = FirstLaunchMigration.legacyStoreFile
    static let attachmentsDirectory = "Attachments"
    static let thumbnailsDirectory = "Thumbnails"
    static let preferencesFile = "preferences.json"
    static let schemaVersion: Int64 = 1
    /// Names in the old location that belong to version 1 and are deleted at the end; anything
    /// else is reported and left where it is.
    static let ownNames: Set<String> = [storeFile, storeFile + "-wal", storeFile + "-shm", storeFile + "-journal",
                                        attachmentsDirectory, thumbnailsDirectory, preferencesFile]

    /// `--from DIR` › `TRIPBOARD_LEGACY_DIR` › `$HOME/.tripboard`; `nil` when none applies.
    public static func resolve(explicit: String?, environment: [String: String]) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        return FirstLaunchMigration.defaultLegacyPath(environment: environment)
    }
}

/// Rows per table (the store's own count, `Store.RowCounts`).
public typealias MigrationCounts = Store.RowCounts

/// One row of the legacy `attachments` table.
struct LegacyAttachmentRow {
    var id: String
    var bookingId: String
    var filename: String
    var relativePath: String
    var contentType: String
    var createdAt: String
}

/// The legacy store, opened through SQLite (so committed data still only in `-wal` is read) and
/// checked before anything reads its rows.
final class LegacyStore {
    let directory: Directory
    let connection: Connection
    let path: String

    /// Opens the store `fileName` in `directory` (the legacy location, or the migration's copy of
    /// it) and checks that it is version 1 with the version-1 tables. Nothing is written: a
    /// refused store keeps every byte (checkpoint on close is off).
    /// `sealing`: the migration's own copy, sealed under a key of this run's (no key file).
    init(directory: Directory, fileName: String = LegacyLayout.storeFile, sealing: PageKey? = nil) throws {
        self.directory = directory
        let path = directory.childPath(fileName)
        self.path = path
        guard let status = try directory.status(of: fileName) else {
            throw MigrationError.notLegacyStore(path: directory.path, reason: "it has no \(fileName)")
        }
        guard status.kind == .regular else {
            throw MigrationError.notLegacyStore(path: path, reason: "it is not a regular file")
        }
        // TripBoard 1 never sealed its store: a key file beside it makes it a container's.
        if sealing == nil, try directory.status(of: DatabaseKeyFile.name(for: fileName)) != nil {
            throw MigrationError.notLegacyStore(path: path, reason: "it is a TripBoard container's sealed store, not TripBoard 1's data")
        }
        do {
            if try directory.status(of: fileName + "-wal") == nil {
                // Everything committed is in the main file: read it through an immutable connection,
                // which creates no -wal or -shm, so a refused store is left exactly as it was.
                connection = try Connection(path: "file:\(SQLiteURI.escapedPath(path))?immutable=1", mode: .readOnly, uri: true,
                                            sealing: sealing)
            } else {
                // Committed transactions may be only in -wal: SQLite reads them when it opens the store.
                connection = try Container.openStoreConnection(storeDirectory: directory, fileName: fileName, keys: nil)
            }
            let version = try Schema.version(of: connection, path: path, supported: LegacyLayout.schemaVersion)
            guard version == LegacyLayout.schemaVersion else {
                throw MigrationError.notLegacyStore(path: path, reason: "its user_version is \(version), not 1")
            }
        } catch StoreError.newerSchema(_, let found, _) {
            // Never TripBoard 1's: most likely a container's store named by mistake, which
            // "newer than this build understands; update TripBoard" would send the user astray on.
            let what = found <= Schema.currentVersion ? "a TripBoard container's store" : "a store of a later TripBoard"
            throw MigrationError.notLegacyStore(path: path, reason: "its user_version is \(found): it is \(what), not TripBoard 1's data")
        } catch StoreError.corrupt(_, let detail) {
            throw MigrationError.legacyCorrupt(path: path, detail: detail)
        } catch let error as SQLiteError where error.isCorruption {
            throw MigrationError.legacyCorrupt(path: path, detail: error.message)
        }
        for sql in Self.queries.values {
            do {
                _ = try connection.statement(sql)
            } catch let error as SQLiteError {
                if error.isCorruption { throw MigrationError.legacyCorrupt(path: path, detail: error.message) }
                throw MigrationError.notLegacyStore(path: path, reason: error.message)
            }
        }
    }

    static let queries = [
        "trips": "SELECT id, name, start_date, end_date, notes, updated_at FROM trips ORDER BY rowid",
        "places": "SELECT id, trip_id, name, city, visited FROM places ORDER BY rowid",
        "bookings": "SELECT id, trip_id, kind, title, starts_at, reference FROM bookings ORDER BY rowid",
        "attachments": "SELECT id, booking_id, filename, relative_path, content_type, created_at FROM attachments ORDER BY rowid",
    ]

    /// `PRAGMA quick_check` and `foreign_key_check`: a damaged or inconsistent store is refused
    /// before anything is copied.
    func check() throws {
        do {
            let problems = try connection.statement("PRAGMA quick_check").rows { $0.text(0) }.filter { $0 != "ok" }
            if let first = problems.first {
                throw MigrationError.legacyCorrupt(path: path, detail: "quick_check: " + first.prefix(120)
                                                   + (problems.count > 1 ? " (and \(problems.count - 1) more)" : ""))
            }
            let dangling = try connection.statement("PRAGMA foreign_key_check").rows { "\($0.text(0)) row \($0.integer(1)) → \($0.text(2))" }
            if let first = dangling.first {
                throw MigrationError.invalidLegacyRecord(
                    path: path, detail: "\(dangling.count) row\(dangling.count == 1 ? "" : "s") refer to records that do not exist, e.g. \(first)")
            }
            let shared = try connection.text("SELECT relative_path FROM attachments GROUP BY relative_path HAVING count(*) > 1 LIMIT 1")
            if let shared {
                throw MigrationError.invalidLegacyRecord(path: path, detail: "several attachment rows name the file \(shared.prefix(80))")
            }
        } catch let error as SQLiteError where error.isCorruption {
            throw MigrationError.legacyCorrupt(path: path, detail: error.message)
        }
    }

    /// Moves every committed frame from `-wal` into the main file (`wal_checkpoint(TRUNCATE)`).
    /// Only after `check()`: a refused store is not written to.
    func checkpoint() throws {
        guard !connection.isReadOnly else { return }  // no -wal: nothing to checkpoint
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// The first id two records share once lowercased, as the conversion writes ids (ids are
    /// unique across trips, places, bookings and attachments in this version; version 1 kept four
    /// tables, each case-sensitive), with the kinds of its first two records in table order.
    /// SQLite sorts each table's ids and merges the four sorted streams (`EXPLAIN QUERY PLAN`: a
    /// temporary b-tree per table); with the page cache lowered to `sortKibibytes` each sort holds
    /// at most about 1 MB (SQLite's floor of 250 pages; at the default cache, 2 MB) and spills to a temporary file (in `$TMPDIR`, else /var/tmp or /tmp)
    /// past it, so the memory is bounded whatever the number of records — about 4 MB, where a
    /// register of the ids held 24 bytes for each (2.6 MB at 110,000, and grew). Where the store is
    /// built whole this runs beside the build, off the critical path; into a container with records
    /// (`--merge`) it is part of the plan's own time.
    func firstSharedID(sortKibibytes: Int = 512) throws -> (id: String, first: RecordKind, second: RecordKind)? {
        let kinds: [RecordKind] = [.trip, .place, .booking, .attachment]
        let sql = kinds.enumerated().map { "SELECT lower(id), \($0.offset) FROM \($0.element.table)" }.joined(separator: " UNION ALL ")
            + " ORDER BY 1, 2"
        return try connection.withPageCache(kibibytes: max(64, sortKibibytes)) {
            var previous: (id: String, kind: Int)?
            do {
                let statement = try connection.statement(sql)
                try statement.bind([])
                defer { statement.reset() }
                while try statement.step() {
                    let id = statement.text(0), kind = Int(statement.integer(1))
                    if let previous, previous.id == id { return (id, kinds[previous.kind], kinds[kind]) }
                    previous = (id, kind)
                }
            } catch let error as SQLiteError where error.isCorruption {
                throw MigrationError.legacyCorrupt(path: path, detail: error.message)
            }
            return nil
        }
    }

    /// Calls `body` with each row of `table` (one of `queries`), streaming: never the whole table
    /// in memory.
    func forEachRow(_ table: String, _ body: (Statement) throws -> Void) throws {
        let statement = try connection.statement(Self.queries[table]!)
        try statement.bind([])
        defer { statement.reset() }
        do {
            while try statement.step() { try body(statement) }
        } catch let error as SQLiteError where error.isCorruption {
            throw MigrationError.legacyCorrupt(path: path, detail: error.message)
        }
    }

    /// Calls `body` with each attachment row, streaming (never the whole table in memory).
    func forEachAttachmentRow(_ body: (LegacyAttachmentRow) throws -> Void) throws {
        try forEachRow("attachments") { row in
            try body(LegacyAttachmentRow(id: row.text(0), bookingId: row.text(1), filename: row.text(2),
                                         relativePath: row.text(3), contentType: row.text(4), createdAt: row.text(5)))
        }
    }
}
