public import TripBoardSystem

/// Where a record stands with the sync server. Changed in the same transaction as the edit.
public enum SyncState: String, Sendable, Codable, CaseIterable {
    /// The server has this exact version (`remoteVersion`).
    case synchronized
    /// Edited locally since the last upload (every local edit lands here).
    case pendingUpload
    /// Deleted locally after having been uploaded: a tombstone, hidden from every list until the
    /// server acknowledges the deletion.
    case pendingDeletion
    /// The last upload attempt was rejected; retried with the pending ones.
    case failed
}

/// The kinds of booking a trip can hold.
public enum BookingKind: String, Sendable, Codable, CaseIterable {
    case flight, train, hotel, car, event, other
}

/// A trip: the unit the widget shows and everything else hangs from.
public struct Trip: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var startDate: CivilDate
    public var endDate: CivilDate
    public var notes: String
    public var syncState: SyncState
    public var remoteVersion: Int64?
    /// UTC, to the millisecond: `2026-11-30T23:12:17.123Z`.
    public var updatedAt: String

    public init(id: String, name: String, startDate: CivilDate, endDate: CivilDate, notes: String,
                syncState: SyncState, remoteVersion: Int64?, updatedAt: String) {
        self.id = id
        self.name = name
        self.startDate = startDate
        self.endDate = endDate
        self.notes = notes
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
    }

    /// Number of calendar days the trip spans, both ends included.
    public var dayCount: Int { startDate.days(until: endDate) + 1 }

    // The JSON keys are a documented, stable contract (docs/cli.md): the columns' names in the
    // record's declaration. A nil value is written as `null`, never left out, by the encoder
    // itself (`JSON.encode`), for this and every model.
    package typealias CodingKeys = TripColumn
}

/// A place to see on a trip.
public struct Place: Sendable, Equatable, Codable {
    public var id: String
    public var tripId: String
    public var name: String
    public var city: String?
    public var visited: Bool
    public var syncState: SyncState
    public var remoteVersion: Int64?
    public var updatedAt: String

    public init(id: String, tripId: String, name: String, city: String?, visited: Bool, syncState: SyncState,
                remoteVersion: Int64?, updatedAt: String) {
        self.id = id
        self.tripId = tripId
        self.name = name
        self.city = city
        self.visited = visited
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
    }

    package typealias CodingKeys = PlaceColumn
}

/// A flight, train, hotel, … booked for a trip.
public struct Booking: Sendable, Equatable, Codable {
    public var id: String
    public var tripId: String
    public var kind: BookingKind
    public var title: String
    /// ISO 8601 with the offset it was entered in: `2026-12-12T07:35:00+00:00`; or a date alone,
    /// `2026-12-14`, for an all-day booking (`BookingTime`).
    public var startsAt: String?
    public var reference: String?
    public var syncState: SyncState
    public var remoteVersion: Int64?
    public var updatedAt: String
    /// When it ends (check-out, arrival), in the same forms as `startsAt`; never before it.
    public var endsAt: String?
    /// The IANA zone its times are in (`Europe/Lisbon`), which says how to show them: `07:35 WET`.
    /// Nil: a fixed offset, the one `startsAt` was written with.
    public var zone: String?

    public init(id: String, tripId: String, kind: BookingKind, title: String, startsAt: String?, reference: String?,
                syncState: SyncState, remoteVersion: Int64?, updatedAt: String, endsAt: String? = nil, zone: String? = nil) {
        self.id = id
        self.tripId = tripId
        self.kind = kind
        self.title = title
        self.startsAt = startsAt
        self.reference = reference
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
        self.endsAt = endsAt
        self.zone = zone
    }

    package typealias CodingKeys = BookingColumn
}

/// The record types the store holds, as named in messages and in `sync pending`.
public enum RecordKind: String, Sendable, Codable, CaseIterable {
    case trip, place, booking, attachment

    package var table: String {
        switch self {
        case .trip: "trips"
        case .place: "places"
        case .booking: "bookings"
        case .attachment: "attachments"
        }
    }
}

/// A record waiting for the sync server.
public struct PendingChange: Sendable, Equatable, Codable {
    public var kind: RecordKind
    public var id: String
    public var syncState: SyncState
    public var remoteVersion: Int64?
    public var updatedAt: String

    public init(kind: RecordKind, id: String, syncState: SyncState, remoteVersion: Int64?, updatedAt: String) {
        self.kind = kind
        self.id = id
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
    }

    package enum CodingKeys: String, CodingKey { case kind, id, syncState, remoteVersion, updatedAt }
}
