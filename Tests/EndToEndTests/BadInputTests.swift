import Foundation
import Testing
import TripBoardSystem
import TripBoardModel

/// Every bad input gets one `error:` line on stderr, its documented exit status, and changes
/// nothing in the container.
@Suite struct BadInputTests {
    static let tripID = "11111111-2222-4333-8444-555555555555"

    /// (arguments, expected status, words the message must contain). `TRIP` stands for a real trip id.
    static let cases: [([String], Int32, String)] = [
        ([], 64, "missing command"),
        (["voyage", "list"], 64, "unknown command"),
        (["trip"], 64, "incomplete command"),
        (["trip", "list", "--colour"], 64, "unknown option --colour"),
        (["trip", "list", "extra"], 64, "unexpected argument"),
        (["trip", "add", "--name", "X", "--start", "2026-12-01"], 64, "missing --end"),
        (["trip", "add", "--name", "X", "--start", "12/01/2026", "--end", "2026-12-02"], 64, "not a date"),
        (["trip", "add", "--name", "X", "--start", "2026-02-30", "--end", "2026-03-02"], 64, "does not exist: 2026-02 has 28 days"),
        (["trip", "add", "--name", "X", "--start", "2026-12-05", "--end", "2026-12-01"], 65, "before the start date"),
        (["trip", "add", "--name", "  ", "--start", "2026-12-01", "--end", "2026-12-02"], 64, "name must not be empty"),
        (["trip", "add", "--name"], 64, "--name needs a value"),
        (["trip", "show", tripID], 66, "no trip with id"),
        (["trip", "show", "not-hex!"], 64, "is not a trip id"),
        (["trip", "edit", "TRIP", "--end", "2000-01-01"], 65, "before the start date"),
        (["trip", "delete", tripID], 66, "no trip"),
        (["place", "add", "--trip", tripID, "--name", "X"], 66, "no trip"),
        (["place", "visit", tripID], 66, "no place"),
        (["booking", "add", "--trip", "TRIP", "--kind", "boat", "--title", "X"], 64, "is not a booking kind"),
        (["booking", "add", "--trip", "TRIP", "--kind", "flight", "--title", "X", "--starts-at", "tomorrow"], 64, "ISO 8601"),
        (["booking", "delete", tripID], 66, "no booking"),
        (["prefs", "get", "colour"], 64, "unknown preference"),
        (["prefs", "set", "theme", "purple"], 64, "not a valid theme"),
        (["prefs", "set", "currency", "XYZ"], 64, "not a valid currency"),
        (["import", "/nonexistent/file.json"], 66, "No such file"),
        (["import"], 64, "missing FILE"),
        (["sync", "ack", tripID, "--version", "1"], 66, "no trip, place, booking or attachment"),
        (["sync", "ack", "TRIP", "--version", "zero"], 64, "positive integer"),
        (["sync", "ack", "TRIP"], 64, "missing --version"),
    ]

    @Test(arguments: cases)
    func badInputIsRefusedWithOneLineAndNothingChanges(arguments: [String], status: Int32, message: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try container.appOK("prefs", "set", "theme", "dark")
        let before = try container.state()
        let result = try container.app(arguments: arguments.map { $0 == "TRIP" ? trip : $0 })
        #expect(result.status == status, "\(arguments): \(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(arguments): \(result)")
        #expect(result.stderr.contains(message), "\(arguments): \(result)")
        #expect(result.stdout.isEmpty)
        let after = try container.state()
        #expect(after == before, "\(arguments) changed the container:\n\(before)\n---\n\(after)")
    }

    @Test func usageErrorsNeverCreateAContainer() throws {
        let container = try TestContainer()
        for arguments in [["trip", "add", "--name", "X", "--start", "bad", "--end", "2026-01-01"], ["nope"], ["prefs", "get", "x"]] {
            #expect(try container.app(arguments: arguments).status == 64)
        }
        #expect(!FileManager.default.fileExists(atPath: container.path))
    }

    @Test(arguments: [
        ("not json", "not valid JSON"),
        (#"{"format": "something-else"}"#, "not tripboard-export"),
        (#"{"formatVersion": 99}"#, "newer than this build"),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01"}]}"#, "missing key 'endDate'"),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "2026-13-01"}]}"#, "trips[0]"),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-05", "endDate": "2026-01-01"}]}"#, "before the start date"),
        (#"{"trips": [{"id": "x", "name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"}]}"#, "not a UUID"),
        (#"{"places": [{"tripId": "11111111-2222-4333-8444-555555555555", "name": "P"}]}"#, "neither in the import nor in the store"),
        (#"{"trips": [{"id": "11111111-2222-4333-8444-555555555555", "name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"}, {"id": "11111111-2222-4333-8444-555555555555", "name": "B", "startDate": "2026-01-01", "endDate": "2026-01-02"}]}"#, "appears twice"),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"}], "bookings": [{"tripId": "11111111-2222-4333-8444-555555555555", "kind": "boat", "title": "T"}]}"#, "bookings[0]"),
        (#"{"preferences": {"theme": "purple"}}"#, "preference theme"),
    ])
    func malformedImportIsRefusedWhole(document: String, message: String) throws {
        let container = try TestContainer()
        try container.addTrip()
        let before = try container.state()
        let result = try container.app("import", "-", stdin: document)
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
        #expect(result.stderrLines.count == 1)
        #expect(try container.state() == before)
    }

    @Test func ambiguousPrefixListsTheCandidates() throws {
        let container = try TestContainer()
        var ids: [String] = []
        // 20 random ids: some share a first hex digit.
        for index in 0..<20 { ids.append(try container.addTrip("Trip \(index)")) }
        let first = Dictionary(grouping: ids) { $0.prefix(1) }.first { $0.value.count > 1 }
        let group = try #require(first)
        let result = try container.app("trip", "show", String(group.key))
        #expect(result.status == 64)
        #expect(result.stderr.contains("matches several trips"))
        #expect(group.value.prefix(2).allSatisfy { result.stderr.contains($0) })
    }

    /// An argument's control characters are shown escaped in the error, never sent raw to the
    /// terminal (an ESC sequence could recolour or rewrite the screen).
    @Test(arguments: ["app", "widget", "share-extension"])
    func errorsNeverEchoControlCharacters(_ executable: String) throws {
        let container = try TestContainer()
        let result = try ProcessRunner.run(executable, ["a\u{1B}[31mRED\u{7}"], environment: container.environment)
        #expect(result.status == (executable == "share-extension" ? 66 : 64), "\(result)")
        #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(result)")
        #expect(result.stderr.contains("\\u{1B}[31mRED\\u{07}"), "\(result)")
    }

    /// When the records of an import are committed but its preferences cannot be written, the
    /// error says the records were imported, so that nobody imports them twice.
    @Test func anImportWhosePreferencesFailSaysTheRecordsAreIn() throws {
        let container = try TestContainer()
        try container.addTrip()
        let preferences = container.path + "/preferences"
        try FileManager.default.removeItem(atPath: preferences)
        try FileManager.default.createSymbolicLink(atPath: preferences, withDestinationPath: container.root.path)
        let document = #"{"trips": [{"name": "Imported", "startDate": "2027-01-01", "endDate": "2027-01-02"}], "preferences": {"theme": "dark"}}"#
        let result = try container.app("import", "-", stdin: document)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("imported 1 trips, 0 places, 0 bookings, but the preferences could not be written"), "\(result)")
        #expect(result.stderrLines.count == 1)
        #expect(try container.sqlite("SELECT count(*) FROM trips WHERE name = 'Imported'").trimmedStdout == "1")
    }
}
