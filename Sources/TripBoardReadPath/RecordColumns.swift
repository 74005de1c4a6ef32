package import TripBoardSQLite
package import TripBoardSystem

/// A record table's columns, declared once per kind (`TripColumn`, `PlaceColumn`,
/// `BookingColumn`): each case is a column and its model property, and everything that used to
/// be written per kind by hand is derived from the cases — the SELECT and INSERT lists in
/// declaration order, the case's raw value being the column's position in them (so that no
/// reader counts positions), the model's JSON keys (the case is the model's `CodingKeys`), the
/// values an insert binds, and the fields sync carries (`syncField`). A new field is a new case,
/// its `value(of:)`, and a schema step.
package protocol RecordColumn: CaseIterable, CodingKey, Sendable where AllCases == [Self] {
    associatedtype Record
    /// Its position in `selectList`: the cases are counted from 0 in order.
    var rawValue: Int { get }
    /// The columns every kind has (its cases of these names): its id and its sync bookkeeping.
    static var id: Self { get }
    static var syncState: Self { get }
    static var remoteVersion: Self { get }
    static var updatedAt: Self { get }
    /// The column: its name in the table, its JSON key, its form, its sync field.
    var spec: ColumnSpec { get }
    /// What an insert binds for it.
    func value(of record: Record) -> SQLValue
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

    package init(_ sqlName: String, _ jsonKey: StaticString, _ form: ColumnForm, sync syncField: String? = nil, part syncPart: String? = nil) {
        self.sqlName = sqlName
        self.jsonKey = jsonKey
        self.form = form
        self.syncField = syncField
        self.syncPart = syncPart
    }
}

