public import TripBoardSystem
package import TripBoardSQLite

/// A flight, train, hotel, … booked for a trip.
public struct Booking: Sendable, Equatable, Codable, Identifiable {
    public typealias ID = RecordID<Booking>
    public var id: ID
    public var tripId: Trip.ID
    public var kind: BookingKind
    public var title: String
    /// When it starts: a time with the offset it was entered in (`2026-12-12T07:35:00+00:00` in
    /// JSON and the store), or a date alone (`2026-12-14`) for an all-day booking.
    public var startsAt: BookingTime?
    public var reference: String?
    public var syncState: SyncState
    public var remoteVersion: Int64?
    public var updatedAt: Timestamp
    /// When it ends (check-out, arrival), in the same forms as `startsAt`; never before it.
    public var endsAt: BookingTime?
    /// The IANA zone its times are in (`Europe/Lisbon`), which says how to show them: `07:35 WET`.
    /// Nil: a fixed offset, the one `startsAt` was written with.
    public var zone: String?
    /// The seat: `14C`; on a train the coach and the seat, `7/42`.
    public var seat: String?
    /// The IANA zone of the end when it is not `zone`'s: where a flight lands (`Asia/Tokyo`), so
    /// that the arrival shows as `11:20 JST`. Needs an end.
    public var endZone: String?

    public init(id: ID, tripId: Trip.ID, kind: BookingKind, title: String, startsAt: BookingTime?, reference: String?,
                syncState: SyncState, remoteVersion: Int64?, updatedAt: Timestamp, endsAt: BookingTime? = nil, zone: String? = nil,
                seat: String? = nil, endZone: String? = nil) {
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
        self.seat = seat
        self.endZone = endZone
    }

    /// The zone the end is shown and read in: its own, else the booking's.
    public var zoneOfEnd: String? { endZone ?? zone }

    /// This booking in the form the store keeps (`startsAt` and `endsAt` as
    /// `YYYY-MM-DDTHH:MM:SS±HH:MM` or `YYYY-MM-DD`), or the first rule it breaks (`BookingColumn`).
    public func validated() throws -> Booking { try BookingColumn.validated(self) }

    package typealias CodingKeys = BookingColumn
}

/// A booking's columns (`Booking`).
package enum BookingColumn: Int, RecordColumn {
    case id, tripId, kind, title, startsAt, endsAt, zone, endZone, reference, seat, syncState, remoteVersion, updatedAt
    // A key by name only (the raw value is the column's position, not an array index), so that
    // a decoding error names the member: `trips[1].name`.
    package var intValue: Int? { nil }
    package init?(intValue: Int) { nil }
    package static let recordKind = RecordKind.booking

    package var spec: ColumnSpec {
        switch self {
        case .id: .id
        case .tripId: .tripId
        case .kind: ColumnSpec("kind", "kind", .bookingKind, sync: "kind", heading: "KIND", search: .detail(1))
        case .title: ColumnSpec("title", "title", .text, rule: .line(), sync: "title", heading: "TITLE", search: .title)
        case .startsAt: ColumnSpec("starts_at", "startsAt", .optionalText, rule: .bookingTime, sync: "startsAt", heading: "STARTS AT")
        case .endsAt: ColumnSpec("ends_at", "endsAt", .optionalText, rule: .bookingTime, sync: "endsAt", heading: "ENDS AT")
        case .zone: ColumnSpec("zone", "zone", .optionalText, rule: .zone, sync: "zone")
        case .endZone: ColumnSpec("end_zone", "endZone", .optionalText, rule: .zone, sync: "endZone")
        case .reference:
            ColumnSpec("reference", "reference", .optionalText, rule: .line(FieldRules.referenceLimit), sync: "reference",
                       label: "ref", heading: "REFERENCE", search: .detail(0),
                       entry: EntryOption("--reference", "REF", "the booking or confirmation number"))
        case .seat:
            ColumnSpec("seat", "seat", .optionalText, rule: .line(FieldRules.TextLimit(characters: 20, bytes: 80)), sync: "seat",
                       label: "seat", heading: "SEAT", search: .detail(2),
                       entry: EntryOption("--seat", "SEAT", "the seat, e.g. 14C; on a train coach/seat, e.g. 7/42"))
        case .syncState: .syncState
        case .remoteVersion: .remoteVersion
        case .updatedAt: .updatedAt
        }
    }

    package func value(of booking: Booking) -> SQLValue {
        switch self {
        case .id: .text(booking.id.text)
        case .tripId: .text(booking.tripId.text)
        case .kind: .text(booking.kind.rawValue)
        case .title: .text(booking.title)
        case .startsAt: .optional(booking.startsAt?.text)
        case .endsAt: .optional(booking.endsAt?.text)
        case .zone: .optional(booking.zone)
        case .endZone: .optional(booking.endZone)
        case .reference: .optional(booking.reference)
        case .seat: .optional(booking.seat)
        case .syncState: .text(booking.syncState.rawValue)
        case .remoteVersion: .optional(booking.remoteVersion)
        case .updatedAt: .text(booking.updatedAt.utcStamp)
        }
    }

    @inlinable
    package static func record<Values: ColumnValues>(from values: Values) throws(Values.Failure) -> Booking {
        Booking(id: try values.id(Self.id), tripId: try values.id(Self.tripId), kind: try values.bookingKind(Self.kind),
                title: try values.text(Self.title), startsAt: try values.time(Self.startsAt),
                reference: try values.optionalText(Self.reference), syncState: try values.syncState(Self.syncState),
                remoteVersion: try values.version(Self.remoteVersion), updatedAt: try values.stamp(Self.updatedAt),
                endsAt: try values.time(Self.endsAt), zone: try values.optionalText(Self.zone),
                seat: try values.optionalText(Self.seat), endZone: try values.optionalText(Self.endZone))
    }

    /// An end needs a start and is not before it: checked as soon as both are (before the zone
    /// and the reference, as it always has been); an end's own zone needs an end.
    package static let checkedAcrossAfter = BookingColumn.endsAt
    package static func checkAcross(_ booking: Booking) throws {
        try FieldRules.bookingTimes(startsAt: booking.startsAt, endsAt: booking.endsAt)
        if let endZone = booking.endZone, booking.endsAt == nil {
            throw StoreError.invalidData("a booking with a zone of its end (endZone \(endZone.prefix(60))) needs an end (endsAt)")
        }
    }

    /// The zone each time is shown and read in: the end's own, else the booking's.
    package static func zoneColumns(of column: BookingColumn) -> [BookingColumn] {
        column == .endsAt ? [.endZone, .zone] : [.zone]
    }

    /// The columns the store keeps from the others, bound after them: the epochs the lists and the
    /// widget order and filter by (`BookingTime.epochs`).
    package static let derived = ["starts_at_epoch", "over_at_epoch"]
    package static func derivedValues(of booking: Booking) -> [SQLValue] {
        let epochs = BookingTime.epochs(startsAt: booking.startsAt, endsAt: booking.endsAt)
        return [.optional(epochs.start), .optional(epochs.overAt)]
    }
}
