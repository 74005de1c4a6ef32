public import TripBoardSystem

/// What a time typed for a booking means in the booking's zone (`BookingTime.reading`).
public enum ZonedReading: Sendable, Equatable {
    /// One instant, written in the zone's offset then (or a date alone, all day).
    case time(BookingTime)
    /// A wall-clock time the clocks skip (spring forward): the last valid minute before the jump
    /// and the first after it, each in its own offset.
    case gap(before: Timestamp, after: Timestamp)
    /// A wall-clock time the clocks show twice (fall back): the two instants, earlier first.
    case overlap(earlier: Timestamp, later: Timestamp)
    /// A time with an offset the zone does not have at that instant.
    case wrongOffset(given: Timestamp, zoneOffset: Int, abbreviation: String)
    /// Neither a date nor an ISO 8601 time.
    case unreadable
}

extension BookingTime {
    /// Reads `text` — `YYYY-MM-DD`, or an ISO 8601 time with or without an offset — as a time in
    /// `zone`. A time without an offset takes the zone's offset at that wall-clock time, and is
    /// refused when the clocks skip it or show it twice there; a time with an offset must, when
    /// `checkingOffset`, have the zone's offset at that instant (a `+02:00` in Lisbon in December
    /// is a mistake in one of the two).
    public static func reading(_ text: String, in zone: TimeZoneRules, checkingOffset: Bool = true) -> ZonedReading {
        if text.utf8.count == 10 { return BookingTime(text).map { .time($0) } ?? .unreadable }
        guard let written = WrittenTime(iso8601: text) else { return .unreadable }
        if let offset = written.offset {
            let timestamp = written.timestamp(offset: offset)
            let type = zone.localType(at: timestamp.secondsSinceEpoch)
            if checkingOffset, type.offset != offset {
                return .wrongOffset(given: timestamp, zoneOffset: type.offset, abbreviation: type.abbreviation)
            }
            return .time(.instant(timestamp))
        }
        switch zone.resolve(localSeconds: written.localSeconds) {
        case .unique(let offset):
            return .time(.instant(written.timestamp(offset: offset)))
        case .gap(let transition, let before, let after):
            return .gap(before: Timestamp(secondsSinceEpoch: transition - 60, offsetSeconds: before.offset),
                        after: Timestamp(secondsSinceEpoch: transition, offsetSeconds: after.offset))
        case .overlap(let earlier, let later):
            return .overlap(earlier: written.timestamp(offset: earlier), later: written.timestamp(offset: later))
        }
    }

    /// A stored time written again in `zone`'s offset at its instant; a date alone stays as it is.
    public static func reexpressed(_ time: BookingTime, in zone: TimeZoneRules) -> BookingTime {
        guard case .instant(let timestamp) = time else { return time }
        return .instant(timestamp.withOffset(zone.offset(at: timestamp.secondsSinceEpoch)))
    }
}

/// How a booking's times read for a person, as the widget, `booking list` and `trip show` print
/// them: `Sat 12 Dec 07:35`, with the year when it is not the trip's (`Sat 2 Jan 2027 07:35`), and
/// a zone marker when the booking's clock is not the reader's (`16:30 EST`, or `16:30 UTC+2` for
/// a booking with a fixed offset). A time is always shown on the booking's own clock: a 07:35
/// departure from Lisbon reads 07:35 wherever the reader is.
public struct BookingTimeText {
    public static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    public static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The reader's clock at an instant.
    private let viewer: (Int64) -> TimeZoneRules.LocalType
    /// Zones read so far (nil: not in this machine's database).
    private var zones: [String: TimeZoneRules?] = [:]

    /// For a reader in `viewer`.
    public init(viewer: TimeZoneRules) { self.viewer = { viewer.localType(at: $0) } }

    /// For the reader of this process: the local zone as glibc has it (`TZ`, checked by
    /// `LocalZone`, else `/etc/localtime`), loaded already by any local date, so that showing
    /// a time reads no zone file beyond the booking's own.
    public init() { viewer = { Timestamp.localType(at: $0) } }

    /// `Sat 12 Dec`.
    public static func day(_ date: CivilDate) -> String {
        "\(weekdays[date.weekday]) \(date.day) \(months[date.month - 1])"
    }

    /// `stored` (a booking's `startsAt` or `endsAt`) for a person; nil for nil or an unreadable text.
    public mutating func text(_ time: BookingTime?, zone: String?, tripYear: Int?) -> String? {
        guard let time else { return nil }
        let date = time.date
        var day = Self.day(date)
        if let tripYear, tripYear != date.year { day += " \(date.year)" }
        guard case .instant(let timestamp) = time else { return day }
        guard let marker = marker(timestamp, zone: zone) else { return day + " " + timestamp.clockText }
        return day + " " + timestamp.clockText + " " + marker
    }

