import Foundation
import Testing
import TripBoardSystem

struct TimestampTests {
    @Test(arguments: [
        ("2026-12-12T07:35:00Z", 1_797_060_900, 0, 0),
        ("2026-12-12T07:35Z", 1_797_060_900, 0, 0),
        ("2026-12-12T07:35:00z", 1_797_060_900, 0, 0),
        ("2026-12-12 07:35:00Z", 1_797_060_900, 0, 0),
        ("2026-12-12T07:35:09Z", 1_797_060_909, 0, 0),
        ("2026-12-12T07:35:00+00:00", 1_797_060_900, 0, 0),
        ("2026-12-12T07:35:00+01:00", 1_797_057_300, 3_600, 0),
        ("2026-12-12T07:35:00+0100", 1_797_057_300, 3_600, 0),
        ("2026-12-12T07:35+01", 1_797_057_300, 3_600, 0),
        ("2026-12-12T07:35-05", 1_797_078_900, -18_000, 0),
        ("2026-12-12T07:35:00-05:00", 1_797_078_900, -18_000, 0),
        ("2026-12-12T07:35:00+05:30", 1_797_041_100, 19_800, 0),
        ("2026-12-12T00:30+01:00", 1_797_031_800, 3_600, 0),
        ("2026-12-12T07:35:00.5Z", 1_797_060_900, 0, 500),
        ("2026-12-12T07:35:00.05Z", 1_797_060_900, 0, 50),
        ("2026-12-12T07:35:00.123Z", 1_797_060_900, 0, 123),
        ("2026-12-12T07:35:00.123456Z", 1_797_060_900, 0, 123),
        ("2026-12-12T07:35:00,25+01:00", 1_797_057_300, 3_600, 250),
        ("1969-12-31T23:59:59Z", -1, 0, 0),
        ("1970-01-01T00:00:00Z", 0, 0, 0),
    ] as [(String, Int64, Int, Int)])
    func parsesISO8601WithAZone(text: String, seconds: Int64, offset: Int, milliseconds: Int) throws {
        let timestamp = try #require(Timestamp(iso8601: text))
        #expect(timestamp.secondsSinceEpoch == seconds)
        #expect(timestamp.offsetSeconds == offset)
        #expect(timestamp.milliseconds == milliseconds)
    }

