public import TripBoardSystem
package import TripBoardSQLite

/// A trip: the unit the widget shows and everything else hangs from.
public struct Trip: Sendable, Equatable, Codable, Identifiable {
    public typealias ID = RecordID<Trip>
    public var id: ID
    public var name: String
    public var startDate: CivilDate
    public var endDate: CivilDate
    public var notes: String
    public var syncState: SyncState
    public var remoteVersion: Int64?
    /// When it last changed, to the millisecond (in JSON and the store, UTC: `2026-11-30T23:12:17.123Z`).
    public var updatedAt: Timestamp

    public init(id: ID, name: String, startDate: CivilDate, endDate: CivilDate, notes: String,
                syncState: SyncState, remoteVersion: Int64?, updatedAt: Timestamp) {
        self.id = id
        self.name = name
        self.startDate = startDate
        self.endDate = endDate
        self.notes = notes
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
    }

    /// This trip in the form the store keeps (name trimmed, id lowercased, `updatedAt` in UTC),
    /// or the first rule it breaks: its declaration's (`TripColumn`, `RecordColumn.validated`).
    /// Declared here, beside the columns, so that the generic rules are compiled for trips.
    public func validated() throws -> Trip { try TripColumn.validated(self) }

    /// Number of calendar days the trip spans, both ends included.
    public var dayCount: Int { startDate.days(until: endDate) + 1 }

    // The JSON keys are a documented, stable contract (docs/cli.md): the columns' names in the
    // record's declaration. A nil value is written as `null`, never left out, by the encoder
    // itself (`JSON.encode`), for this and every model.
    package typealias CodingKeys = TripColumn
}

/// A trip's columns (`Trip`). Start and end are one sync field, `dates`, so that they always
/// merge together and `end ≥ start` holds whatever two devices did.
package enum TripColumn: Int, RecordColumn {
    case id, name, startDate, endDate, notes, syncState, remoteVersion, updatedAt
    // A key by name only (the raw value is the column's position, not an array index), so that
    // a decoding error names the member: `trips[1].name`.
    package var intValue: Int? { nil }
    package init?(intValue: Int) { nil }
    package static let recordKind = RecordKind.trip

    package var spec: ColumnSpec {
        switch self {
        case .id: .id
        case .name: ColumnSpec("name", "name", .text, rule: .line(), sync: "name", search: .title)
        case .startDate: ColumnSpec("start_date", "startDate", .date, sync: "dates", part: "start")
        case .endDate: ColumnSpec("end_date", "endDate", .date, sync: "dates", part: "end")
        case .notes: ColumnSpec("notes", "notes", .text, rule: .notes, sync: "notes", whenMissing: .empty, search: .detail(0))
        case .syncState: .syncState
        case .remoteVersion: .remoteVersion
        case .updatedAt: .updatedAt
        }
    }

    package func value(of trip: Trip) -> SQLValue {
        switch self {
        case .id: .text(trip.id.text)
        case .name: .text(trip.name)
        case .startDate: .text(trip.startDate.description)
        case .endDate: .text(trip.endDate.description)
        case .notes: .text(trip.notes)
        case .syncState: .text(trip.syncState.rawValue)
        case .remoteVersion: .optional(trip.remoteVersion)
        case .updatedAt: .text(trip.updatedAt.utcStamp)
        }
    }

    @inlinable
    package static func record<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> Trip {
        Trip(id: try values.id(Self.id), name: try values.text(Self.name), startDate: try values.date(Self.startDate),
             endDate: try values.date(Self.endDate), notes: try values.text(Self.notes), syncState: try values.syncState(Self.syncState),
             remoteVersion: try values.version(Self.remoteVersion), updatedAt: try values.stamp(Self.updatedAt))
    }

    /// The end may not be before the start (both ends are days of the trip).
    package static func checkAcross(_ trip: Trip) throws { try FieldRules.dateRange(start: trip.startDate, end: trip.endDate) }
}
