import Foundation
import Testing
import TripBoardModel

/// TripBoard 1's records go through the same field rules as every other path: what they
/// normalise (case of ids, white space around names, offsets) is normalised the same way by the
/// plan's converter and by the SQL that builds the store; what they refuse stops the migration at
/// the plan — never stored, never cut short, nothing changed on either side.
@Suite struct MigrationRulesTests {
    /// Version-1 records the new store refuses, and words the one error line must contain.
    static let refused: [(String, String)] = [
        ("a name of 201 characters", "name is longer than 200 characters"),
        ("a name of one character and 801 bytes", "name is longer than 800 bytes of UTF-8"),
        ("notes of 40,002 bytes", "notes is longer than 40000 bytes of UTF-8"),
        ("a title on two lines", "title must be a single line without control characters"),
        ("a reference of 101 characters", "reference is longer than 100 characters"),
        ("an updated_at in the year 10000 in UTC", "updated_at falls in the year 10000 in UTC"),
        ("a starts_at in the year 0 in UTC", "starts_at falls in the year 0 in UTC"),
        ("a version-1 (time-based) UUID", "is not a version-4 (random) UUID"),
        ("the nil UUID as a trip id", "is the nil UUID"),
        ("a place with its trip's id", "have the id"),
        ("two bookings whose ids differ only in case", "a booking and a booking have the id"),
        ("an attachment file name with a slash", "filename must be a file name without '/'"),
    ]

    static func damage(_ fixture: inout LegacyFixture, _ name: String) {
        let combining = "e" + String(repeating: "\u{301}", count: 400)
        switch name {
        case "a name of 201 characters": fixture.trips[1].name = String(repeating: "n", count: 201)
        case "a name of one character and 801 bytes": fixture.places[1].name = combining
        case "notes of 40,002 bytes": fixture.trips[0].notes = String(repeating: "é", count: 5_000) + String(repeating: "\u{301}", count: 15_001)
        case "a title on two lines": fixture.bookings[2].title = "TP\n1351"
        case "a reference of 101 characters": fixture.bookings[0].reference = String(repeating: "R", count: 101)
        case "an updated_at in the year 10000 in UTC": fixture.trips[2].updated_at = "9999-12-31T23:59:59-14:00"
        case "a starts_at in the year 0 in UTC": fixture.bookings[1].starts_at = "0001-01-01T00:30:00+01:00"
        case "a version-1 (time-based) UUID": fixture.places[0].id = "aaaaaaaa-0000-1000-8000-000000000001"
        case "the nil UUID as a trip id":
            let old = fixture.trips[1].id
            fixture.trips[1].id = "00000000-0000-0000-0000-000000000000"
            for index in fixture.places.indices where fixture.places[index].trip_id == old { fixture.places[index].trip_id = fixture.trips[1].id }
            for index in fixture.bookings.indices where fixture.bookings[index].trip_id == old { fixture.bookings[index].trip_id = fixture.trips[1].id }
        case "a place with its trip's id": fixture.places[2].id = fixture.trips[2].id
        case "two bookings whose ids differ only in case":
            let old = fixture.bookings[1].id
            fixture.bookings[1].id = fixture.bookings[0].id.uppercased()
            for index in fixture.attachments.indices where fixture.attachments[index].booking_id == old {
                fixture.attachments[index].booking_id = fixture.bookings[1].id
            }
        case "an attachment file name with a slash": fixture.attachments[1].filename = "../ticket.pdf"
        default: Issue.record("unknown case \(name)")
        }
    }

    @Test(arguments: refused)
    func aRecordTheFieldRulesRefuseStopsTheMigrationAndChangesNothing(name: String, message: String) throws {
        var fixture = LegacyFixture.standard()
        Self.damage(&fixture, name)
        let setup = try MigrationSetup(fixture)
        let before = try setup.legacySnapshot()
        let result = try setup.migrate()
        #expect(result.status == 65, "\(name): \(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains(message), "\(name): \(result)")
        #expect(result.stderr.contains("nothing was migrated or changed"), "\(name): \(result)")
        #expect(try setup.legacySnapshot() == before, "\(name)")
        for entry in ["migration", "store", "attachments"] {
            #expect(!FileManager.default.fileExists(atPath: setup.container.path + "/" + entry), "\(name): \(entry) was left")
        }
    }

    /// White space around names, a blank city, upper-case kinds and ids, offsets: the converter
    /// (whose digest the verification compares) and the SQL that builds the store agree.
    @Test func normalisedValuesAreTheSameInSQLiteAsInTheConverter() throws {
        var fixture = LegacyFixture.standard()
        fixture.trips[0].name = "  Trip 0 \t"
        fixture.places[1].city = "   "
        fixture.places[2].name = "\u{a0}Place 2"
        fixture.bookings[1].title = " TP 1 "
        fixture.bookings[1].reference = "  "
        fixture.bookings[1].kind = "TRAIN"
        fixture.attachments[0].filename = " ticket.pdf "
        let setup = try MigrationSetup(fixture)
        let result = try setup.migrate(["--json"])
        #expect(result.status == 0, "\(result)")
        func value(_ sql: String) throws -> String { try setup.container.sqlite(sql, readOnly: true).trimmedStdout }
        #expect(try value("SELECT name FROM trips WHERE id = '\(fixture.trips[0].id.lowercased())'") == "Trip 0")
        #expect(try value("SELECT city IS NULL FROM places WHERE id = '\(fixture.places[1].id)'") == "1")
        #expect(try value("SELECT name FROM places WHERE id = '\(fixture.places[2].id)'") == "Place 2")
        #expect(try value("SELECT kind || '|' || title || '|' || (reference IS NULL) FROM bookings WHERE id = '\(fixture.bookings[1].id)'")
                == "train|TP 1|1")
        #expect(try value("SELECT original_filename FROM attachments WHERE id = '\(fixture.attachments[0].id)'") == "ticket.pdf")
        #expect(try setup.container.integrity() == "ok")
    }

    /// The container's part of a state (the root also holds the version-1 directory, whose
    /// `-shm` SQLite rewrites when it opens the store).
    private func containerOnly(_ state: ContainerState) -> ContainerState {
        ContainerState(files: state.files.filter { $0.key.hasPrefix("container") }, storeDump: state.storeDump)
    }

    /// With `--merge`, a version-1 record whose id a record of another kind has in the container
    /// is refused by the plan, before the journal is written: the plan, once written, is never
    /// decided again, so a later store step could only fail on every run.
    @Test func aMergeRefusesAnIdThatAnotherKindHasInTheContainer() throws {
        let fixture = LegacyFixture.standard()
        let setup = try MigrationSetup(fixture)
        let containerTrip = try setup.container.addTrip("Here already")
        try setup.container.appOK("import", "-", stdin: #"{"places": [{"id": "\#(fixture.bookings[0].id)", "tripId": "\#(containerTrip)", "name": "Same id"}]}"#)
        let legacyBefore = try setup.legacySnapshot()
        let containerBefore = try setup.container.state()
        let result = try setup.migrate(["--merge"])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains("booking \(fixture.bookings[0].id) has the id of a place in the container"), "\(result)")
        #expect(try setup.legacySnapshot() == legacyBefore)
        #expect(try containerOnly(setup.container.state()) == containerOnly(containerBefore))
    }
}
