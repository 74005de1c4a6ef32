import Foundation
import Testing
import TripBoardStorage
import TripBoardSync
import TripBoardModel

/// Sync when things go wrong: the server stopped in the middle of a sync, `sync now` killed at
/// random moments, three devices, a zone that asks for a newer client.
@Suite struct SyncRobustnessTests {
    /// `count` trips imported on `device` in one transaction (three push batches for 6,000).
    static func importTrips(_ count: Int, on device: SyncDevice, prefix: String = "Trip") throws {
        let stamp = "2026-12-01T00:00:00.000Z"
        let trips = (0..<count).map { index in
            """
            {"id": "\(UUID().uuidString.lowercased())", "name": "\(prefix) \(index)", "startDate": "2027-01-01", "endDate": "2027-01-02",
             "notes": "", "syncState": "pendingUpload", "remoteVersion": null, "updatedAt": "\(stamp)"}
            """
        }
        let document = """
            {"format": "tripboard-export", "formatVersion": 1, "exportedAt": "\(stamp)", "trips": [\(trips.joined(separator: ","))],
             "places": [], "bookings": [], "preferences": {}}
            """
        let result = try device.app("import", "-", stdin: document)
        try #require(result.status == 0, "import: \(result)")
    }

    static func count(_ device: SyncDevice, _ sql: String) throws -> String { try device.container.sqlite(sql).trimmedStdout }

    /// Timeline: A pushes 6,000 trips (three batches of at most 2,500) → as soon as the first batch is on the
    /// server, it is stopped with `-m immediate` → A's `sync now` fails within seconds, one line,
    /// 69 or 75, its trips all there → the server starts again → `sync now` converges: every
    /// trip once on the server at version 1, and B gets them all.
    @Test func aServerStoppedMidSyncFailsInBoundedTimeLosesNothingAndARetryConverges() throws {
        // Durable commits: an immediate stop must not lose what the server acknowledged (a
        // server that forgets is SyncReconcileTests' scenario).
        let (server, a, b) = try SyncTests.twoDevices(durable: true)
        defer { withExtendedLifetime(server) {} }
        try Self.importTrips(6_000, on: a)
        let sync = try ProcessRunner.start("app", ["sync", "now"], environment: a.container.environment)
        defer { sync.kill() }
        let firstBatch = try SyncWatchTests.within(60) { try server.psql("SELECT count(*) > 0 FROM tripboard.records") == "t" }
        try #require(firstBatch != nil, "the first batch never reached the server")
        try server.stop()
        let stopped = Date()
        let failed = sync.wait(timeout: 60)
        let lines = failed.stderr.split(separator: "\n")
        #expect([69, 75].contains(failed.status) && !failed.wasSignaled, "\(failed)")
        #expect(lines.count == 1 && lines.first?.hasPrefix("error: ") == true, "one line: \(failed.stderr)")
        #expect(Date().timeIntervalSince(stopped) < 35, "bounded: \(Date().timeIntervalSince(stopped)) s")
        #expect(try Self.count(a, "SELECT count(*) FROM trips") == "6000", "nothing lost")
        #expect(try Self.count(a, "SELECT count(*) FROM trips WHERE sync_state = 'synchronized'") != "6000")

        try server.start()
        let converged = try a.sync()
        #expect(converged["pending"] as? Int == 0, "\(converged)")
        #expect(try server.psql("SELECT count(*), max(version), count(DISTINCT id) FROM tripboard.records") == "6000|1|6000")
        #expect(try server.psql("SELECT change_sequence FROM tripboard.zones") == "6000", "no change numbered twice")
        #expect(try b.sync()["pulled"] as? Int == 6_000)
        #expect(try b.content() == a.content())
    }

