import Glibc
import Synchronization

/// Why a time zone could not be used.
public enum TimeZoneError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not an IANA zone name the system's time zone database holds, nor a POSIX TZ rule.
    case unknownZone(String)
    /// The zone's file is there but is not a TZif file this reader understands.
    case unreadableZone(name: String, reason: String)

    public var description: String {
        switch self {
        case .unknownZone(let name):
            "'\(name.prefix(64))' names no time zone (expected an IANA name such as Europe/Lisbon, as in /usr/share/zoneinfo)"
        case .unreadableZone(let name, let reason):
            "the time zone file of \(name) cannot be read: \(reason)"
        }
    }
}

/// A time zone's rules: its UTC offsets, daylight-saving flags and abbreviations through time, read
/// from the system's time zone database (TZif files, RFC 8536, under `/usr/share/zoneinfo` or
/// `$TZDIR`) — the same files glibc's `localtime` reads — or from a POSIX TZ rule (`EST5EDT,M3.2.0,M11.1.0`).
///
///     let lisbon = try TimeZoneRules.named("Europe/Lisbon")
///     lisbon.localType(at: instant).abbreviation      // "WET" in December, "WEST" in July
///     lisbon.resolve(localSeconds: wallClock)         // .unique, .gap (spring forward), .overlap (fall back)
///
/// Instants after the file's last transition follow its footer rule, as RFC 8536 §3.3 asks, so a
/// booking in 2040 gets the same offset `date` gives it.
public struct TimeZoneRules: Sendable, Equatable {
    /// One kind of local time: its offset east of UTC, whether it is daylight-saving time, and its
    /// abbreviation (`EST`, `WEST`, or `+03` where the database has no letters).
    public struct LocalType: Sendable, Equatable {
        public let offset: Int
        public let isDaylightSaving: Bool
        public let abbreviation: String

        public init(offset: Int, isDaylightSaving: Bool, abbreviation: String) {
            self.offset = offset
            self.isDaylightSaving = isDaylightSaving
            self.abbreviation = abbreviation
        }
    }

    /// What a wall-clock time means in the zone.
    public enum Resolution: Sendable, Equatable {
        /// One instant: the time has this offset.
        case unique(offset: Int)
        /// No instant: the clocks jumped over it (spring forward). `transition` is the instant of
        /// the jump; the last valid time before it is one second earlier in `before`'s offset.
        case gap(transition: Int64, before: LocalType, after: LocalType)
        /// Two instants: the clocks showed it twice (fall back); `earlier` is the offset of the first.
        case overlap(earlier: Int, later: Int)
    }

    /// The IANA name (`Europe/Lisbon`) or the POSIX rule as given.
    public let name: String
    /// True when `name` is a zone of the time zone database (read with `named`), which another
    /// machine can look up again; false for a POSIX rule, an unnamed `/etc/localtime` or the UTC fallback.
    public let isDatabaseZone: Bool
    /// Transition instants (seconds since the epoch, ascending) and the local type from each on.
    package let transitions: [Int64]
    package let transitionTypes: [Int]
    package let types: [LocalType]
    /// The rule after the last transition (the TZif footer), if any.
    package let rule: PosixRule?

    /// Where the system keeps its zone files: `$TZDIR`, as glibc reads it, or `/usr/share/zoneinfo`.
    public static var databaseDirectory: String {
        if let directory = getenv("TZDIR").map({ String(cString: $0) }), !directory.isEmpty { return directory }
        return "/usr/share/zoneinfo"
    }

    /// The rules of the IANA zone `name`, read from the time zone database.
    public static func named(_ name: String, in directory: String = databaseDirectory) throws(TimeZoneError) -> TimeZoneRules {
        guard isZoneName(name) else { throw .unknownZone(name) }
        let bytes: [UInt8]
        do {
            let file = try FileDescriptor.openForReading(path: directory + "/" + name)
            guard try file.status().size <= 1 << 20 else { throw TimeZoneError.unreadableZone(name: name, reason: "larger than 1 MiB") }
            bytes = try file.readToEnd()
        } catch let error as TimeZoneError {
            throw error
        } catch {
            throw .unknownZone(name)
        }
        guard bytes.starts(with: Array("TZif".utf8)) else { throw .unknownZone(name) }
        do { return try TZifParser(bytes: bytes).rules(named: name, isDatabaseZone: true) } catch {
            throw .unreadableZone(name: name, reason: error.reason)
        }
    }

