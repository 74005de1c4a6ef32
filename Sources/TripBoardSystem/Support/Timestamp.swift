import Glibc

/// An instant with the UTC offset it was written in: `2026-12-12T07:35:00+00:00`.
///
/// Bookings keep the offset so a 07:35 departure in Lisbon prints as 07:35 wherever the reader is,
/// while `secondsSinceEpoch` orders them correctly across zones.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let secondsSinceEpoch: Int64
    /// Seconds east of UTC.
    public let offsetSeconds: Int
    /// Milliseconds within the second, for `updatedAt` stamps.
    public let milliseconds: Int

    public init(secondsSinceEpoch: Int64, offsetSeconds: Int = 0, milliseconds: Int = 0) {
        self.secondsSinceEpoch = secondsSinceEpoch
        self.offsetSeconds = offsetSeconds
        self.milliseconds = milliseconds
    }

    /// Now, in UTC, to the millisecond.
    public static func now() -> Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(secondsSinceEpoch: Int64(time.tv_sec), milliseconds: Int(time.tv_nsec / 1_000_000))
    }

    /// Parses ISO 8601 `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM|±HHMM]` (a space may stand for `T`).
    /// Without a zone the time is local, in the zone of the `TZ` environment (as `date` reads it):
    /// a time the clocks skip there (a DST gap) is no time (nil), one they show twice (an overlap)
    /// is the first. `WrittenTime` says which case a time is in, for callers that explain.
    public init?(iso8601 text: some StringProtocol) {
        guard let written = WrittenTime(iso8601: text) else { return nil }
        if let offset = written.offset {
            self = written.timestamp(offset: offset)
            return
        }
        switch TimeZoneRules.local().resolve(localSeconds: written.localSeconds) {
        case .unique(let offset), .overlap(let offset, _): self = written.timestamp(offset: offset)
        case .gap: return nil
        }
    }

    /// The local zone's offset at this instant.
    public static func localOffset(at secondsSinceEpoch: Int64) -> Int { Int(localFields(at: secondsSinceEpoch).tm_gmtoff) }

    /// The local zone's offset, daylight-saving flag and abbreviation at this instant, as glibc's
    /// `localtime_r` has them (`TZ`, else `/etc/localtime`, read once per process by glibc).
    public static func localType(at secondsSinceEpoch: Int64) -> TimeZoneRules.LocalType {
        let fields = localFields(at: secondsSinceEpoch)
        return TimeZoneRules.LocalType(offset: Int(fields.tm_gmtoff), isDaylightSaving: fields.tm_isdst > 0,
                                       abbreviation: fields.tm_zone.map { String(cString: $0) } ?? "")
    }

    private static func localFields(at secondsSinceEpoch: Int64) -> tm {
        var instant = time_t(secondsSinceEpoch)
        var fields = tm()
        localtime_r(&instant, &fields)
        return fields
    }

    /// `+01:00`, `-03:30`: an offset east of UTC as ISO 8601 writes it.
    public static func offsetText(_ seconds: Int) -> String {
        let magnitude = abs(seconds)
        return (seconds < 0 ? "-" : "+") + CivilDate.pad(magnitude / 3600, 2) + ":" + CivilDate.pad(magnitude / 60 % 60, 2)
    }

    /// `07:35`: hour and minute on the wall clock in this timestamp's own offset.
    public var clockText: String {
        let (hour, minute) = localTime
        return CivilDate.pad(hour, 2) + ":" + CivilDate.pad(minute, 2)
    }

    /// The same instant expressed in another offset.
    public func withOffset(_ offsetSeconds: Int) -> Timestamp {
        Timestamp(secondsSinceEpoch: secondsSinceEpoch, offsetSeconds: offsetSeconds, milliseconds: milliseconds)
    }

    /// The same instant in this process's local zone (`TZ`), at its offset then.
    public var inLocalZone: Timestamp { withOffset(Self.localOffset(at: secondsSinceEpoch)) }

    /// The wall-clock date and time in this timestamp's own offset.
    public var localDate: CivilDate {
        CivilDate(daysSinceEpoch: Int((secondsSinceEpoch + Int64(offsetSeconds)).floorDivided(by: 86_400)))
    }

    /// Hour and minute on the wall clock in this timestamp's own offset.
    public var localTime: (hour: Int, minute: Int) {
        let local = secondsSinceEpoch + Int64(offsetSeconds)
        let secondOfDay = Int(local - local.floorDivided(by: 86_400) * 86_400)
        return (secondOfDay / 3600, secondOfDay / 60 % 60)
    }

    /// `2026-12-12T07:35:00+01:00`, or with `Z` for UTC when `utcDesignator` is set.
    public func iso8601(includingMilliseconds: Bool = false, utcDesignator: Bool = false) -> String {
        let local = secondsSinceEpoch + Int64(offsetSeconds)
        let date = localDate
        // The forms the store keeps, written byte by byte (an import writes one per record).
        if (0...9999).contains(date.year), abs(offsetSeconds) < 100 * 3600 {
            let secondOfDay = Int(local - Int64(date.daysSinceEpoch) * 86_400)
            return String(unsafeUninitializedCapacity: 29) { buffer in
                var index = 0
                func digits(_ value: Int, _ width: Int) {
                    var divisor = width == 4 ? 1000 : width == 3 ? 100 : 10
                    while divisor > 0 {
                        buffer[index] = UInt8(ascii: "0") + UInt8(value / divisor % 10)
                        index += 1
                        divisor /= 10
                    }
                }
                func byte(_ character: Unicode.Scalar) {
                    buffer[index] = UInt8(character.value)
                    index += 1
                }
                digits(date.year, 4); byte("-"); digits(date.month, 2); byte("-"); digits(date.day, 2); byte("T")
                digits(secondOfDay / 3600, 2); byte(":"); digits(secondOfDay / 60 % 60, 2); byte(":"); digits(secondOfDay % 60, 2)
                if includingMilliseconds { byte("."); digits(milliseconds, 3) }
                if offsetSeconds == 0 && utcDesignator {
                    byte("Z")
                } else {
                    let magnitude = abs(offsetSeconds)
                    byte(offsetSeconds < 0 ? "-" : "+"); digits(magnitude / 3600, 2); byte(":"); digits(magnitude / 60 % 60, 2)
                }
                return index
            }
        }
        let secondOfDay = Int(local - Int64(date.daysSinceEpoch) * 86_400)
        var text = date.description + "T" + CivilDate.pad(secondOfDay / 3600, 2) + ":"
            + CivilDate.pad(secondOfDay / 60 % 60, 2) + ":" + CivilDate.pad(secondOfDay % 60, 2)
        if includingMilliseconds { text += "." + CivilDate.pad(milliseconds, 3) }
        if offsetSeconds == 0 && utcDesignator { return text + "Z" }
        return text + Self.offsetText(offsetSeconds)
    }

    /// The form `updatedAt` uses: UTC with milliseconds, `2026-11-30T23:12:17.123Z`.
    public var utcStamp: String { withOffset(0).iso8601(includingMilliseconds: true, utcDesignator: true) }

    public var description: String { iso8601() }

    /// Timestamps are equal when they name the same instant, whatever offset each is written in
    /// (07:35Z == 08:35+01:00), consistent with `<`.
    public static func == (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.secondsSinceEpoch, lhs.milliseconds) == (rhs.secondsSinceEpoch, rhs.milliseconds)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(secondsSinceEpoch)
        hasher.combine(milliseconds)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.secondsSinceEpoch, lhs.milliseconds) < (rhs.secondsSinceEpoch, rhs.milliseconds)
    }
}

