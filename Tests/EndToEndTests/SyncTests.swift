import Foundation
import Testing
import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardModel

/// `app sync …` against a real PostgreSQL: two devices (containers with device directories of
/// their own) on one throw-away server, through the built `app` and `sync-agent`.
@Suite struct SyncTests {
    /// A server with the schema installed and devices A and B joined to its default zone.
    static func twoDevices(durable: Bool = false) throws -> (PostgresServer, SyncDevice, SyncDevice) {
        let server = try PostgresServer(durable: durable)
        let a = try SyncDevice()
        let b = try SyncDevice()
        try a.ok("sync", "init-server", "--server", server.conninfo)
        #expect(try a.join(server).status == 0)
        #expect(try b.join(server).status == 0)
        return (server, a, b)
    }

    static func tripName(_ device: SyncDevice, _ id: String) throws -> String {
        try device.container.sqlite("SELECT name FROM trips WHERE id = '\(id)'").trimmedStdout
    }

    @Test func initServerIsIdempotentAndAWrongPassphraseChangesNothing() throws {
        let server = try PostgresServer()
        let a = try SyncDevice()
        let b = try SyncDevice()
        #expect(try a.ok("sync", "init-server", "--server", server.conninfo) == "The server's TripBoard schema is now at version 3.")
        #expect(try a.ok("sync", "init-server", "--server", server.conninfo).contains("already at version 3"))
        #expect(try server.psql("SELECT version FROM tripboard.schema_version") == "3")

        let created = try a.join(server)
        #expect(created.status == 0 && created.stderr.contains("created zone default"), "\(created)")
        let wrap = try server.psql("SELECT key_wrap FROM tripboard.zones WHERE name = 'default'")
        #expect(wrap.contains("argon2id") || wrap.contains("memoryLimit"), "the wrap names its Argon2id parameters: \(wrap)")

        let refused = try b.join(server, passphrase: "not the passphrase")
        #expect(refused.status == 65 && refused.stderr.contains("does not open the zone's key"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: b.container.path), "a refused setup creates no container")
        #expect(try server.psql("SELECT key_wrap FROM tripboard.zones WHERE name = 'default'") == wrap)

        let joined = try b.join(server)
        #expect(joined.status == 0 && joined.stderr.contains("joined zone default"), "\(joined)")
        let again = try b.join(server)
        #expect(again.status == 0 && again.stderr.contains("already syncs"), "\(again)")
        let status = try #require(try b.json("sync", "status") as? [String: Any])
        let account = try #require(status["account"] as? [String: Any])
        #expect(status["joined"] as? Bool == true && account["zone"] as? String == "default")
        #expect(account["server"] as? String == server.conninfo)
        let items = try b.ok("keychain", "list")
        #expect(items.contains("tripboard.sync.zone-key") && items.contains("this-device-only"), "\(items)")
        let other = try b.app("sync", "setup", "--server", server.conninfo, "--zone", "work", stdin: SyncDevice.passphrase + "\n")
        #expect(other.status == 65 && other.stderr.contains("sync leave"), "\(other)")
        let withPassword = try b.app("sync", "setup", "--server", server.conninfo + " password=hunter2")
        #expect(withPassword.status == 64 && !withPassword.stderr.contains("hunter2"), "\(withPassword)")
    }

    /// What `search_index` holds, as text: each entry's title and detail (rowids differ between
    /// devices), sorted.
    static func searchIndex(_ device: SyncDevice) throws -> String {
        try device.container.sqlite("SELECT title || '|' || detail FROM search_index ORDER BY 1").trimmedStdout
    }