extension ColumnSpec {
    /// The columns every kind has: its id and its sync bookkeeping, none of them a sync field.
    package static let id = ColumnSpec("id", "id", .text)
    package static let syncState = ColumnSpec("sync_state", "syncState", .syncState)
    package static let remoteVersion = ColumnSpec("remote_version", "remoteVersion", .version)
    package static let updatedAt = ColumnSpec("updated_at", "updatedAt", .text)
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
    package static var selectList: String { allCases.map(\.sqlName).joined(separator: ", ") }
    /// How many columns `selectList` has: the position of whatever a query selects after them.
    package static var count: Int32 { Int32(allCases.count) }
    /// `INSERT INTO table (selectList, derived…) VALUES (…)` for one record: `derived` names
    /// columns the store keeps from the others (a booking's epochs), bound after `values(of:)`.
    package static func insert(into table: String, derived: [String] = []) -> String {
        let names = allCases.map(\.sqlName) + derived
        return "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
    }
    /// The values `insert(into:)` binds for `record`, in declaration order.
    package static func values(of record: Record) -> [SQLValue] { allCases.map { $0.value(of: record) } }
    /// `UPDATE table SET every column but the first (the id), derived… WHERE id = ?` for one record.
    package static func update(_ table: String, derived: [String] = []) -> String {
        let names = allCases.dropFirst().map(\.sqlName) + derived
        return "UPDATE \(table) SET \(names.map { $0 + " = ?" }.joined(separator: ", ")) WHERE \(allCases[0].sqlName) = ?"
    }
    /// The values `update(_:derived:)` binds for `record`, the derived ones given.
    package static func updateValues(of record: Record, derived: [SQLValue] = []) -> [SQLValue] {
        let values = values(of: record)
        return Array(values.dropFirst()) + derived + [values[0]]
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
}

/// A trip's columns (`Trip`). Start and end are one sync field, `dates`, so that they always
/// merge together and `end ≥ start` holds whatever two devices did.
package enum TripColumn: Int, RecordColumn {
    case id, name, startDate, endDate, notes, syncState, remoteVersion, updatedAt
    // A key by name only (the raw value is the column's position, not an array index), so that
    // a decoding error names the member: `trips[1].name`.
    package var intValue: Int? { nil }
    package init?(intValue: Int) { nil }

    package var spec: ColumnSpec {
        switch self {
        case .id: .id
        case .name: ColumnSpec("name", "name", .text, sync: "name")
        case .startDate: ColumnSpec("start_date", "startDate", .date, sync: "dates", part: "start")
        case .endDate: ColumnSpec("end_date", "endDate", .date, sync: "dates", part: "end")
        case .notes: ColumnSpec("notes", "notes", .text, sync: "notes")
        case .syncState: .syncState
        case .remoteVersion: .remoteVersion
        case .updatedAt: .updatedAt
        }
    }

    package func value(of trip: Trip) -> SQLValue {
        switch self {
        case .id: .text(trip.id)
        case .name: .text(trip.name)
        case .startDate: .text(trip.startDate.description)
        case .endDate: .text(trip.endDate.description)
        case .notes: .text(trip.notes)
        case .syncState: .text(trip.syncState.rawValue)
        case .remoteVersion: .optional(trip.remoteVersion)
        case .updatedAt: .text(trip.updatedAt)
        }
    }
}

/// A place's columns (`Place`).
package enum PlaceColumn: Int, RecordColumn {
    case id, tripId, name, city, visited, syncState, remoteVersion, updatedAt
    // A key by name only (the raw value is the column's position, not an array index), so that
    // a decoding error names the member: `trips[1].name`.
    package var intValue: Int? { nil }
    package init?(intValue: Int) { nil }

    package var spec: ColumnSpec {
        switch self {
        case .id: .id
        case .tripId: ColumnSpec("trip_id", "tripId", .text, sync: "tripId")
        case .name: ColumnSpec("name", "name", .text, sync: "name")
        case .city: ColumnSpec("city", "city", .optionalText, sync: "city")
        case .visited: ColumnSpec("visited", "visited", .bool, sync: "visited")
        case .syncState: .syncState
        case .remoteVersion: .remoteVersion
        case .updatedAt: .updatedAt
        }
    }

    package func value(of place: Place) -> SQLValue {
        switch self {
        case .id: .text(place.id)
        case .tripId: .text(place.tripId)
        case .name: .text(place.name)
        case .city: .optional(place.city)
        case .visited: .integer(place.visited ? 1 : 0)
        case .syncState: .text(place.syncState.rawValue)
        case .remoteVersion: .optional(place.remoteVersion)
        case .updatedAt: .text(place.updatedAt)
        }
    }
}

/// A booking's columns (`Booking`).
package enum BookingColumn: Int, RecordColumn {
    case id, tripId, kind, title, startsAt, endsAt, zone, reference, syncState, remoteVersion, updatedAt
    // A key by name only (the raw value is the column's position, not an array index), so that
    // a decoding error names the member: `trips[1].name`.
    package var intValue: Int? { nil }
    package init?(intValue: Int) { nil }

    package var spec: ColumnSpec {
        switch self {
        case .id: .id
        case .tripId: ColumnSpec("trip_id", "tripId", .text, sync: "tripId")
        case .kind: ColumnSpec("kind", "kind", .bookingKind, sync: "kind")
        case .title: ColumnSpec("title", "title", .text, sync: "title")
        case .startsAt: ColumnSpec("starts_at", "startsAt", .optionalText, sync: "startsAt")
        case .endsAt: ColumnSpec("ends_at", "endsAt", .optionalText, sync: "endsAt")
        case .zone: ColumnSpec("zone", "zone", .optionalText, sync: "zone")
        case .reference: ColumnSpec("reference", "reference", .optionalText, sync: "reference")
        case .syncState: .syncState
        case .remoteVersion: .remoteVersion
        case .updatedAt: .updatedAt
        }
    }

    package func value(of booking: Booking) -> SQLValue {
        switch self {
        case .id: .text(booking.id)
        case .tripId: .text(booking.tripId)
        case .kind: .text(booking.kind.rawValue)
        case .title: .text(booking.title)
        case .startsAt: .optional(booking.startsAt)
        case .endsAt: .optional(booking.endsAt)
        case .zone: .optional(booking.zone)
        case .reference: .optional(booking.reference)
        case .syncState: .text(booking.syncState.rawValue)
        case .remoteVersion: .optional(booking.remoteVersion)
        case .updatedAt: .text(booking.updatedAt)
        }
    }
}

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

extension TripColumn {
    /// The trip `values` hold.
    package static func record<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> Trip {
        Trip(id: try values.text(Self.id), name: try values.text(Self.name), startDate: try values.date(Self.startDate),
             endDate: try values.date(Self.endDate), notes: try values.text(Self.notes), syncState: try values.syncState(Self.syncState),
             remoteVersion: try values.version(Self.remoteVersion), updatedAt: try values.text(Self.updatedAt))
    }
}

extension PlaceColumn {
    /// The place `values` hold.
    package static func record<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> Place {
        Place(id: try values.text(Self.id), tripId: try values.text(Self.tripId), name: try values.text(Self.name),
              city: try values.optionalText(Self.city), visited: try values.bool(Self.visited), syncState: try values.syncState(Self.syncState),
              remoteVersion: try values.version(Self.remoteVersion), updatedAt: try values.text(Self.updatedAt))
    }
}

extension BookingColumn {
    /// The booking `values` hold.
    package static func record<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> Booking {
        Booking(id: try values.text(Self.id), tripId: try values.text(Self.tripId), kind: try values.bookingKind(Self.kind),
                title: try values.text(Self.title), startsAt: try values.optionalText(Self.startsAt),
                reference: try values.optionalText(Self.reference), syncState: try values.syncState(Self.syncState),
                remoteVersion: try values.version(Self.remoteVersion), updatedAt: try values.text(Self.updatedAt),
                endsAt: try values.optionalText(Self.endsAt), zone: try values.optionalText(Self.zone))
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
