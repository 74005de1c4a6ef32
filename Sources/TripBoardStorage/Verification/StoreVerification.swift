package import TripBoardModel
package import TripBoardSQLite

/// The store as a whole, for those who check it rather than edit it: row counts, page and
/// foreign-key problems, every row in turn, a store published whole into an empty one (the
/// migration's verification), and one store compared with another (`backup verify`). A view of
/// the store over its one connection. Its reads see every row the store holds — live, in the
/// trash and tombstones alike, in the order they were inserted; everyday reads go through the
/// queries on live records instead.
public struct StoreVerification: StoreView {
    package let store: Store
}

extension Store {
    /// The store as a whole, for those who check it (`StoreVerification`).
    public var verification: StoreVerification { StoreVerification(store: self) }
}

extension Store {
    /// How many rows each record table holds, whatever their state (also the migration's
    /// `MigrationCounts`, in its summary's JSON).
    public struct RowCounts: Sendable, Codable, Equatable, CustomStringConvertible {
        public var trips = 0
        public var places = 0
        public var bookings = 0
        public var attachments = 0

        public init(trips: Int = 0, places: Int = 0, bookings: Int = 0, attachments: Int = 0) {
            (self.trips, self.places, self.bookings, self.attachments) = (trips, places, bookings, attachments)
        }

        public var description: String { "\(trips) trips, \(places) places, \(bookings) bookings, \(attachments) attachments" }
    }
}

extension StoreVerification {

    /// One record of any kind, as a verifier reads it back.
    package enum AnyRecord: Equatable {
        case trip(Trip)
        case place(Place)
        case booking(Booking)
        case attachment(Attachment)

        package var id: String {
            switch self {
            case .trip(let trip): trip.id.text
            case .place(let place): place.id.text
            case .booking(let booking): booking.id.text
            case .attachment(let attachment): attachment.id.text
            }
        }
    }

    package func rowCounts() throws -> Store.RowCounts {
        try connection.readTransaction { try Store.RowCounts(counting: connection) }
    }

    /// What `PRAGMA quick_check` finds wrong with the store's pages and b-trees (empty when sound).
    /// Unlike `integrityProblems`, indexes are not checked against their tables: for a verifier of a
    /// store whose indexes were just made from its rows by `CREATE INDEX`.
    package func pageProblems(limit: Int = 100) throws -> [String] {
        try connection.statement("PRAGMA quick_check(\(max(1, limit)))").rows { $0.text(0) }.filter { $0 != "ok" }
    }

    /// Every row of every record table, in one read transaction: trips, then places, bookings and
    /// attachments, each in rowid order, streamed (never a whole table in memory).
    package func forEveryRow(_ body: (AnyRecord) throws -> Void) throws {
        func scan(_ table: String, _ columns: String, _ record: (Statement) -> AnyRecord) throws {
            let statement = try connection.statement("SELECT \(columns) FROM \(table) ORDER BY rowid")
            try statement.bind([])
            defer { statement.reset() }
            while try statement.step() { try body(record(statement)) }
        }
        try connection.readTransaction {
            try scan("trips", RecordRows.tripColumns) { .trip(RecordRows.trip(from: $0)) }
            try scan("places", RecordRows.placeColumns) { .place(RecordRows.place(from: $0)) }
            try scan("bookings", RecordRows.bookingColumns) { .booking(RecordRows.booking(from: $0)) }
            try scan("attachments", Store.attachmentColumns) { .attachment(Store.attachment(from: $0)) }
        }
    }

    /// The row of `kind` with exactly this id, whatever its state; `nil` when there is none.
    package func anyRecord(_ kind: RecordKind, id: String) throws -> AnyRecord? {
        switch kind {
        case .trip: try row("trips", RecordRows.tripColumns, id) { .trip(RecordRows.trip(from: $0)) }
        case .place: try row("places", RecordRows.placeColumns, id) { .place(RecordRows.place(from: $0)) }
        case .booking: try row("bookings", RecordRows.bookingColumns, id) { .booking(RecordRows.booking(from: $0)) }
        case .attachment: try row("attachments", Store.attachmentColumns, id) { .attachment(Store.attachment(from: $0)) }
        }
    }

    /// True when a row of `kind` has exactly this id, whatever its state (an index probe: the row
    /// itself is not read).
    package func hasRow(_ kind: RecordKind, id: String) throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM \(kind.table) WHERE id = ?)", [.text(id)]) != 0
    }

    /// True when no table of the store has a row (the search index's aside): replacing the whole
    /// file (`replaceWhole(with:)`) loses nothing.
    package func holdsNoRow() throws -> Bool {
        let tables = try connection.statement("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND NOT \(Schema.isSearchTable)")
            .rows { $0.text(0) }
        for table in tables where try connection.integer("SELECT EXISTS (SELECT 1 FROM \"\(table)\")") != 0 {
            return false
        }
        return true
    }

    /// Makes the store's file a page-for-page copy of `source`'s database through SQLite's backup
    /// API (under the store's own locks, so a reader sees the old file or the new), then truncates
    /// the WAL, which would otherwise keep a second copy of every page.
    package func replaceWhole(with source: Connection) throws {
        try source.backup(into: connection)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    private func row(_ table: String, _ columns: String, _ id: String, _ record: @escaping (Statement) -> AnyRecord) throws -> AnyRecord? {
        try connection.statement("SELECT \(columns) FROM \(table) WHERE id = ?").rows([.text(id)], record).first
    }
}

extension Store.RowCounts {
    /// The rows of each record table in `connection`: a container's store, or TripBoard 1's, whose
    /// tables have the same names.
    package init(counting connection: Connection) throws {
        func count(_ kind: RecordKind) throws -> Int { try RecordRows.count(kind, in: connection) }
        self.init(trips: try count(.trip), places: try count(.place), bookings: try count(.booking),
                  attachments: try count(.attachment))
    }
}
