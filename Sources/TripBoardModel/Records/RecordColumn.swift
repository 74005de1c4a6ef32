package import TripBoardSQLite
import Synchronization

/// A record table's columns, declared once per kind (`TripColumn`, `PlaceColumn`,
/// `BookingColumn`, each in its model's file): each case is a column and its model property, and
/// everything that used to be written per kind by hand is derived from the cases — the SELECT,
/// INSERT and UPDATE lists in declaration order (the case's raw value is the column's position
/// in them, so that no reader counts positions), the model's JSON keys (the case is the model's
/// `CodingKeys`), the rules a value is held to (`validated()`), what an import may leave out,
/// the fields sync carries, and how the lists and one-line summaries show it. A new field is a
/// new property, a new case with its `spec` and `value(of:)`, its argument in `record(from:)`,
/// and a schema step.
package protocol RecordColumn: CaseIterable, CodingKey, Hashable, Sendable where AllCases == [Self] {
    associatedtype Record
    /// The kind of record, which names its table.
    static var recordKind: RecordKind { get }
    /// Its position in `selectList`: the cases are counted from 0 in order.
    var rawValue: Int { get }
    /// The columns every kind has (its cases of these names): its id and its sync bookkeeping.
    static var id: Self { get }
    static var syncState: Self { get }
    static var remoteVersion: Self { get }
    static var updatedAt: Self { get }
    /// The column: its name in the table, its JSON key, its form, its rule, its sync field, …
    var spec: ColumnSpec { get }
    /// What an insert binds for it: the model's value, as the store keeps it.
    func value(of record: Record) -> SQLValue
    /// The record `values` hold, column by column (each read with its form's accessor).
    static func record<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> Record
    /// The rules across this kind's columns (a trip's end not before its start), checked once
    /// `checkedAcrossAfter`'s own rule is (by default after every column's).
    static func checkAcross(_ record: Record) throws
    static var checkedAcrossAfter: Self { get }
    /// The columns the store keeps from the others (a booking's epochs), bound after them in an
    /// insert or an update, and their values for `record`.
    static var derived: [String] { get }
    static func derivedValues(of record: Record) -> [SQLValue]
    /// The zone columns a time column is shown in, the first that holds a zone winning (a
    /// booking's end: its own zone, else the booking's); by default the kind's first zone column.
    static func zoneColumns(of column: Self) -> [Self]
}

extension RecordColumn {
    package static func zoneColumns(of column: Self) -> [Self] { Array(allCases.filter { $0.spec.rule == .zone }.prefix(1)) }
}

/// One column of a record table, as its kind's declaration gives it.
package struct ColumnSpec: Sendable {
    /// Its name in the table.
    package let sqlName: String
    /// Its key in the model's JSON (the model's `CodingKeys` case, which `RecordColumnTests`
    /// holds equal to it) and in an export.
    package let jsonKey: StaticString
    /// How the model reads it, and how the lists print it straight from the row (`RecordBytes`).
    package let form: ColumnForm
    /// The sync field it belongs to, or nil for the record's id and its sync bookkeeping.
    package let syncField: String?
    /// Its key inside `syncField` when several columns make that field, which is then an object
    /// of their values (a trip's `dates`: `start` and `end`).
    package let syncPart: String?
    /// The rule every write holds its value to (`validated()`), the field named by `jsonKey`.
    package let rule: FieldRule
    /// What an import that leaves it out gets.
    package let whenMissing: MissingValue
    /// How the one-line summaries (`trip show`'s booking lines, the widget's) label its value:
    /// `ref X7K2QP`; nil: not shown there, or shown its own way.
    package let label: String?
    /// Its column's heading in the human lists (`booking list`), nil: not a plain column there.
    package let heading: String?
    /// What the search index holds of it (`Schema.searchedOnInsert`): the record's title, or a
    /// part of its detail; nil: not searched.
    package let search: SearchRole?
    /// The option a person enters it with where the commands take it as plain text held to its
    /// rule (`booking add` and `booking edit`'s `--reference`); nil: entered its own way, or not.
    package let entry: EntryOption?

    package init(_ sqlName: String, _ jsonKey: StaticString, _ form: ColumnForm, rule: FieldRule = .none,
                 sync syncField: String? = nil, part syncPart: String? = nil, whenMissing: MissingValue? = nil,
                 label: String? = nil, heading: String? = nil, search: SearchRole? = nil, entry: EntryOption? = nil) {
        self.sqlName = sqlName
        self.jsonKey = jsonKey
        self.form = form
        self.rule = rule
        self.syncField = syncField
        self.syncPart = syncPart
        self.whenMissing = whenMissing ?? (form == .optionalText || form == .version ? .null : .required)
        self.label = label
        self.heading = heading
        self.search = search
        self.entry = entry
    }

    /// `jsonKey` as a `String`: the field a broken rule names.
    package var field: String { "\(jsonKey)" }
}

