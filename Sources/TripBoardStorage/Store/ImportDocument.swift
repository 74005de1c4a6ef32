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
        /// Any case, as `booking add --kind` takes it (`FieldRules.bookingKind`).
        var kind: String
        var title: String
        var startsAt: String?
        var endsAt: String?
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


extension ImportDocument {
    /// The document's records as the store would keep them, each checked with `validated()`:
    /// what a record leaves out gets its default (a new id, `pendingUpload`, `updatedAt` = `now`).
    /// A broken rule throws `.invalidData` naming the record and the field (`trips[3].updatedAt
    /// …`), ending in "nothing was imported".
    func records(now: String) throws -> (trips: [Trip], places: [Place], bookings: [Booking]) {
        let trips = try (trips ?? []).enumerated().map { index, record in
            try Self.naming("trips[\(index)]") {
                try Trip(id: record.id ?? Identifier.make(), name: record.name, startDate: record.startDate, endDate: record.endDate,
                         notes: record.notes ?? "", syncState: record.syncState ?? .pendingUpload,
                         remoteVersion: record.remoteVersion, updatedAt: record.updatedAt ?? now).validated()
            }
        }
        let places = try (places ?? []).enumerated().map { index, record in
            try Self.naming("places[\(index)]") {
                try Place(id: record.id ?? Identifier.make(), tripId: record.tripId, name: record.name, city: record.city,
                          visited: record.visited ?? false, syncState: record.syncState ?? .pendingUpload,
                          remoteVersion: record.remoteVersion, updatedAt: record.updatedAt ?? now).validated()
            }
        }
        let bookings = try (bookings ?? []).enumerated().map { index, record in
            try Self.naming("bookings[\(index)]") {
                try Booking(id: record.id ?? Identifier.make(), tripId: record.tripId, kind: FieldRules.bookingKind(record.kind),
                            title: record.title, startsAt: record.startsAt, reference: record.reference,
                            syncState: record.syncState ?? .pendingUpload, remoteVersion: record.remoteVersion,
                            updatedAt: record.updatedAt ?? now, endsAt: record.endsAt).validated()
            }
        }
        return (trips, places, bookings)
    }

    /// Runs `body`, turning a rule it breaks into one line that names the record at `path`:
    /// `trips[3].updatedAt falls in the year 10000 …; nothing was imported`.
    static func naming<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch StoreError.invalidField(let field, let rule) {
            throw StoreError.invalidData("\(path).\(field) \(rule); nothing was imported")
        } catch StoreError.invalidData(let message), StoreError.invalidArgument(let message) {
            throw StoreError.invalidData("\(path): \(message); nothing was imported")
        }
    }
}