    /// The rules of a `TZ` value as glibc reads it: `:NAME` or `NAME` of a zone file, or a POSIX
    /// rule (`UTC0`, `EST5EDT,M3.2.0,M11.1.0`). Unlike glibc, a value that is neither is an error,
    /// not UTC.
    public static func fromEnvironmentValue(_ value: String, in directory: String = databaseDirectory) throws(TimeZoneError) -> TimeZoneRules {
        let name = value.hasPrefix(":") ? String(value.dropFirst()) : value
        do {
            return try named(name, in: directory)
        } catch {
            // A zone file that is there but damaged is that error; only a name with no file may be a rule.
            guard case .unknownZone = error else { throw error }
        }
        if !value.hasPrefix(":"), let rule = PosixRule(value) {
            return TimeZoneRules(name: value, isDatabaseZone: false, transitions: [], transitionTypes: [], types: [rule.standard], rule: rule)
        }
        throw .unknownZone(value)
    }

    /// The zone the process runs in: `TZ` if set (an error if it names no zone), else the
    /// system's `/etc/localtime`, else UTC.
    public static func current(environment: [String: String]) throws(TimeZoneError) -> TimeZoneRules {
        if let value = environment["TZ"], !value.isEmpty { return try fromEnvironmentValue(value) }
        if let rules = try? systemZone() { return rules }
        return utc
    }

    /// UTC with no database file behind it: what applies when nothing names a zone.
    public static let utc = TimeZoneRules(name: "UTC", isDatabaseZone: false, transitions: [], transitionTypes: [],
                                          types: [LocalType(offset: 0, isDaylightSaving: false, abbreviation: "UTC")], rule: nil)

    /// The zone this process reads local times in: `current(environment:)` with the process's own
    /// `TZ`. Executables check `TZ` first (`LocalZone.check`), so a bad value has been refused by
    /// the time this is asked; should it fail anyway, UTC, as glibc would. Read once per value of
    /// `TZ`, as glibc does: an import of local times reads the zone file once, not per record.
    public static func local() -> TimeZoneRules {
        let value = getenv("TZ").map { String(cString: $0) }
        return localCache.withLock { cached in
            if let cached, cached.tz == value { return cached.rules }
            let rules = (try? current(environment: value.map { ["TZ": $0] } ?? [:])) ?? utc
            cached = (value, rules)
            return rules
        }
    }

    private static let localCache = Mutex<(tz: String?, rules: TimeZoneRules)?>(nil)

    /// `/etc/localtime`, named after the zone file it links to when it is a link into the database.
    package static func systemZone() throws -> TimeZoneRules {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/etc/localtime", &buffer, buffer.count - 1)
        if count > 0 {
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let components = target.split(separator: "/")
            if let index = components.lastIndex(of: "zoneinfo"), index + 1 < components.count {
                return try named(components[(index + 1)...].joined(separator: "/"))
            }
        }
        let bytes = try FileDescriptor.openForReading(path: "/etc/localtime").readToEnd()
        return try TZifParser(bytes: bytes).rules(named: "localtime", isDatabaseZone: false)
    }

    /// An IANA-style name: components of letters, digits, `_`, `-`, `+`, `.` (not `.` or `..`),
    /// separated by single slashes, neither absolute nor empty.
    public static func isZoneName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255 else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { component in
            !component.isEmpty && component != "." && component != ".." && component.utf8.allSatisfy {
                ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39)
                    || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: ".")
            }
        }
    }

    /// A zone name that means the same place on every device: `isZoneName`, and none of the
    /// database's machine-specific or alternative entries (`localtime`, `posixrules`, `Factory`,
    /// the `posix/` and `right/` copies) — what a booking may keep and sync.
    public static func isPortableZoneName(_ name: String) -> Bool {
        guard isZoneName(name), !["localtime", "posixrules", "Factory"].contains(name) else { return false }
        return !name.hasPrefix("posix/") && !name.hasPrefix("right/")
    }

    // MARK: - Lookups

    /// The local type in force at `instant`.
    public func localType(at instant: Int64) -> LocalType {
        guard let last = transitions.last, instant >= transitions[0] else {
            // RFC 8536 §3.2: before the first transition, type 0 — or the rule when there is no table.
            if transitions.isEmpty, let rule { return rule.localType(at: instant) }
            return types[0]
        }
        if instant >= last, let rule { return rule.localType(at: instant) }
        var low = 0, high = transitions.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if transitions[middle] <= instant { low = middle } else { high = middle - 1 }
        }
        return types[transitionTypes[low]]
    }

    /// The UTC offset at `instant`, in seconds east.
    public func offset(at instant: Int64) -> Int { localType(at: instant).offset }

    /// What the wall-clock time `localSeconds` (seconds since 1970-01-01T00:00 on the zone's clock)
    /// means: one instant, none (a gap) or two (an overlap).
    public func resolve(localSeconds: Int64) -> Resolution {
        // Offsets change at most a few times a year: those in force a day either side are all the
        // candidates there are.
        var candidates: [Int] = []
        for probe in [localSeconds - 86_400, localSeconds, localSeconds + 86_400] {
            let offset = offset(at: probe)
            if !candidates.contains(offset) { candidates.append(offset) }
        }
        let valid = candidates.filter { offset(at: localSeconds - Int64($0)) == $0 }.sorted(by: >)
        switch valid.count {
        case 0:
            let before = localType(at: localSeconds - 86_400), after = localType(at: localSeconds + 86_400)
            // The jump lies between the two readings of the wall clock; find its instant.
            var low = localSeconds - Int64(after.offset), high = localSeconds - Int64(before.offset)
            while low < high {
                let middle = low + (high - low) / 2
                if offset(at: middle) == after.offset { high = middle } else { low = middle + 1 }
            }
            return .gap(transition: low, before: before, after: after)
        case 1:
            return .unique(offset: valid[0])
        default:
            return .overlap(earlier: valid[0], later: valid[valid.count - 1])
        }
    }
}

