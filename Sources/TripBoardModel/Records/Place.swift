public import TripBoardSystem
package import TripBoardSQLite

/// A place to see on a trip.
public struct Place: Sendable, Equatable, Codable, Identifiable {
    public typealias ID = RecordID<Place>
    public var id: ID
    public var tripId: Trip.ID
    public var name: String
    public var city: String?
    public var visited: Bool
    public var syncState: SyncState
    public var remoteVersion: Int64?
    public var updatedAt: Timestamp

    public init(id: ID, tripId: Trip.ID, name: String, city: String?, visited: Bool, syncState: SyncState,
                remoteVersion: Int64?, updatedAt: Timestamp) {
        self.id = id
        self.tripId = tripId
        self.name = name
        self.city = city
        self.visited = visited
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
    }

    /// This place in the form the store keeps, or the first rule it breaks (`PlaceColumn`).
    public func validated() throws -> Place { try PlaceColumn.validated(self) }

    package typealias CodingKeys = PlaceColumn
}

/// A place's columns (`Place`).
package enum PlaceColumn: Int, RecordColumn {
    case id, tripId, name, city, visited, syncState, remoteVersion, updatedAt
    // A key by name only (the raw value is the column's position, not an array index), so that
    // a decoding error names the member: `trips[1].name`.
    package var intValue: Int? { nil }
    package init?(intValue: Int) { nil }
    package static let recordKind = RecordKind.place

    package var spec: ColumnSpec {
        switch self {
        case .id: .id
        case .tripId: .tripId
        case .name: ColumnSpec("name", "name", .text, rule: .line(), sync: "name", heading: "NAME", search: .title)
        case .city: ColumnSpec("city", "city", .optionalText, rule: .line(), sync: "city", heading: "CITY", search: .detail(0))
        case .visited: ColumnSpec("visited", "visited", .bool, sync: "visited", whenMissing: .false, heading: "VISITED")
        case .syncState: .syncState
        case .remoteVersion: .remoteVersion
        case .updatedAt: .updatedAt
        }
    }

    package func value(of place: Place) -> SQLValue {
        switch self {
        case .id: .text(place.id.text)
        case .tripId: .text(place.tripId.text)
        case .name: .text(place.name)
        case .city: .optional(place.city)
        case .visited: .integer(place.visited ? 1 : 0)
        case .syncState: .text(place.syncState.rawValue)
        case .remoteVersion: .optional(place.remoteVersion)
        case .updatedAt: .text(place.updatedAt.utcStamp)
        }
    }

    @inlinable
    package static func record<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> Place {
        Place(id: try values.id(Self.id), tripId: try values.id(Self.tripId), name: try values.text(Self.name),
              city: try values.optionalText(Self.city), visited: try values.bool(Self.visited), syncState: try values.syncState(Self.syncState),
              remoteVersion: try values.version(Self.remoteVersion), updatedAt: try values.stamp(Self.updatedAt))
    }
}
