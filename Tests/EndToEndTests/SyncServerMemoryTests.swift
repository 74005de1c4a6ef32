import Foundation
import Testing
import TripBoardSystem

/// A server that went back in time or lost rows (docs/sync.md, When the server forgets): version
/// numbers are concurrency tokens, never the proof that a device has something; every device
/// notices, sends again what it holds newer, and all converge. Read through `app` only.
@Suite struct SyncServerMemoryTests {
    static func notes(_ device: SyncDevice, _ trip: String) throws -> (name: String?, notes: String?) {
        let shown = try #require(try device.json("trip", "show", trip) as? [String: Any])
        return (shown["name"] as? String, shown["notes"] as? String)
    }

    /// A's notes edit is lost by a restore of an older dump; B, which never saw it, renames the
    /// trip, and the server numbers that version 2 — the version A and C hold for the lost
    /// notes. Both still take B's name, A sends its notes again, and all three end equal.
    @Test func aServerRestoredFromAnOlderDumpDoesNotLeaveDevicesDifferent() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30", "--notes", "v1")
        for device in [a, b, c] { try device.sync() }
        let dump = server.directory + "/older.dump"
        try server.backUp(to: dump)

        try a.ok("trip", "edit", trip, "--notes", "v2 (A)")
        try a.sync()
        try c.sync()
        try server.restore(from: dump)
        try b.ok("trip", "edit", trip, "--name", "Lisboa")
        try b.sync()
        // A and C pull the notes the restore took back, older than theirs: refused (65), sent again.
        try a.syncRefusing()
        for _ in 0..<2 { for device in [a, c, b] { try device.sync() } }

