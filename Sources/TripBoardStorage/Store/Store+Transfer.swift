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

/// A document to import: records may leave out their sync metadata (then they are new,
/// pendingUpload) and their ids (then they get new ones).
public struct ImportDocument: Sendable, Decodable {
    public struct TripRecord: Sendable, Decodable {
        var id: String?
        var name: String
        var startDate: CivilDate
        var endDate: CivilDate
        var notes: String?
        var syncState: SyncState?
        var remoteVersion: Int64?
        var updatedAt: String?
    }

    public struct PlaceRecord: Sendable, Decodable {
        var id: String?
        var tripId: String
        var name: String
        var city: String?
        var visited: Bool?
        var syncState: SyncState?
        var remoteVersion: Int64?
        var updatedAt: String?
    }

    public struct BookingRecord: Sendable, Decodable {
        var id: String?
        var tripId: String
        var kind: BookingKind
        var title: String
        var startsAt: String?
        var reference: String?
        var syncState: SyncState?
        var remoteVersion: Int64?
        var updatedAt: String?
    }

    var format: String?
    var formatVersion: Int?
    var trips: [TripRecord]?
    var places: [PlaceRecord]?
    var bookings: [BookingRecord]?
    public var preferences: [String: PreferenceValue]?

    /// Parses and checks the shape; refuses other formats and newer versions.
    public static func parse(_ bytes: [UInt8]) throws -> ImportDocument {
        let document: ImportDocument
        do {
            document = try JSON.decode(ImportDocument.self, from: bytes)
        } catch let error as JSONSyntaxError {
            throw StoreError.invalidData("the import is not valid JSON (\(error)); nothing was imported")
        } catch let error as DecodingError {
            throw StoreError.invalidData("the import is not a valid TripBoard export: \(describe(error)); nothing was imported")
        }
        if let format = document.format, format != ExportDocument.formatName {
            throw StoreError.invalidData("the import's format is '\(format.prefix(40))', not \(ExportDocument.formatName); nothing was imported")
        }
        if let version = document.formatVersion, version > ExportDocument.currentFormatVersion {
            throw StoreError.invalidData("the import has format version \(version), newer than this build reads (\(ExportDocument.currentFormatVersion)); nothing was imported")
        }
        return document
    }

    /// Total records in the document.
    public var recordCount: Int { (trips?.count ?? 0) + (places?.count ?? 0) + (bookings?.count ?? 0) }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let components = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return components.isEmpty ? "" : " at \(components.hasPrefix(".") ? String(components.dropFirst()) : components)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)'\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong type\(path(context))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "bad value\(path(context)): \(context.debugDescription.prefix(80))"
        @unknown default: return "unreadable"
        }
    }
}

/// What an import added.
public struct ImportSummary: Sendable, Equatable, Codable {
    public var trips: Int
    public var places: Int
    public var bookings: Int
}

extension Store {
    /// Every record, tombstones included (they are sync state the server still needs).
    public func exportDocument(preferences: Preferences) throws -> ExportDocument {
        try connection.readTransaction {
            ExportDocument(
                format: ExportDocument.formatName, formatVersion: ExportDocument.currentFormatVersion,
                exportedAt: stamp(),
                trips: try connection.statement("SELECT \(Self.tripColumns) FROM trips ORDER BY start_date, id").rows(Self.trip(from:)),
                places: try connection.statement("SELECT \(Self.placeColumns) FROM places ORDER BY rowid").rows(Self.place(from:)),
                bookings: try connection.statement("SELECT \(Self.bookingColumns) FROM bookings ORDER BY rowid").rows(Self.booking(from:)),
                preferences: Dictionary(uniqueKeysWithValues: preferences.explicitValues.map { ($0.key.rawValue, $0.value) })
            )
        }
    }