extension Int64 {
    package func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// An ISO 8601 time as it was written — the wall-clock reading and the offset, if one was given —
/// before any zone has said which instant it is.
public struct WrittenTime: Sendable, Equatable {
    /// Seconds since 1970-01-01T00:00 on the clock it was written on.
    public let localSeconds: Int64
    public let milliseconds: Int
    /// Seconds east of UTC when the text gives `Z` or `±HH:MM`; nil for a local time.
    public let offset: Int?

    /// Parses `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM|±HHMM|±HH]` (a space may stand for `T`).
    public init?(iso8601 text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 16, let date = CivilDate(String(decoding: bytes[0..<10], as: UTF8.self)),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "),
              bytes[13] == UInt8(ascii: ":"),
              let hour = CivilDate.number(bytes[11..<13]), let minute = CivilDate.number(bytes[14..<16]),
              hour < 24, minute < 60
        else { return nil }
        var index = 16
        var second = 0
        var milliseconds = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            guard bytes.count >= index + 3, let value = CivilDate.number(bytes[(index + 1)..<(index + 3)]), value < 60 else { return nil }
            second = value
            index += 3
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
                index += 1
                var digits = 0
                while index < bytes.count, let digit = CivilDate.number(bytes[index..<(index + 1)]) {
                    if digits < 3 { milliseconds = milliseconds * 10 + digit }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                if digits < 3 { for _ in digits..<3 { milliseconds *= 10 } }
            }
        }
        localSeconds = Int64(date.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        self.milliseconds = milliseconds
        guard index < bytes.count else {
            offset = nil
            return
        }
        guard let offset = Self.offset(bytes[index...]) else { return nil }
        self.offset = offset
    }

