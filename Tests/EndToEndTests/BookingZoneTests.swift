import Foundation
import Testing
import TripBoardModel
import TripBoardStorage

/// Bookings keep the IANA zone of their times (`--zone`, else `TZ`'s where its offset fits):
/// local times are read in it, DST gaps and overlaps are refused with the way out, and every
/// reader sees a time on the booking's own clock with a marker when it is not theirs.
@Suite struct BookingZoneTests {
    /// The booking `id` of `trip` as `booking list --json` prints it.
    func booking(_ container: TestContainer, _ id: String, environment: [String: String] = [:]) throws -> [String: Any] {
        let result = try container.app(arguments: ["booking", "list", "--json"], environment: environment)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return try #require(list.first { $0["id"] as? String == id })
    }

    func add(_ container: TestContainer, _ trip: String, _ extra: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try container.app(arguments: ["booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351"] + extra,
                          environment: environment)
    }

    @Test func aLocalTimeIsReadInTheZoneGivenAndTheZoneIsKept() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Paris", start: "2027-07-01", end: "2027-07-05")
        let result = try add(container, trip, ["--starts-at", "2027-07-01T07:35", "--ends-at", "2027-07-01T11:00", "--zone", "Europe/Lisbon"])
        #expect(result.status == 0, "\(result)")
        let stored = try booking(container, result.trimmedStdout)
        #expect(stored["startsAt"] as? String == "2027-07-01T07:35:00+01:00", "Lisbon is WEST in July, whatever TZ says (UTC here)")
        #expect(stored["endsAt"] as? String == "2027-07-01T11:00:00+01:00")
        #expect(stored["zone"] as? String == "Europe/Lisbon")
        #expect(try container.sqlite("SELECT zone FROM bookings").trimmedStdout == "Europe/Lisbon")
    }

    @Test(arguments: ["Europe/Lisbn", "europe lisbon", "../../etc/passwd", "Mars/Olympus"])
    func aZoneTheDatabaseDoesNotHoldIsRefusedAndNothingIsWritten(zone: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let before = try container.state()
        let result = try add(container, trip, ["--starts-at", "2026-12-12T07:35", "--zone", zone])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.hasPrefix("error: --zone '\(zone)' names no time zone") && result.stderrLines.count == 1, "\(result.stderr)")
        #expect(try container.state() == before)
    }

    /// Entries of the zone database that mean something else on each computer are no zone a
    /// booking can keep or sync.
    @Test(arguments: ["localtime", "posixrules", "Factory", "posix/Europe/Lisbon", "right/Europe/Lisbon"])
    func aMachineSpecificZoneIsRefusedAndNothingIsWritten(zone: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let before = try container.state()
        let result = try add(container, trip, ["--starts-at", "2026-12-12T07:35", "--zone", zone])
        #expect(result.status == 64 && result.stderrLines.count == 1
                && result.stderr.hasPrefix("error: --zone '\(zone)' is not a zone a booking can keep"), "\(result)")
        #expect(try container.state() == before)
    }

    @Test func aTimeTheClocksSkipIsRefusedWithTheNearestValidTimes() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Spring", start: "2027-03-27", end: "2027-03-29")
        let before = try container.state()
        let gap = try add(container, trip, ["--starts-at", "2027-03-28T01:30", "--zone", "Europe/Lisbon"])
        #expect(gap.status == 64)
        #expect(gap.stderr == """
            error: --starts-at 2027-03-28T01:30 does not exist in Europe/Lisbon: the clocks go from 01:00 to 02:00 that night; \
            the nearest valid times are 2027-03-28T00:59+00:00 and 2027-03-28T02:00+01:00

            """)
        // The same through TZ, and for an end.
        let viaTZ = try add(container, trip, ["--starts-at", "2027-03-28T00:00", "--ends-at", "2027-03-28T01:15"],
                            environment: ["TZ": "Europe/Lisbon"])
        #expect(viaTZ.status == 64 && viaTZ.stderr.hasPrefix("error: --ends-at 2027-03-28T01:15 does not exist in Europe/Lisbon"), "\(viaTZ)")
        // New York skips 02:00–03:00 on 14 March 2027.
        let newYork = try add(container, trip, ["--starts-at", "2027-03-14T02:30"], environment: ["TZ": "America/New_York"])
        #expect(newYork.stderr.contains("the nearest valid times are 2027-03-14T01:59-05:00 and 2027-03-14T03:00-04:00"), "\(newYork)")
        #expect(try container.state() == before)
    }

    @Test func aTimeTheClocksShowTwiceNeedsItsOffset() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Autumn", start: "2027-10-30", end: "2027-11-01")
        let before = try container.state()
        let overlap = try add(container, trip, ["--starts-at", "2027-10-31T01:30", "--zone", "Europe/Lisbon"])
        #expect(overlap.status == 64)
        #expect(overlap.stderr.contains("happens twice in Europe/Lisbon") && overlap.stderr.contains(
            "give its offset, 2027-10-31T01:30+01:00 (the first) or 2027-10-31T01:30+00:00 (the second)"), "\(overlap)")
        #expect(try container.state() == before)
        for offset in ["+01:00", "+00:00"] {
            let given = try add(container, trip, ["--starts-at", "2027-10-31T01:30" + offset, "--zone", "Europe/Lisbon"])
            #expect(given.status == 0, "\(given)")
            #expect(try booking(container, given.trimmedStdout)["startsAt"] as? String == "2027-10-31T01:30:00" + offset)
        }
    }

    @Test func aStartWhoseOffsetIsNotTheZonesIsRefusedAndAFixedOffsetStaysPossible() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let wrong = try add(container, trip, ["--starts-at", "2026-12-12T10:00+02:00", "--zone", "Europe/Lisbon"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr == """
            error: --starts-at 2026-12-12T10:00+02:00 is not a time in Europe/Lisbon, which is +00:00 (WET) then: give 10:00 \
            without an offset for 10:00 there, 2026-12-12T08:00+00:00 for the same instant, or --zone '' to keep a fixed offset

            """)
        let fixed = try add(container, trip, ["--starts-at", "2026-12-12T10:00+02:00", "--zone", ""], environment: ["TZ": "Europe/Lisbon"])
        #expect(fixed.status == 0, "\(fixed)")
        #expect(try booking(container, fixed.trimmedStdout)["zone"] is NSNull)
        // An end may land in another zone: a flight from Lisbon to Paris.
        let flight = try add(container, trip, ["--starts-at", "2026-12-12T07:35", "--ends-at", "2026-12-12T10:40+01:00",
                                               "--zone", "Europe/Lisbon"])
        #expect(flight.status == 0, "\(flight)")
        #expect(try booking(container, flight.trimmedStdout)["endsAt"] as? String == "2026-12-12T10:40:00+01:00")
    }

    @Test(arguments: [
        // (TZ, --starts-at, the zone kept)
        ("Europe/Lisbon", "2026-12-12T07:35", "Europe/Lisbon"),         // local: TZ's zone
        ("Europe/Lisbon", "2026-12-12T07:35+00:00", "Europe/Lisbon"),   // TZ's offset then
        ("Europe/Lisbon", "2026-12-12T07:35+01:00", nil),               // another offset: fixed, one offset fits dozens of zones
        ("Europe/Lisbon", "2026-12-12", nil),                           // all day: no offset to match
        (":America/New_York", "2026-12-12T07:35-05:00", "America/New_York"),
        ("UTC0", "2026-12-12T07:35", nil),                              // a POSIX rule names no zone another device can look up
        ("EST5EDT,M3.2.0,M11.1.0", "2026-12-12T07:35", nil),
    ] as [(String, String, String?)])
    func withoutZoneTheBookingTakesTZsZoneWhereItsOffsetFits(tz: String, startsAt: String, zone: String?) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let result = try add(container, trip, ["--starts-at", startsAt], environment: ["TZ": tz])
        #expect(result.status == 0, "\(result)")
        #expect(try booking(container, result.trimmedStdout)["zone"] as? String == zone, "\(tz) \(startsAt)")
    }

    @Test func aBookingOutsideItsTripIsKeptWithAOneLineWarning() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let late = try add(container, trip, ["--starts-at", "2026-12-16T09:00Z"])
        #expect(late.status == 0, "\(late)")
        #expect(late.stderr == "warning: the booking starts on 2026-12-16, after its trip ends (2026-12-15); it is kept\n")
        let quiet = try add(container, trip, ["-q", "--starts-at", "2026-12-10"])
        #expect(quiet.status == 0 && quiet.stderr == "warning: the booking starts on 2026-12-10, before its trip starts (2026-12-12); it is kept\n",
                "a warning shows under --quiet: \(quiet)")
        #expect(try container.sqlite("SELECT count(*) FROM bookings").trimmedStdout == "2")
        let inside = try add(container, trip, ["--starts-at", "2026-12-13T09:00Z"])
        #expect(inside.stderr.isEmpty)
        let edited = try container.app("booking", "edit", inside.trimmedStdout, "--ends-at", "2026-12-17")
        #expect(edited.status == 0 && edited.stderr.contains("the booking ends on 2026-12-17, after its trip ends"), "\(edited)")
    }

    @Test func timesShowOnTheBookingsClockWithAMarkerWhenItIsNotTheReaders() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("New York", start: "2026-12-30", end: "2027-01-03")
        let flight = try add(container, trip, ["--starts-at", "2026-12-30T16:30", "--zone", "America/New_York"]).trimmedStdout
        try container.appOK("booking", "add", "--trip", trip, "--kind", "event", "--title", "Concert", "--starts-at", "2027-01-02T20:00+01:00")
        let line = { (table: String, title: String) in table.split(separator: "\n").first { $0.contains(title) }.map(String.init) ?? "" }
        let inUTC = try container.app("booking", "list", "--trip", trip).stdout
        #expect(line(inUTC, "TP 1351").contains("Wed 30 Dec 16:30 EST"), "\(inUTC)")
        #expect(line(inUTC, "Concert").contains("Sat 2 Jan 2027 20:00 UTC+1"), "the year when it is not the trip's: \(inUTC)")
        let inNewYork = try container.app(arguments: ["booking", "list"], environment: ["TZ": "America/New_York"]).stdout
        #expect(line(inNewYork, "TP 1351").contains("Wed 30 Dec 16:30 ") && !line(inNewYork, "TP 1351").contains("EST"),
                "no marker on the reader's own clock: \(inNewYork)")
        let show = try container.appOK("trip", "show", trip)
        #expect(show.contains("flight TP 1351 · Wed 30 Dec 16:30 EST"), "\(show)")
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-29T12:00:00Z"], environment: container.environment(["LANG": "C.UTF-8"]))
        #expect(widget.stdoutLines.last == "✈ TP 1351 · Wed 30 Dec 16:30 EST", "\(widget)")
        let widgetJSON = try ProcessRunner.run("widget", ["--json", "--now", "2026-12-29T12:00:00Z"], environment: container.environment([:]))
        #expect(widgetJSON.stdout.contains("\"zone\" : \"America\\/New_York\"") || widgetJSON.stdout.contains("\"zone\" : \"America/New_York\""),
                "\(widgetJSON.stdout)")
        _ = flight
    }

    @Test func editingTheZoneKeepsTheInstantAndLocalTimesFollowTheBookingsZone() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let id = try add(container, trip, ["--starts-at", "2026-12-12T07:35", "--ends-at", "2026-12-12T09:00", "--zone", "Europe/Lisbon"]).trimmedStdout
        try container.appOK("booking", "edit", id, "--zone", "Europe/Paris")
        var stored = try booking(container, id)
        #expect(stored["startsAt"] as? String == "2026-12-12T08:35:00+01:00", "the same instant in Paris")
        #expect(stored["endsAt"] as? String == "2026-12-12T10:00:00+01:00")
        #expect(stored["zone"] as? String == "Europe/Paris")
        // A local time is read in the booking's zone, not TZ's.
        try container.appOK("booking", "edit", id, "--starts-at", "2026-12-12T07:00")
        #expect(try booking(container, id)["startsAt"] as? String == "2026-12-12T07:00:00+01:00")
        // A start in an offset the booking's zone does not have is refused, nothing changed.
        let before = try container.state()
        let wrong = try container.app("booking", "edit", id, "--starts-at", "2026-12-12T07:00+03:00")
        #expect(wrong.status == 64 && wrong.stderr.contains("is not a time in Europe/Paris"), "\(wrong)")
        let unknown = try container.app("booking", "edit", id, "--zone", "Europe/Pariss")
        #expect(unknown.status == 64 && unknown.stderr.hasPrefix("error: --zone 'Europe/Pariss' names no time zone"), "\(unknown)")
        #expect(try container.state() == before)
        // --zone '' keeps the times and their offsets, without a zone.
        try container.appOK("booking", "edit", id, "--zone", "")
        stored = try booking(container, id)
        #expect(stored["zone"] is NSNull)
        #expect(stored["startsAt"] as? String == "2026-12-12T07:00:00+01:00")
    }

    /// A booking whose zone this machine's database cannot read (synced from a newer one): a
    /// local time cannot be placed in it, so it is refused rather than read in TZ's zone; a time
    /// with its offset, a date, or --zone still edit it.
    @Test func aLocalTimeForABookingInAZoneThisMachineDoesNotKnowIsRefused() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let id = try add(container, trip, ["--starts-at", "2026-12-12T07:35", "--zone", "Europe/Lisbon"]).trimmedStdout
        #expect(try container.sqlite("UPDATE bookings SET zone = 'Mars/Olympus' WHERE id = '\(id)'").status == 0)
        let before = try container.state()
        let local = try container.app("booking", "edit", id, "--starts-at", "2026-12-12T09:00", environment: ["TZ": "Asia/Tokyo"])
        #expect(local.status == 64 && local.stderrLines.count == 1
                && local.stderr.contains("the booking's zone Mars/Olympus is not in this system's time zone database"), "\(local)")
        #expect(try container.state() == before)
        try container.appOK("booking", "edit", id, "--starts-at", "2026-12-12T09:00+00:00")
        #expect(try booking(container, id)["startsAt"] as? String == "2026-12-12T09:00:00+00:00")
        try container.appOK("booking", "edit", id, "--starts-at", "2026-12-13")
        try container.appOK("booking", "edit", id, "--starts-at", "2026-12-12T10:00", "--zone", "Europe/Lisbon")
        #expect(try booking(container, id)["startsAt"] as? String == "2026-12-12T10:00:00+00:00")
    }

    @Test func theZoneTravelsThroughExportAndImportAndAnImportedZoneIsChecked() throws {
        let source = try TestContainer()
        let trip = try source.addTrip()
        try source.appOK("booking", "add", "--trip", trip, "--kind", "train", "--title", "Alfa", "--starts-at", "2026-12-13T09:00",
                         "--zone", "Europe/Lisbon")
        let exportFile = source.root.appendingPathComponent("export.json").path
        try source.appOK("export", "--output", exportFile)
        let destination = try TestContainer()
        try destination.appOK("import", exportFile)
        #expect(try destination.sqlite("SELECT zone FROM bookings").trimmedStdout == "Europe/Lisbon")

        let document = source.root.appendingPathComponent("bad.json").path
        try Data("""
            {"trips": [{"id": "11111111-2222-4333-8444-555555555555", "name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"}],
             "bookings": [{"tripId": "11111111-2222-4333-8444-555555555555", "kind": "train", "title": "T", "zone": "Europe/../etc"}]}
            """.utf8).write(to: URL(fileURLWithPath: document))
        let before = try destination.state()
        let refused = try destination.app("import", document)
        #expect(refused.status == 65 && refused.stderr.contains("bookings[0].zone"), "\(refused)")
        #expect(try destination.state() == before)
    }

    /// SQL that takes away what schema 9 added (its triggers name the columns older steps add).
    static var schemaNineUndone: String {
        stepsAfterNineUndone
            + "DROP TABLE sync_held; DROP TABLE sync_field_edits; DROP TABLE sync_placeholders; ALTER TABLE sync_account DROP COLUMN last_compared_at; ALTER TABLE sync_conflicts DROP COLUMN told;\n"
    }

    /// What steps 10 to 17 added (10 changes no table, 14 only the search triggers, made again
    /// as it left them): back to schema 9.
    static var stepsAfterNineUndone: String {
        stepSeventeenUndone + stepSixteenUndone + stepFifteenUndone + "DROP TABLE sync_send_whole; DROP TABLE sync_deletions_seen; DROP TABLE sync_incarnations; DROP TABLE sync_dead; ALTER TABLE sync_account DROP COLUMN unsealed_before; "
            + "ALTER TABLE sync_account DROP COLUMN clock_samples;\n"
    }

    /// What step 17 added: back to schema 16.
    static var stepSeventeenUndone: String { "ALTER TABLE attachments DROP COLUMN protection;\n" }

    /// What step 16 added: back to schema 15.
    static var stepSixteenUndone: String { "ALTER TABLE bookings DROP COLUMN end_zone;\n" }

    /// What step 15 added: back to schema 14 (whose search triggers name no seat).
    static var stepFifteenUndone: String { Schema.searchByKind + "\nALTER TABLE bookings DROP COLUMN seat;\n" }

    @Test func aStoreOfSchemaFiveGainsTheZoneColumnAndKeepsItsBookings() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try container.appOK("booking", "add", "--trip", trip, "--kind", "train", "--title", "Old", "--starts-at", "2026-12-13T09:00+00:00")
        // Back to what a build of schema 5 left: no zone column (nor what later steps add).
        #expect(try container.sqlite(Self.schemaNineUndone + """
            ALTER TABLE bookings DROP COLUMN zone; ALTER TABLE sync_account DROP COLUMN last_mutation;
            ALTER TABLE sync_account DROP COLUMN token_record;
            DROP INDEX trips_pending; DROP INDEX places_pending; DROP INDEX bookings_pending; DROP INDEX attachments_pending;
            CREATE INDEX trips_unsynchronized ON trips (sync_state) WHERE sync_state <> 'synchronized';
            CREATE INDEX places_unsynchronized ON places (sync_state) WHERE sync_state <> 'synchronized';
            CREATE INDEX bookings_unsynchronized ON bookings (sync_state) WHERE sync_state <> 'synchronized';
            PRAGMA user_version = 5
            """).status == 0)
        let list = try container.app("booking", "list", "--json")
        #expect(list.status == 0, "\(list)")
        #expect(list.stdout.contains("\"zone\" : null") && list.stdout.contains("\"title\" : \"Old\""), "\(list.stdout)")
        #expect(try container.sqlite("PRAGMA user_version").trimmedStdout == String(Store.schemaVersion))
        // Schema 8's push-order indexes replace the (sync_state) ones.
        #expect(try container.sqlite("SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_schema WHERE name LIKE '%pending' OR name LIKE '%unsynchronized' ORDER BY name)")
                    .trimmedStdout == "attachments_pending bookings_pending places_pending trips_pending")
    }

    /// A ticket that names no place of a known zone (no airport code here), in a trip with no
    /// zoned booking: its local time is read in TZ, and the booking keeps TZ's zone
    /// (`TicketZoneTests` for the zones that come before TZ's).
    @Test func aTicketsLocalTimeIsReadInTZAndTheBookingKeepsTZsZone() throws {
        let container = try TestContainer()
        try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let lines = TicketPDF.boardingPass.filter { $0 != "From LIS Lisbon To CDG Paris" }
        let file = try container.input(TicketPDF.make(lines: lines), as: "boarding pass.pdf")
        let result = try container.share([file, "--json"], environment: ["TZ": "Europe/Paris"])
        #expect(result.status == 0, "\(result)")
        let filed = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let booking = try #require(filed["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2026-12-12T07:35:00+01:00")
        #expect(booking["zone"] as? String == "Europe/Paris")
    }

    /// An end in a zone of its own — where a flight lands: read in `--end-zone`, kept as `endZone`,
    /// shown on that clock everywhere; edited, removed, and taken with its end by a merge.
    @Test func anEndInAZoneOfItsOwnIsReadKeptAndShownThere() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Japan", start: "2027-04-01", end: "2027-04-10")
        let flight = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "JL 44", "--starts-at",
                                         "2027-04-01T19:00", "--zone", "Europe/London", "--ends-at", "2027-04-02T15:20",
                                         "--end-zone", "Asia/Tokyo", "--json")
        let booking = try #require(try JSONSerialization.jsonObject(with: Data(flight.utf8)) as? [String: Any])
        let id = try #require(booking["id"] as? String)
        #expect(booking["endsAt"] as? String == "2027-04-02T15:20:00+09:00" && booking["endZone"] as? String == "Asia/Tokyo", "\(booking)")
        for words in [["booking", "list", "--trip", trip], ["booking", "show", id], ["trip", "show", trip]] {
            let shown = try container.app(arguments: words, environment: ["TZ": "Europe/Lisbon"])
            #expect(shown.stdout.contains("Fri 2 Apr 15:20 JST") && shown.stdout.contains("19:00 BST"), "\(words): \(shown)")
        }
        let widget = try WidgetTests().widget(container, ["--now", "2027-04-01T20:00:00Z"], environment: ["TZ": "Europe/Lisbon"])
        #expect(widget.stdout.contains("15:20 JST"), "\(widget)")

        // Refused: an end that is not a time in its zone, an end zone without an end.
        let offset = try container.app("booking", "add", "--trip", trip, "--kind", "flight", "--title", "X", "--starts-at", "2027-04-01T10:00",
                                       "--ends-at", "2027-04-02T15:20+01:00", "--end-zone", "Asia/Tokyo")
        #expect(offset.status == 64 && offset.stderr.contains("not a time in Asia/Tokyo") && offset.stderr.contains("--end-zone ''"), "\(offset)")
        let noEnd = try container.app("booking", "add", "--trip", trip, "--kind", "flight", "--title", "X", "--starts-at", "2027-04-01T10:00",
                                      "--end-zone", "Asia/Tokyo")
        #expect(noEnd.status == 65 && noEnd.stderr.contains("needs an end"), "\(noEnd)")

        // Edited: another end zone keeps the instant; removed, the end shows in the booking's zone.
        try container.appOK("booking", "edit", id, "--end-zone", "Asia/Seoul")
        #expect(try Self.field(container, id, "endsAt") == "2027-04-02T15:20:00+09:00" && Self.field(container, id, "endZone") == "Asia/Seoul")
        try container.appOK("booking", "edit", id, "--ends-at", "2027-04-02T16:00")
        #expect(try Self.field(container, id, "endsAt") == "2027-04-02T16:00:00+09:00", "read in the end's own zone")
        try container.appOK("booking", "edit", id, "--zone", "Europe/Paris")
        #expect(try Self.field(container, id, "endsAt") == "2027-04-02T16:00:00+09:00", "a new zone leaves an end with its own zone as it is")
        try container.appOK("booking", "edit", id, "--end-zone", "")
        #expect(try Self.field(container, id, "endZone") == nil)
        #expect(try Self.field(container, id, "endsAt") == "2027-04-02T09:00:00+02:00", "the same instant, in the booking's zone again")
        #expect(try container.appOK("booking", "list", "--trip", trip).contains("Fri 2 Apr 09:00"))
        // An end removed takes its zone with it.
        try container.appOK("booking", "edit", id, "--end-zone", "Asia/Tokyo")
        try container.appOK("booking", "edit", id, "--ends-at", "")
        #expect(try Self.field(container, id, "endsAt") == nil && Self.field(container, id, "endZone") == nil)
        // An end zone that is the booking's zone is none of its own.
        try container.appOK("booking", "edit", id, "--ends-at", "2027-04-02T12:00", "--end-zone", "Europe/Paris")
        #expect(try Self.field(container, id, "endZone") == nil)

        // Merged: the end zone goes with the end it belongs to.
        let bare = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "JL 7", "--starts-at", "2027-04-08T11:00+09:00")
        let full = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "JL 7 copy", "--starts-at",
                                       "2027-04-08T11:00+09:00", "--zone", "Asia/Tokyo", "--ends-at", "2027-04-08T07:30", "--end-zone", "America/Los_Angeles")
        try container.appOK("booking", "merge", bare, full)
        #expect(try Self.field(container, bare, "endsAt") == "2027-04-08T07:30:00-07:00" && Self.field(container, bare, "endZone") == "America/Los_Angeles")
    }

    static func field(_ container: TestContainer, _ id: String, _ key: String) throws -> String? {
        let shown = try container.appOK("booking", "show", id, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any])
        let booking = (object["booking"] as? [String: Any]) ?? object
        return booking[key] as? String
    }

    /// A zone the database names by its offset alone (`+04`) is shown by its city.
    @Test func aZoneWithoutLettersIsShownByItsCity() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Gulf", start: "2027-01-01", end: "2027-01-09")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "EK 192", "--starts-at", "2027-01-02T09:00",
                            "--zone", "Europe/Lisbon", "--ends-at", "2027-01-02T19:30", "--end-zone", "Asia/Dubai")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Alvear", "--starts-at", "2027-01-03T15:00",
                            "--zone", "America/Argentina/Buenos_Aires")
        let list = try container.app("booking", "list", "--trip", trip, environment: ["TZ": "Europe/Lisbon"]).stdout
        #expect(list.contains("Sat 2 Jan 19:30 Dubai") && list.contains("Sun 3 Jan 15:00 Buenos Aires") && !list.contains("+04"), "\(list)")
    }
}