/// The rule a column's value is held to on every write, one `FieldRules` function each.
package enum FieldRule: Sendable, Equatable {
    /// None of its own (a kind, a state, a date whose rule is across columns).
    case none
    /// `FieldRules.id`: a version-4 UUID, lowercased.
    case id
    /// `FieldRules.line` (or `optionalLine` for an optional column, where blank is none).
    case line(FieldRules.TextLimit = FieldRules.lineLimit)
    /// `FieldRules.notes`: several lines.
    case notes
    /// `FieldRules.bookingTime`: a date or an ISO 8601 time.
    case bookingTime
    /// `FieldRules.zone`: an IANA zone name.
    case zone
    /// `FieldRules.stamp`: a moment, kept in UTC.
    case stamp
    /// `FieldRules.remoteVersion`: 1 to `maximumRemoteVersion`, or none.
    case remoteVersion
}

/// A command-line option that enters a column's value: `--reference REF`, with its help.
package struct EntryOption: Sendable, Equatable {
    package let name: String
    package let valueName: String
    package let help: String

    package init(_ name: String, _ valueName: String, _ help: String) {
        self.name = name
        self.valueName = valueName
        self.help = help
    }
}

/// What the search index holds of a column. The index's triggers are written by the schema's
/// steps; what a bulk write indexes in their stead is derived from these
/// (`Schema.searchedOnInsert`), and `StoreSearchTests` holds the two equal.
package enum SearchRole: Sendable, Equatable {
    /// The record's title (a trip's name).
    case title
    /// The detail's part at this place (the detail is its parts joined by spaces).
    case detail(Int)
}

/// What an import record that leaves a column out gets.
package enum MissingValue: Sendable, Equatable {
    /// Nothing: the import is refused (`missing key 'name' at trips[0]`).
    case required
    /// Null (the optional columns' default).
    case null
    /// A new id (the placeholder while the document is only checked).
    case newID
    /// The import's moment.
    case now
    /// `pendingUpload`: a record the server has not seen.
    case pendingUpload
    /// Empty text.
    case empty
    /// False.
    case `false`
}

extension ColumnSpec {
    /// The columns every kind has: its id and its sync bookkeeping, none of them a sync field.
    package static let id = ColumnSpec("id", "id", .text, rule: .id, whenMissing: .newID, heading: "ID")
    package static let syncState = ColumnSpec("sync_state", "syncState", .syncState, whenMissing: .pendingUpload, heading: "SYNC")
    package static let remoteVersion = ColumnSpec("remote_version", "remoteVersion", .version, rule: .remoteVersion)
    package static let updatedAt = ColumnSpec("updated_at", "updatedAt", .text, rule: .stamp, whenMissing: .now)
    /// A trip id a place or booking belongs to.
    package static let tripId = ColumnSpec("trip_id", "tripId", .text, rule: .id, sync: "tripId")
}

/// How a column's value is read and printed.
package enum ColumnForm: Sendable, Equatable {
    /// Text, never NULL.
    case text
    /// Text or NULL (`null` in JSON).
    case optionalText
    /// A strict `YYYY-MM-DD` (1970-01-01 when it is not one).
    case date
    /// 0 or 1.
    case bool
    /// One of `SyncState`'s names (`failed` when it is none).
    case syncState
    /// One of `BookingKind`'s names (`other` when it is none).
    case bookingKind
    /// The server's version: an integer or NULL.
    case version
}

extension RecordColumn {
    /// Its position in `selectList`: the case's raw value, which counts the cases in order.
    package var position: Int32 { Int32(rawValue) }
    package var sqlName: String { spec.sqlName }
    package var syncField: String? { spec.syncField }

