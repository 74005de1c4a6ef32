import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine

/// How `booking add` and `booking edit` read the times a person types: in `--zone` when it is
/// given (a zone the system's time zone database must hold), else in the booking's own zone,
/// else in `TZ`'s (docs/cli.md, Time zones).
///
/// A time without an offset takes the zone's offset at that wall-clock time; one the clocks skip
/// there (spring forward) is refused with the nearest valid times, one they show twice (fall
/// back) needs its offset. A start with an offset, in a zone that was named, must have the zone's
/// offset then. The zone a new booking keeps is `--zone`, else `TZ`'s when its offset at the start
/// is the offset given — one offset fits dozens of zones, so a time whose offset is not `TZ`'s
/// keeps a fixed offset and no zone.
struct BookingZoneInput {
    let rules: TimeZoneRules
    /// The zone was named, by `--zone` or by the booking: a start's offset is checked against it.
    let isNamed: Bool
    /// `--zone ''`: the booking keeps fixed offsets.
    let isFixedOffset: Bool
    /// The booking's zone, when this machine's database cannot read it (synced from a newer
    /// one, or its file damaged): a time typed without an offset cannot be placed in it.
    let unreadableBookingZone: String?

    init(zoneOption: String?, bookingZone: String?, option: String = "--zone") throws {
        isFixedOffset = zoneOption?.isEmpty == true
        var unreadable: String?
        if let zoneOption, !zoneOption.isEmpty {
            rules = try Arguments.checkedZone(zoneOption, option: option)
            isNamed = true
        } else if zoneOption == nil, let bookingZone, let known = try? TimeZoneRules.named(bookingZone) {
            rules = known
            isNamed = true
        } else {
            if zoneOption == nil, let bookingZone { unreadable = bookingZone }
            rules = .local()
            isNamed = false
        }
        unreadableBookingZone = unreadable
    }

    /// The zone a booking starting at `start` keeps (see the type's documentation).
    func zone(for start: BookingTime?) -> String? {
        if isFixedOffset { return nil }
        if isNamed { return rules.name }
        guard rules.isDatabaseZone, TimeZoneRules.isPortableZoneName(rules.name), case .instant(let timestamp)? = start,
              rules.offset(at: timestamp.secondsSinceEpoch) == timestamp.offsetSeconds else { return nil }
        return rules.name
    }

    /// `--starts-at`/`--ends-at` read in the zone, or the usage error saying why not. An end may
    /// carry another offset than the zone's (a flight lands in another zone), unless the zone is
    /// the end's own (`--end-zone`: `checkingEnd`).
    func read(_ text: String, option: String, checkingEnd: Bool = false) throws -> BookingTime {
        if let zone = unreadableBookingZone, text.utf8.count != 10, let written = WrittenTime(iso8601: text), written.offset == nil {
            // Read in TZ's zone instead, it would be a wrong instant kept under the booking's zone.
            throw CommandLineError.usage("""
                \(option) \(text) has no offset, and the booking's zone \(zone.prefix(60)) is not in this system's time zone \
                database: give the time with its offset (e.g. \(text.prefix(16))+01:00), or --zone NAME
                """)
        }
        let checking = isNamed && (option == "--starts-at" || checkingEnd)
        switch BookingTime.reading(text, in: rules, checkingOffset: checking) {
        case .time(let time):
            // The years rule names the field as the JSON contract spells it, as every other path does.
            _ = try FieldRules.bookingTime(time.text, field: option == "--starts-at" ? "startsAt" : "endsAt")
            return time
        case .unreadable:
            throw Self.unreadable(text, option: option)
        case .gap(let before, let after):
            let jump = Timestamp(secondsSinceEpoch: after.secondsSinceEpoch, offsetSeconds: before.offsetSeconds)
            throw CommandLineError.usage("""
                \(option) \(text) does not exist in \(rules.name): the clocks go from \(jump.clockText) to \(after.clockText) \
                that night; the nearest valid times are \(Self.minute(before)) and \(Self.minute(after))
                """)
        case .overlap(let earlier, let later):
            throw CommandLineError.usage("""
                \(option) \(text) happens twice in \(rules.name) (the clocks go back that night): give its offset, \
                \(Self.minute(earlier)) (the first) or \(Self.minute(later)) (the second)
                """)
        case .wrongOffset(let given, let zoneOffset, let abbreviation):
            let written = String(text.prefix(16).suffix(5))
            throw CommandLineError.usage("""
                \(option) \(text) is not a time in \(rules.name), which is \(Timestamp.offsetText(zoneOffset)) (\(abbreviation)) then: \
                give \(written) without an offset for \(written) there, \(Self.minute(given.withOffset(zoneOffset))) for the same \
                instant, or \(option == "--starts-at" ? "--zone" : "--end-zone") '' to keep a fixed offset
                """)
        }
    }

    static func unreadable(_ text: String, option: String) -> CommandLineError {
        if let missing = Arguments.missingDay(String(text.prefix(10))), text.utf8.count == 10 || text.dropFirst(10).first == "T" {
            return .usage("\(option) '\(text.prefix(40))' \(missing)")
        }
        return .usage("\(option) '\(text.prefix(40))' is not a date or an ISO 8601 time: use YYYY-MM-DD (all day) or e.g. 2026-12-12T07:35+00:00")
    }

    /// `2027-03-28T02:00+01:00`: to the minute when the seconds are zero.
    static func minute(_ timestamp: Timestamp) -> String {
        var text = timestamp.iso8601()
        let seconds = text.index(text.startIndex, offsetBy: 16)..<text.index(text.startIndex, offsetBy: 19)
        if text[seconds] == ":00" { text.removeSubrange(seconds) }
        return text
    }
}
