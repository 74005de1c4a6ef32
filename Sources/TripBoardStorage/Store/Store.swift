public import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel

/// A concern of the store — what sync keeps (`SyncLedger`), the trash (`StoreTrash`), search
/// (`SearchIndex`), the store as a whole (`StoreVerification`) — as a view over the store's one
/// connection: its own SQL, in the same transactions as the records' (`store.syncLedger`, …).
package protocol StoreView {
    var store: Store { get }
}

extension StoreView {
    var connection: Connection { store.connection }
}

/// The domain store: trips, places, bookings and their sync metadata in one SQLite database.
///
/// Every write runs in `BEGIN IMMEDIATE` and sets the record's sync metadata in the same
/// transaction as the edit. Obtain one from `Container.openForWriting` (which holds the shared
/// container lock and has brought the schema up to date) or, in tests, from `Store(connection:)`.
public final class Store {
    /// The connection, configured for this store: for the store's own extensions, the container
    /// layer, the migration and tests — never for the commands above, which ask the store
    /// (`readTransaction`, `userVersion`, `hasWritten`, `isDamagedPage`).
    package let connection: Connection
    let clock: @Sendable () -> Timestamp

    /// Wraps a connection whose schema is current. `clock` stamps `updatedAt`; tests inject one.
    public init(connection: Connection, clock: @escaping @Sendable () -> Timestamp = Timestamp.now) {
        self.connection = connection
        self.clock = clock
    }

    /// The schema version this build writes and understands (`PRAGMA user_version`).
    public static var schemaVersion: Int64 { Schema.currentVersion }

    /// The store's schema version as its file says (`PRAGMA user_version`).
    public func userVersion() throws -> Int64 { try connection.userVersion() }

    /// The SQLite library's version (`sqlite3_libversion`), as `container info` reports it.
    public static var sqliteVersion: String { sqliteLibraryVersion }

    /// True once this process has changed a row of the store.
    public var hasWritten: Bool { connection.totalChanges > 0 }

    /// True when `error` is SQLite finding a damaged page (`SQLITE_CORRUPT`, `SQLITE_NOTADB`): what
    /// the commands say in their own words, and record (`Container.recordStoreDamage`).
    public static func isDamagedPage(_ error: any Error) -> Bool { (error as? SQLiteError)?.isCorruption == true }

    /// The damaged-page error's own message (SQLite's words), for the commands' sentence.
    public static func damageDetail(_ error: any Error) -> String { (error as? SQLiteError)?.message ?? "\(error)" }

