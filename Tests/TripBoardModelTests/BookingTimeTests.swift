import Testing
@testable import TripBoardStorage
import TripBoardModel

/// A booking's start and end: a time with its offset or a date alone, and the end's rule.
struct BookingTimeTests {
    @Test(arguments: [
        ("2026-12-14", "2026-12-14", true),
        ("2026-12-12T07:35+01:00", "2026-12-12T07:35:00+01:00", false),
        ("2026-12-12 07:35Z", "2026-12-12T07:35:00+00:00", false),
    ])
    func parsesADateOrATime(text: String, stored: String, allDay: Bool) throws {
        let time = try #require(BookingTime(text))
        #expect(time.text == stored)
        #expect(time.isAllDay == allDay)
        #expect(try FieldRules.startsAt(text) == stored)
    }

    @Test(arguments: ["2026-02-30", "2026-12-1", "20261214", "tomorrow", ""])
    func refusesWhatIsNeither(text: String) {
        #expect(BookingTime(text) == nil)
        #expect(throws: StoreError.self) { try FieldRules.bookingTime(text, field: "endsAt") }
    }

    @Test func anAllDayBookingRunsFromMidnightToMidnightUTC() throws {
        let epochs = BookingTime.epochs(startsAt: BookingTime("2026-12-12"), endsAt: BookingTime("2026-12-15"))
        #expect(epochs.start == 1_797_033_600)
        #expect(epochs.overAt == 1_797_379_200)
        #expect(BookingTime.epochs(startsAt: BookingTime("2026-12-12"), endsAt: nil).overAt == 1_797_120_000, "over at the end of its day")
        #expect(BookingTime.epochs(startsAt: BookingTime("2026-12-12T07:35:00+00:00"), endsAt: nil).overAt == 1_797_060_900)
        #expect(BookingTime.epochs(startsAt: nil, endsAt: nil) == (nil, nil))
    }

    @Test(arguments: [
        ("2026-12-12T10:00:00+00:00", "2026-12-12T09:00:00+00:00", false),
        ("2026-12-12T10:00:00+00:00", "2026-12-12T10:30:00+01:00", false),  // 09:30 UTC: before
        ("2026-12-12T10:00:00+00:00", "2026-12-12T11:30:00+01:00", true),
        ("2026-12-12", "2026-12-12", true),  // one day
        ("2026-12-12", "2026-12-11", false),
        ("2026-12-12", "2026-12-12T01:00:00+05:00", true),  // the same day as written
        ("2026-12-12T23:00:00-05:00", "2026-12-12", true),
    ])
    func anEndIsNeverBeforeItsStart(start: String, end: String, accepted: Bool) {
        let refused = (try? FieldRules.bookingTimes(startsAt: BookingTime(start), endsAt: BookingTime(end))) == nil
        #expect(refused != accepted)
    }

    @Test func anEndNeedsAStart() {
        #expect(throws: StoreError.self) { try FieldRules.bookingTimes(startsAt: nil, endsAt: BookingTime("2026-12-12")) }
        #expect((try? FieldRules.bookingTimes(startsAt: nil, endsAt: nil)) != nil)
    }
}
