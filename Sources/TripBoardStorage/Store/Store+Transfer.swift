import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel

/// `app export` / `app import`: everything but secrets and caches, as one JSON document.
public struct ExportDocument: Sendable, Codable, Equatable {
    public static let formatName = "tripboard-export"
    public static let currentFormatVersion = 1

    public var format: String
    public var formatVersion: Int
    public var exportedAt: String
    public var trips: [Trip]
    public var places: [Place]
    public var bookings: [Booking]
    /// Only the keys the user has set.
    public var preferences: [String: PreferenceValue]
}

/// What an import added.
public struct ImportSummary: Sendable, Equatable, Codable {
    public var trips: Int
    public var places: Int
    public var bookings: Int
}

extension Store {
    /// What an export holds: live records and tombstones (in the trash or not: sync state the
    /// server still needs). What is in the trash without the server having it is left out, as a
    /// record deleted before the trash existed was: an import would bring it back to life.
    static let exported = "(trashed_at IS NULL OR sync_state = 'pendingDeletion')"

    /// Every record, tombstones included (they are sync state the server still needs).
    public func exportDocument(preferences: Preferences) throws -> ExportDocument {
        try connection.readTransaction {
            ExportDocument(
                format: ExportDocument.formatName, formatVersion: ExportDocument.currentFormatVersion,
                exportedAt: stamp(), trips: try exportedTrips.collect(), places: try exportedPlaces.collect(),
                bookings: try exportedBookings.collect(), preferences: Self.exportedPreferences(preferences)
            )
        }
    }

    /// Writes the export as `JSON.encode(exportDocument(preferences:))` would, with its trailing
    /// newline, to `write` as the records are read (one snapshot), each record printed from its
    /// row's bytes (`RecordBytes`) into pieces of about 64 KiB: memory stays flat whatever the
    /// number of records.
    public func writeExport(preferences: Preferences, to write: ([UInt8]) throws -> Void) throws {
        var piece: [UInt8] = []
        func emit(_ body: (inout [UInt8]) -> Void) throws {
            body(&piece)
            if piece.count >= Self.exportPieceSize {
                try write(piece)
                piece.removeAll(keepingCapacity: true)
            }
        }
        var writer = JSONWriter(pretty: true)
        func scalar(_ key: StaticString, _ value: some Encodable) throws {
            writer.key(key)
            try JSON.makeValue(value).write(to: &writer)
        }
        func array<Element>(_ key: StaticString, _ rows: RowCursor<Element>, _ element: (borrowing StoreRow, inout JSONWriter) -> Void) throws {
            writer.key(key)
            try StoreCursor(rows).writeJSONArray(&writer, element, through: emit)
        }
        try connection.readTransaction {
            // The members in the order JSON.encode sorts them (by their UTF-8 bytes).
            writer.beginObject()
            try array("bookings", exportedBookings, RecordBytes.bookingJSON)
            try scalar("exportedAt", stamp())
            try scalar("format", ExportDocument.formatName)
            try scalar("formatVersion", ExportDocument.currentFormatVersion)
            try array("places", exportedPlaces, RecordBytes.placeJSON)
            try scalar("preferences", Self.exportedPreferences(preferences))
            try array("trips", exportedTrips, RecordBytes.tripJSON)
            writer.endObject()
            writer.bytes.append(0x0a)
            try emit { writer.moveBytes(into: &$0) }
        }
        if !piece.isEmpty { try write(piece) }
    }

    /// How much of an export is gathered before it is handed to the writer.
    static let exportPieceSize = 1 << 16

    private var exportedTrips: RowCursor<Trip> {
        RowCursor(connection: connection, sql: "SELECT \(RecordRows.tripColumns) FROM trips WHERE \(Self.exported) ORDER BY start_date, id",
                  transform: RecordRows.trip(from:))
    }

    private var exportedPlaces: RowCursor<Place> {
        RowCursor(connection: connection, sql: "SELECT \(RecordRows.placeColumns) FROM places WHERE \(Self.exported) ORDER BY rowid",
                  transform: RecordRows.place(from:))
    }

    private var exportedBookings: RowCursor<Booking> {
        RowCursor(connection: connection, sql: "SELECT \(RecordRows.bookingColumns) FROM bookings WHERE \(Self.exported) ORDER BY rowid",
                  transform: RecordRows.booking(from:))
    }

    private static func exportedPreferences(_ preferences: Preferences) -> [String: PreferenceValue] {
        Dictionary(uniqueKeysWithValues: preferences.explicitValues.map { ($0.key.rawValue, $0.value) })
    }

    /// Adds every record of `document` in one transaction: all or nothing. The document is read
    /// again as a stream and each record inserted as it is read, so memory does not grow with its
    /// size. A record that breaks a rule (already refused by `ImportDocument.parse`), an id that
    /// appears twice or that any record in the store already has, a place or booking whose trip
    /// is neither in the document nor in the store, or a live one under a deleted trip refuses
    /// the whole import.
    ///
    /// What this import has inserted is told apart from what was there by rowid: rows inserted
    /// by one transaction get rowids above the largest one before it (the tables have no
    /// AUTOINCREMENT, and SQLite gives a new row the largest rowid + 1), in insertion order.
    public func importRecords(_ document: ImportDocument) throws -> ImportSummary {
        try importRecords(document, indexBatchRows: Self.indexBatchRows)
    }

