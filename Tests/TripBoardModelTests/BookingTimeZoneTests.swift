import Testing
import TripBoardSystem
import TripBoardModel

/// `BookingTime.reading` (a typed time in a booking's zone) and `BookingTimeText` (a stored time
/// for a person), against the system's time zone database.
struct BookingTimeZoneTests {
    let lisbon: TimeZoneRules
    let newYork: TimeZoneRules

    init() throws {
        lisbon = try TimeZoneRules.named("Europe/Lisbon")
        newYork = try TimeZoneRules.named("America/New_York")
    }

    @Test func aLocalTimeTakesTheZonesOffsetThen() {
        #expect(BookingTime.reading("2027-07-01T07:35", in: lisbon) == .time(BookingTime("2027-07-01T07:35+01:00")!))
        #expect(BookingTime.reading("2027-01-01T07:35", in: lisbon) == .time(BookingTime("2027-01-01T07:35+00:00")!))
        #expect(BookingTime.reading("2027-01-01", in: lisbon) == .time(.allDay(CivilDate("2027-01-01")!)))
        #expect(BookingTime.reading("yesterday", in: lisbon) == .unreadable)
    }

    @Test func aGapGivesTheLastMinuteBeforeAndTheFirstAfter() {
        guard case .gap(let before, let after) = BookingTime.reading("2027-03-14T02:30", in: newYork) else {
            Issue.record("02:30 on 14 March 2027 does not exist in New York")
            return
        }
        #expect(before.iso8601() == "2027-03-14T01:59:00-05:00")
        #expect(after.iso8601() == "2027-03-14T03:00:00-04:00")
    }

    @Test func anOverlapGivesBothInstantsEarlierFirst() {
        guard case .overlap(let earlier, let later) = BookingTime.reading("2027-11-07T01:30", in: newYork) else {
            Issue.record("01:30 on 7 November 2027 happens twice in New York")
            return
        }
        #expect(earlier.iso8601() == "2027-11-07T01:30:00-04:00")
        #expect(later.iso8601() == "2027-11-07T01:30:00-05:00")
        #expect(later.secondsSinceEpoch - earlier.secondsSinceEpoch == 3600)
    }

