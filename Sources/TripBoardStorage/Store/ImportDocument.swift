public import TripBoardSystem
import TripBoardModel

/// A document to import: records may leave out their sync metadata (then they are new,
/// pendingUpload) and their ids (then they get new ones) — what each column may leave out is its
/// declaration's (`ColumnSpec.whenMissing`, read by `ImportValues`).
public struct ImportDocument {
    /// Opens the document's bytes from the start: read once to check it (`parse`), once more
    /// to insert its records (`Store.importRecords`), never held whole.
    let openSource: () throws -> any ByteSource
    /// The preferences the document sets, checked by the caller before anything is written.
    public let preferences: [String: PreferenceValue]?
    /// Total records in the document.
    public let recordCount: Int
    /// How many times each top-level key appears: as for any JSON object read here, the last
    /// one counts, so an import reads only the last `trips` (and so on).
    let occurrences: [String: Int]

    static let recordKeys: Set<String> = ["trips", "places", "bookings"]

    /// Parses and checks the document in `bytes` (tests, small documents).
    public static func parse(_ bytes: [UInt8]) throws -> ImportDocument {
        try parse { MemorySource(bytes) }
    }

    /// Reads the whole document once, as a stream, and checks it: its syntax, the shape of every
    /// record, the format and version, and every record's rules (`validated()`), reporting the
    /// first problem in the order a whole-document decode would (shape, then format and
    /// version, then rules, trips before places before bookings). Nothing is kept but the
    /// preferences and the counts; `openSource` is called again to import.
    public static func parse(_ openSource: @escaping () throws -> any ByteSource) throws -> ImportDocument {
        var reader = JSONStreamReader(source: try openSource())
        var state = ParseState()
        do {
            try reader.walk(begin: { key in
                state.begin(key)
                return recordKeys.contains(key) ? .elements : .whole
            }, value: { key, value in
                try state.member(key, value)
            }, element: { key, index, value in
                state.record(key, index, value)
            }, notAnObject: { _ in
                state.shapeErrors[""] = .typeMismatch([String: Any].self, .init(codingPath: [], debugDescription: "expected an object"))
            })
        } catch let error as JSONSyntaxError {
            throw StoreError.invalidData("the import is not valid JSON (\(error)); nothing was imported")
        }
        try state.refuse()
        return ImportDocument(openSource: openSource, preferences: state.preferences,
                              recordCount: state.counts.values.reduce(0, +), occurrences: state.occurrences)
    }

    /// What `parse` has seen so far: per top-level member its count and first problem of each
    /// kind, and the values it keeps.
    fileprivate struct ParseState {
        var occurrences: [String: Int] = [:]
        var shapeErrors: [String: DecodingError] = [:]
        var ruleErrors: [String: StoreError] = [:]
        var counts: [String: Int] = [:]
        var format: String?
        var formatVersion: Int?
        var preferences: [String: PreferenceValue]?

        func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
            try T(from: ValueDecoder(value: value, codingPath: path))
        }

        /// A repeated key starts over: only its last value counts.
        mutating func begin(_ key: String) {
            occurrences[key, default: 0] += 1
            counts[key] = 0
            shapeErrors[key] = nil
            ruleErrors[key] = nil
        }

        mutating func member(_ key: String, _ value: JSONValue) throws {
            let path: [any CodingKey] = [MemberKey(key)]
            do {
                switch key {
                case "format": format = value == .null ? nil : try decode(String.self, value, path)
                case "formatVersion": formatVersion = value == .null ? nil : try decode(Int.self, value, path)
                case "preferences": preferences = value == .null ? nil : try decode([String: PreferenceValue].self, value, path)
                case _ where recordKeys.contains(key):
                    // Not an array: null is an empty list; anything else is the wrong shape.
                    guard value != .null else { return }
                    throw DecodingError.typeMismatch([Any].self, .init(codingPath: path, debugDescription: "expected an array"))
                default: break
                }
            } catch let error as DecodingError {
                shapeErrors[key] = error
            }
        }