    /// `importRecords`, the search index filled `indexBatchRows` rows a statement at the end
    /// (tests use a small number, to index in several).
    package func importRecords(_ document: ImportDocument, indexBatchRows: Int64) throws -> ImportSummary {
        try inImportTransaction(indexBatchRows: indexBatchRows) { now, insert in try document.forEachRecord(now: now, insert) }
    }

    /// The import of the document `openSource` reads, in one pass: each record checked as
    /// `ImportDocument.parse` checks it and inserted as it is read, in one transaction that the
    /// document's first problem undoes, reported as `parse` and `importRecords` would report it
    /// (the document's own problems, then `checkPreferences`'s, then the store's refusals). The
    /// document's preferences are handed to `checkPreferences` before the commit, and returned.
    /// A document that repeats a record member (only the last counts) is read twice, as
    /// `parse` and `importRecords` do. Reading the document once saves about a sixth of an import.
    public func importRecords(reading openSource: @escaping () throws -> any ByteSource,
                              checkPreferences: ([String: PreferenceValue]?) throws -> Void) throws
        -> (summary: ImportSummary, preferences: [String: PreferenceValue]?) {
        try importRecords(reading: openSource, indexBatchRows: Self.indexBatchRows, checkPreferences: checkPreferences)
    }

    /// `importRecords(reading:)`, the search index filled `indexBatchRows` rows a statement.
    package func importRecords(reading openSource: @escaping () throws -> any ByteSource, indexBatchRows: Int64,
                               checkPreferences: ([String: PreferenceValue]?) throws -> Void) throws
        -> (summary: ImportSummary, preferences: [String: PreferenceValue]?) {
        var preferences: [String: PreferenceValue]?
        do {
            let summary = try inImportTransaction(indexBatchRows: indexBatchRows) { now, insert in
                let pass = try ImportDocument.readOnce(try openSource(), now: now, insert: insert)
                if pass.repeatedMember { throw RepeatedImportMember() }
                try pass.refuse()
                try checkPreferences(pass.preferences)
                if let error = pass.insertError { throw error }
                preferences = pass.preferences
            }
            return (summary, preferences)
        } catch is RepeatedImportMember {
            let document = try ImportDocument.parse(openSource)
            try checkPreferences(document.preferences)
            return (try importRecords(document, indexBatchRows: indexBatchRows), document.preferences)
        }
    }

    /// Undoes a one-pass import whose document repeats a record member.
    private struct RepeatedImportMember: Error {}

    /// Runs `body` in the import's transaction, handing it the import's stamp and a function that
    /// inserts one record (checked against the store); then refuses orphans. All or nothing.
    private func inImportTransaction(indexBatchRows: Int64,
                                     _ body: (_ now: String, _ insert: (ImportDocument.Record) throws -> Void) throws -> Void) throws
        -> ImportSummary {
        let now = stamp()
        var summary = ImportSummary(trips: 0, places: 0, bookings: 0)
        // A page cache of a known size for the transaction: memory stays flat.
        try connection.withPageCache(kibibytes: Self.importPageCacheKibibytes) {
            do {
                try connection.writeTransaction {
                    summary = ImportSummary(trips: 0, places: 0, bookings: 0)
                    // A child may come before its trip in the document: the foreign keys are
                    // checked at the end (`refuseOrphans`), not row by row.
                    try connection.execute("PRAGMA defer_foreign_keys = ON")
                    var base: [RecordKind: Int64] = [:]
                    for kind in [RecordKind.trip, .place, .booking] {
                        base[kind] = try connection.integer("SELECT coalesce(max(rowid), 0) FROM \(kind.table)")
                    }
                    // The search index is filled once, at the end (`indexingInsertsOnce`).
                    try indexingInsertsOnce(batchRows: indexBatchRows) { try body(now) { record in
                        do { switch record {
                        case .trip(let trip, let index):
                            try refuseTakenID(trip.id.text, .trip, index, base)
                            try ImportDocument.naming("trips[\(index)]") { try insert(validated: trip, idIsUnused: true) }
                            summary.trips += 1
                        case .place(let place, let index):
                            try refuseTakenID(place.id.text, .place, index, base)
                            try refuseDeletedStoreTrip(place.tripId.text, .place, place.id.text, base)
                            try ImportDocument.naming("places[\(index)]") { try insert(validated: place, idIsUnused: true) }
                            summary.places += 1
                        case .booking(let booking, let index):
                            try refuseTakenID(booking.id.text, .booking, index, base)
                            try refuseDeletedStoreTrip(booking.tripId.text, .booking, booking.id.text, base)
                            try ImportDocument.naming("bookings[\(index)]") { try insert(validated: booking, idIsUnused: true) }
                            summary.bookings += 1
                        } } catch SQLiteError.Code.constraint {
                            // A refusal like the checks' (the statement undid itself): the
                            // document's own problems are still reported first (`readOnce`).
                            throw StoreError.invalidData("the import breaks a rule of the store; nothing was imported")
                        }
                    } }
                    try refuseOrphans(base)
                }
            } catch SQLiteError.Code.constraint {
                throw StoreError.invalidData("the import breaks a rule of the store; nothing was imported")
            }
        }
        return summary
    }