// MARK: - TZif files (RFC 8536)

private struct TZifParser {
    package struct Failure: Error { let reason: String }

    package let bytes: [UInt8]

    package func rules(named name: String, isDatabaseZone: Bool) throws(Failure) -> TimeZoneRules {
        var reader = Reader(bytes: bytes)
        let first = try reader.header()
        guard first.version >= 2 else {
            let body = try reader.body(first, timeSize: 4)
            return TimeZoneRules(name: name, isDatabaseZone: isDatabaseZone, transitions: body.transitions, transitionTypes: body.indices, types: body.types, rule: nil)
        }
        // Version 2+: skip the 32-bit block; the 64-bit one and the footer follow.
        try reader.skip(first.dataLength(timeSize: 4))
        let second = try reader.header()
        let body = try reader.body(second, timeSize: 8)
        let footer = try reader.footer()
        let rule = footer.isEmpty ? nil : PosixRule(footer)
        guard footer.isEmpty || rule != nil else { throw Failure(reason: "its footer rule '\(footer.prefix(40))' is not a POSIX TZ rule") }
        return TimeZoneRules(name: name, isDatabaseZone: isDatabaseZone, transitions: body.transitions, transitionTypes: body.indices, types: body.types, rule: rule)
    }

    package struct Header {
        package let version: Int
        package let isUTCCount, isStandardCount, leapCount, transitionCount, typeCount, characterCount: Int

        package func dataLength(timeSize: Int) -> Int {
            transitionCount * timeSize + transitionCount + typeCount * 6 + characterCount + leapCount * (timeSize + 4)
                + isStandardCount + isUTCCount
        }
    }

