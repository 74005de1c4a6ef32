import TripBoardSystem
import TripBoardModel

/// One record of an import document as its kind's column values (`ColumnValues`): its members
/// matched to the declared columns by JSON key (the last of a repeated key counts; unknown keys
/// are ignored), and their shapes checked in declaration order when it is made — so that a
/// document is refused with the error a `Decodable` model would give (`missing key 'name' at
/// trips[0]`, `wrong type at trips[0].name`) before any of its rules is checked. A column the
/// record leaves out, or sets to null, gets what its declaration says (`ColumnSpec.whenMissing`).
struct ImportValues<Kind: RecordColumn>: ColumnValues {
    typealias Failure = any Error
    private var members: [JSONValue?]
    /// The id a record that leaves its id out gets: `newID` is called only then (an export gives
    /// every record its id, and `Identifier.make` costs two `getrandom` calls).
    private var newID: String
    private let now: String

    init(_ value: JSONValue, path: [any CodingKey], newID: @escaping () -> String, now: String) throws(DecodingError) {
        guard case .object(let pairs) = value else {
            throw .typeMismatch([String: Any].self, .init(codingPath: path, debugDescription: "expected an object"))
        }
        members = Array(repeating: nil, count: Kind.allCases.count)
        for pair in pairs { if let column = Kind(stringValue: pair.key) { members[column.rawValue] = pair.value } }
        self.now = now
        self.newID = ""
        if Kind.allCases.contains(where: { $0.spec.whenMissing == .newID && text(of: $0) == nil }) { self.newID = newID() }
        for column in Kind.allCases { try Self.checkShape(members[column.rawValue], column, path) }
    }

    /// The error a `Decodable` model would throw for this member, if any.
    private static func checkShape(_ value: JSONValue?, _ column: Kind, _ path: [any CodingKey]) throws(DecodingError) {
        let isRequired = column.spec.whenMissing == .required
        guard let value, value != .null || isRequired else {
            guard !isRequired else {
                throw .keyNotFound(column, .init(codingPath: path, debugDescription: "missing key '\(column.stringValue)'"))
            }
            return
        }
        // The shapes a record has when it is right, told apart without a decoder (an import
        // checks every member of every record); anything else is decoded for its error.
        switch (column.spec.form, value) {
        case (.text, .string), (.optionalText, .string), (.bookingKind, .string), (.bool, .bool): return
        case (.date, .string(let text)) where CivilDate(text) != nil: return
        case (.syncState, .string(let text)) where SyncState(rawValue: text) != nil: return
        case (.version, .number(let text)) where Int64(text) != nil: return
        default: break
        }
        let path = path + [column]
        do {
            switch column.spec.form {
            case .text, .optionalText, .bookingKind: _ = try ValueDecoder.decode(String.self, from: value, path: path)
            case .date: _ = try ValueDecoder.decode(CivilDate.self, from: value, path: path)
            case .bool: _ = try ValueDecoder.decode(Bool.self, from: value, path: path)
            case .syncState: _ = try ValueDecoder.decode(SyncState.self, from: value, path: path)
            case .version: _ = try ValueDecoder.decode(Int64.self, from: value, path: path)
            }
        } catch let error as DecodingError {
            throw error
        } catch {
            throw .dataCorrupted(.init(codingPath: path, debugDescription: "\(error)"))
        }
    }

    /// The member, nil when it is missing or null (its shape is checked: anything else is its form).
    private func member<Column: RecordColumn>(_ column: Column) -> JSONValue? {
        guard let value = members[column.rawValue], value != .null else { return nil }
        return value
    }

    private func text(of column: some RecordColumn) -> String? {
        guard case .string(let text)? = member(column) else { return nil }
        return text
    }

    func text<Column: RecordColumn>(_ column: Column) -> String {
        if let text = text(of: column) { return text }
        switch column.spec.whenMissing {
        case .newID: return newID
        case .now: return now
        default: return ""
        }
    }

    func optionalText<Column: RecordColumn>(_ column: Column) -> String? { text(of: column) }
    func date<Column: RecordColumn>(_ column: Column) -> CivilDate { text(of: column).flatMap(CivilDate.init) ?? CivilDate(daysSinceEpoch: 0) }

    func bool<Column: RecordColumn>(_ column: Column) -> Bool {
        guard case .bool(let flag)? = member(column) else { return false }
        return flag
    }

    func syncState<Column: RecordColumn>(_ column: Column) -> SyncState { text(of: column).flatMap(SyncState.init(rawValue:)) ?? .pendingUpload }

    /// Any case, as `booking add --kind` takes it (`FieldRules.bookingKind`).
    func bookingKind<Column: RecordColumn>(_ column: Column) throws -> BookingKind {
        try FieldRules.bookingKind(text(column), field: column.spec.field)
    }

    func version<Column: RecordColumn>(_ column: Column) throws -> Int64? {
        guard let value = member(column) else { return nil }
        return try ValueDecoder.decode(Int64.self, from: value, path: [column])
    }
}
