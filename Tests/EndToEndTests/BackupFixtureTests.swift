import Foundation
import Testing

/// An older build's backup restores (docs/backup.md, "Backups of older builds"): one archive per
/// store schema since `app backup` arrived, each made by a build of the days that schema was
/// current (`tools/lib/backup_fixture.py`, Tests/Fixtures/backups/README.md), is verified,
/// restored into this build — the store upgraded on the way, checked like any other — and gives
/// back every record, the ticket byte for byte, the preferences and the keychain item; then
/// `backup verify` of the same archive finds it the same as the container restored from it.
@Suite struct BackupFixtureTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/backups").standardized
    static let ticket = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/hotel-confirmations/avenida.fpdf2.pdf").standardized

    /// The archives, by the store schema they were made at.
    static var fixtures: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".age") }.sorted { $0.localizedStandardCompare($1) == .orderedAscending }
    }

    /// Every schema from the first one `app backup` wrote (5) to this build's has its archive.
    @Test func everySchemaSinceTheFirstBackupHasAFixture() throws {
        let test = try TestContainer()
        try test.addTrip()
        let info = try #require(try JSONSerialization.jsonObject(with: Data(test.appOK("container", "info", "--json").utf8)) as? [String: Any])
        let current = try #require(info["schemaVersion"] as? Int)
        #expect(Self.fixtures == (5...current).map { "schema-\($0).age" }, "make the missing ones with tools/lib/backup_fixture.py")
    }

    @Test(arguments: fixtures)
    func anOlderBuildsBackupRestoresWhole(_ name: String) throws {
        let facts = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: Self.directory.appendingPathComponent(name.replacingOccurrences(of: ".age", with: ".json")))) as? [String: Any])
        let passphrase = try #require(facts["passphrase"] as? String)
        let trips = try #require(facts["trips"] as? [String: String])
        let archive = Self.directory.appendingPathComponent(name).path
        let test = try TestContainer()
        // On a clock of the days the archives were made: a trip in their trash is purged 30 days
        // after its deletion, and the test would otherwise break on a date.
        let device = try BackupRestoreTests.device(test, "new").merging(["TRIPBOARD_NOW": "2026-12-01T12:00:00Z"]) { $1 }
        func app(_ arguments: String..., stdin: String? = nil) throws -> ProcessResult {
            try test.app(arguments: arguments, stdin: stdin, environment: device)
        }
        let dryRun = try app("restore", archive, "--dry-run", stdin: passphrase + "\n")
        #expect(dryRun.status == 0, "\(name): \(dryRun)")
        let restored = try app("restore", archive, stdin: passphrase + "\n")
        #expect(restored.status == 0, "\(name): \(restored)")
        #expect(restored.stdout.contains("2 trips, 2 places, 1 bookings, 1 attachment files"), "\(name): \(restored.stdout)")

        let info = try #require(try JSONSerialization.jsonObject(with: Data(app("container", "info", "--json").stdout.utf8)) as? [String: Any])
        #expect(try info["schemaVersion"] as? Int == currentSchema(), "\(name) is upgraded to this build's schema")
        let lisbonID = try #require(trips["lisbon"])
        let lisbon = try #require(try JSONSerialization.jsonObject(with: Data(app("trip", "show", lisbonID, "--json").stdout.utf8))
                                  as? [String: Any])
        #expect(lisbon["name"] as? String == "Lisboa" && lisbon["notes"] as? String == "Pastéis de Belém, 9:00\nTram 28", "\(name): \(lisbon)")
        #expect(try app("trip", "list").stdout.contains("京都"), "\(name)")
        #expect(try app("trash", "list").stdout.contains("Porto (deleted)"), "\(name)")
        let places = try app("place", "list", "--trip", lisbonID, "--json").stdout
        #expect(places.contains("LX Factory") && places.contains("\"visited\" : true"), "\(name): \(places)")
        let bookings = try app("booking", "list", "--trip", lisbonID).stdout
        #expect(bookings.contains("Memmo Alfama") && bookings.contains("MA-1"), "\(name): \(bookings)")
        let exported = test.root.path + "/ticket.pdf"
        let attachment = try #require(facts["attachment"] as? String)
        #expect(try app("attachment", "export", attachment, exported).status == 0, "\(name)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: exported)) == Data(contentsOf: Self.ticket), "\(name): the ticket, byte for byte")
        #expect(try app("prefs", "get", "currency").trimmedStdout == "JPY" && app("prefs", "get", "theme").trimmedStdout == "dark", "\(name)")
        #expect(try app("keychain", "get", "api.example.com", "ana@example.com").trimmedStdout == "token-ana", "\(name)")
        let check = try app("container", "check")
        #expect(check.status == 0, "\(name): \(check)")

        let verified = try app("backup", "verify", archive, stdin: passphrase + "\n")
        #expect(verified.status == 0 && verified.stdout.contains("It holds what the container holds."), "\(name): \(verified)")
    }

    func currentSchema() throws -> Int {
        let test = try TestContainer()
        try test.addTrip()
        let info = try JSONSerialization.jsonObject(with: Data(test.appOK("container", "info", "--json").utf8)) as? [String: Any]
        return info?["schemaVersion"] as? Int ?? 0
    }
}