    package struct Reader {
        package let bytes: [UInt8]
        package var offset = 0

        package mutating func take(_ count: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard count >= 0, offset + count <= bytes.count else { throw Failure(reason: "it ends early") }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        package mutating func skip(_ count: Int) throws(Failure) { _ = try take(count) }

        package mutating func integer(_ size: Int) throws(Failure) -> Int64 {
            let slice = try take(size)
            var value: UInt64 = 0
            for byte in slice { value = value << 8 | UInt64(byte) }
            return size == 4 ? Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: value))) : Int64(bitPattern: value)
        }

        package mutating func header() throws(Failure) -> Header {
            guard try take(4).elementsEqual("TZif".utf8) else { throw Failure(reason: "no TZif header") }
            let versionByte = try take(1).first!
            let version = versionByte == 0 ? 1 : Int(versionByte) - 0x30
            guard (1...9).contains(version) else { throw Failure(reason: "unknown version") }
            try skip(15)
            var counts: [Int] = []
            for _ in 0..<6 {
                let count = try integer(4)
                guard (0...100_000).contains(count) else { throw Failure(reason: "implausible counts") }
                counts.append(Int(count))
            }
            guard counts[4] > 0 else { throw Failure(reason: "no local time types") }
            return Header(version: version, isUTCCount: counts[0], isStandardCount: counts[1], leapCount: counts[2],
                          transitionCount: counts[3], typeCount: counts[4], characterCount: counts[5])
        }

        package mutating func body(_ header: Header, timeSize: Int) throws(Failure) -> (transitions: [Int64], indices: [Int], types: [TimeZoneRules.LocalType]) {
            var transitions: [Int64] = []
            for _ in 0..<header.transitionCount {
                let instant = try integer(timeSize)
                guard transitions.last.map({ $0 < instant }) ?? true else { throw Failure(reason: "transitions out of order") }
                transitions.append(instant)
            }
            let indices = try take(header.transitionCount).map(Int.init)
            guard indices.allSatisfy({ $0 < header.typeCount }) else { throw Failure(reason: "a transition names no type") }
            var raw: [(offset: Int, isDST: Bool, index: Int)] = []
            for _ in 0..<header.typeCount {
                let offset = try integer(4)
                let isDST = try take(1).first! != 0
                let index = Int(try take(1).first!)
                guard (-89_999...93_599).contains(offset) else { throw Failure(reason: "an offset out of range") }
                raw.append((Int(offset), isDST, index))
            }
            let characters = Array(try take(header.characterCount))
            let types = try raw.map { (type) throws(Failure) -> TimeZoneRules.LocalType in
                guard type.index < max(characters.count, 1) else { throw Failure(reason: "an abbreviation out of range") }
                let end = characters[type.index...].firstIndex(of: 0) ?? characters.count
                return .init(offset: type.offset, isDaylightSaving: type.isDST,
                             abbreviation: String(decoding: characters.isEmpty ? [] : characters[type.index..<end], as: UTF8.self))
            }
            try skip(header.leapCount * (timeSize + 4) + header.isStandardCount + header.isUTCCount)
            return (transitions, indices, types)
        }

        package mutating func footer() throws(Failure) -> String {
            guard offset < bytes.count else { return "" }
            guard try take(1).first == 0x0a else { throw Failure(reason: "no footer") }
            guard let end = bytes[offset...].firstIndex(of: 0x0a) else { throw Failure(reason: "an unterminated footer") }
            return String(decoding: try take(end - offset), as: UTF8.self)
        }
    }
}

// MARK: - POSIX TZ rules