    @Test(arguments: [
        "",
        "garbage",
        "2026-12-12",
        "2026-12-12T",
        "2026-12-12T7:35Z",
        "2026-12-12T07:5Z",
        "2026-12-12T24:00Z",
        "2026-12-12T07:60Z",
        "2026-12-12T07:35:60Z",
        "2026-12-12T07:35:0Z",
        "2026-12-12T07:35:00.Z",
        "2026-12-12T07:35:00Zjunk",
        "2026-12-12T07:35:00 Z",
        "2026-12-12T07:35:00+1:00",
        "2026-12-12T07:35:00+01:0",
        "2026-12-12T07:35:00+01-00",
        "2026-12-12T07:35:00+19:00",
        "2026-12-12T07:35:00+01:60",
        "2026-12-12T07:35:00+",
        "2026-12-12T07:35:00 +01:00",
        "2026-12-12X07:35Z",
        "2026-12-12T07-35Z",
        "2026-02-30T07:35Z",
        "2026-13-01T07:35Z",
        "2026-12-12T07:35:00GMT",
    ])
    func refusesAnythingElse(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test(arguments: [
        (Timestamp(secondsSinceEpoch: 1_796_080_337, milliseconds: 123), "2026-11-30T23:12:17.123Z"),
        (Timestamp(secondsSinceEpoch: 1_796_080_337, offsetSeconds: 3_600, milliseconds: 7), "2026-11-30T23:12:17.007Z"),
        (Timestamp(secondsSinceEpoch: 1_797_031_800, offsetSeconds: -18_000), "2026-12-11T23:30:00.000Z"),
        (Timestamp(secondsSinceEpoch: -1, milliseconds: 999), "1969-12-31T23:59:59.999Z"),
        (Timestamp(secondsSinceEpoch: 0), "1970-01-01T00:00:00.000Z"),
    ])
    func utcStampIsUTCWithMillisecondsAndZ(timestamp: Timestamp, stamp: String) {
        #expect(timestamp.utcStamp == stamp)
    }

    @Test func utcStampParsesBackToTheSameInstant() throws {
        let original = Timestamp(secondsSinceEpoch: 1_796_080_337, offsetSeconds: 19_800, milliseconds: 42)
        let parsed = try #require(Timestamp(iso8601: original.utcStamp))
        #expect(parsed == original.withOffset(0))
    }

    @Test(arguments: [
        (0, "2026-12-12T07:35:00+00:00"),
        (3_600, "2026-12-12T08:35:00+01:00"),
        (-18_000, "2026-12-12T02:35:00-05:00"),
        (19_800, "2026-12-12T13:05:00+05:30"),
        (-34_200, "2026-12-11T22:05:00-09:30"),
    ])
    func writesTheWallClockTimeOfItsOwnOffset(offset: Int, text: String) throws {
        let timestamp = Timestamp(secondsSinceEpoch: 1_797_060_900).withOffset(offset)
        #expect(timestamp.iso8601() == text)
        #expect(timestamp.description == text)
        #expect(Timestamp(iso8601: text) == timestamp)
    }

    @Test func utcDesignatorOnlyReplacesAZeroOffset() {
        let instant = Timestamp(secondsSinceEpoch: 1_797_060_900)
        #expect(instant.iso8601(utcDesignator: true) == "2026-12-12T07:35:00Z")
        #expect(instant.withOffset(3_600).iso8601(utcDesignator: true) == "2026-12-12T08:35:00+01:00")
        #expect(instant.iso8601(includingMilliseconds: true) == "2026-12-12T07:35:00.000+00:00")
    }

    @Test func localDateAndTimeFollowTheOffset() throws {
        let lateEvening = try #require(Timestamp(iso8601: "2026-12-12T23:30-05:00"))
        #expect(lateEvening.localDate.description == "2026-12-12")
        #expect(lateEvening.localTime == (23, 30))
        #expect(lateEvening.withOffset(0).localDate.description == "2026-12-13")
        #expect(lateEvening.withOffset(0).localTime == (4, 30))

        let beforeEpoch = Timestamp(secondsSinceEpoch: -60)
        #expect(beforeEpoch.localDate.description == "1969-12-31")
        #expect(beforeEpoch.localTime == (23, 59))
    }

    @Test func ordersByInstantWhateverTheOffset() throws {
        let lisbon = try #require(Timestamp(iso8601: "2026-12-12T07:35+00:00"))
        let newYork = try #require(Timestamp(iso8601: "2026-12-12T03:00-05:00"))  // 08:00 UTC
        let tokyo = try #require(Timestamp(iso8601: "2026-12-12T16:00+09:00"))  // 07:00 UTC
        #expect([lisbon, newYork, tokyo].sorted() == [tokyo, lisbon, newYork])
        let sameInstantLater = try #require(Timestamp(iso8601: "2026-12-12T07:35:00.001Z"))
        #expect(lisbon < sameInstantLater)
    }

    @Test func nowIsInUTCAndCloseToTheSystemClock() {
        let now = Timestamp.now()
        #expect(now.offsetSeconds == 0)
        #expect((0..<1000).contains(now.milliseconds))
        #expect(abs(Double(now.secondsSinceEpoch) - Date().timeIntervalSince1970) < 5)
    }
}

/// Times without a zone are local, in the zone of `TZ`. These tests change `TZ` for the whole
/// process, so they run one at a time, restore it afterwards, and no other test parses a time
/// without a zone. POSIX zone strings need no tzdata on the machine.
@Suite(.serialized) struct TimestampLocalZoneTests {
    @Test(arguments: [
        ("EST5EDT,M3.2.0,M11.1.0", "2026-01-15T12:00", 1_768_496_400, -18_000),
        ("EST5EDT,M3.2.0,M11.1.0", "2026-07-01T12:00:30", 1_782_921_630, -14_400),
        ("<+0530>-5:30", "2026-12-12T07:35", 1_797_041_100, 19_800),
        ("UTC0", "2026-12-12 07:35:00", 1_797_060_900, 0),
    ] as [(String, String, Int64, Int)])
    func timeWithoutAZoneIsLocal(zone: String, text: String, seconds: Int64, offset: Int) throws {
        try withTimeZone(zone) {
            let timestamp = try #require(Timestamp(iso8601: text))
            #expect(timestamp.secondsSinceEpoch == seconds)
            #expect(timestamp.offsetSeconds == offset)
            #expect(Timestamp.localOffset(at: seconds) == offset)
        }
    }

    @Test func anExplicitZoneIgnoresTZ() throws {
        try withTimeZone("<+0530>-5:30") {
            let timestamp = try #require(Timestamp(iso8601: "2026-12-12T07:35:00Z"))
            #expect(timestamp.secondsSinceEpoch == 1_797_060_900)
            #expect(timestamp.offsetSeconds == 0)
        }
    }

    private func withTimeZone(_ zone: String, _ body: () throws -> Void) throws {
        let previous = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let previous { setenv("TZ", previous, 1) } else { unsetenv("TZ") }
            tzset()
        }
        try body()
    }
}
