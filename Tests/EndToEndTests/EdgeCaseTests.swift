import Foundation
import Testing
import TripBoardStorage
import TripBoardSystem

/// Edge cases found in review: each one is a promise of the failure policy or the CLI contract.
@Suite struct EdgeCaseTests {
    @Test func widgetReportsAnEmptiedStoreInsteadOfShowingNoTrips() throws {
        let container = try TestContainer()
        try container.addTrip()
        for suffix in ["-wal", "-shm"] { try FileManager.default.removeItem(atPath: container.storePath + suffix) }
        try Data().write(to: URL(fileURLWithPath: container.storePath))
        let widget = try ProcessRunner.run("widget", [], environment: container.environment)
        #expect(widget.status == 65, "\(widget)")
        #expect(widget.stderr.contains("empty although this container had one"))
        let app = try container.app("trip", "list")
        #expect(app.status == 65, "\(app)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: container.storePath)).isEmpty, "left as it was")
    }

    @Test func widgetStillReadsWhenTheLockFileWasDeleted() throws {
        let container = try TestContainer()
        try container.addTrip("Lisbon")
        try FileManager.default.removeItem(atPath: container.path + "/container.lock")
        let result = try ProcessRunner.run("widget", ["--now", "2026-12-01T00:00:00Z"], environment: container.environment)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Lisbon"))
        #expect(!FileManager.default.fileExists(atPath: container.path + "/container.lock"), "the widget creates nothing")
    }

    @Test func deletedStoreDirectoryIsReportedWithoutRecreatingIt() throws {
        let container = try TestContainer()
        try container.addTrip()
        try FileManager.default.removeItem(atPath: container.path + "/store")
        let result = try container.app("trip", "list")
        #expect(result.status == 66, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: container.path + "/store"))
    }

    @Test func storeSwitchedOutOfWALByAForeignToolIsSwitchedBack() throws {
        let container = try TestContainer()
        try container.addTrip("Lisbon")
        _ = try ProcessRunner.run("app", ["container", "sqlite", "PRAGMA journal_mode=DELETE"], environment: container.environment)
        let result = try container.app("trip", "list")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Lisbon"))
        #expect(try container.sqlite("PRAGMA journal_mode").trimmedStdout == "wal")
    }

    @Test(arguments: [
        (#"{"trips": [{"id": "nope", "name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"}]}"#,
         "trips[0].id 'nope' is not a UUID; nothing was imported"),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02", "syncState": "synchronized"}]}"#,
         "trips[0].syncState synchronized needs a remoteVersion"),
        (#"{"places": [{"tripId": "11111111-2222-4333-8444-555555555555", "name": "P"}]}"#,
         "places[0] belongs to trip 11111111-2222-4333-8444-555555555555"),
    ])
    func importMessagesNameTheRecordOnce(document: String, message: String) throws {
        let container = try TestContainer()
        try container.addTrip()
        let result = try container.app("import", "-", stdin: document)
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("error: " + message), "\(result)")
        #expect(result.stderr.components(separatedBy: "nothing was imported").count == 2, "said once: \(result.stderr)")
    }

    @Test func importFollowsASymbolicLinkTheUserNames() throws {
        let container = try TestContainer()
        let file = container.root.appendingPathComponent("real.json")
        try Data(#"{"trips": [{"name": "Linked", "startDate": "2026-01-01", "endDate": "2026-01-02"}]}"#.utf8).write(to: file)
        let link = container.root.appendingPathComponent("link.json").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file.path)
        let result = try container.app("import", link)
        #expect(result.status == 0, "\(result)")
        #expect(try container.appOK("trip", "list").contains("Linked"))
    }

    @Test func exportToADirectoryIsAUsageErrorBeforeAnythingIsCreated() throws {
        let container = try TestContainer()
        let result = try container.app("export", "--output", container.root.path + "/")
        #expect(result.status == 64, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: container.path))
    }

    @Test func repeatedFlagsAreAccepted() throws {
        let container = try TestContainer()
        try container.addTrip()
        let result = try container.app("trip", "list", "--json", "--json")
        #expect(result.status == 0, "\(result)")
    }

    @Test func prefixMatchingSeveralKindsOfRecordSaysRecords() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        // A place whose id starts with the same hex digit as the trip's.
        let place = String(trip.prefix(1)) + String(Identifier.make().dropFirst())
        let document = #"{"places": [{"id": "\#(place)", "tripId": "\#(trip)", "name": "Alfama"}]}"#
        #expect(try container.app("import", "-", stdin: document).status == 0)
        let result = try container.app("sync", "ack", String(trip.prefix(1)), "--version", "1")
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("matches several records"))
    }
}
