/// The version-1 location: `TripBoard.sqlite` (WAL, `user_version` 1), `Attachments/<id>.<ext>`,
/// `Thumbnails/` (a cache) and `preferences.json`. docs/migration.md describes the format.
public enum LegacyLayout {
    static let storeFile = "TripBoard.sqlite"
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
        if let fromEnvironment = environment["TRIPBOARD_LEGACY_DIR"], !fromEnvironment.isEmpty { return fromEnvironment }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return (home.hasSuffix("/") ? home : home + "/") + ".tripboard"
    }
}

/// Rows per table.
public struct MigrationCounts: Sendable, Codable, Equatable {
    public var trips = 0
    public var places = 0
    public var bookings = 0
    public var attachments = 0

    public init() {}

    /// The rows of each table in `connection` (the legacy store and the current schema use the
    /// same table names).
    init(counting connection: Connection) throws {
        trips = Int(try connection.integer("SELECT count(*) FROM trips"))
        places = Int(try connection.integer("SELECT count(*) FROM places"))
        bookings = Int(try connection.integer("SELECT count(*) FROM bookings"))
        attachments = Int(try connection.integer("SELECT count(*) FROM attachments"))
    }
}

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
    init(directory: Directory, fileName: String = LegacyLayout.storeFile) throws {
        self.directory = directory
        let path = directory.childPath(fileName)
        self.path = path
        guard let status = try directory.status(of: fileName) else {
            throw MigrationError.notLegacyStore(path: directory.path, reason: "it has no \(fileName)")
        }
        guard status.kind == .regular else {
            throw MigrationError.notLegacyStore(path: path, reason: "it is not a regular file")
        }
        do {
            if try directory.status(of: fileName + "-wal") == nil {
                // Everything committed is in the main file: read it through an immutable connection,
                // which creates no -wal or -shm, so a refused store is left exactly as it was.
                connection = try Connection(path: "file:\(ReadOnlyContainer.uriEscaped(path))?immutable=1", mode: .readOnly, uri: true)
            } else {
                // Committed transactions may be only in -wal: SQLite reads them when it opens the store.
                connection = try Container.openStoreConnection(storeDirectory: directory, fileName: fileName)
            }
            let version = try Container.schemaVersion(of: connection, path: path, supported: LegacyLayout.schemaVersion)
            guard version == LegacyLayout.schemaVersion else {
                throw MigrationError.notLegacyStore(path: path, reason: "its user_version is \(version), not 1")
            }
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

/// Turns legacy rows into records of the new store: ids lowercased, timestamps normalised,
/// `pendingUpload` (version 1 never synced). A row the new schema would refuse throws, naming it.
struct LegacyConverter {
    let storePath: String
    /// `updatedAt` for records that had none in version 1 (places, bookings, attachments).
    let migratedAt: String

    func trip(_ row: Statement) throws -> Trip {
        let id = try identifier(row.text(0), "trip")
        let what = "trip \(id)"
        guard let start = CivilDate(row.text(2)), let end = CivilDate(row.text(3)) else {
            throw invalid("\(what) has a start or end date that is not YYYY-MM-DD")
        }
        guard end >= start else { throw invalid("\(what) ends before it starts") }
        return Trip(id: id, name: try nonEmpty(row.text(1), "\(what) has an empty name"), startDate: start, endDate: end,
                    notes: row.optionalText(4) ?? "", syncState: .pendingUpload, remoteVersion: nil,
                    updatedAt: try stamp(row.text(5), "\(what) has an updated_at that is not ISO 8601"))
    }

    func place(_ row: Statement) throws -> Place {
        let id = try identifier(row.text(0), "place")
        return Place(id: id, tripId: try identifier(row.text(1), "place \(id): trip"),
                     name: try nonEmpty(row.text(2), "place \(id) has an empty name"), city: row.optionalText(3),
                     visited: row.integer(4) != 0, syncState: .pendingUpload, remoteVersion: nil, updatedAt: migratedAt)
    }

    /// A kind outside flight, train, hotel, car, event and other becomes `other` (counted).
    func booking(_ row: Statement) throws -> (booking: Booking, kindChanged: Bool) {
        let id = try identifier(row.text(0), "booking")
        let kind = BookingKind(rawValue: row.text(2).lowercased())
        var startsAt: String?
        if let text = row.optionalText(4) {
            guard let parsed = Timestamp(iso8601: text) else { throw invalid("booking \(id) has a starts_at that is not ISO 8601") }
            startsAt = parsed.iso8601()
        }
        let booking = Booking(id: id, tripId: try identifier(row.text(1), "booking \(id): trip"), kind: kind ?? .other,
                              title: try nonEmpty(row.text(3), "booking \(id) has an empty title"), startsAt: startsAt,
                              reference: row.optionalText(5), syncState: .pendingUpload, remoteVersion: nil, updatedAt: migratedAt)
        return (booking, kind == nil)
    }

    /// The new row for a legacy attachment whose file was planned as `file` (`nil`: missing).
    func attachment(_ row: LegacyAttachmentRow, file: PlannedFile?) throws -> Attachment {
        let id = try identifier(row.id, "attachment")
        return Attachment(id: id, bookingId: try identifier(row.bookingId, "attachment \(id): booking"),
                          originalFilename: row.filename, contentType: row.contentType, byteCount: file?.byteCount ?? 0,
                          contentHash: file?.contentHash ?? "", pageCount: nil,
                          relativePath: file?.destination ?? Self.destination(attachmentID: id, legacyPath: row.relativePath),
                          state: file == nil ? "missing" : "present",
                          createdAt: try stamp(row.createdAt, "attachment \(id) has a created_at that is not ISO 8601"),
                          syncState: .pendingUpload, remoteVersion: nil, updatedAt: migratedAt)
    }

    /// `attachments/<first two hex digits>/<id>.<ext>`, the extension taken from the legacy path.
    static func destination(attachmentID id: String, legacyPath: String) -> String {
        let name = legacyPath.split(separator: "/").last.map(String.init) ?? ""
        let dot = name.lastIndex(of: ".")
        let fileExtension = dot.map { String(name[name.index(after: $0)...]).lowercased() } ?? ""
        let safeExtension = !fileExtension.isEmpty && fileExtension.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) }
        return ContainerLayout.attachmentsDirectory + "/" + id.prefix(2) + "/" + id + (safeExtension ? "." + fileExtension : "")
    }

    private func identifier(_ text: String, _ what: String) throws -> String {
        guard Identifier.isValid(text) else { throw invalid("\(what) id '\(text.prefix(40))' is not a UUID") }
        return text.lowercased()
    }

    private func nonEmpty(_ text: String, _ message: String) throws -> String {
        guard !text.isEmpty else { throw invalid(message) }
        return text
    }

    private func stamp(_ text: String, _ message: String) throws -> String {
        guard let parsed = Timestamp(iso8601: text) else { throw invalid(message) }
        return parsed.utcStamp
    }

    private func invalid(_ detail: String) -> MigrationError { .invalidLegacyRecord(path: storePath, detail: detail) }
}
