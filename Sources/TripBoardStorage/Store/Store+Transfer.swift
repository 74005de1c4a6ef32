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
    /// newline, piece by piece to `write` as the records are read (one snapshot): memory stays
    /// flat whatever the number of records.
    public func writeExport(preferences: Preferences, to write: ([UInt8]) throws -> Void) throws {
        func member(_ key: String, first: Bool = false) throws {
            var bytes = Array((first ? "{\n  " : ",\n  ").utf8)
            JSONValue.writeString(key, into: &bytes)
            try write(bytes + Array(" : ".utf8))
        }
        func scalar(_ key: String, _ value: some Encodable) throws {
            try member(key)
            try write(try JSON.makeValue(value).serialized(indentLevel: 1))
        }
        func array<Element: Encodable>(_ key: String, _ rows: RowCursor<Element>, first: Bool = false) throws {
            try member(key, first: first)
            var array = JSONArrayWriter(indentLevel: 1)
            try rows.forEach { try write(try array.element($0)) }
            try write(array.end())
        }
        try connection.readTransaction {
            // The members in the order JSON.encode sorts them (by their UTF-8 bytes).
            try array("bookings", exportedBookings, first: true)
            try scalar("exportedAt", stamp())
            try scalar("format", ExportDocument.formatName)
            try scalar("formatVersion", ExportDocument.currentFormatVersion)
            try array("places", exportedPlaces)
            try scalar("preferences", Self.exportedPreferences(preferences))
            try array("trips", exportedTrips)
            try write(Array("\n}\n".utf8))
        }
    }

    private var exportedTrips: RowCursor<Trip> {
        RowCursor(connection: connection, sql: "SELECT \(Self.tripColumns) FROM trips WHERE \(Self.exported) ORDER BY start_date, id",
                  transform: Self.trip(from:))
    }

    private var exportedPlaces: RowCursor<Place> {
        RowCursor(connection: connection, sql: "SELECT \(Self.placeColumns) FROM places WHERE \(Self.exported) ORDER BY rowid",
                  transform: Self.place(from:))
    }

    private var exportedBookings: RowCursor<Booking> {
        RowCursor(connection: connection, sql: "SELECT \(Self.bookingColumns) FROM bookings WHERE \(Self.exported) ORDER BY rowid",
                  transform: Self.booking(from:))
    }

    private static func exportedPreferences(_ preferences: Preferences) -> [String: PreferenceValue] {
        Dictionary(uniqueKeysWithValues: preferences.explicitValues.map { ($0.key.rawValue, $0.value) })
    }

    /// Adds every record of `document` in one transaction: all or nothing. A record that breaks
    /// a rule (`validated()`), an id that appears twice or that any record in the store already
    /// has, a place or booking whose trip is neither in the document nor in the store, or a live
    /// one under a deleted trip refuses the whole import.
    public func importRecords(_ document: ImportDocument) throws -> ImportSummary {
        let (trips, places, bookings) = try document.records(now: stamp())
        try Self.refuseRepeatedIDs([trips.map(\.id), places.map(\.id), bookings.map(\.id)])
        // A large import: a 64 MiB page cache for its transaction.
        try connection.withPageCache(kibibytes: 64 << 10) {
            do {
                try connection.writeTransaction {
                    try refuseChildrenOfDeletedTrips(places: places, bookings: bookings, importedTrips: Set(trips.map(\.id)))
                    // Validated by records(now:) already; the store's own checks run in the inserts.
                    // Into an empty store no id can be taken (the document's own repeats are refused
                    // above): the four probes per record, 7% of a 100,000-trip import, are skipped.
                    let unused = try isEmpty()
                    for (index, trip) in trips.enumerated() {
                        try ImportDocument.naming("trips[\(index)]") { try insert(validated: trip, idIsUnused: unused) }
                    }
                    for (index, place) in places.enumerated() {
                        try ImportDocument.naming("places[\(index)]") { try insert(validated: place, idIsUnused: unused) }
                    }
                    for (index, booking) in bookings.enumerated() {
                        try ImportDocument.naming("bookings[\(index)]") { try insert(validated: booking, idIsUnused: unused) }
                    }
                }
            } catch let error as SQLiteError where error.primaryCode == SQLiteError.constraint {
                // Rolled back by now, so the store is as it was: find the record to name.
                throw StoreError.invalidData(try explainConstraintFailure(trips: trips, places: places, bookings: bookings))
            }
        }
        return ImportSummary(trips: trips.count, places: places.count, bookings: bookings.count)
    }

    /// Refuses an id that appears twice in the document, in records of one kind or of two (ids
    /// are unique across kinds). `ids` holds the trips', places' and bookings' ids, in that order.
    private static func refuseRepeatedIDs(_ ids: [[String]]) throws {
        var register = IDRegister()
        for (kind, kindIDs) in zip([RecordKind.trip, .place, .booking], ids) {
            for (index, id) in kindIDs.enumerated() { register.add(id, kind, index: index) }
        }
        guard let repeated = register.firstRepeat() else { return }
        let (first, second) = (repeated.first, repeated.second)
        let positions = "\(first.kind.table)[\(first.index)] and \(second.kind.table)[\(second.index)]"
        throw StoreError.invalidData(first.kind == second.kind
            ? "the \(first.kind.rawValue) id \(repeated.id) appears twice in the import (\(positions)); nothing was imported"
            : "the id \(repeated.id) appears twice in the import (\(positions)); ids are unique across trips, places, bookings and attachments; nothing was imported")
    }

    /// A place or booking may not join a trip that is deleted (a tombstone waiting for sync, or in
    /// the trash): the foreign key would accept it, and the server's acknowledgement (or the
    /// trash's purge) would then silently drop it.
    private func refuseChildrenOfDeletedTrips(places: [Place], bookings: [Booking], importedTrips: Set<String>) throws {
        let children = places.map { ("place", $0.id, $0.tripId) } + bookings.map { ("booking", $0.id, $0.tripId) }
        var checked: [String: Bool] = [:]
        for (kind, id, tripId) in children where !importedTrips.contains(tripId) {
            let deleted = try checked[tripId] ?? (connection.integer(
                "SELECT count(*) FROM trips WHERE id = ? AND (sync_state = 'pendingDeletion' OR trashed_at IS NOT NULL)", [.text(tripId)]) > 0)
            checked[tripId] = deleted
            if deleted {
                throw StoreError.invalidData("\(kind) \(id) belongs to trip \(tripId), which is deleted; nothing was imported")
            }
        }
    }

    /// After a foreign-key failure and its rollback, finds the place or booking whose trip does
    /// not exist, for a message that names it.
    private func explainConstraintFailure(trips: [Trip], places: [Place], bookings: [Booking]) throws -> String {
        let suffix = "; nothing was imported"
        let tripIds = Set(trips.map(\.id))
        let children = places.enumerated().map { ("places[\($0.offset)]", $0.element.tripId) }
            + bookings.enumerated().map { ("bookings[\($0.offset)]", $0.element.tripId) }
        for (what, tripId) in children where !tripIds.contains(tripId) {
            if try connection.integer("SELECT count(*) FROM trips WHERE id = ?", [.text(tripId)]) == 0 {
                return "\(what) belongs to trip \(tripId), which is neither in the import nor in the store" + suffix
            }
        }
        return "the import breaks a rule of the store" + suffix
    }
}