    /// Every column, in declaration order: what the store's and the widget's queries select.
    package static var selectList: String { sqlText("select") { allCases.map(\.sqlName).joined(separator: ", ") } }
    /// How many columns `selectList` has: the position of whatever a query selects after them.
    package static var count: Int32 { Int32(allCases.count) }
    /// `INSERT INTO table (selectList, derived…) VALUES (…)` for one record (`insertValues(of:)`).
    package static func insert(into table: String) -> String {
        sqlText("insert " + table) {
            let names = allCases.map(\.sqlName) + derived
            return "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
        }
    }
    /// `record`'s values in declaration order.
    package static func values(of record: Record) -> [SQLValue] { allCases.map { $0.value(of: record) } }
    /// The values `insert(into:)` binds for `record`: its own, then the derived ones.
    package static func insertValues(of record: Record) -> [SQLValue] { values(of: record) + derivedValues(of: record) }
    /// `UPDATE table SET every column but the first (the id), derived… WHERE id = ?` for one record.
    package static func update(_ table: String) -> String {
        sqlText("update " + table) {
            let names = allCases.dropFirst().map(\.sqlName) + derived
            return "UPDATE \(table) SET \(names.map { $0 + " = ?" }.joined(separator: ", ")) WHERE \(allCases[0].sqlName) = ?"
        }
    }

    /// SQL text derived from this kind's declaration, made the first time it is asked for and
    /// kept: the store asks for it for every record it reads or writes (a sync pulls thousands),
    /// and making it walks every case's `spec`.
    static func sqlText(_ name: String, _ make: () -> String) -> String {
        let key = SQLTextKey(kind: ObjectIdentifier(Self.self), name: name)
        if let made = sqlTexts.withLock({ $0[key] }) { return made }
        let made = make()
        sqlTexts.withLock { $0[key] = made }
        return made
    }
    /// The values `update(_:)` binds for `record`.
    package static func updateValues(of record: Record) -> [SQLValue] {
        let values = values(of: record)
        return Array(values.dropFirst()) + derivedValues(of: record) + [values[0]]
    }
    /// The fields sync carries for this kind, in declaration order, each once.
    package static var syncFields: [String] {
        var seen: Set<String> = []
        return allCases.compactMap(\.syncField).filter { seen.insert($0).inserted }
    }
    /// The columns in the order of their JSON keys: the order `JSON.encode` writes a model's
    /// members in, which the lists' byte printers keep.
    package static var inJSONOrder: [Self] {
        allCases.sorted { "\($0.spec.jsonKey)".utf8.lexicographicallyPrecedes("\($1.spec.jsonKey)".utf8) }
    }
    /// Appends `record`'s labelled values (`ColumnSpec.label`) that it holds, in declaration
    /// order, as the one-line summaries show them: ` · ref X7K2QP`.
    package static func appendLabelled(_ record: Record, separator: String, to line: inout String) {
        for (label, value) in labelled(record) {
            line += separator
            line += label
            line += " "
            line += value
        }
    }

    /// The record's labelled columns that hold a value (`ColumnSpec.label`), in declaration
    /// order: what a line about it shows besides its title and times (`ref X7K2QP`, `seat 14C`).
    package static func labelled(_ record: Record) -> [(label: String, value: String)] {
        allCases.compactMap { column in
            guard let label = column.spec.label, case .text(let value) = column.value(of: record) else { return nil }
            return (label, value)
        }
    }
    /// No rule across columns but those every kind has.
    package static func checkAcross(_ record: Record) throws {}
    /// The last of the kind's own columns (before its sync bookkeeping).
    package static var checkedAcrossAfter: Self {
        allCases.last { $0 != .syncState && $0 != .remoteVersion && $0 != .updatedAt } ?? allCases[0]
    }
    /// What the search index holds of this kind's rows (`SearchRole`): the title's column, and
    /// the detail's SQL expression, its parts joined by spaces (NULL as '').
    package static var searched: (title: String, detail: String) {
        let title = allCases.first { $0.spec.search == .title }?.sqlName ?? "''"
        let parts = allCases.compactMap { column -> (Int, String)? in
            guard case .detail(let place) = column.spec.search else { return nil }
            return (place, column.spec.form == .optionalText ? "ifnull(\(column.sqlName), '')" : column.sqlName)
        }
        return (title, parts.sorted { $0.0 < $1.0 }.map(\.1).joined(separator: " || ' ' || "))
    }
    /// The columns entered as plain text (`ColumnSpec.entry`), in declaration order.
    package static var entered: [(column: Self, option: EntryOption)] {
        allCases.compactMap { column in column.spec.entry.map { (column, $0) } }
    }
    /// No column kept from the others.
    package static var derived: [String] { [] }
    package static func derivedValues(of record: Record) -> [SQLValue] { [] }
}


/// `RecordColumn.sqlText`'s texts, by kind and name.
private let sqlTexts = Mutex<[SQLTextKey: String]>([:])

private struct SQLTextKey: Hashable {
    let kind: ObjectIdentifier
    let name: String
}