    /// One write transaction around several of the store's and the sync ledger's package methods (they write
    /// inside the caller's transaction): a pulled page with its change token, a batch's acknowledgements with
    /// the removal of the saved batch.
    package func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try connection.writeTransaction(body)
    }

    /// One read transaction around several reads: a push batch's records and their shadows are
    /// read from one snapshot (and the file lock taken once, not once per statement).
    package func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try connection.readTransaction(body)
    }

    /// The `updatedAt` of a change made now.
    package func now() -> Timestamp { clock() }
    /// `now()` as the store keeps it (`2026-11-30T23:12:17.123Z`), for statements that set it.
    package func stamp() -> String { now().utcStamp }

    /// `RecordRows.live` for attachments, which also leave through the deletion queue (`deleting`).
    static let liveAttachment = "state <> 'deleting' AND sync_state <> 'pendingDeletion' AND trashed_at IS NULL"

    /// `live` or `liveAttachment`, for a query on `kind`'s table.
    static func liveCondition(_ kind: RecordKind) -> String { kind == .attachment ? liveAttachment : RecordRows.live }

    /// Resolves a user-typed id or unique prefix to a full id of a live record of `kind`.
    /// Tombstones and records in the trash count as absent unless `includingTombstones` is set
    /// (the sync commands: a deleted record the server had is a tombstone, in the trash or not).
    public func resolveID(_ kind: RecordKind, _ text: String, includingTombstones: Bool = false) throws -> String {
        guard let prefix = Identifier.normalizedPrefix(text) else {
            throw StoreError.invalidArgument("'\(text.prefix(40))' is not a \(kind.rawValue) id (a UUID or a prefix of one)")
        }
        let liveOnly = includingTombstones ? "" : " AND " + Store.liveCondition(kind)
        // ids are lowercase hex and '-', all below '~', so [prefix, prefix~) is exactly the prefix range.
        let matches = try connection.statement(
            "SELECT id FROM \(kind.table) WHERE id >= ?1 AND id < ?2\(liveOnly) ORDER BY id LIMIT 6"
        ).rows([.text(prefix), .text(prefix + "~")]) { $0.text(0) }
        switch matches.count {
        case 0: throw StoreError.notFound(kind: kind, id: text)
        case 1: return matches[0]
        default:
            if matches.contains(prefix) { return prefix }
            throw StoreError.ambiguous(kind: kind, prefix: text, candidates: matches.prefix(5) + (matches.count > 5 ? ["…"] : []))
        }
    }

    /// `resolveID(_:_:includingTombstones:)` for a kind of record with typed ids.
    public func resolveID<Record: StoredRecord>(_ kind: Record.Type, _ text: String,
                                                includingTombstones: Bool = false) throws -> RecordID<Record> {
        RecordID(try resolveID(Record.recordKind, text, includingTombstones: includingTombstones))
    }

    /// Finds which kind of record an id (or unique prefix) names, tombstones included.
    public func resolveAnyID(_ text: String) throws -> (kind: RecordKind, id: String) {
        var found: [(RecordKind, String)] = []
        for kind in RecordKind.allCases {
            do {
                found.append((kind, try resolveID(kind, text, includingTombstones: true)))
            } catch StoreError.notFound {
                continue
            }
        }
        guard let first = found.first else { throw StoreError.noRecord(id: text) }
        if found.count > 1 {
            throw StoreError.invalidArgument("id prefix '\(text)' matches several records: "
                + found.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ") + "; give more characters")
        }
        return first
    }

    /// Live record counts, tombstones and records waiting for the server (trips, places,
    /// bookings and attachments, as `sync pending` lists them; what is in the trash counts as
    /// neither live nor pending unless it is a tombstone).
    ///
    /// One pass over each table counts all three: a tombstone count needs a table scan anyway (no
    /// index holds `pendingDeletion` alone), and in a sealed store every page read is opened, so
    /// three passes cost three times the cipher work.
    public func counts() throws -> StoreCounts {
        try connection.readTransaction {
            var (live, tombstones, pending) = ([Int](), 0, 0)
            for kind in [RecordKind.trip, .place, .booking, .attachment] {
                try connection.statement("""
                    SELECT count(*) FILTER (WHERE \(Self.liveCondition(kind))), count(*) FILTER (WHERE sync_state = 'pendingDeletion'),
                           count(*) FILTER (WHERE \(SyncLedger.pending)) FROM \(kind.table)
                    """).forEachRow { row in
                    live.append(Int(row.integer(0)))
                    tombstones += Int(row.integer(1))
                    pending += Int(row.integer(2))
                }
            }
            return StoreCounts(trips: live[0], places: live[1], bookings: live[2], attachments: live[3], tombstones: tombstones,
                               pendingChanges: pending)
        }
    }

    /// The page cache of a whole-store check (`integrity_check`, a restore's checks), in KiB.
    /// `integrity_check` looks every table row up in each of its indexes, which reads index pages
    /// out of order many times over; in a sealed store each such read opens the page again
    /// (about 4 µs for 4 KiB), so with the default 2 MB cache a 100,000-trip store took 2 s to
    /// check where 32 MiB takes 0.65 s. Bounded, so a larger store costs time, not memory.
    public static let checkPageCacheKibibytes = 32 << 10

    /// Runs `PRAGMA integrity_check` and `foreign_key_check`; returns the problems found (empty when clean).
    public func integrityProblems(limit: Int = 100) throws -> [String] {
        try connection.withPageCache(kibibytes: Self.checkPageCacheKibibytes) { try checkedIntegrity(limit: limit) }
    }

    private func checkedIntegrity(limit: Int) throws -> [String] {
        // integrity_check(N) stops after N problems: a badly damaged store gives a bounded list.
        let problems = try connection.statement("PRAGMA integrity_check(\(max(1, limit)))").rows { $0.text(0) }.filter { $0 != "ok" }
        // Tables, indexes, triggers and views exactly as this build makes them (Schema.difference):
        // an extra trigger passes integrity_check and could delete every new trip.
        let schema = try Schema.difference(of: connection).map { ["the schema is not the one this build makes: " + $0] } ?? []
        return problems + schema + (try foreignKeyProblems())
    }

    /// Runs `PRAGMA foreign_key_check`: a row for each reference to a record that is not there.
    public func foreignKeyProblems() throws -> [String] {
        try connection.statement("PRAGMA foreign_key_check").rows { row in
            "foreign key violation in \(row.text(0)) row \(row.integer(1)) → \(row.text(2))"
        }
    }

    /// Changes when another connection commits to the store (this one's own commits leave it alone):
    /// the cheap "has anyone written since?" a watcher asks before it does any real work.
    public func changeCounter() throws -> Int64 { try connection.dataVersion() }
}

/// How many records the store holds.
public struct StoreCounts: Sendable, Equatable, Codable {
    public var trips: Int
    public var places: Int
    public var bookings: Int
    public var attachments: Int
    public var tombstones: Int
    public var pendingChanges: Int

    package init(trips: Int, places: Int, bookings: Int, attachments: Int, tombstones: Int, pendingChanges: Int) {
        self.trips = trips
        self.places = places
        self.bookings = bookings
        self.attachments = attachments
        self.tombstones = tombstones
        self.pendingChanges = pendingChanges
    }
}