    /// A page of many records is indexed for search once, at its end, with the insert triggers
    /// suspended (`Store.indexingInsertsOnce`): after a first pull of 450 records, and after a
    /// second that edits, deletes and adds, B's search index holds exactly what A's does, and
    /// B's `app search` finds what A's finds.
    @Test func aLargePullIsIndexedForSearchAsTheSenderIndexedIt() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime(server) {} }
        var trips: [String] = [], places: [String] = [], bookings: [String] = []
        for index in 0..<150 {
            let trip = "5e1a0000-0000-4000-8000-\(String(format: "%012d", index))"
            trips.append(#"{"id": "\#(trip)", "name": "Trip \#(index) Lisboa", "startDate": "2027-01-01", "endDate": "2027-01-03", "notes": "fado \#(index)"}"#)
            places.append(#"{"tripId": "\#(trip)", "name": "Belém \#(index)", "city": \#(index % 2 == 0 ? "null" : "\"Porto\"")}"#)
            bookings.append(#"{"tripId": "\#(trip)", "kind": "train", "title": "Alfa \#(index)", "reference": "R\#(index)"}"#)
        }
        let document = #"{"format": "tripboard-export", "formatVersion": 1, "trips": [\#(trips.joined(separator: ","))], "places": [\#(places.joined(separator: ","))], "bookings": [\#(bookings.joined(separator: ","))]}"#
        let imported = try a.app("import", "-", stdin: document)
        try #require(imported.status == 0, "\(imported)")
        _ = try a.sync()
        #expect(try b.sync()["pulled"] as? Int == 450)
        #expect(try Self.searchIndex(b) == Self.searchIndex(a))
        #expect(try Self.searchIndex(b).split(separator: "\n").count == 450)

        // The second page: edits, deletions (trips and their children go to B's trash) and new records.
        for index in stride(from: 0, to: 150, by: 3) {
            try a.ok("trip", "edit", "5e1a0000-0000-4000-8000-\(String(format: "%012d", index))", "--name", "Trip \(index) Coimbra")
        }
        for index in stride(from: 1, to: 150, by: 5) { try a.ok("trip", "delete", "5e1a0000-0000-4000-8000-\(String(format: "%012d", index))") }
        try SyncRobustnessTests.importTrips(80, on: a, prefix: "Braga")
        _ = try a.sync()
        _ = try b.sync()
        #expect(try Self.searchIndex(b) == Self.searchIndex(a))
        // Hits of equal rank come in rowid order, which differs between devices: compared as sets.
        func hits(_ device: SyncDevice, _ word: String) throws -> [Substring] {
            try device.ok("search", word, "--limit", "1000").split(separator: "\n").sorted()
        }
        for word in ["coimbra", "lisboa", "braga", "porto", "alfa", "r17", "fado 4"] {
            #expect(try hits(b, word) == hits(a, word), "\(word)")
            #expect(try hits(b, word).count > 1, "\(word) finds something")
        }
        #expect(try b.ok("container", "check").contains("consistent"))
    }

    @Test func whatOneDeviceMakesTheOtherSees() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Porto", start: "2026-12-20", end: "2026-12-23")
        try a.ok("place", "add", "--trip", trip, "--name", "Livraria Lello", "--city", "Porto")
        try a.ok("booking", "add", "--trip", trip, "--kind", "train", "--title", "Alfa Pendular", "--starts-at", "2026-12-20T08:39+00:00", "--reference", "CP-4711",
                 "--zone", "Europe/Lisbon")

        let pushed = try a.sync()
        #expect(pushed["pushed"] as? Int == 3 && pushed["pending"] as? Int == 0, "\(pushed)")
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        let pulled = try b.sync()
        #expect(pulled["pulled"] as? Int == 3, "\(pulled)")

        #expect(try b.ok("trip", "list").contains("Porto"))
        #expect(try b.ok("place", "list", "--trip", trip).contains("Livraria Lello"))
        #expect(try b.ok("booking", "list", "--trip", trip).contains("CP-4711"))
        #expect(try b.container.sqlite("SELECT zone FROM bookings").trimmedStdout == "Europe/Lisbon", "the zone travels")
        #expect(try b.content() == a.content())
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-19T10:00Z"], environment: b.container.environment)
        #expect(widget.stdout.hasPrefix("Porto"), "\(widget)")
        // Nothing new: a second sync on either side moves nothing.
        #expect(try b.sync()["pulled"] as? Int == 0)
        #expect(try a.sync()["pulled"] as? Int == 0)
        #expect(try a.container.integrity() == "ok" && b.container.integrity() == "ok")
    }

    @Test func editsOfDifferentFieldsOnBothDevicesAreBothKept() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Vienna", start: "2026-12-01", end: "2026-12-04")
        try a.sync()
        try b.sync()

        try a.ok("trip", "edit", trip, "--name", "Wien")
        try b.ok("trip", "edit", trip, "--notes", "Opera on the 2nd", "--start", "2026-12-02", "--end", "2026-12-05")
        try a.sync()
        let merged = try b.sync()
        #expect(merged["merged"] as? Int == 1 && merged["pushed"] as? Int == 1, "\(merged)")
        try a.sync()

        for device in [a, b] {
            let row = try device.container.sqlite("SELECT name, start_date, end_date, notes, sync_state FROM trips WHERE id = '\(trip)'").trimmedStdout
            #expect(row == "Wien|2026-12-02|2026-12-05|Opera on the 2nd|synchronized")
        }
    }

    /// Both devices rename the trip; B's edit is the later one (its clock says so). Whichever
    /// pushes first, both end with B's name.
    @Test(arguments: [true, false])
    func theSameFieldGetsTheSameWinnerWhateverThePushOrder(aPushesFirst: Bool) throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Rome", start: "2026-12-01", end: "2026-12-04")
        try a.sync()
        try b.sync()

        // Both edits after the version they replace, B's five seconds after A's (both within
        // the five minutes a clock may be ahead of the server's).
        let format = ISO8601DateFormatter()
        try a.ok("trip", "edit", trip, "--name", "Roma (A)", environment: ["TRIPBOARD_NOW": format.string(from: Date().addingTimeInterval(60))])
        try b.ok("trip", "edit", trip, "--name", "Roma (B)", environment: ["TRIPBOARD_NOW": format.string(from: Date().addingTimeInterval(65))])
        let (first, second) = aPushesFirst ? (a, b) : (b, a)
        try first.sync()
        try second.sync()
        try first.sync()

        #expect(try Self.tripName(a, trip) == "Roma (B)")
        #expect(try Self.tripName(b, trip) == "Roma (B)")
        #expect(try a.content() == b.content())
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
    }

    /// A device whose clock is a year ahead does not win every merge: its stamps are clamped to
    /// the server's clock plus five minutes, so a later edit elsewhere still wins.
    @Test func aClockFarAheadIsClamped() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Nice", start: "2026-12-01", end: "2026-12-04")
        try a.sync()
        try b.sync()
        let format = ISO8601DateFormatter()
        try a.ok("trip", "edit", trip, "--name", "Nice (from the future)", environment: ["TRIPBOARD_NOW": format.string(from: Date().addingTimeInterval(365 * 86_400))])
        try a.sync()
        try b.ok("trip", "edit", trip, "--name", "Nizza", environment: ["TRIPBOARD_NOW": format.string(from: Date().addingTimeInterval(400))])
        try b.sync()
        try a.sync()
        #expect(try Self.tripName(a, trip) == "Nizza")
        #expect(try Self.tripName(b, trip) == "Nizza")
    }

    /// Two devices with the trip Oslo and its place Vigeland Park on both; returns the trip's id.
    static func osloOnBoth() throws -> (PostgresServer, SyncDevice, SyncDevice, String) {
        let (server, a, b) = try twoDevices()
        let trip = try a.container.addTrip("Oslo", start: "2026-12-01", end: "2026-12-04")
        try a.ok("place", "add", "--trip", trip, "--name", "Vigeland Park")
        try a.sync()
        try b.sync()
        return (server, a, b, trip)
    }

    /// A deletes the trip while B renames it. Delete wins on both; B's edited version is in B's
    /// trash, and in A's too when A learned of the edit before its deletion reached the server.
    @Test(arguments: [true, false])
    func deleteBeatsAConcurrentEdit(deletionPushedFirst: Bool) throws {
        let (server, a, b, trip) = try Self.osloOnBoth()
        defer { withExtendedLifetime(server) {} }

        try a.ok("trip", "delete", trip)
        try b.ok("trip", "edit", trip, "--name", "Oslo in the snow")
        if deletionPushedFirst {
            try a.sync()
            #expect(try b.sync()["trashed"] as? Int == 1)
        } else {
            try b.sync()
            try a.sync()
            try b.sync()
        }
        try a.sync()

        for device in [a, b] {
            #expect(try device.ok("trip", "list").hasPrefix("No trips yet"))
            let trash = try #require(try device.json("trash", "list") as? [[String: Any]])
            #expect(trash.count == 1 && trash.first?["id"] as? String == trip, "\(trash)")
            #expect((trash.first?["contents"] as? [String: Int])?["places"] == 1)
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
        #expect(try Self.tripName(b, trip) == "Oslo in the snow")
        if !deletionPushedFirst { #expect(try Self.tripName(a, trip) == "Oslo in the snow") }

        // Restored on B: it comes back on A as a new version.
        try b.ok("trash", "restore", trip)
        try b.sync()
        try a.sync()
        #expect(try a.ok("trip", "list").contains("Oslo in the snow"))
        #expect(try a.ok("place", "list", "--trip", trip).contains("Vigeland Park"))
        #expect(try a.content() == b.content())
    }

    /// B deletes the trip and restores it before any sync: an undo that never left B, not a new
    /// life of the trip. A's later deletion takes it on B too (it used to be refused there as the
    /// deletion of a life B's restore had ended, and B sent the trip back for good: the sync
    /// model, seed 1888725761). Whether B syncs in between (`bSyncsBetween`) changes nothing.
    @Test(arguments: [true, false])
    func aDeletionUndoneBeforeItLeftIsNoNewLife(bSyncsBetween: Bool) throws {
        let (server, a, b, trip) = try Self.osloOnBoth()
        defer { withExtendedLifetime(server) {} }

        try b.ok("trip", "delete", trip)
        try b.ok("trash", "restore", trip)
        #expect(try b.container.sqlite("SELECT count(*) FROM sync_incarnations").trimmedStdout == "0", "no new incarnation")
        if bSyncsBetween {
            let between = try b.sync()
            #expect(between["pushed"] as? Int ?? 0 == 0, "nothing changed: \(between)")
            try a.sync()
        }
        try a.ok("trip", "delete", trip)
        try a.sync()
        let pulled = try b.sync()
        #expect(pulled["trashed"] as? Int == 1 && pulled["refused"] as? Int ?? 0 == 0, "\(pulled)")
        try a.sync()
        for device in [a, b] {
            #expect(try device.ok("trip", "list").hasPrefix("No trips yet"))
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
        #expect(try server.psql("SELECT bool_and(deleted) FROM tripboard.records") == "t")

        // A deletion that reached the server, restored: a new life, which a replay of the old
        // deletion cannot take (`SyncHostileServerTests`), and which the other device sees.
        try b.ok("trash", "restore", trip)
        #expect(try b.container.sqlite("SELECT count(*) FROM sync_incarnations").trimmedStdout == "2", "the trip and its place")
        try b.sync()
        try a.sync()
        #expect(try a.ok("place", "list", "--trip", trip).contains("Vigeland Park"))
        #expect(try a.content() == b.content())
    }

    /// B deletes the trip and a sync is killed once the batch carrying the deletion is saved: the
    /// deletion may have left, so restoring the trip then makes a new life, which the batch sent
    /// again on the next run cannot take. The trip ends live on both.
    @Test func aRestoreWhileTheDeletionIsInFlightIsANewLife() throws {
        let (server, a, b, trip) = try Self.osloOnBoth()
        defer { withExtendedLifetime(server) {} }
        try b.ok("trip", "delete", trip)
        let killed = try b.app("sync", "now", environment: [CrashPoint.environmentVariable: "sync.batch-saved"])
        #expect(killed.wasSignaled, "\(killed)")
        try b.ok("trash", "restore", trip)
        #expect(try b.container.sqlite("SELECT count(*) FROM sync_incarnations").trimmedStdout == "2", "the trip and its place")
        try b.sync()
        try a.sync()
        try b.sync()
        for device in [a, b] {
            #expect(try device.ok("place", "list", "--trip", trip).contains("Vigeland Park"))
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
        #expect(try server.psql("SELECT count(*) FILTER (WHERE deleted) FROM tripboard.records") == "0")
    }

    /// Killed right after the server committed a batch and before the device recorded it: the
    /// next run sends the same batch (same mutation id) and the server answers what it did.
    @Test func aBatchSentAgainAfterAKillIsAppliedOnce() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Prague", start: "2026-12-01", end: "2026-12-04")
        try a.ok("place", "add", "--trip", trip, "--name", "Charles Bridge")

        let killed = try a.app("sync", "now", environment: [CrashPoint.environmentVariable: "sync.pushed"])
        #expect(killed.wasSignaled && killed.status == 9, "\(killed)")
        #expect(try server.psql("SELECT count(*), max(version) FROM tripboard.records") == "2|1")
        #expect(try server.psql("SELECT count(*) FROM tripboard.mutations") == "1")
        #expect(try a.container.sqlite("SELECT count(*) FROM sync_outgoing").trimmedStdout == "1")
        #expect(try a.container.sqlite("SELECT sync_state FROM trips").trimmedStdout == "pendingUpload")

        let resumed = try a.sync()
        #expect(resumed["replayed"] as? Int == 2 && resumed["pending"] as? Int == 0, "\(resumed)")
        #expect(try server.psql("SELECT count(*), max(version) FROM tripboard.records") == "2|1", "nothing applied twice")
        #expect(try server.psql("SELECT count(*) FROM tripboard.mutations") == "1")
        #expect(try server.psql("SELECT change_sequence FROM tripboard.zones") == "2")
        #expect(try a.container.sqlite("SELECT count(*) FROM sync_outgoing").trimmedStdout == "0")
        try b.sync()
        #expect(try b.content() == a.content())
        #expect(try b.container.sqlite("SELECT count(*) FROM trips").trimmedStdout == "1")
    }

    /// Killed before the batch reached the server: sent again, applied once.
    @Test func aBatchSavedButNeverSentIsSentOnTheNextRun() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime((server, b)) {} }
        try a.container.addTrip("Bern")
        let killed = try a.app("sync", "now", environment: [CrashPoint.environmentVariable: "sync.batch-saved"])
        #expect(killed.wasSignaled, "\(killed)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records") == "0")
        let resumed = try a.sync()
        #expect(resumed["pushed"] as? Int == 1 && resumed["replayed"] as? Int == 0, "\(resumed)")
        #expect(try server.psql("SELECT count(*), max(version) FROM tripboard.records") == "1|1")
    }

    @Test func theServerHoldsNoNameNoteOrReference() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let planted = ["Zanzibar-Plantedname", "plantednote-7f3a", "Planted Place Kq9", "Plantedcity Vx", "Planted Title Zr", "PLANTREF-99812"]
        let trip = try a.ok("trip", "add", "--name", planted[0], "--start", "2026-12-01", "--end", "2026-12-03", "--notes", planted[1])
        try a.ok("place", "add", "--trip", trip, "--name", planted[2], "--city", planted[3])
        try a.ok("booking", "add", "--trip", trip, "--kind", "flight", "--title", planted[4], "--reference", planted[5],
                 "--starts-at", "2026-12-02T10:00", "--zone", "America/Argentina/Ushuaia")
        try a.sync()
        try b.sync()
        try b.ok("trip", "edit", trip, "--notes", planted[1] + " and more")
        try b.sync()
        try a.sync()
        #expect(try a.container.sqlite("SELECT notes FROM trips").trimmedStdout == planted[1] + " and more")

        let dump = try server.dump()
        #expect(dump.contains("tripboard.records") && dump.contains(trip), "the dump holds the schema and the ids")
        for secret in planted + ["Ushuaia", SyncDevice.passphrase] {
            #expect(!dump.contains(secret), "\(secret) is on the server in the clear")
            #expect(!dump.lowercased().contains(secret.lowercased()))
        }
    }

    @Test func aServerThatIsDownFailsAtOnceAndIsReported() throws {
        let (server, a, b) = try Self.twoDevices()
        defer { withExtendedLifetime((server, b)) {} }
        try a.container.addTrip("Madrid")
        try server.stop()
        let started = Date()
        let failed = try a.app("sync", "now")
        #expect(failed.status == 69 && failed.stderr.contains("cannot be reached"), "\(failed)")
        #expect(Date().timeIntervalSince(started) < 15)
        let status = try #require(try a.json("sync", "status") as? [String: Any])
        let account = try #require(status["account"] as? [String: Any])
        #expect((account["lastError"] as? String)?.contains("cannot be reached") == true)
        #expect(status["pending"] as? Int == 1)

        try server.start()
        #expect(try a.sync()["pushed"] as? Int == 1)
        try a.ok("sync", "leave")
        #expect(try a.ok("sync", "status") .hasPrefix("This container does not sync"))
        #expect(try a.ok("trip", "list").contains("Madrid"), "local data stays")
        #expect(!(try a.ok("keychain", "list").contains("tripboard.sync")))
    }

    /// libpq lives in `sync-agent` alone: the executables that start often never load it.
    @Test(arguments: ["app", "widget", "share-extension", "pdf-worker", "container-migration"])
    func onlyTheAgentLinksLibpq(executable: String) throws {
        let agent = try ProcessRunner.run("/usr/bin/ldd", [ProcessRunner.executable("sync-agent")], environment: ProcessRunner.environment(container: nil))
        #expect(agent.stdout.contains("libpq.so"), "\(agent)")
        let other = try ProcessRunner.run("/usr/bin/ldd", [ProcessRunner.executable(executable)], environment: ProcessRunner.environment(container: nil))
        #expect(!other.stdout.contains("libpq"), "\(executable): \(other)")
    }
}