        /// Checks the record `value` at `key[index]`, noting its first problem; returns it as the
        /// store keeps it (a missing id `newID()`, the placeholder by default; a missing `updatedAt` `now`)
        /// when it has none.
        @discardableResult
        mutating func record(_ key: String, _ index: Int, _ value: JSONValue, newID: @escaping () -> String = { placeholderID },
                             now: String = placeholderStamp) -> Record? {
            counts[key, default: 0] += 1
            guard shapeErrors[key] == nil else { return nil }
            do {
                let path: [any CodingKey] = [MemberKey(key), IndexKey(index)]
                switch key {
                case "trips": return .trip(try ImportDocument.record(TripColumn.self, value, path, index: index, newID: newID, now: now), index: index)
                case "places": return .place(try ImportDocument.record(PlaceColumn.self, value, path, index: index, newID: newID, now: now), index: index)
                default: return .booking(try ImportDocument.record(BookingColumn.self, value, path, index: index, newID: newID, now: now), index: index)
                }
            } catch let error as DecodingError {
                shapeErrors[key] = error
            } catch let error as StoreError {
                if ruleErrors[key] == nil { ruleErrors[key] = error }
            } catch {
                if ruleErrors[key] == nil { ruleErrors[key] = .invalidData("\(key)[\(index)]: \(error); nothing was imported") }
            }
            return nil
        }

        /// No problem found so far.
        var isClean: Bool { shapeErrors.isEmpty && ruleErrors.isEmpty }