    /// The page cache of an import's transaction, whatever the connection had: 12 MiB. Its peak
    /// memory is this process's floor plus the cache once the store outgrows it, flat from there.
    /// In a sealed store a page the cache lets go is sealed into the WAL and opened again when the
    /// random-order id index needs it back: importing 100,000 trips and 20,000 bookings took 1.16×
    /// the time of the build before sealing with 8 MiB, 1.01× with 12 MiB (peak RSS 23.5 MB),
    /// 0.96× with 16 MiB (28.5 MB); SQLite's own 2 MiB took twice as long (docs/performance.md).
    static let importPageCacheKibibytes = 12 << 10

    /// Refuses an id any record already has: inserted earlier by this import (then both places
    /// are named) or in the store before it. Ids are unique across kinds.
    private func refuseTakenID(_ id: String, _ kind: RecordKind, _ index: Int, _ base: [RecordKind: Int64]) throws {
        guard let holder = try kindHolding(id: id) else { return }
        let rowid = try connection.integer("SELECT rowid FROM \(holder.table) WHERE id = ?", [.text(id)])
        guard let floor = base[holder], rowid > floor else {
            return try ImportDocument.naming("\(kind.table)[\(index)]") { try requireUnusedID(id, for: kind) }
        }
        let first = try connection.integer("SELECT count(*) FROM \(holder.table) WHERE rowid > ? AND rowid < ?",
                                           [.integer(floor), .integer(rowid)])
        let positions = "\(holder.table)[\(first)] and \(kind.table)[\(index)]"
        throw StoreError.invalidData(holder == kind
            ? "the \(kind.rawValue) id \(id) appears twice in the import (\(positions)); nothing was imported"
            : "the id \(id) appears twice in the import (\(positions)); ids are unique across trips, places, bookings and attachments; nothing was imported")
    }

    /// A place or booking may not join a trip of the store that is deleted (a tombstone waiting
    /// for sync, or in the trash): the foreign key would accept it, and the server's
    /// acknowledgement (or the trash's purge) would then silently drop it.
    private func refuseDeletedStoreTrip(_ tripId: String, _ kind: RecordKind, _ id: String, _ base: [RecordKind: Int64]) throws {
        let deleted = try connection.integer("""
            SELECT count(*) FROM trips WHERE id = ? AND rowid <= ? AND (sync_state = 'pendingDeletion' OR trashed_at IS NOT NULL)
            """, [.text(tripId), .integer(base[.trip] ?? 0)])
        if deleted > 0 {
            throw StoreError.invalidData("\(kind.rawValue) \(id) belongs to trip \(tripId), which is deleted; nothing was imported")
        }
    }

    /// After every record is in: a place or booking whose trip is nowhere, or a live one whose
    /// trip came later in the document as a tombstone (one that came earlier was refused on
    /// insert), refuses the import, naming the first such record.
    private func refuseOrphans(_ base: [RecordKind: Int64]) throws {
        for kind in [RecordKind.place, .booking] {
            let floor = base[kind] ?? 0
            let orphan = try connection.statement("""
                SELECT c.rowid, c.trip_id FROM \(kind.table) c WHERE c.rowid > ?1
                AND NOT EXISTS (SELECT 1 FROM trips t WHERE t.id = c.trip_id) ORDER BY c.rowid LIMIT 1
                """).rows([.integer(floor)]) { ($0.integer(0), $0.text(1)) }.first
            if let (rowid, tripId) = orphan {
                throw StoreError.invalidData("""
                    \(kind.table)[\(rowid - floor - 1)] belongs to trip \(tripId), which is neither in the import nor in the store; \
                    nothing was imported
                    """)
            }
            let underTombstone = try connection.statement("""
                SELECT c.rowid, c.id, c.trip_id, c.sync_state FROM \(kind.table) c JOIN trips t ON t.id = c.trip_id
                WHERE c.rowid > ?1 AND t.rowid > ?2 AND c.sync_state <> 'pendingDeletion' AND t.sync_state = 'pendingDeletion'
                ORDER BY c.rowid LIMIT 1
                """).rows([.integer(floor), .integer(base[.trip] ?? 0)]) { ($0.integer(0), $0.text(1), $0.text(2), $0.text(3)) }.first
            if let (rowid, id, tripId, state) = underTombstone {
                try ImportDocument.naming("\(kind.table)[\(rowid - floor - 1)]") {
                    try requireLiveTrip(RecordID(tripId), forLive: kind, id: id, state: SyncState(rawValue: state) ?? .pendingUpload)
                }
            }
        }
    }
}
