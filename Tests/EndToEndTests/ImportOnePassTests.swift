import Foundation
import Testing

/// `app import` into a container that is set up reads the document once, inserting each record as
/// it is checked, in a transaction the document's first problem undoes; into a container it must
/// create, it checks the document in a first pass, so that a bad one creates nothing. Both report
/// the same problem first — the document's shape, then its format, then its records' rules, then
/// its preferences, then what the store refuses — and both leave nothing behind.
@Suite struct ImportOnePassTests {
    static let trip = "00000000-0000-4000-8000-00000000a001"
    static let other = "00000000-0000-4000-8000-00000000b002"

    static func trip(_ id: String? = nil, _ name: String = "Porto", start: String = "2027-01-01", end: String = "2027-01-02") -> String {
        (id.map { #"{"id": "\#($0)", "# } ?? "{") + #""name": "\#(name)", "startDate": "\#(start)", "endDate": "\#(end)"}"#
    }

    /// Documents with a problem, none of which depends on what the store holds, each with the
    /// line both kinds of import print. Several have two problems: the one reported is the one a
    /// check of the whole document meets first, whatever came first in the file.
    static let refused: [(String, String)] = [
        (#"{"trips": [\#(trip()), \#(trip(nil, "Late", start: "2027-01-05"))], "preferences": {"nonsense": 1}}"#,
         "error: trips[1]: the end date 2027-01-02 is before the start date 2027-01-05; nothing was imported"),
        (#"{"trips": [\#(trip(other)), \#(trip())], "places": [{"id": "\#(other)", "tripId": "\#(other)", "name": "P"}], "bookings": [{"title": "x"}]}"#,
         "error: the import is not a valid TripBoard export: missing key 'tripId' at bookings[0]; nothing was imported"),
        (#"{"trips": [\#(trip())], "preferences": {"nonsense": 1}}"#,
         "error: the import's preference nonsense is not valid: unknown preference 'nonsense': use one of currency, theme, mapStyle, showsVisitedPlaces, cacheLimitMB; nothing was imported"),
        (#"{"trips": [\#(trip(other)), \#(trip(other, "Again"))], "format": "tripboard-export", "formatVersion": 2}"#,
         "error: the import has format version 2, newer than this build reads (1); nothing was imported"),
        (#"{"trips": [\#(trip()), \#(trip())], "format": "other"}"#,
         "error: the import's format is 'other', not tripboard-export; nothing was imported"),
        (#"{"trips": [\#(trip()), \#(trip())], "format": "#,
         "error: the import is not valid JSON (unexpected end of input at line 1, column 165); nothing was imported"),
        (#"{"trips": [\#(trip(other))], "places": [{"id": "\#(other)", "tripId": "\#(other)", "name": "P"}]}"#,
         "error: the id \(other) appears twice in the import (trips[0] and places[0]); ids are unique across trips, places, bookings and attachments; nothing was imported"),
        (#"{"places": [{"tripId": "\#(other)", "name": "P"}], "trips": [\#(trip())]}"#,
         "error: places[0] belongs to trip \(other), which is neither in the import nor in the store; nothing was imported"),
    ]

    @Test(arguments: refused.indices)
    func bothReadingsRefuseAlikeAndLeaveNothing(_ index: Int) throws {
        let (document, line) = Self.refused[index]
        // Two passes: no container yet, and none is created.
        let fresh = try TestContainer()
        let first = try fresh.app("import", "-", stdin: document)
        #expect(first.status == 65 && first.stderrLines.last == line, "two passes: \(first)")
        if line.contains("appears twice") || line.contains("neither in the import") {
            // Found by the store once the records are in: the container is made by then, empty.
            #expect(try fresh.sqlite("SELECT count(*) FROM trips; SELECT count(*) FROM places").stdoutLines == ["0", "0"])
        } else {
            #expect(!FileManager.default.fileExists(atPath: fresh.path), "a refused import created the container")
        }

        // One pass, into a container with a trip in it.
        let container = try TestContainer()
        try container.addTrip()
        let before = try container.state()
        let result = try container.app("import", "-", stdin: document)
        #expect(result.status == 65 && result.stderr == line + "\n", "one pass: \(result)")
        #expect(result.stdout.isEmpty)
        #expect(try container.state() == before)
        #expect(try container.sqlite("SELECT count(*) FROM search_index").trimmedStdout == "1", "only the trip that was there is indexed")
    }

    /// What only a one-pass import meets: a record the store refuses (its id taken) comes before
    /// a later record's broken rule, a later shape problem or a bad preference in the file; the
    /// document's own problem is still the one reported.
    @Test(arguments: [
        (#", \#(trip(nil, "Late", start: "2027-01-05"))]"#, "error: trips[1]: the end date 2027-01-02 is before the start date 2027-01-05; nothing was imported"),
        (#"], "bookings": [{"title": "x"}]"#, "error: the import is not a valid TripBoard export: missing key 'tripId' at bookings[0]; nothing was imported"),
        (#"], "preferences": {"theme": "plaid"}"#, "error: the import's preference theme is not valid"),
        ("]", "error: trips[0]: trip \(trip) already exists in the store; nothing was imported"),
    ])
    func aStoreRefusalComesAfterTheDocumentsOwnProblems(rest: String, line: String) throws {
        let container = try TestContainer()
        try container.appOK("import", "-", stdin: #"{"trips": [\#(Self.trip(Self.trip, "Taken"))]}"#)
        let before = try container.state()
        let result = try container.app("import", "-", stdin: #"{"trips": [\#(Self.trip(Self.trip))\#(rest)}"#)
        #expect(result.status == 65 && result.stderrLines.count == 1 && result.stderr.hasPrefix(line), "\(result)")
        #expect(try container.state() == before)
    }

    /// A record member given twice counts once, the last: the records of the first, inserted as
    /// they were read, are undone, and the document is read again in two passes.
    @Test func aRepeatedMemberCountsOnlyItsLastTime() throws {
        let container = try TestContainer()
        try container.addTrip("Kept")
        let document = #"""
            {"trips": [\#(Self.trip(Self.trip, "First")), \#(Self.trip(nil, "Broken", start: "2027-01-09"))],
             "places": [{"tripId": "\#(Self.trip)", "name": "Under the first"}],
             "trips": [\#(Self.trip(Self.other, "Second"))],
             "places": [{"tripId": "\#(Self.other)", "name": "Under the second"}]}
            """#
        #expect(try container.app("import", "-", stdin: document).stderr == "imported 1 trips, 1 places, 0 bookings\n")
        #expect(try container.sqlite("SELECT name FROM trips ORDER BY rowid; SELECT name FROM places").stdoutLines
                == ["Kept", "Second", "Under the second"])
        #expect(try container.appOK("search", "First") == "Nothing found.")
        #expect(try container.appOK("search", "Second").contains("Second"))
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }

    /// The trash's 30-day purge is a writer's chore: a refused import leaves it to the next
    /// command, an import that succeeds does it.
    @Test func aRefusedImportPurgesNothing() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Old")
        #expect(try container.app("trip", "delete", trip, environment: TrashPurgeTests.at(TrashPurgeTests.deletedAt)).status == 0)
        let later = TrashPurgeTests.at("2026-12-20T00:00:00Z")
        let before = try container.state()
        #expect(try container.app("import", "-", stdin: #"{"trips": [\#(Self.trip(nil, "Bad", start: "2027-01-09"))]}"#, environment: later).status == 65)
        #expect(try container.state() == before)
        #expect(try container.app("import", "-", stdin: #"{"trips": [\#(Self.trip())]}"#, environment: later).status == 0)
        #expect(try container.sqlite("SELECT name FROM trips").stdoutLines == ["Porto"])
    }
}
