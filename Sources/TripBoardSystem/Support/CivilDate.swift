import Glibc

/// A calendar date with no time or zone (`YYYY-MM-DD`), as trips use: a trip to Lisbon from the
/// 12th to the 15th is those days wherever the traveller is.
public struct CivilDate: Sendable, Hashable, Comparable, CodableAsText {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Parses a strict `YYYY-MM-DD` and checks that the day exists (no 2026-02-30).
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard let date = bytes.withUnsafeBytes({ CivilDate(utf8: $0) }) else { return nil }
        self = date
    }

    /// Parses UTF-8 bytes as `init?(_:)` parses text (a list printed from its rows' bytes reads
    /// its dates without making a `String`). A date that parses writes back the very same bytes
    /// as its `description`.
    public init?(utf8 bytes: UnsafeRawBufferPointer) {
        func number(_ range: Range<Int>) -> Int? { Self.number(bytes, range) }
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1...9999).contains(year), (1...12).contains(month),
              (1...Self.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01 (negative before).
    public init(daysSinceEpoch days: Int) {
        // Howard Hinnant's civil_from_days: exact for the proleptic Gregorian calendar.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01.
    public var daysSinceEpoch: Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// 0 = Sunday … 6 = Saturday.
    public var weekday: Int {
        let days = daysSinceEpoch
        return ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (4)
    }

    public func adding(days: Int) -> CivilDate { CivilDate(daysSinceEpoch: daysSinceEpoch + days) }

    /// Days from `self` to `other` (positive when `other` is later).
    public func days(until other: CivilDate) -> Int { other.daysSinceEpoch - daysSinceEpoch }

    public var description: String {
        Self.pad(year, 4) + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2)
    }

    /// Appends the bytes of `description` without making a `String` (a list printing a million dates).
    package func appendDescription(to output: inout [UInt8]) {
        guard (0...9999).contains(year) else { return output.append(contentsOf: description.utf8) }
        func digits(_ value: Int, _ width: Int) {
            var divisor = width == 4 ? 1000 : 10
            while divisor > 0 {
                output.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4)
        output.append(UInt8(ascii: "-"))
        digits(month, 2)
        output.append(UInt8(ascii: "-"))
        digits(day, 2)
    }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// In JSON, the string `2026-12-12` (`CodableAsText`).
    public static let textForm = "a date in YYYY-MM-DD form"

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The decimal number in `bytes[range]`, nil unless every byte is a digit.
    public static func number(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        var value = 0
        for index in range {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    package static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// `value` in decimal, zero-padded to `width` digits.
    public static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