    /// `sync now` killed with SIGKILL at random moments on the pushing device, then on the
    /// pulling one; each time a plain `sync now` afterwards converges, with no duplicates.
    @Test func killsAtRandomMomentsThenARetryConvergesWithNoDuplicates() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.importTrips(1_200, on: a)
        var generator = SystemRandomNumberGenerator()
        for device in [a, b] {
            var killed = 0
            for round in 0..<6 {
                let sync = try ProcessRunner.start("app", ["sync", "now"], environment: device.container.environment)
                // The first kill lands early, while the 1,200 records are still moving (on a fast
                // machine the whole pull can be over within the later rounds' sleeps); the others anywhere.
                usleep(round == 0 ? UInt32.random(in: 10_000...100_000, using: &generator)
                                  : UInt32.random(in: 50_000...1_500_000, using: &generator))
                if sync.process.isRunning { killed += 1 }
                sync.kill()
                _ = sync.wait(timeout: 10)
            }
            let resumed = try device.sync()
            #expect(resumed["pending"] as? Int == 0, "\(resumed)")
            #expect(try device.container.integrity() == "ok")
            #expect(try Self.count(device, "SELECT count(*), count(DISTINCT name) FROM trips") == "1200|1200")
            #expect(try Self.count(device, "SELECT count(*) FROM sync_outgoing") == "0")
            #expect(killed > 0, "no sync was still running when it was killed")
        }
        #expect(try server.psql("SELECT count(*), max(version), count(DISTINCT id) FROM tripboard.records") == "1200|1|1200")
        #expect(try server.psql("SELECT change_sequence FROM tripboard.zones") == "1200")
        #expect(try b.content() == a.content())
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
    }

    /// Three devices edit one trip (name on A, notes on B, a place added and the dates moved on
    /// C), with a second trip deleted on A while C renames it; synced in a scattered order,
    /// all three end with the same content.
    @Test func threeDevicesConverge() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let trip = try a.container.addTrip("Kyoto", start: "2027-03-01", end: "2027-03-08")
        let other = try a.container.addTrip("Osaka", start: "2027-03-08", end: "2027-03-10")
        for device in [a, b, c] { try device.sync() }

        try a.ok("trip", "edit", trip, "--name", "Kyōto")
        try a.ok("trip", "delete", other)
        try b.ok("trip", "edit", trip, "--notes", "Fushimi Inari at dawn")
        try c.ok("place", "add", "--trip", trip, "--name", "Kinkaku-ji")
        try c.ok("trip", "edit", trip, "--start", "2027-03-02", "--end", "2027-03-09")
        try c.ok("trip", "edit", other, "--name", "Ōsaka")
        for device in [c, a, b, c, a, b] { try device.sync() }

        let row = try a.container.sqlite("SELECT name, start_date, end_date, notes FROM trips WHERE id = '\(trip)'").trimmedStdout
        #expect(row == "Kyōto|2027-03-02|2027-03-09|Fushimi Inari at dawn")
        // Live records are the same everywhere. The trash may differ: a device that only ever saw
        // the tombstone (B) keeps the version it had there (docs/sync.md §8), the others the edit.
        let contents = try [a, b, c].map { try $0.content().split(separator: "\n").filter { !$0.hasSuffix("|1") }.joined(separator: "\n") }
        #expect(contents[0] == contents[1] && contents[1] == contents[2], "a:\n\(contents[0])\nb:\n\(contents[1])\nc:\n\(contents[2])")
        for device in [a, b, c] {
            #expect(try device.ok("place", "list", "--trip", trip).contains("Kinkaku-ji"))
            #expect(try device.ok("trip", "list").contains("Kyōto") && !(try device.ok("trip", "list").contains("saka")))
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
            #expect(try device.container.sqlite("SELECT count(*) FROM trips WHERE id = '\(other)' AND trashed_at IS NOT NULL").trimmedStdout == "1")
        }
    }

    /// A zone whose `min_client_version` is above this client's: `sync now` still pulls, sends
    /// nothing, and says why on stderr; once the zone allows it again, what waited is pushed.
    @Test func aZoneAskingForANewerClientMakesThisOneReadOnly() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        _ = try server.psql("UPDATE tripboard.zones SET min_client_version = \(SyncEngine.clientVersion + 1)")
        let fromB = try b.container.addTrip("Made on B")
        _ = try server.psql("UPDATE tripboard.zones SET min_client_version = 1")
        try b.sync()
        _ = try server.psql("UPDATE tripboard.zones SET min_client_version = \(SyncEngine.clientVersion + 1)")

        try a.container.addTrip("Made on A")
        let result = try a.app("sync", "now", "--json")
        #expect(result.status == 0 && result.stderr.contains("asks for a newer TripBoard"), "\(result)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["readOnly"] as? Bool == true && report["pulled"] as? Int == 1 && report["pushed"] as? Int == 0, "\(report)")
        #expect(try SyncTests.tripName(a, fromB) == "Made on B")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records") == "1", "nothing sent")
        #expect(report["pending"] as? Int == 1)

        _ = try server.psql("UPDATE tripboard.zones SET min_client_version = \(SyncEngine.clientVersion)")
        let allowed = try a.sync()
        #expect(allowed["pushed"] as? Int == 1 && allowed["readOnly"] as? Bool == false, "\(allowed)")
    }
}
