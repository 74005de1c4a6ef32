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

extension ColumnValues {
    /// The id `column` holds, typed by the record it names (the text as it is: the rules hold
    /// it to `FieldRules.id` on every write).
    @inlinable
    package func id<Column: RecordColumn, Record>(_ column: Column) throws(Failure) -> RecordID<Record> { RecordID(try text(column)) }

    /// The moment `column` holds (`updatedAt`: the store's stamps are UTC, `…Z`). A row whose text
    /// is no time (a damaged page; `container check` reports it) reads as the epoch.
    @inlinable
    package func stamp<Column: RecordColumn>(_ column: Column) throws(Failure) -> Timestamp {
        Timestamp(stored: try text(column))
    }

    /// The booking time `column` holds, nil when it holds none (or, on a damaged page, no time).
    @inlinable
    package func time<Column: RecordColumn>(_ column: Column) throws(Failure) -> BookingTime? {
        try optionalText(column).flatMap { BookingTime($0) }
    }
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

/// A record's values as an insert binds them (`RecordColumn.values(of:)`), read back as they
/// are: what `validated()` and an edit build a record from once its values are what they
/// should be.
struct StoredValues: ColumnValues {
    typealias Failure = Never
    let values: [SQLValue]

    private func raw<Column: RecordColumn>(_ column: Column) -> SQLValue { values[column.rawValue] }

    func text<Column: RecordColumn>(_ column: Column) -> String {
        guard case .text(let text) = raw(column) else { return "" }
        return text
    }

    func optionalText<Column: RecordColumn>(_ column: Column) -> String? {
        guard case .text(let text) = raw(column) else { return nil }
        return text
    }

    func date<Column: RecordColumn>(_ column: Column) -> CivilDate { CivilDate(text(column)) ?? CivilDate(daysSinceEpoch: 0) }
    func bool<Column: RecordColumn>(_ column: Column) -> Bool { raw(column) != .integer(0) }
    func syncState<Column: RecordColumn>(_ column: Column) -> SyncState { SyncState(rawValue: text(column)) ?? .failed }
    func bookingKind<Column: RecordColumn>(_ column: Column) -> BookingKind { BookingKind(rawValue: text(column)) ?? .other }

    func version<Column: RecordColumn>(_ column: Column) -> Int64? {
        guard case .integer(let version) = raw(column) else { return nil }
        return version
    }
}

extension RecordColumn {
    /// `record` in the form the store keeps it (names trimmed, ids lowercased, `updatedAt` in
    /// UTC), or the first rule it breaks: each column's own rule in declaration order — the
    /// kind's rules across columns (`checkAcross`) once `checkedAcrossAfter`'s is — then the sync
    /// metadata's (`FieldRules.syncMetadata`: the version, a synchronized record naming one, the
    /// stamp). A broken rule throws `StoreError.invalidField` naming the field, or
    /// `.invalidData` for a rule across fields.
    /// Compiled for each kind, here and in `validated(values:)`, since generic code in other
    /// modules calls them (an import validates every record twice; unspecialized, the rules cost
    /// a quarter of its instructions).
    @_specialize(exported: true, where Self == TripColumn)
    @_specialize(exported: true, where Self == PlaceColumn)
    @_specialize(exported: true, where Self == BookingColumn)
    package static func validated(_ record: Record) throws -> Record { try validated(values: values(of: record)) }

    /// The record `values` (as `values(of:)` gives them) make, validated.
    @_specialize(exported: true, where Self == TripColumn)
    @_specialize(exported: true, where Self == PlaceColumn)
    @_specialize(exported: true, where Self == BookingColumn)
    package static func validated(values: [SQLValue]) throws -> Record {
        var values = values
        let across = checkedAcrossAfter
        for column in allCases where !column.isSyncBookkeeping {
            values[column.rawValue] = try column.checked(values[column.rawValue])
            if column == across { try checkAcross(record(from: StoredValues(values: values))) }
        }
        let stored = StoredValues(values: values)
        let (version, stamp) = try FieldRules.syncMetadata(stored.syncState(Self.syncState), stored.version(Self.remoteVersion),
                                                           stored.text(Self.updatedAt))
        values[Self.remoteVersion.rawValue] = .optional(version)
        values[Self.updatedAt.rawValue] = .text(stamp)
        return record(from: StoredValues(values: values))
    }

    /// The values `values` hold, one per column as `values(of:)` gives a record's: what
    /// `validated(values:)` holds to the rules before a model is made of them (an import's
    /// records, a pulled record's fields), since a model's typed fields hold only what the rules
    /// let through.
    package static func storedValues<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> [SQLValue] {
        var stored: [SQLValue] = []
        stored.reserveCapacity(allCases.count)
        for column in allCases {
            switch column.spec.form {
            case .text: stored.append(.text(try values.text(column)))
            case .optionalText: stored.append(.optional(try values.optionalText(column)))
            case .date: stored.append(.text(try values.date(column).description))
            case .bool: stored.append(.integer(try values.bool(column) ? 1 : 0))
            case .syncState: stored.append(.text(try values.syncState(column).rawValue))
            case .bookingKind: stored.append(.text(try values.bookingKind(column).rawValue))
            case .version: stored.append(.optional(try values.version(column)))
            }
        }
        return stored
    }

    /// The sync bookkeeping every kind has (its state, version and stamp), checked together last.
    var isSyncBookkeeping: Bool { self == .syncState || self == .remoteVersion || self == .updatedAt }

    /// `value` (as `values(of:)` holds it) through this column's rule.
    func checked(_ value: SQLValue) throws -> SQLValue {
        guard case .text(let text) = value else { return value }
        if spec.form == .optionalText { return .optional(try spec.rule.apply(toOptional: text, field: spec.field)) }
        return .text(try spec.rule.apply(to: text, field: spec.field))
    }

    /// `record` with `values` set over its own (by position, as `values(of:)` gives them), no
    /// rule checked: how generic code changes a field of a model it knows only by its columns.
    package static func record(_ record: Record, setting values: [(Self, SQLValue)]) -> Record {
        var all = Self.values(of: record)
        for (column, value) in values { all[column.rawValue] = value }
        return Self.record(from: StoredValues(values: all))
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

extension ColumnSpec {
    /// The value a person entered for this column (`booking edit --reference X`), as
    /// `RecordColumn.values(of:)` holds it, before its rule: empty removes an optional one, and
    /// so does blank but for a zone (a blank zone name is refused by its rule); a kind is read in
    /// any case; a date must be `YYYY-MM-DD`.
    package func value(entered text: String) throws -> SQLValue {
        switch form {
        case .text, .syncState: return .text(text)
        case .optionalText: return text.isEmpty || (rule != .zone && text.trimmingWhitespace().isEmpty) ? .null : .text(text)
        case .date:
            guard let date = CivilDate(text) else { throw StoreError.invalidField(field: field, rule: "'\(text.prefix(40))' is not a date (YYYY-MM-DD)") }
            return .text(date.description)
        case .bookingKind: return .text(try FieldRules.bookingKind(text, field: field).rawValue)
        case .bool: return .integer(text == "true" ? 1 : 0)
        case .version: return Int64(text).map { .integer($0) } ?? .null
        }
    }
}
