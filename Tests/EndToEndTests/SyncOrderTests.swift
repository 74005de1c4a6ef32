import Foundation
import Testing
import TripBoardSystem
import TripBoardStorage

/// Sync whatever the order of events (docs/sync.md §3, "Any order of arrival" and "Stamps"):
/// children that arrive before their parent, edits of different fields at different times, a
/// deletion made while a batch was waiting for its answer. Everything is read through `app`'s own
/// commands, never with a foreign `sqlite3` on a live store.
@Suite struct SyncOrderTests {
    /// Trip, place then an edit of the trip: the feed lists the place before its trip. A device
    /// that joins afterwards (and has an edit of its own waiting) applies both, and pushes its own.
    @Test func aDeviceThatJoinsLateGetsChildrenListedBeforeTheirTrip() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Lisbon", start: "2027-03-27", end: "2027-03-30")
        try a.sync()
        try a.ok("place", "add", "--trip", trip, "--name", "LX Factory", "--city", "Lisbon")
        try a.ok("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Memmo Alfama", "--reference", "MA-1")
        try a.sync()
        try a.ok("trip", "edit", trip, "--notes", "Pastéis in Belém")
        try a.sync()
        #expect(try b.sync()["pulled"] as? Int == 3)

        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let own = try c.container.addTrip("Porto", start: "2027-05-01", end: "2027-05-03")
        let first = try c.app("sync", "now", "--json")
        #expect(first.status == 0, "\(first)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        #expect(report["held"] as? Int == 0 && report["pushed"] as? Int == 1 && report["pending"] as? Int == 0, "\(report)")
        #expect(try c.ok("place", "list", "--trip", trip).contains("LX Factory"))
        #expect(try c.ok("booking", "list", "--trip", trip).contains("MA-1"))
        try a.sync()
        #expect(try a.ok("trip", "show", own).contains("Porto"))
        #expect(try DeviceRecords.live(of: c) == DeviceRecords.live(of: a))
        let status = try #require(try c.json("sync", "status") as? [String: Any])
        #expect(status["held"] as? Int == 0, "\(status)")
    }

    /// A place whose trip the server does not have (a row lost on the server) is held, counted in
    /// `sync status` and the report, said on stderr — never dropped, never a failed sync — and
    /// applied the moment its trip arrives.
    @Test func aChildWhoseTripHasNotArrivedIsHeldAndAppliedWhenItComes() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime((server, b)) {} }
        let trip = try a.container.addTrip("Kyoto", start: "2027-04-01", end: "2027-04-05")
        try a.ok("place", "add", "--trip", trip, "--name", "Fushimi Inari")
        try a.sync()
        _ = try server.psql("CREATE TABLE tripboard.kept AS SELECT * FROM tripboard.records WHERE kind = 'trip'")
        _ = try server.psql("DELETE FROM tripboard.records WHERE kind = 'trip'")

        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let own = try c.container.addTrip("Nara", start: "2027-04-06", end: "2027-04-07")
        let held = try c.app("sync", "now", "--json")
        #expect(held.status == 0, "a pull problem never fails the sync: \(held)")
        #expect(held.stderr.contains("1 record waits for the trip or booking it belongs to"), "\(held)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(held.stdout.utf8)) as? [String: Any])
        #expect(report["held"] as? Int == 1 && report["pushed"] as? Int == 1, "its own trip still went up: \(report)")
        let status = try #require(try c.json("sync", "status") as? [String: Any])
        #expect(status["held"] as? Int == 1, "\(status)")
        let human = try c.app("sync", "status").stdout
        #expect(human.contains("held"), "the human status names them")
        #expect(human.hasPrefix("server  "), "no blank line before the first: \(human)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(own)'") == "1")

        // The trip comes back on the server (numbered after everything C has seen).
        _ = try server.psql("""
            WITH next AS (UPDATE tripboard.zones SET change_sequence = change_sequence + 1 RETURNING change_sequence)
            INSERT INTO tripboard.records SELECT k.zone, k.kind, k.id, k.version, next.change_sequence, k.deleted, k.fields,
                k.byte_count, k.updated_at, k.blob FROM tripboard.kept k, next
            """)
        let arrived = try c.sync()
        #expect(arrived["held"] as? Int == 0 && arrived["pulled"] as? Int == 2, "\(arrived)")
        #expect(try c.ok("place", "list", "--trip", trip).contains("Fushimi Inari"))
        #expect(try (c.json("sync", "status") as? [String: Any])?["held"] as? Int == 0)
    }

    /// A held booking is edited on another device after the server lost its row too, so that the
    /// edit comes back under a version below the one held: the later copy (by its stamps) is the
    /// one held, and the one applied when the trip arrives (found by the sync model, seed
    /// 1035445280).
    @Test func aHeldRecordIsReplacedByALaterCopyWhateverItsVersion() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime((server, b)) {} }
        let trip = try a.container.addTrip("Kyoto", start: "2027-04-01", end: "2027-04-05")
        let booking = try a.ok("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Old title", "--reference", "K-1")
        try a.sync()
        for _ in 0..<3 {  // the booking's server version climbs past what a re-sent copy gets
            try a.ok("booking", "edit", booking, "--reference", "K-\(Int.random(in: 2..<1_000_000))")
            try a.sync()
        }
        _ = try server.psql("CREATE TABLE tripboard.kept AS SELECT * FROM tripboard.records WHERE kind = 'trip'")
        _ = try server.psql("DELETE FROM tripboard.records WHERE kind = 'trip'")
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        #expect(try c.sync()["held"] as? Int == 1)
        let heldBefore = try #require((try c.json("sync", "status") as? [String: Any])?["heldRecords"] as? [[String: Any]])

        _ = try server.psql("CREATE TABLE tripboard.older AS SELECT * FROM tripboard.records WHERE kind = 'booking'")
        _ = try server.psql("DELETE FROM tripboard.records WHERE kind = 'booking'")
        try a.ok("booking", "edit", booking, "--title", "New title")
        try a.sync()
        let resent = try server.psql("SELECT version FROM tripboard.records WHERE id = '\(booking)'")
        #expect(Int64(resent) ?? .max < heldBefore.first?["version"] as? Int64 ?? 0, "the re-sent copy is numbered lower: \(resent), \(heldBefore)")
        #expect(try c.sync()["held"] as? Int == 1)
        // The older copy served again under a higher version (a server gone back) replaces nothing.
        _ = try server.psql("""
            WITH next AS (UPDATE tripboard.zones SET change_sequence = change_sequence + 1 RETURNING change_sequence)
            UPDATE tripboard.records r SET fields = o.fields, version = r.version + 10, change_sequence = next.change_sequence
            FROM tripboard.older o, next WHERE r.id = o.id
            """)
        #expect(try c.sync()["held"] as? Int == 1)

        _ = try server.psql("""
            WITH next AS (UPDATE tripboard.zones SET change_sequence = change_sequence + 1 RETURNING change_sequence)
            INSERT INTO tripboard.records SELECT k.zone, k.kind, k.id, k.version, next.change_sequence, k.deleted, k.fields,
                k.byte_count, k.updated_at, k.blob FROM tripboard.kept k, next
            """)
        #expect(try c.sync()["held"] as? Int == 0)
        let listed = try c.ok("booking", "list", "--trip", trip)
        #expect(listed.contains("New title") && !listed.contains("Old title"), "\(listed)")
    }

    /// A edits the notes; a second later B edits them and syncs; then A renames the trip and
    /// syncs. The notes are B's (the later edit of that field), the name A's: a later edit of
    /// another field does not re-stamp an earlier one.
    @Test func aLaterEditOfAnotherFieldDoesNotReStampAnEarlierOne() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Vienna", start: "2027-01-10", end: "2027-01-12")
        try a.sync()
        try b.sync()
        let format = ISO8601DateFormatter()
        let base = Date()
        func at(_ seconds: TimeInterval) -> [String: String] { ["TRIPBOARD_NOW": format.string(from: base.addingTimeInterval(seconds))] }
        try a.ok("trip", "edit", trip, "--notes", "Opera (A)", environment: at(10))
        try b.ok("trip", "edit", trip, "--notes", "Sachertorte (B)", environment: at(11))
        try b.sync()
        try a.ok("trip", "edit", trip, "--name", "Wien", environment: at(20))
        try a.sync()
        try b.sync()
        for device in [a, b] {
            let shown = try #require(try device.json("trip", "show", trip) as? [String: Any])
            #expect(shown["notes"] as? String == "Sachertorte (B)" && shown["name"] as? String == "Wien", "\(shown)")
        }
        let conflicts = try #require(try a.json("sync", "conflicts") as? [[String: Any]])
        #expect(conflicts.count == 1 && conflicts.first?["lost"] as? String == "Opera (A)", "\(conflicts)")
    }

    /// Killed after the server took a batch, then the trip is deleted and the trash emptied:
    /// the row is gone here, and the deletion still reaches the server and the other device.
    @Test func aRecordPurgedWhileItsBatchWaitedIsDeletedOnTheServer() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Ostend", start: "2027-11-01", end: "2027-11-02")
        let killed = try a.app("sync", "now", environment: [CrashPoint.environmentVariable: "sync.pushed"])
        #expect(killed.wasSignaled, "\(killed)")
        try a.ok("trip", "delete", trip)
        try a.ok("trash", "empty", "--yes")
        try a.sync()
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "t")
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        try b.sync()
        #expect(!(try b.ok("trip", "list")).contains("Ostend"))
        let compared = try a.app("sync", "now", "--compare")
        #expect(compared.status == 0, "\(compared)")
        #expect(!(try a.ok("trip", "list")).contains("Ostend"), "the comparison brings nothing back")
    }

    /// A deletes a trip while B adds a place to it: B's sync names what went to the trash with
    /// B's own place, and the command that brings it back; after it, both devices have both.
    @Test func aDeletionThatTakesALocalAdditionSaysSoAndHowToRestore() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Sintra", start: "2027-03-29", end: "2027-03-29")
        try a.sync()
        try b.sync()
        try a.ok("trip", "delete", trip)
        try a.sync()
        try b.ok("place", "add", "--trip", trip, "--name", "Pena Palace")
        let report = try b.sync()
        let notices = try #require(report["trashedWithChangesHere"] as? [[String: Any]])
        #expect(notices.count == 1 && notices.first?["name"] as? String == "Sintra" && notices.first?["changedHere"] as? Int == 1, "\(notices)")
        let restore = try #require(notices.first?["restore"] as? String)
        #expect(restore == "app trash restore \(trip.prefix(8))")
        #expect((notices.first?["contents"] as? [String: Any])?["places"] as? Int == 1)

        // The human line, from a second device in the same state.
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let humanTrip = try c.container.addTrip("Óbidos", start: "2027-04-01", end: "2027-04-01")
        try c.sync()
        try a.sync()
        try a.ok("trip", "delete", humanTrip)
        try a.sync()
        try c.ok("booking", "add", "--trip", humanTrip, "--kind", "event", "--title", "Castle")
        let said = try c.ok("sync", "now")
        #expect(said.contains("Trip Óbidos was deleted on another device") && said.contains("app trash restore \(humanTrip.prefix(8))"), "\(said)")

        try b.ok("trash", "restore", String(trip.prefix(8)))
        try b.sync()
        try a.sync()
        #expect(try a.ok("place", "list", "--trip", trip).contains("Pena Palace"))
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: b))
    }

    /// A deletes a trip and empties its trash before syncing, while B adds a place to it: the
    /// place reaches A after A's trip is gone from its trash; it goes where that deletion's
    /// children went (its deletion is sent), and the server ends with nothing live under it.
    @Test func aChildArrivingAfterItsTripWasDeletedAndEmptiedFromTheTrashFollowsIt() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Delft", start: "2027-07-01", end: "2027-07-02")
        try a.sync()
        try b.sync()
        try a.ok("trip", "delete", trip)
        try a.ok("trash", "empty", "--yes")
        let place = try b.ok("place", "add", "--trip", trip, "--name", "Nieuwe Kerk")
        try b.sync()
        let pulled = try a.sync()
        #expect(pulled["skipped"] as? Int == 0 && pulled["pending"] as? Int == 0, "\(pulled)")
        #expect(try server.psql("SELECT kind, deleted FROM tripboard.records WHERE id IN ('\(trip)', '\(place)') ORDER BY kind")
                == "place|t\ntrip|t")
        try b.sync()
        #expect(!(try b.ok("trip", "list")).contains("Delft"))
        #expect(try b.ok("trash", "list").contains("Delft"), "B's place went to B's trash with the trip")
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: b))
    }

    /// A container of the previous build (store schema 8) with an edit waiting and a place of
    /// another device's on the way: its first open brings the store to schema 9, and it syncs as
    /// any other (its waiting edit stamped as before, with the record's time).
    @Test func aContainerOfThePreviousBuildConvertsOnFirstOpenAndSyncs() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Ghent", start: "2027-06-01", end: "2027-06-03")
        try a.sync()
        try b.sync()
        try a.ok("trip", "edit", trip, "--notes", "Gravensteen")
        try b.ok("place", "add", "--trip", trip, "--name", "Belfry")
        try b.ok("trip", "edit", trip, "--name", "Gent")
        try b.sync()
        // Back to what the previous build left (user_version 8, without schema 9's tables and columns).
        #expect(try a.container.sqlite(BookingZoneTests.schemaNineUndone + "PRAGMA user_version = 8").status == 0)
        let synced = try a.sync()
        #expect(synced["pushed"] as? Int == 1 && synced["pending"] as? Int == 0, "\(synced)")
        #expect(try a.container.sqlite("PRAGMA user_version").trimmedStdout == String(Store.schemaVersion))
        try b.sync()
        let shown = try #require(try b.json("trip", "show", trip) as? [String: Any])
        #expect(shown["name"] as? String == "Gent" && shown["notes"] as? String == "Gravensteen", "\(shown)")
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: b))
    }

    /// Killed after the server took a batch (or after saving it), then the records are deleted:
    /// the deletion reaches the server and every other device, for trips, places and bookings.
    @Test(arguments: ["sync.pushed", "sync.batch-saved"])
    func aDeletionMadeWhileABatchWaitedForItsAnswerIsNotLost(crashPoint: String) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let kept = try a.container.addTrip("Bergen", start: "2027-02-01", end: "2027-02-03")
        let gone = try a.container.addTrip("Tromsø", start: "2027-02-04", end: "2027-02-06")
        let place = try a.ok("place", "add", "--trip", kept, "--name", "Bryggen")
        let booking = try a.ok("booking", "add", "--trip", kept, "--kind", "train", "--title", "Bergensbanen")
        let killed = try a.app("sync", "now", environment: [CrashPoint.environmentVariable: crashPoint])
        #expect(killed.wasSignaled, "\(killed)")
        try a.ok("trip", "delete", gone)
        try a.ok("place", "delete", place)
        try a.ok("booking", "delete", booking)
        try a.sync()
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        #expect(try server.psql("SELECT kind, deleted FROM tripboard.records WHERE id IN ('\(gone)', '\(place)', '\(booking)') ORDER BY kind")
                == "booking|t\nplace|t\ntrip|t")
        try b.sync()
        let trips = try b.ok("trip", "list")
        #expect(trips.contains("Bergen") && !trips.contains("Tromsø"), "\(trips)")
        #expect(!(try b.ok("place", "list", "--trip", kept)).contains("Bryggen"))
        #expect(!(try b.ok("booking", "list", "--trip", kept)).contains("Bergensbanen"))
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: b))
    }
}

/// What a device holds live, read through `app export` (never the store's files): records with
/// their fields, without the sync metadata that differs per device. Tombstones and what waits in
/// the trash are left out.
enum DeviceRecords {
    static func live(of device: SyncDevice) throws -> String {
        let exported = try device.ok("export")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(exported.utf8)) as? [String: Any])
        var lines: [String] = []
        for kind in ["trips", "places", "bookings"] {
            for record in (document[kind] as? [[String: Any]]) ?? [] where record["syncState"] as? String != "pendingDeletion" {
                var fields = record
                for local in ["syncState", "remoteVersion", "updatedAt"] { fields[local] = nil }
                let line = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
                lines.append(kind + " " + String(decoding: line, as: UTF8.self))
            }
        }
        return lines.sorted().joined(separator: "\n")
    }
}