    /// Adds every record of `document` in one transaction: all or nothing. An id that already
    /// exists, a place or booking whose trip is neither in the document nor in the store, or an
    /// invalid field refuses the whole import.
    public func importRecords(_ document: ImportDocument) throws -> ImportSummary {
        let now = stamp()
        func metadata(_ state: SyncState?, _ version: Int64?, _ updatedAt: String?, _ what: String) throws -> (SyncState, Int64?, String) {
            var stamp = now
            if let updatedAt {
                guard let parsed = Timestamp(iso8601: updatedAt) else {
                    throw StoreError.invalidData("\(what): updatedAt '\(updatedAt.prefix(40))' is not an ISO 8601 time; nothing was imported")
                }
                stamp = parsed.utcStamp
            }
            if let version, version < 1 {
                throw StoreError.invalidData("\(what): remoteVersion must be positive; nothing was imported")
            }
            let state = state ?? .pendingUpload
            if version == nil && (state == .synchronized || state == .pendingDeletion) {
                throw StoreError.invalidData("\(what): a \(state.rawValue) record needs its remoteVersion; nothing was imported")
            }
            return (state, version, stamp)
        }
        func identifier(_ id: String?, _ what: String) throws -> String {
            guard let id else { return Identifier.make() }
            guard Identifier.isValid(id) else { throw StoreError.invalidArgument("'\(id.prefix(40))' is not a UUID") }
            return id.lowercased()
        }
        func checked<T>(_ what: String, _ body: () throws -> T) throws -> T {
            do { return try body() } catch let error as StoreError {
                switch error {
                case .invalidArgument(let message), .invalidData(let message):
                    throw StoreError.invalidData("\(what): \(message); nothing was imported")
                default: throw error
                }
            }
        }

        let trips = try (document.trips ?? []).enumerated().map { index, record in
            let what = "trips[\(index)]"
            let (state, version, updatedAt) = try metadata(record.syncState, record.remoteVersion, record.updatedAt, what)
            return try checked(what) {
                try Validation.dateRange(start: record.startDate, end: record.endDate)
                return Trip(id: try identifier(record.id, what), name: try Validation.singleLine(record.name, field: "name"),
                            startDate: record.startDate, endDate: record.endDate, notes: try Validation.notes(record.notes ?? ""),
                            syncState: state, remoteVersion: version, updatedAt: updatedAt)
            }
        }
        let places = try (document.places ?? []).enumerated().map { index, record in
            let what = "places[\(index)]"
            let (state, version, updatedAt) = try metadata(record.syncState, record.remoteVersion, record.updatedAt, what)
            return try checked(what) {
                Place(id: try identifier(record.id, what), tripId: try identifier(record.tripId, what),
                      name: try Validation.singleLine(record.name, field: "name"),
                      city: try Validation.optionalSingleLine(record.city, field: "city"), visited: record.visited ?? false,
                      syncState: state, remoteVersion: version, updatedAt: updatedAt)
            }
        }
        let bookings = try (document.bookings ?? []).enumerated().map { index, record in
            let what = "bookings[\(index)]"
            let (state, version, updatedAt) = try metadata(record.syncState, record.remoteVersion, record.updatedAt, what)
            var startsAt: String?
            if let text = record.startsAt {
                guard let parsed = Timestamp(iso8601: text) else {
                    throw StoreError.invalidData("\(what): startsAt '\(text.prefix(40))' is not an ISO 8601 time; nothing was imported")
                }
                startsAt = parsed.iso8601()
            }
            return try checked(what) {
                Booking(id: try identifier(record.id, what), tripId: try identifier(record.tripId, what), kind: record.kind,
                        title: try Validation.singleLine(record.title, field: "title"), startsAt: startsAt,
                        reference: try Validation.optionalSingleLine(record.reference, field: "reference", maxLength: 100),
                        syncState: state, remoteVersion: version, updatedAt: updatedAt)
            }
        }

        // A large import: a 64 MiB page cache for its transaction.
        try connection.withPageCache(kibibytes: 64 << 10) {
            do {
                try connection.writeTransaction {
                    try refuseChildrenOfDeletedTrips(places: places, bookings: bookings, importedTrips: Set(trips.map(\.id)))
                    for trip in trips { try insert(trip) }
                    for place in places { try insert(place) }
                    for booking in bookings { try insert(booking) }
                }
            } catch let error as SQLiteError where error.primaryCode == SQLiteError.constraint {
                // Rolled back by now, so the store is as it was: find the record to name.
                throw StoreError.invalidData(try explainConstraintFailure(trips: trips, places: places, bookings: bookings))
            }
        }
        return ImportSummary(trips: trips.count, places: places.count, bookings: bookings.count)
    }

    /// A place or booking may not join a trip that is deleted (a tombstone waiting for sync): the
    /// foreign key would accept it, and the server's acknowledgement would then silently drop it.
    private func refuseChildrenOfDeletedTrips(places: [Place], bookings: [Booking], importedTrips: Set<String>) throws {
        let children = places.map { ("place", $0.id, $0.tripId) } + bookings.map { ("booking", $0.id, $0.tripId) }
        var checked: [String: Bool] = [:]
        for (kind, id, tripId) in children where !importedTrips.contains(tripId) {
            let deleted = try checked[tripId] ?? (connection.integer(
                "SELECT count(*) FROM trips WHERE id = ? AND sync_state = 'pendingDeletion'", [.text(tripId)]) > 0)
            checked[tripId] = deleted
            if deleted {
                throw StoreError.invalidData("\(kind) \(id) belongs to trip \(tripId), which is deleted; nothing was imported")
            }
        }
    }

    /// After a constraint failure and its rollback, finds which record broke which rule, for a
    /// message that names it.
    private func explainConstraintFailure(trips: [Trip], places: [Place], bookings: [Booking]) throws -> String {
        let suffix = "; nothing was imported"
        for (table, ids) in [("trip", trips.map(\.id)), ("place", places.map(\.id)), ("booking", bookings.map(\.id))] {
            var seen = Set<String>()
            for id in ids where !seen.insert(id).inserted {
                return "the \(table) id \(id) appears twice in the import" + suffix
            }
        }
        let tripIds = Set(trips.map(\.id))
        let children = places.enumerated().map { ("places[\($0.offset)]", $0.element.tripId) }
            + bookings.enumerated().map { ("bookings[\($0.offset)]", $0.element.tripId) }
        for (what, tripId) in children where !tripIds.contains(tripId) {
            if try connection.integer("SELECT count(*) FROM trips WHERE id = ?", [.text(tripId)]) == 0 {
                return "\(what) belongs to trip \(tripId), which is neither in the import nor in the store" + suffix
            }
        }
        for kind in RecordKind.allCases {
            let ids: [String] = switch kind {
            case .trip: trips.map(\.id)
            case .place: places.map(\.id)
            case .booking: bookings.map(\.id)
            case .attachment: []
            }
            for id in ids where try connection.integer("SELECT count(*) FROM \(kind.table) WHERE id = ?", [.text(id)]) > 0 {
                return "\(kind.rawValue) \(id) already exists in the store" + suffix
            }
        }
        return "the import breaks a rule of the store" + suffix
    }
}
