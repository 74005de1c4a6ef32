public import TripBoardSystem

/// When a booking starts or ends: a time with the offset it was given in
/// (`2026-12-12T07:35:00+00:00`), or a date alone for an all-day booking (`2026-12-14`).
///
/// The store keeps the text (`starts_at`, `ends_at`) and, to order and filter without parsing,
/// seconds since the epoch: an all-day start counts from 00:00 UTC of its day, an all-day end
/// to the end of its day (24:00 UTC), so a booking is over once its last day is.
public enum BookingTime: Sendable, Equatable, Codable, CustomStringConvertible {
    case instant(Timestamp)
    case allDay(CivilDate)

    /// Parses a `YYYY-MM-DD` date or an ISO 8601 time (`Timestamp(iso8601:)`: without a zone,
    /// local to `TZ`).
    public init?(_ text: some StringProtocol) {
        if text.utf8.count == 10 {
            guard let date = CivilDate(text) else { return nil }
            self = .allDay(date)
        } else {
            guard let timestamp = Timestamp(iso8601: text) else { return nil }
            self = .instant(timestamp)
        }
    }

    /// The stored form: `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS±HH:MM`.
    public var text: String {
        switch self {
        case .instant(let timestamp): timestamp.iso8601()
        case .allDay(let date): date.description
        }
    }

    /// Times are equal when they are written alike: the same instant in the same offset (08:35+01:00
    /// is not 07:35Z, which shows another clock), or the same day.
    public static func == (lhs: BookingTime, rhs: BookingTime) -> Bool {
        switch (lhs, rhs) {
        case (.instant(let left), .instant(let right)): left == right && left.offsetSeconds == right.offsetSeconds
        case (.allDay(let left), .allDay(let right)): left == right
        default: false
        }
    }

    /// In JSON, the stored form (`text`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let time = BookingTime(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a date (YYYY-MM-DD) or an ISO 8601 time")
        }
        self = time
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    public var description: String { text }

    /// True for a date without a time.
    public var isAllDay: Bool { if case .allDay = self { true } else { false } }

    /// Where it begins: the instant, or 00:00 UTC of the day.
    public var startEpoch: Int64 {
        switch self {
        case .instant(let timestamp): timestamp.secondsSinceEpoch
        case .allDay(let date): Int64(date.daysSinceEpoch) * 86_400
        }
    }

    /// Where it is over: the instant, or 24:00 UTC of the day.
    public var endEpoch: Int64 {
        switch self {
        case .instant(let timestamp): timestamp.secondsSinceEpoch
        case .allDay(let date): Int64(date.daysSinceEpoch + 1) * 86_400
        }
    }

    /// The date as written (a time's date in its own offset).
    public var date: CivilDate {
        switch self {
        case .instant(let timestamp): timestamp.localDate
        case .allDay(let date): date
        }
    }

    /// The store's `starts_at_epoch` and `over_at_epoch` for a booking's `startsAt` and `endsAt`:
    /// the start's epoch, and when the booking is over (see `Schema.bookingTimesAndSearch`).
    public static func epochs(startsAt start: BookingTime?, endsAt end: BookingTime?) -> (start: Int64?, overAt: Int64?) {
        (start?.startEpoch, end?.endEpoch ?? start?.endEpoch)
    }
}

extension FieldRules {
    /// A booking's start or end (`startsAt`, `endsAt`): a `YYYY-MM-DD` date (all day) or an ISO
    /// 8601 time, local (`TZ`) without a zone, kept in the offset it was given in. A time, as
    /// written and in UTC, must fall within the years 0001–9999.
    public static func bookingTime(_ text: String, field: String) throws -> String { try bookingTimeValue(text, field: field).text }

    /// `bookingTime(_:field:)` as the time it names: what a model holds of text from outside.
    public static func bookingTimeValue(_ text: String, field: String) throws -> BookingTime {
        guard let time = BookingTime(text) else {
            throw StoreError.invalidField(field: field, rule: "'\(text.prefix(40))' is not a date (YYYY-MM-DD) or an ISO 8601 time")
        }
        if case .instant(let timestamp) = time { _ = try instant(timestamp, field: field) }
        return time
    }

    /// A booking's end against its start: an end needs a start, and may not come before it — a
    /// time not before the start's instant; where either is a date, not on an earlier day.
    public static func bookingTimes(startsAt start: BookingTime?, endsAt end: BookingTime?) throws {
        guard let end else { return }
        guard let start else {
            throw StoreError.invalidData("a booking with an end (endsAt \(end)) needs a start (startsAt)")
        }
        let before: Bool
        if case .instant(let startInstant) = start, case .instant(let endInstant) = end {
            before = endInstant.secondsSinceEpoch < startInstant.secondsSinceEpoch
        } else {
            before = end.date < start.date
        }
        if before { throw StoreError.invalidData("the booking's end \(end) is before its start \(start)") }
    }
}

extension Booking {
    /// When a booking begins and when it is over, as instants: a time is itself (one without an
    /// end is over once it starts); a date runs from the start of its day to the end of the last
    /// one, in the booking's zone (the end's own for the end), else `viewer`'s.
    public func span(viewer: TimeZoneRules) -> (start: Int64, over: Int64)? {
        guard let start = startsAt else { return nil }
        let end = endsAt ?? start
        // Read only for a date: a time carries its own offset (the widget reads no zone file for it).
        func instant(_ time: BookingTime, endOfDay: Bool) -> Int64 {
            switch time {
            case .instant(let timestamp): return timestamp.secondsSinceEpoch
            case .allDay(let date):
                let rules = (endOfDay ? zoneOfEnd : zone).flatMap { try? TimeZoneRules.named($0) } ?? viewer
                // Local midnight: the wall clock as if UTC, less the zone's offset then.
                let wall = Int64(date.daysSinceEpoch + (endOfDay ? 1 : 0)) * 86_400
                return wall - Int64(rules.offset(at: wall - Int64(rules.offset(at: wall))))
            }
        }
        return (instant(start, endOfDay: false), instant(end, endOfDay: true))
    }
}
