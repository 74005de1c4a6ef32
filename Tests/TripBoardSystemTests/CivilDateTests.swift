import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

struct CivilDateTests {
    @Test(arguments: [
        ("2026-12-12", 2026, 12, 12),
        ("2024-02-29", 2024, 2, 29),
        ("2000-02-29", 2000, 2, 29),
        ("2026-04-30", 2026, 4, 30),
        ("0001-01-01", 1, 1, 1),
        ("9999-12-31", 9999, 12, 31),
    ])
    func parsesAStrictDateThatExists(text: String, year: Int, month: Int, day: Int) throws {
        let date = try #require(CivilDate(text))
        #expect(date.year == year)
        #expect(date.month == month)
        #expect(date.day == day)
        #expect(date.description == text)
    }

    @Test(arguments: [
        "2026-02-29",  // not a leap year
        "1900-02-29",  // divisible by 100, not by 400
        "2026-13-01",
        "2026-00-10",
        "2026-04-31",
        "2026-01-00",
        "2026-01-32",
        "0000-01-01",
        "2026-1-01",
        "2026-01-1",
        "26-01-01",
        "2026/01/01",
        "2026-01-01T00:00",
        " 2026-01-01",
        "2026-01-01 ",
        "+026-01-01",
        "2026-0a-01",
        "２026-01-01",
        "",
        "garbage",
    ])
    func refusesAnythingElse(text: String) {
        #expect(CivilDate(text) == nil)
    }

    @Test(arguments: [
        ("1970-01-01", 0),
        ("1969-12-31", -1),
        ("2000-03-01", 11_017),
        ("2024-02-29", 19_782),
        ("2026-12-12", 20_799),
        ("0001-01-01", -719_162),
        ("9999-12-31", 2_932_896),
    ])
    func countsDaysSinceTheEpoch(text: String, days: Int) throws {
        let date = try #require(CivilDate(text))
        #expect(date.daysSinceEpoch == days)
        #expect(CivilDate(daysSinceEpoch: days) == date)
    }

    /// Every day from 0001-01-01 to 9999-12-31: the day number round-trips, and consecutive day
    /// numbers are consecutive calendar days (so month lengths and leap years are right).
    @Test func daysSinceEpochRoundTripsOverTheWholeSupportedRange() throws {
        let first = try #require(CivilDate("0001-01-01")).daysSinceEpoch
        let last = try #require(CivilDate("9999-12-31")).daysSinceEpoch
        var previous = CivilDate(daysSinceEpoch: first)
        var mismatches: [String] = []
        for days in (first + 1)...last {
            let date = CivilDate(daysSinceEpoch: days)
            if date.daysSinceEpoch != days { mismatches.append("\(days) → \(date) → \(date.daysSinceEpoch)") }
            let expected = previous.day < CivilDate.daysIn(month: previous.month, year: previous.year)
                ? (previous.year, previous.month, previous.day + 1)
                : previous.month < 12 ? (previous.year, previous.month + 1, 1) : (previous.year + 1, 1, 1)
            if (date.year, date.month, date.day) != expected { mismatches.append("after \(previous) came \(date)") }
            if mismatches.count > 5 { break }
            previous = date
        }
        #expect(mismatches.isEmpty)
        #expect(previous.description == "9999-12-31")
    }

    @Test func descriptionParsesBackToTheSameDate() throws {
        for days in stride(from: -719_162, through: 2_932_896, by: 997) {
            let date = CivilDate(daysSinceEpoch: days)
            #expect(CivilDate(date.description) == date)
        }
    }

    @Test(arguments: [
        ("1970-01-01", 4),  // Thursday
        ("1969-12-28", 0),  // Sunday, before the epoch
        ("2024-02-29", 4),
        ("2026-12-12", 6),  // Saturday
        ("2000-03-01", 3),
        ("0001-01-01", 1),  // proleptic Gregorian Monday
        ("9999-12-31", 5),
    ])
    func weekdayCountsFromSunday(text: String, weekday: Int) throws {
        #expect(try #require(CivilDate(text)).weekday == weekday)
    }

    @Test func weekdayAdvancesByOneEachDay() {
        for days in -800...800 {
            #expect(CivilDate(daysSinceEpoch: days + 1).weekday == (CivilDate(daysSinceEpoch: days).weekday + 1) % 7)
        }
    }

    @Test func comparesByYearThenMonthThenDay() throws {
        let texts = ["2025-12-31", "2026-01-01", "2026-01-02", "2026-02-01", "2027-01-01"]
        let dates = try texts.map { try #require(CivilDate($0)) }
        for (index, date) in dates.enumerated() {
            for (otherIndex, other) in dates.enumerated() {
                #expect((date < other) == (index < otherIndex), "\(date) < \(other)")
                #expect((date == other) == (index == otherIndex))
                #expect((date < other) == (date.daysSinceEpoch < other.daysSinceEpoch))
            }
        }
        #expect(dates.shuffled().sorted() == dates)
        #expect(dates.max()?.description == "2027-01-01")
    }

    @Test func addsDaysAcrossMonthYearAndLeapDay() throws {
        let start = try #require(CivilDate("2024-02-28"))
        #expect(start.adding(days: 1).description == "2024-02-29")
        #expect(start.adding(days: 2).description == "2024-03-01")
        #expect(start.adding(days: -59).description == "2023-12-31")
        #expect(start.adding(days: 366).description == "2025-02-28")
        #expect(start.days(until: try #require(CivilDate("2024-03-01"))) == 2)
        #expect(try #require(CivilDate("2024-03-01")).days(until: start) == -2)
    }

    @Test func codesAsAPlainJSONString() throws {
        let date = try #require(CivilDate("2026-12-12"))
        let encoded = try JSONEncoder().encode([date])
        #expect(String(decoding: encoded, as: UTF8.self) == #"["2026-12-12"]"#)
        #expect(try JSONDecoder().decode([CivilDate].self, from: encoded) == [date])
    }

    @Test func decodingRefusesAnImpossibleDate() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([CivilDate].self, from: Data(#"["2026-02-30"]"#.utf8))
        }
    }
}
