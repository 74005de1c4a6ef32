package import TripBoardSQLite
package import TripBoardSystem

/// Where a record's column values come from: a row of the store (`Statement`, lenient as the
/// models have always read rows), a sync record's fields (strict: a value of the wrong form is
/// `StoreError.invalidField`), … — each kind's `record(from:)` builds its model from any of them,
/// column by column, so that a column declared once is read everywhere.
package protocol ColumnValues {
    /// `Never` for a row of the store.
    associatedtype Failure: Error
    func text<Column: RecordColumn>(_ column: Column) throws(Failure) -> String
    func optionalText<Column: RecordColumn>(_ column: Column) throws(Failure) -> String?
    func date<Column: RecordColumn>(_ column: Column) throws(Failure) -> CivilDate
    func bool<Column: RecordColumn>(_ column: Column) throws(Failure) -> Bool
    func syncState<Column: RecordColumn>(_ column: Column) throws(Failure) -> SyncState
    func bookingKind<Column: RecordColumn>(_ column: Column) throws(Failure) -> BookingKind
    func version<Column: RecordColumn>(_ column: Column) throws(Failure) -> Int64?
}

/// A row selected with its kind's `selectList`, read as the models always have: a date that is
/// not one reads as 1970-01-01, a state or kind that is none as `failed` or `other`.
package struct RowValues: ColumnValues {
    package typealias Failure = Never
    let row: Statement
    package init(_ row: Statement) { self.row = row }
    package func text<Column: RecordColumn>(_ column: Column) -> String { row.text(column.position) }
    package func optionalText<Column: RecordColumn>(_ column: Column) -> String? { row.optionalText(column.position) }
    package func date<Column: RecordColumn>(_ column: Column) -> CivilDate { CivilDate(row.text(column.position)) ?? CivilDate(daysSinceEpoch: 0) }
    package func bool<Column: RecordColumn>(_ column: Column) -> Bool { row.integer(column.position) != 0 }
    package func syncState<Column: RecordColumn>(_ column: Column) -> SyncState { SyncState(rawValue: row.text(column.position)) ?? .failed }
    package func bookingKind<Column: RecordColumn>(_ column: Column) -> BookingKind { BookingKind(rawValue: row.text(column.position)) ?? .other }
    package func version<Column: RecordColumn>(_ column: Column) -> Int64? { row.optionalInteger(column.position) }
}

extension Statement {
    /// The text of `column` in a row selected with its kind's `selectList`.
    package func text<Column: RecordColumn>(_ column: Column) -> String { text(column.position) }
    package func optionalText<Column: RecordColumn>(_ column: Column) -> String? { optionalText(column.position) }
    package func integer<Column: RecordColumn>(_ column: Column) -> Int64 { integer(column.position) }
    package func optionalInteger<Column: RecordColumn>(_ column: Column) -> Int64? { optionalInteger(column.position) }
}

/// A record's values as an insert binds them (`RecordColumn.values(of:)`), each through its
/// column's rule when `checked`: what `validated()` reads a record back from, so that a column
/// declared with a rule is checked on every write, and what an edit builds its record from.
struct CheckedValues: ColumnValues {
    typealias Failure = any Error
    let values: [SQLValue]
    var checked = true

    private func raw<Column: RecordColumn>(_ column: Column) -> SQLValue { values[column.rawValue] }

    func text<Column: RecordColumn>(_ column: Column) throws -> String {
        guard case .text(let text) = raw(column) else { return "" }
        return checked ? try column.spec.rule.apply(to: text, field: column.spec.field) : text
    }

    func optionalText<Column: RecordColumn>(_ column: Column) throws -> String? {
        guard case .text(let text) = raw(column) else { return nil }
        return checked ? try column.spec.rule.apply(toOptional: text, field: column.spec.field) : text
    }

    func date<Column: RecordColumn>(_ column: Column) -> CivilDate {
        guard case .text(let text) = raw(column) else { return CivilDate(daysSinceEpoch: 0) }
        return CivilDate(text) ?? CivilDate(daysSinceEpoch: 0)
    }

    func bool<Column: RecordColumn>(_ column: Column) -> Bool { raw(column) != .integer(0) }

    func syncState<Column: RecordColumn>(_ column: Column) -> SyncState {
        guard case .text(let text) = raw(column) else { return .failed }
        return SyncState(rawValue: text) ?? .failed
    }

