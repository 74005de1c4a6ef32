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
    public var updatedAt: Timestamp

    public init(kind: RecordKind, id: String, syncState: SyncState, remoteVersion: Int64?, updatedAt: Timestamp) {
        self.kind = kind
        self.id = id
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
    }

    package enum CodingKeys: String, CodingKey { case kind, id, syncState, remoteVersion, updatedAt }
}