    /// `Z`, `±HH`, `±HHMM` or `±HH:MM` → seconds east of UTC.
    private static func offset(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard let first = bytes.first else { return nil }
        if first == UInt8(ascii: "Z") || first == UInt8(ascii: "z") { return bytes.count == 1 ? 0 : nil }
        guard first == UInt8(ascii: "+") || first == UInt8(ascii: "-") else { return nil }
        let sign = first == UInt8(ascii: "-") ? -1 : 1
        let rest = Array(bytes.dropFirst())
        let hoursAndMinutes: (Int, Int)?
        switch rest.count {
        case 2: hoursAndMinutes = CivilDate.number(rest[0..<2]).map { ($0, 0) }
        case 4: hoursAndMinutes = CivilDate.number(rest[0..<2]).flatMap { h in CivilDate.number(rest[2..<4]).map { (h, $0) } }
        case 5 where rest[2] == UInt8(ascii: ":"):
            hoursAndMinutes = CivilDate.number(rest[0..<2]).flatMap { h in CivilDate.number(rest[3..<5]).map { (h, $0) } }
        default: hoursAndMinutes = nil
        }
        guard let (hours, minutes) = hoursAndMinutes, hours <= 18, minutes < 60 else { return nil }
        return sign * (hours * 3600 + minutes * 60)
    }

    /// The instant this reading is at the given offset.
    public func timestamp(offset: Int) -> Timestamp {
        Timestamp(secondsSinceEpoch: localSeconds - Int64(offset), offsetSeconds: offset, milliseconds: milliseconds)
    }
}

/// In JSON a timestamp is a stamp as the store keeps `updatedAt`: UTC with milliseconds,
/// `2026-11-30T23:12:17.123Z` (the instant, whatever offset it was written in). Reading takes an
/// ISO 8601 time that says its zone (`Z` or an offset): a stamp without one names no instant.
extension Timestamp: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard WrittenTime(iso8601: text)?.offset != nil, let timestamp = Timestamp(iso8601: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time with a zone")
        }
        self = timestamp
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(utcStamp)
    }
}

extension Timestamp {
    /// A stamp as the store keeps it (`updatedAt`, in UTC: `2026-11-30T23:12:17.123Z`), read as a
    /// row is: text that is no time (a damaged page, which `container check` reports) reads as the
    /// epoch.
    public init(stored text: some StringProtocol) {
        self = Timestamp(storedStamp: text) ?? Timestamp(iso8601: text) ?? Timestamp(secondsSinceEpoch: 0)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` exactly, read without a copy: what every row of the store holds.
    private init?(storedStamp text: some StringProtocol) {
        var text = String(text)
        let parsed = text.withUTF8 { bytes -> Timestamp? in
            guard bytes.count == 24, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  bytes[19] == UInt8(ascii: "."), bytes[23] == UInt8(ascii: "Z") else { return nil }
            let raw = UnsafeRawBufferPointer(bytes)
            guard let date = CivilDate(utf8: UnsafeRawBufferPointer(rebasing: raw[0..<10])),
                  let hour = CivilDate.number(raw, 11..<13), let minute = CivilDate.number(raw, 14..<16),
                  let second = CivilDate.number(raw, 17..<19), let milliseconds = CivilDate.number(raw, 20..<23),
                  hour < 24, minute < 60, second < 60 else { return nil }
            return Timestamp(secondsSinceEpoch: Int64(date.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60 + second),
                             milliseconds: milliseconds)
        }
        guard let parsed else { return nil }
        self = parsed
    }
}