    func bookingKind<Column: RecordColumn>(_ column: Column) -> BookingKind {
        guard case .text(let text) = raw(column) else { return .other }
        return BookingKind(rawValue: text) ?? .other
    }

    func version<Column: RecordColumn>(_ column: Column) throws -> Int64? {
        guard case .integer(let version) = raw(column) else { return nil }
        return checked ? try FieldRules.remoteVersion(version, field: column.spec.field) : version
    }
}

extension RecordColumn {
    /// `record` in the form the store keeps it (names trimmed, ids lowercased, `updatedAt` in
    /// UTC), or the first rule it breaks: each column's own in declaration order, then the
    /// kind's across columns (`checkAcross`), then the sync metadata's (a synchronized record
    /// names the server's version). A broken rule throws `StoreError.invalidField` naming the
    /// field, or `.invalidData` for a rule across fields.
    package static func validated(_ record: Record) throws -> Record { try validated(values: values(of: record)) }

    /// The record `values` (as `values(of:)` gives them) make, validated.
    package static func validated(values: [SQLValue]) throws -> Record {
        let checked = try Self.record(from: CheckedValues(values: values))
        try checkAcross(checked)
        let stored = CheckedValues(values: Self.values(of: checked), checked: false)
        try FieldRules.syncState(stored.syncState(Self.syncState), remoteVersion: try stored.version(Self.remoteVersion))
        return checked
    }

    /// `record` with `values` set over its own (by position, as `values(of:)` gives them), no
    /// rule checked: how generic code changes a field of a model it knows only by its columns.
    package static func record(_ record: Record, setting values: [(Self, SQLValue)]) -> Record {
        var all = Self.values(of: record)
        for (column, value) in values { all[column.rawValue] = value }
        // Unchecked values never throw.
        return (try? Self.record(from: CheckedValues(values: all, checked: false))) ?? record
    }

    /// The sync fields whose columns differ between two versions of a record, in declaration
    /// order, each once: what an edit notes for the merge (`Store.noteFieldEdits`).
    package static func changedFields(from old: Record, to new: Record) -> [String] {
        let before = values(of: old), after = values(of: new)
        var fields: [String] = []
        for column in allCases where before[column.rawValue] != after[column.rawValue] {
            if let field = column.syncField, !fields.contains(field) { fields.append(field) }
        }
        return fields
    }
}

extension FieldRule {
    /// `text` for a column that always has a value, through the rule.
    package func apply(to text: String, field: String) throws -> String {
        switch self {
        case .none, .remoteVersion: text
        case .id: try FieldRules.id(text, field: field)
        case .line(let limit): try FieldRules.line(text, field: field, limit: limit)
        case .notes: try FieldRules.notes(text, field: field)
        case .bookingTime: try FieldRules.bookingTime(text, field: field)
        case .zone: try FieldRules.zone(text, field: field) ?? text
        case .stamp: try FieldRules.stamp(text, field: field)
        }
    }

    /// `text` for an optional column, through the rule: a blank line is none.
    package func apply(toOptional text: String, field: String) throws -> String? {
        switch self {
        case .line(let limit): try FieldRules.optionalLine(text, field: field, limit: limit)
        default: try apply(to: text, field: field)
        }
    }
}

extension RecordColumn {
    /// The text `column` holds in `record` ("" when it holds none).
    package static func text(_ column: Self, of record: Record) -> String {
        guard case .text(let text) = column.value(of: record) else { return "" }
        return text
    }
}

extension ColumnForm {
    /// The value a person entered for a column of this form (`booking edit --reference X`), as
    /// `RecordColumn.values(of:)` holds it, before the column's rule: blank removes an optional
    /// one; a kind is read in any case; a date must be `YYYY-MM-DD`.
    package func value(entered text: String, field: String) throws -> SQLValue {
        switch self {
        case .text, .syncState: return .text(text)
        case .optionalText: return text.trimmingWhitespace().isEmpty ? .null : .text(text)
        case .date:
            guard let date = CivilDate(text) else { throw StoreError.invalidField(field: field, rule: "'\(text.prefix(40))' is not a date (YYYY-MM-DD)") }
            return .text(date.description)
        case .bookingKind: return .text(try FieldRules.bookingKind(text, field: field).rawValue)
        case .bool: return .integer(text == "true" ? 1 : 0)
        case .version: return Int64(text).map { .integer($0) } ?? .null
        }
    }
}