/// A POSIX TZ rule (`std offset [dst [offset] [,start[/time],end[/time]]]`, POSIX.1-2017 §8.3 with
/// RFC 8536's extensions: hours up to ±167 in the times): the TZif footer, or a `TZ` value.
package struct PosixRule: Sendable, Equatable {
    package let standard: TimeZoneRules.LocalType
    package let daylight: TimeZoneRules.LocalType?
    /// When daylight time starts and ends (in standard and daylight local time respectively).
    package let start: Transition?
    package let end: Transition?

    package struct Transition: Sendable, Equatable {
        package enum Day: Sendable, Equatable {
            /// `Jn`: day 1–365, February 29 never counted.
            case julian(Int)
            /// `n`: day 0–365, February 29 counted in leap years.
            case zeroBased(Int)
            /// `Mm.w.d`: weekday d (0 Sunday) of week w (5 = last) of month m.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
        }
        package let day: Day
        /// Seconds after local midnight (default 02:00).
        package let time: Int

        /// Seconds since the epoch of midnight (UTC clock) of the day in `year`.
        package func dayStart(in year: Int) -> Int64 {
            let days: Int
            switch day {
            case .julian(let n):
                let base = Self.firstOfMonth(1, year) + n - 1
                let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
                days = base + (isLeap && n >= 60 ? 1 : 0)
            case .zeroBased(let n):
                days = Self.firstOfMonth(1, year) + n
            case .monthWeekDay(let month, let week, let weekday):
                let first = Self.firstOfMonth(month, year)
                let firstWeekday = CivilDate(daysSinceEpoch: first).weekday
                var day = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
                let nextMonth = month == 12 ? Self.firstOfMonth(1, year + 1) : Self.firstOfMonth(month + 1, year)
                while day >= nextMonth { day -= 7 }
                days = day
            }
            return Int64(days) * 86_400
        }

        /// Days since the epoch of the first of `month` in `year`.
        package static func firstOfMonth(_ month: Int, _ year: Int) -> Int {
            let shiftedYear = month <= 2 ? year - 1 : year
            let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
            let yearOfEra = shiftedYear - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5
            return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
        }
    }

    package init?(_ text: String) {
        var scanner = Scanner(bytes: Array(text.utf8))
        guard let standardName = scanner.name(), let standardOffset = scanner.time(allowsSign: true) else { return nil }
        standard = .init(offset: -standardOffset, isDaylightSaving: false, abbreviation: standardName)
        guard !scanner.isAtEnd else {
            (daylight, start, end) = (nil, nil, nil)
            return
        }
        guard let daylightName = scanner.name() else { return nil }
        var daylightOffset = -standardOffset + 3600
        if !scanner.isAtEnd, scanner.peek != UInt8(ascii: ",") {
            guard let value = scanner.time(allowsSign: true) else { return nil }
            daylightOffset = -value
        }
        daylight = .init(offset: daylightOffset, isDaylightSaving: true, abbreviation: daylightName)
        if scanner.isAtEnd {
            // POSIX leaves the default rule to the implementation; glibc uses the US rule.
            start = Transition(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200)
            end = Transition(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)
            return
        }
        guard scanner.consume(UInt8(ascii: ",")), let start = scanner.transition(), scanner.consume(UInt8(ascii: ",")),
              let end = scanner.transition(), scanner.isAtEnd
        else { return nil }
        self.start = start
        self.end = end
    }

    package func localType(at instant: Int64) -> TimeZoneRules.LocalType {
        guard let daylight, let start, let end else { return standard }
        let year = CivilDate(daysSinceEpoch: Int((instant + Int64(standard.offset)).floorDivided(by: 86_400))).year
        // Check the year before and after too: a southern rule's daylight time spans new year.
        for candidate in [year - 1, year, year + 1] {
            let begins = start.dayStart(in: candidate) + Int64(start.time) - Int64(standard.offset)
            var ends = end.dayStart(in: candidate) + Int64(end.time) - Int64(daylight.offset)
            if ends <= begins { ends = end.dayStart(in: candidate + 1) + Int64(end.time) - Int64(daylight.offset) }
            if instant >= begins && instant < ends { return daylight }
        }
        return standard
    }

    private struct Scanner {
        package let bytes: [UInt8]
        package var index = 0

        package var isAtEnd: Bool { index == bytes.count }
        package var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        package mutating func consume(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// `EST` (3+ letters) or `<+03>` (3+ of letters, digits, `+`, `-`).
        package mutating func name() -> String? {
            let begin = index
            if consume(UInt8(ascii: "<")) {
                while let byte = peek, byte != UInt8(ascii: ">") { index += 1 }
                guard consume(UInt8(ascii: ">")), index - begin - 2 >= 3 else { return nil }
                return String(decoding: bytes[(begin + 1)..<(index - 1)], as: UTF8.self)
            }
            while let byte = peek, (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a { index += 1 }
            guard index - begin >= 3 else { return nil }
            return String(decoding: bytes[begin..<index], as: UTF8.self)
        }

        package mutating func number(maximum: Int) -> Int? {
            let begin = index
            var value = 0
            while let byte = peek, byte >= 0x30 && byte <= 0x39, index - begin < 3 {
                value = value * 10 + Int(byte - 0x30)
                index += 1
            }
            guard index > begin, value <= maximum else { return nil }
            return value
        }

        /// `[+-]hh[:mm[:ss]]`, hours up to 167 (RFC 8536's extension), in seconds.
        package mutating func time(allowsSign: Bool) -> Int? {
            var sign = 1
            if allowsSign {
                if consume(UInt8(ascii: "-")) { sign = -1 } else { _ = consume(UInt8(ascii: "+")) }
            }
            guard let hours = number(maximum: 167) else { return nil }
            var seconds = hours * 3600
            if consume(UInt8(ascii: ":")) {
                guard let minutes = number(maximum: 59) else { return nil }
                seconds += minutes * 60
                if consume(UInt8(ascii: ":")) {
                    guard let value = number(maximum: 59) else { return nil }
                    seconds += value
                }
            }
            return sign * seconds
        }

        package mutating func transition() -> Transition? {
            let day: Transition.Day
            if consume(UInt8(ascii: "J")) {
                guard let n = number(maximum: 365), n >= 1 else { return nil }
                day = .julian(n)
            } else if consume(UInt8(ascii: "M")) {
                guard let month = number(maximum: 12), month >= 1, consume(UInt8(ascii: ".")),
                      let week = number(maximum: 5), week >= 1, consume(UInt8(ascii: ".")),
                      let weekday = number(maximum: 6)
                else { return nil }
                day = .monthWeekDay(month: month, week: week, weekday: weekday)
            } else {
                guard let n = number(maximum: 365) else { return nil }
                day = .zeroBased(n)
            }
            var time = 7200
            if consume(UInt8(ascii: "/")) {
                guard let value = self.time(allowsSign: true) else { return nil }
                time = value
            }
            return Transition(day: day, time: time)
        }
    }
}