        func refuse() throws {
            try ImportDocument.refuse(shapeErrors: shapeErrors, ruleErrors: ruleErrors, format: format, formatVersion: formatVersion)
        }
    }

    /// What `readOnce` found, once the whole document is read.
    struct OnePass {
        fileprivate let state: ParseState
        /// A record member (`trips`, …) appeared twice: only the last counts, and the records of
        /// the earlier one may have been handed over. The caller undoes them and imports in two
        /// passes (`parse`, then `forEachRecord`).
        let repeatedMember: Bool
        /// The first error `insert` threw: the store refused a record whose own rules hold (its id
        /// taken, its trip deleted). `parse`'s problems come before it (`refuse`).
        let insertError: StoreError?
        var preferences: [String: PreferenceValue]? { state.preferences }

        /// The document's first problem, as `parse` reports it.
        func refuse() throws { try state.refuse() }
    }

    /// Reads the document in `source` once, checking it as `parse` does and handing each record to
    /// `insert` (as `forEachRecord` would) while nothing is wrong: from the first problem on —
    /// the document's or a refusal `insert` throws as a `StoreError` — the records are only
    /// checked, so that the problem reported is the one `parse` would report first. Any other
    /// error `insert` throws ends the reading. The caller's transaction undoes what was inserted
    /// when the result holds a problem.
    static func readOnce(_ source: any ByteSource, now: String, insert: (Record) throws -> Void) throws -> OnePass {
        var reader = JSONStreamReader(source: source)
        var state = ParseState()
        var repeated = false
        var insertError: StoreError?
        do {
            try reader.walk(begin: { key in
                state.begin(key)
                guard recordKeys.contains(key) else { return .whole }
                if state.occurrences[key, default: 0] > 1 { repeated = true }
                return .elements
            }, value: { key, value in
                try state.member(key, value)
            }, element: { key, index, value in
                guard let record = state.record(key, index, value, newID: Identifier.make, now: now),
                      !repeated, insertError == nil, state.isClean else { return }
                do {
                    try insert(record)
                } catch let error as StoreError {
                    insertError = error
                }
            }, notAnObject: { _ in
                state.shapeErrors[""] = .typeMismatch([String: Any].self, .init(codingPath: [], debugDescription: "expected an object"))
            })
        } catch let error as JSONSyntaxError {
            throw StoreError.invalidData("the import is not valid JSON (\(error)); nothing was imported")
        }
        return OnePass(state: state, repeatedMember: repeated, insertError: insertError)
    }

    /// The first problem `parse` found, in the order a whole-document decode would report it:
    /// the shape (by member), then the format and its version, then the records' rules.
    fileprivate static func refuse(shapeErrors: [String: DecodingError], ruleErrors: [String: StoreError], format: String?,
                               formatVersion: Int?) throws {
        for key in ["", "format", "formatVersion", "trips", "places", "bookings", "preferences"] {
            if let error = shapeErrors[key] {
                throw StoreError.invalidData("the import is not a valid TripBoard export: \(describe(error)); nothing was imported")
            }
        }
        if let format, format != ExportDocument.formatName {
            throw StoreError.invalidData("the import's format is '\(format.prefix(40))', not \(ExportDocument.formatName); nothing was imported")
        }
        if let version = formatVersion, version > ExportDocument.currentFormatVersion {
            throw StoreError.invalidData("the import has format version \(version), newer than this build reads (\(ExportDocument.currentFormatVersion)); nothing was imported")
        }
        for key in ["trips", "places", "bookings"] {
            if let error = ruleErrors[key] { throw error }
        }
    }

    /// One record of the document as the store keeps it, `index` its place in its array.
    enum Record {
        case trip(Trip, index: Int)
        case place(Place, index: Int)
        case booking(Booking, index: Int)
    }

    /// Reads the document again and hands over its records one at a time, in document order,
    /// each as the store keeps it (defaults filled in, `now` for a missing `updatedAt`).
    func forEachRecord(now: String, _ body: (Record) throws -> Void) throws {
        var reader = JSONStreamReader(source: try openSource())
        var seen: [String: Int] = [:]
        do {
            try reader.walk(begin: { key in
                seen[key, default: 0] += 1
                return Self.recordKeys.contains(key) ? .elements : .whole
            }, value: { _, _ in }, element: { key, index, value in
                guard seen[key] == occurrences[key] else { return }
                let path: [any CodingKey] = [MemberKey(key), IndexKey(index)]
                switch key {
                case "trips": try body(.trip(try Self.record(TripColumn.self, value, path, index: index, newID: Identifier.make, now: now), index: index))
                case "places": try body(.place(try Self.record(PlaceColumn.self, value, path, index: index, newID: Identifier.make, now: now), index: index))
                default: try body(.booking(try Self.record(BookingColumn.self, value, path, index: index, newID: Identifier.make, now: now), index: index))
                }
            }, notAnObject: { _ in })
        } catch let error as JSONSyntaxError {
            // The file changed between the two readings.
            throw StoreError.invalidData("the import is not valid JSON (\(error)); nothing was imported")
        } catch let error as DecodingError {
            throw StoreError.invalidData("the import is not a valid TripBoard export: \(Self.describe(error)); nothing was imported")
        }
    }

    /// What `parse` validates records with when the document leaves out an id or `updatedAt`.
    static let placeholderID = "00000000-0000-4000-8000-000000000001"
    static let placeholderStamp = "2000-01-01T00:00:00.000Z"

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
    /// The record `value` holds, at `path` (`trips[3]`), as the store keeps it: its shape checked
    /// first (`ImportValues`), then what it leaves out filled in — a missing id becomes `newID()`,
    /// a missing `updatedAt` `now` — then its rules (`validated()`). A
    /// broken rule names `trips[3].field`.
    static func record<Column: RecordColumn>(_ columns: Column.Type, _ value: JSONValue, _ path: [any CodingKey], index: Int,
                                             newID: @escaping () -> String, now: String) throws -> Column.Record {
        let values = try ImportValues<Column>(value, path: path, newID: newID, now: now)
        return try naming("\(path[0].stringValue)[\(index)]") { try Column.validated(values: try Column.storedValues(from: values)) }
    }

    /// Runs `body`, turning a rule it breaks into one line that names the record at `path`:
    /// `trips[3].updatedAt falls in the year 10000 …; nothing was imported`.
    /// `path` is made only for a message: an import names every record it inserts.
    static func naming<T>(_ path: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch StoreError.invalidField(let field, let rule) {
            throw StoreError.invalidData("\(path()).\(field) \(rule); nothing was imported")
        } catch StoreError.invalidData(let message), StoreError.invalidArgument(let message) {
            throw StoreError.invalidData("\(path()): \(message); nothing was imported")
        }
    }
}