    @Test func anOffsetMustBeTheZonesWhenChecked() {
        #expect(BookingTime.reading("2027-01-01T10:00+02:00", in: lisbon)
                == .wrongOffset(given: Timestamp(iso8601: "2027-01-01T10:00+02:00")!, zoneOffset: 0, abbreviation: "WET"))
        #expect(BookingTime.reading("2027-01-01T10:00+02:00", in: lisbon, checkingOffset: false) == .time(BookingTime("2027-01-01T10:00+02:00")!))
    }

    @Test func reexpressingKeepsTheInstant() throws {
        let paris = try TimeZoneRules.named("Europe/Paris")
        #expect(BookingTime.reexpressed(try #require(BookingTime("2026-12-12T07:35:00+00:00")), in: paris).text == "2026-12-12T08:35:00+01:00")
        #expect(BookingTime.reexpressed(try #require(BookingTime("2026-12-12")), in: paris).text == "2026-12-12")
    }

    @Test func aMarkerShowsWhenTheReadersClockDiffers() {
        var inUTC = BookingTimeText(viewer: .utc)
        #expect(inUTC.text(BookingTime("2026-12-30T16:30:00-05:00"), zone: "America/New_York", tripYear: 2026) == "Wed 30 Dec 16:30 EST")
        #expect(inUTC.text(BookingTime("2026-12-30T16:30:00-05:00"), zone: nil, tripYear: 2026) == "Wed 30 Dec 16:30 UTC-5")
        #expect(inUTC.text(BookingTime("2027-01-02T20:00:00+05:45"), zone: nil, tripYear: 2026) == "Sat 2 Jan 2027 20:00 UTC+5:45")
        #expect(inUTC.text(BookingTime("2026-12-30T16:30:00+00:00"), zone: nil, tripYear: 2026) == "Wed 30 Dec 16:30")
        #expect(inUTC.text(BookingTime("2026-12-14"), zone: "America/New_York", tripYear: 2026) == "Mon 14 Dec")
        #expect(inUTC.text(nil, zone: nil, tripYear: 2026) == nil)
        var inNewYork = BookingTimeText(viewer: newYork)
        #expect(inNewYork.text(BookingTime("2026-12-30T16:30:00-05:00"), zone: "America/New_York", tripYear: 2026) == "Wed 30 Dec 16:30")
        #expect(inNewYork.text(BookingTime("2026-12-30T16:30:00+00:00"), zone: nil, tripYear: 2026) == "Wed 30 Dec 16:30 UTC")
        // Lisbon and London share +00:00 in winter but not their names: the marker says which.
        var inLondon = BookingTimeText(viewer: try! TimeZoneRules.named("Europe/London"))
        #expect(inLondon.text(BookingTime("2026-12-30T16:30:00+00:00"), zone: "Europe/Lisbon", tripYear: 2026) == "Wed 30 Dec 16:30 WET")
        // A zone this machine does not know: the stored offset speaks.
        #expect(inLondon.text(BookingTime("2026-12-30T16:30:00+03:00"), zone: "Mars/Olympus", tripYear: 2026) == "Wed 30 Dec 16:30 UTC+3")
    }

    /// `write(stored:…)`, which lists use on their rows' bytes, writes what `text` returns: the
    /// store's two forms over years, offsets, zones and readers, and other texts (read by `text`).
    @Test func aStoredTimeWrittenFromItsBytesIsTheTextOfIt() throws {
        var samples = ["2026-12-14", "0001-01-01", "9999-12-31", "2028-02-29", "2027-02-29", "2026-13-01", "",
                       "2026-12-30T16:30:00Z", "2026-12-30T16:30:00.250+01:00", "2026-12-30T16:30+01:00", "2026-12-30 16:30:00+01:00",
                       "2026-12-30T24:00:00+00:00", "2026-12-30T16:60:00+00:00", "2026-12-30T16:30:60+00:00", "2026-12-30T16:30:00+19:00",
                       "2026-12-30T16:30:00+18:00", "2026-12-30T16:30:00-00:00", "2026-12-30T16:30:00+05:75", "2026-12-30T1a:30:00+00:00",
                       "2026-12-30T16:30:00*01:00", "２０２６-12-30", "2026-12-30T16:30:00+01:00 ", "not a time"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<400 {
            let instant = Int64.random(in: -62_000_000_000...250_000_000_000, using: &generator)
            let offset = Int.random(in: -18...18, using: &generator) * 3600 + [0, 1800, 2700].randomElement(using: &generator)!
            let time = Timestamp(secondsSinceEpoch: instant, offsetSeconds: abs(offset) > 18 * 3600 ? 0 : offset)
            if let text = BookingTime(time.iso8601())?.text { samples.append(text) }
            samples.append(time.localDate.description)
        }
        let readers = [try TimeZoneRules.named("UTC"), lisbon, newYork, try TimeZoneRules.named("Asia/Kathmandu")]
        for reader in readers {
            for zone in [nil, "Europe/Lisbon", "America/New_York", "Asia/Tokyo", "Mars/Olympus"] {
                for tripYear in [nil, 2026] {
                    var byText = BookingTimeText(viewer: reader)
                    var byBytes = BookingTimeText(viewer: reader)
                    for stored in samples {
                        var output: [UInt8] = []
                        var copy = stored
                        copy.withUTF8 { byBytes.write(stored: UnsafeRawBufferPointer($0), zone: zone, tripYear: tripYear, into: &output) }
                        #expect(String(decoding: output, as: UTF8.self) == byText.text(BookingTime(stored), zone: zone, tripYear: tripYear) ?? "",
                                "\(stored) in \(zone ?? "no zone"), trip year \(tripYear.map(String.init) ?? "none")")
                    }
                }
            }
        }
    }

    @Test func aWrittenTimeKeepsTheOffsetAsGiven() throws {
        // Timestamp(iso8601:) reads local times in the process's zone with the same rules.
        #expect(WrittenTime(iso8601: "2027-03-14T02:30")?.offset == nil)
        #expect(WrittenTime(iso8601: "2027-03-14T02:30-04")?.offset == -4 * 3600)
        #expect(WrittenTime(iso8601: "2027-03-14T02:30+0530")?.offset == 5 * 3600 + 1800)
        #expect(WrittenTime(iso8601: "2027-03-14T02:30+5") == nil)
    }
}
