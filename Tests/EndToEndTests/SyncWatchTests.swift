import Foundation
import Testing
import TripBoardStorage

/// `app sync watch`: a change on one device shows up on the other without anyone running
/// `sync now` there, a commit on the watching device is pushed by the watch, and SIGINT or
/// SIGTERM ends it cleanly.
@Suite struct SyncWatchTests {
    /// Polls `condition` every 50 ms for at most `seconds`; returns how long it took, or nil.
    static func within(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Double? {
        let started = Date()
        while Date().timeIntervalSince(started) < seconds {
            if try condition() { return Date().timeIntervalSince(started) }
            usleep(50_000)
        }
        return nil
    }

    static func startWatch(_ device: SyncDevice) throws -> RunningProcess {
        let watch = try ProcessRunner.start("app", ["sync", "watch", "--json"], environment: device.container.environment)
        let started = Self.within(20) {
            ((try? String(contentsOf: watch.errorURL, encoding: .utf8)) ?? "").contains("watching zone")
        }
        #expect(started != nil, "sync watch did not start")
        return watch
    }

    /// Timeline: B starts `sync watch` → A adds a trip and runs `sync now` → B's watch, told by
    /// the server, pulls it → the user renames it on B (another process's commit) → B's watch
    /// pushes the rename → A's `sync now` pulls it → SIGTERM stops B's watch: exit 0.
    @Test func aChangeOnOneDeviceShowsUpOnTheOtherWithoutSyncNow() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let watch = try Self.startWatch(b)
        defer { watch.kill() }

        let trip = try a.container.addTrip("Bruges", start: "2026-12-01", end: "2026-12-03")
        try a.sync()
        let pulledIn = try Self.within(10) { try SyncTests.tripName(b, trip) == "Bruges" }
        #expect(pulledIn != nil, "B never got the trip")
        if let pulledIn { #expect(pulledIn < 3, "B got the trip after \(pulledIn) s") }

        try b.ok("trip", "edit", trip, "--name", "Brugge")
        let pushedIn = try Self.within(10) { try server.psql("SELECT version FROM tripboard.records WHERE id = '\(trip)'") == "2" }
        #expect(pushedIn != nil, "B's watch never pushed the rename")
        try a.sync()
        #expect(try SyncTests.tripName(a, trip) == "Brugge")

        watch.kill(signal: SIGTERM)
        let result = watch.wait(timeout: 10)
        #expect(result.status == 0 && !result.wasSignaled && result.stderr.contains("stopped watching"), "\(result)")
        let lines = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.contains { $0["pulled"] as? Int == 1 } && lines.contains { $0["pushed"] as? Int == 1 }, "\(result.stdout)")
        #expect(try b.container.integrity() == "ok")
    }

    /// Edits made one after another on the watching device, each as soon as the one before is
    /// on the server: every one is pushed within seconds, none left for the fallback minute —
    /// including those committed while the watch was in the middle of a sync (the watch reads
    /// the store's `data_version` before it syncs, so a commit during the sync wakes it after).
    @Test func everyEditOnTheWatchingDeviceIsPushedEvenOneMadeDuringASync() throws {
        let (server, a, _) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Gent", start: "2026-12-01", end: "2026-12-03")
        try a.sync()
        let watch = try Self.startWatch(a)
        defer { watch.kill() }
        for round in 1...20 {
            try a.ok("trip", "edit", trip, "--notes", "edit \(round)")
            // The next edit lands at a different moment of the sync this one starts.
            usleep(useconds_t(round % 6) * 15_000)
            try a.ok("trip", "edit", trip, "--name", "Gent \(round)")
            // Synchronized again only once the server acknowledged the last edit itself.
            let pushed = try Self.within(8) {
                try a.container.sqlite("SELECT name, sync_state FROM trips WHERE id = '\(trip)'").trimmedStdout == "Gent \(round)|synchronized"
            }
            #expect(pushed != nil, "edit \(round) was not pushed within 8 s")
            if pushed == nil { break }
        }
        watch.kill(signal: SIGTERM)
        #expect(watch.wait(timeout: 10).status == 0)
    }

    /// The server stops under a running watch and starts again: the watch keeps going and picks
    /// up what was pushed meanwhile; SIGINT then stops it (exit 0).
    @Test func aWatchOutlivesTheServerGoingAwayAndComingBack() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let watch = try Self.startWatch(b)
        defer { watch.kill() }
        try server.stop()
        usleep(1_500_000)
        try b.container.addTrip("Made offline")
        try server.start()
        let trip = try a.container.addTrip("After the restart")
        try a.sync()
        let arrived = try Self.within(40) { try b.container.sqlite("SELECT count(*) FROM trips").trimmedStdout == "2" }
        #expect(arrived != nil, "the watch did not pick up the change after the restart")
        #expect(try SyncTests.tripName(b, trip) == "After the restart")
        let pushed = try Self.within(20) { try server.psql("SELECT count(*) FROM tripboard.records WHERE kind = 'trip'") == "2" }
        #expect(pushed != nil, "the trip made while the server was down was not pushed")

        watch.kill(signal: SIGINT)
        let result = watch.wait(timeout: 10)
        #expect(result.status == 0 && !result.wasSignaled, "\(result)")
    }
}