        for device in [a, b, c] {
            let shown = try Self.notes(device, trip)
            #expect(shown.name == "Lisboa" && shown.notes == "v2 (A)", "\(shown)")
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: b))
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: c))
    }

    /// A deletion the server had acknowledged, then lost to a restore of an older dump: the
    /// device that deleted the trip sends the deletion again (the trip does not come back out of
    /// its trash), and the others end with it deleted too.
    @Test func aDeletionLostToARestoreIsSentAgainNotUndone() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Bruges", start: "2027-08-01", end: "2027-08-02")
        let kept = try a.container.addTrip("Antwerp", start: "2027-08-03", end: "2027-08-04")
        try a.sync()
        try b.sync()
        let dump = server.directory + "/older.dump"
        try server.backUp(to: dump)
        try a.ok("trip", "delete", trip)
        try a.sync()
        try b.sync()
        try server.restore(from: dump)
        // The restore serves the live copy of an incarnation A deleted: refused (65), the
        // deletion sent again.
        try a.syncRefusing()
        for _ in 0..<2 { for device in [a, b] { try device.sync() } }
        for device in [a, b] {
            let trips = try device.ok("trip", "list")
            #expect(!trips.contains("Bruges") && trips.contains("Antwerp"), "\(trips)")
        }
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "t")
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(kept)'") == "f")
    }

    /// After a restore of an older dump, B (which never saw A's edit) deletes the trip: the
    /// server numbers that deletion with the version A and C hold for the lost edit. A, which
    /// reconciles, and C, at its comparison, still take the deletion: the same version cannot be
    /// live on a device and deleted on the server.
    @Test func aDeletionNumberedWithAVersionDevicesHoldLiveStillArrives() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let trip = try a.container.addTrip("Leuven", start: "2027-09-01", end: "2027-09-02")
        for device in [a, b, c] { try device.sync() }
        let dump = server.directory + "/older.dump"
        try server.backUp(to: dump)
        try a.ok("trip", "edit", trip, "--notes", "lost to the restore")
        try a.sync()
        try c.sync()
        try server.restore(from: dump)
        try b.ok("trip", "delete", trip)
        try b.sync()
        try a.sync()
        let compared = try c.app("sync", "now", "--compare")
        #expect(compared.status == 0, "\(compared)")
        for device in [a, b, c] {
            #expect(!(try device.ok("trip", "list")).contains("Leuven"), "deleted everywhere")
            #expect(try device.ok("trash", "list").contains("Leuven"), "and in every trash")
        }
    }

    /// After a restore, A sends its trip again as new — at the version C holds, at a sequence C's
    /// token has passed — and more, so that the counter is past C's token again. C still notices
    /// (its token's record is at another sequence) and takes A's notes.
    @Test func aDeviceWhoseTokenThePushesAfterARestorePassedStillNotices() throws {
        let (server, a, c) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.container.addTrip("Mons", start: "2027-10-01", end: "2027-10-02")
        try a.sync()
        let dump = server.directory + "/older.dump"
        try server.backUp(to: dump)
        let trip = try a.ok("trip", "add", "--name", "Namur", "--start", "2027-10-03", "--end", "2027-10-04", "--notes", "one")
        try a.sync()
        try c.sync()
        try a.ok("trip", "edit", trip, "--notes", "two")
        try server.restore(from: dump)
        for index in 0..<3 { try a.container.addTrip("Liège \(index)", start: "2027-10-05", end: "2027-10-06") }
        #expect(try a.sync()["reconciled"] as? String == "serverLostChanges")
        let noticed = try c.sync()
        #expect(noticed["reconciled"] as? String == "serverLostChanges", "\(noticed)")
        let shown = try #require(try c.json("trip", "show", trip) as? [String: Any])
        #expect(shown["notes"] as? String == "two", "\(shown)")
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: c))
    }

    /// A migratable keychain item whose row the server lost is sent again at the device's
    /// comparison (`sync now --compare`), and a device that joins afterwards gets it; a value set
    /// afterwards on another device, numbered with the version the lost one had, still arrives.
    @Test func aKeychainItemTheServerLostIsSentAgainAtTheComparison() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("keychain", "set", "api.example.com", "ana", "--accessibility", "migratable", stdin: "first value\n")
        try a.sync()
        try b.sync()
        _ = try server.psql("DELETE FROM tripboard.records WHERE kind = 'secret'")
        let compared = try a.app("sync", "now", "--compare", "--json")
        #expect(compared.status == 0, "\(compared)")
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        try c.sync()
        #expect(try c.app("keychain", "get", "api.example.com", "ana").trimmedStdout == "first value")
        try c.ok("keychain", "set", "api.example.com", "ana", "--accessibility", "migratable", stdin: "second value\n")
        try c.sync()
        for device in [a, b] {
            try device.sync()
            #expect(try device.app("keychain", "get", "api.example.com", "ana").trimmedStdout == "second value")
        }
    }

    /// The server lost a keychain item's row, then A deletes the item: the deletion goes as a new
    /// sealed one, which the server keeps. So when A is gone (reinstalled: its ledger with it)
    /// and B's comparison finds the item missing from the server, B's copy meets that deletion
    /// instead of bringing the item back (the sync model, seed 4041667500).
    @Test func aKeychainDeletionOfARowTheServerLostIsKeptByTheServer() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("keychain", "set", "vpn.example.net", "ana", "--accessibility", "migratable", stdin: "first value\n")
        try a.sync()
        try b.sync()
        #expect(try b.app("keychain", "get", "vpn.example.net", "ana").trimmedStdout == "first value")
        _ = try server.psql("DELETE FROM tripboard.records WHERE kind = 'secret'")
        try a.ok("keychain", "delete", "vpn.example.net", "ana")
        try a.sync()
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE kind = 'secret' AND deleted") == "1")
        let compared = try b.app("sync", "now", "--compare", "--json")
        #expect(compared.status == 0, "\(compared)")
        #expect(try b.app("keychain", "get", "vpn.example.net", "ana").status != 0, "the deleted item came back on B")
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        try c.sync()
        #expect(try c.app("keychain", "get", "vpn.example.net", "ana").status != 0, "the deleted item reached a new device")
    }

    /// One record's version lowered on the server: B's edit meets a version its feed never
    /// lists again; it is fetched, merged, and pushed against the server's version — no loop of
    /// conflicts — and A, which holds a higher version, still takes B's edit.
    @Test func aLoweredVersionIsMergedNotLoopedOn() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Oslo", "--start", "2027-02-01", "--end", "2027-02-03")
        try a.sync()
        for notes in ["one", "two"] {
            try a.ok("trip", "edit", trip, "--notes", notes)
            try a.sync()
        }
        try b.sync()
        _ = try server.psql("UPDATE tripboard.records SET version = 1 WHERE id = '\(trip)'")
        try b.ok("trip", "edit", trip, "--name", "Oslo in the snow")
        let report = try b.sync()
        #expect((report["conflicts"] as? Int ?? 0) <= 1 && report["pending"] as? Int == 0, "\(report)")
        try a.sync()
        #expect(try Self.notes(a, trip).name == "Oslo in the snow")
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: b))
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
    }

    /// Rows lost on the server: a trip edited on A afterwards goes up again as new at once (no
    /// loop of conflicts); a place nobody edits goes up again at A's daily comparison; a device
    /// that joins afterwards gets both.
    @Test func rowsTheServerLostAreSentAgain() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime((server, b)) {} }
        let trip = try a.container.addTrip("Kraków", start: "2027-05-01", end: "2027-05-04")
        let place = try a.ok("place", "add", "--trip", trip, "--name", "Wawel")
        try a.sync()
        _ = try server.psql("DELETE FROM tripboard.records WHERE id IN ('\(trip)', '\(place)')")

        try a.ok("trip", "edit", trip, "--notes", "pierogi")
        let edited = try a.sync()
        #expect(edited["pending"] as? Int == 0 && (edited["reuploaded"] as? Int ?? 0) >= 1, "\(edited)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(trip)' AND NOT deleted") == "1")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(place)'") == "0", "nobody has noticed the place yet")

        let tomorrow = ISO8601DateFormatter().string(from: Date().addingTimeInterval(25 * 3600))
        let compared = try a.sync(environment: ["TRIPBOARD_NOW": tomorrow])
        #expect(compared["reuploaded"] as? Int == 1 && compared["pending"] as? Int == 0, "\(compared)")
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        try c.sync()
        #expect(try c.ok("place", "list", "--trip", trip).contains("Wawel"))
        #expect(try DeviceRecords.live(of: c) == DeviceRecords.live(of: a))
    }
}