    /// `text(_:zone:tripYear:)` of a stored time given as its bytes (a list's column read in
    /// place), appended to `output`: the same text, without a `String` for the store's own forms
    /// (`YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS±HH:MM`). Any other text is read by `text`. Nothing is
    /// written for no bytes or an unreadable text.
    public mutating func write(stored: UnsafeRawBufferPointer, zone: String?, tripYear: Int?, into output: inout [UInt8]) {
        guard !stored.isEmpty else { return }
        guard let time = StoredTime(stored) else {
            if let text = text(BookingTime(String(decoding: stored, as: UTF8.self)), zone: zone, tripYear: tripYear) { output += text.utf8 }
            return
        }
        let date = time.date
        // Byte by byte: `append(contentsOf:)` of a slice costs more than the bytes themselves.
        for index in (date.weekday * 3)..<(date.weekday * 3 + 3) { output.append(Self.weekdayLetters[index]) }
        output.append(0x20)
        output.appendDecimal(date.day)
        output.append(0x20)
        for index in ((date.month - 1) * 3)..<(date.month * 3) { output.append(Self.monthLetters[index]) }
        if let tripYear, tripYear != date.year {
            output.append(0x20)
            output.appendDecimal(date.year)
        }
        guard let clock = time.clock else { return }
        output.append(0x20)
        for index in 11..<16 { output.append(stored[index]) }  // HH:MM, as written: the booking's own clock
        let instant = Int64(date.daysSinceEpoch) * 86_400 + Int64(clock.secondOfDay - clock.offset)
        if let marker = marker(Timestamp(secondsSinceEpoch: instant, offsetSeconds: clock.offset), zone: zone) {
            output.append(0x20)
            output += marker.utf8
        }
    }

    private static let weekdayLetters = Array(weekdays.joined().utf8)
    private static let monthLetters = Array(months.joined().utf8)

    /// A stored time in one of the forms the store writes, read from its bytes with the checks
    /// `BookingTime(_:)` makes (nil for anything else: that path reads it).
    private struct StoredTime {
        var date: CivilDate
        /// A time's second of the day and offset; nil for an all-day date.
        var clock: (secondOfDay: Int, offset: Int)?

        init?(_ bytes: UnsafeRawBufferPointer) {
            func number(_ range: Range<Int>) -> Int? { CivilDate.number(bytes, range) }
            guard bytes.count == 10 || bytes.count == 25,
                  let date = CivilDate(utf8: UnsafeRawBufferPointer(rebasing: bytes[0..<10])) else { return nil }
            self.date = date
            guard bytes.count == 25 else { clock = nil; return }
            let sign = bytes[19]
            guard bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), bytes[22] == UInt8(ascii: ":"),
                  let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
                  let offsetHours = number(20..<22), let offsetMinutes = number(23..<25),
                  hour < 24, minute < 60, second < 60, offsetHours <= 18, offsetMinutes < 60 else { return nil }
            let offset = (sign == UInt8(ascii: "-") ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
            clock = (hour * 3600 + minute * 60 + second, offset)
        }
    }

    /// The zone marker of a time, nil when the reader's clock shows the same.
    public mutating func marker(_ timestamp: Timestamp, zone: String?) -> String? {
        let instant = timestamp.secondsSinceEpoch
        // The zone's abbreviation, where the zone is known here and the time is in its offset —
        // or its city, where the database has no letters for it (`+04` says less than `Dubai`).
        let abbreviation = zone.flatMap { name in rules(of: name).map { ($0.localType(at: instant), name) } }
            .flatMap { type, name in type.offset == timestamp.offsetSeconds ? Self.lettered(type.abbreviation, zone: name) : nil }
        let reader = viewer(instant)
        if reader.offset == timestamp.offsetSeconds && (abbreviation == nil || abbreviation == reader.abbreviation) { return nil }
        return abbreviation ?? Self.offsetMarker(timestamp.offsetSeconds)
    }

    /// `abbreviation` when it has letters (`JST`, `WET`), else the zone's city (`Asia/Dubai` →
    /// `Dubai`, `America/Argentina/Buenos_Aires` → `Buenos Aires`).
    static func lettered(_ abbreviation: String, zone: String) -> String {
        guard abbreviation.first == "+" || abbreviation.first == "-",
              let city = zone.split(separator: "/").last, zone.contains("/") else { return abbreviation }
        return city.replacingUnderscores()
    }

    /// `UTC`, `UTC+2`, `UTC-3:30`, `UTC+5:45`.
    public static func offsetMarker(_ offset: Int) -> String {
        guard offset != 0 else { return "UTC" }
        let magnitude = abs(offset)
        let minutes = magnitude / 60 % 60
        return "UTC" + (offset < 0 ? "-" : "+") + "\(magnitude / 3600)" + (minutes == 0 ? "" : ":" + CivilDate.pad(minutes, 2))
    }

    private mutating func rules(of zone: String) -> TimeZoneRules? {
        if let known = zones[zone] { return known }
        let rules = try? TimeZoneRules.named(zone)
        zones[zone] = rules
        return rules
    }
}

private extension Substring {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? " " : $0 }) }
}
