import Foundation
import Testing
import TripBoardSystem

/// A server that lies (docs/sync.md, What the server can and cannot do), played by writing the
/// `tripboard` schema's tables directly, as a hostile operator would: what it serves is checked
/// against what each device holds before anything is believed.
@Suite struct SyncHostileServerTests {
    /// Keeps a copy of a record's sealed fields as the server has them now, to serve again later.
    static func keepFields(_ server: PostgresServer, id: String, as name: String) throws {
        _ = try server.psql("""
            CREATE TABLE IF NOT EXISTS public.kept (name text PRIMARY KEY, fields jsonb);
            INSERT INTO public.kept SELECT '\(name)', fields FROM tripboard.records WHERE id = '\(id)'
            """)
    }

    /// Serves the kept fields again under a new version and change sequence: what a rollback looks
    /// like to a device (nothing older in numbers, only in the sealed stamps).
    static func serveAgain(_ server: PostgresServer, id: String, kept name: String) throws {
        try rewrite(server, where: "id = '\(id)'", set: "fields = (SELECT fields FROM public.kept WHERE name = '\(name)')")
    }

    /// Rewrites the rows `condition` picks (`set`: SQL assignments) under the next version and a
    /// new change sequence, as a push would number them, so that every device's feed brings them.
    static func rewrite(_ server: PostgresServer, where condition: String, set assignments: String) throws {
        _ = try server.psql("""
            UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = 'default';
            UPDATE tripboard.records SET \(assignments), version = version + 1,
                change_sequence = (SELECT change_sequence FROM tripboard.zones WHERE name = 'default') WHERE \(condition)
            """)
    }

    /// Device A's trip Lisbon with `notes`, synced, its fields as the server has them kept as
    /// `keptAs`, then its notes edited to `editedTo` and synced; B joined, never synced.
    static func lisbonKeptThenEdited(notes: String, keptAs name: String, editedTo edited: String) throws
        -> (PostgresServer, SyncDevice, SyncDevice, String) {
        let (server, a, b) = try SyncTests.twoDevices()
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30", "--notes", notes)
        let id = try #require(trip.split(separator: "\n").last.map(String.init))
        try a.sync()
        try keepFields(server, id: id, as: name)
        try a.ok("trip", "edit", id, "--notes", edited)
        try a.sync()
        return (server, a, b, id)
    }

    /// A deletion waiting on a device whose record the server numbered lower (a version that went
    /// back) goes against the server's version, on the next sync or the one after a compare: it
    /// used to meet a conflict at every push, for good, and the other devices kept the record
    /// live (found by the sync model, seed 1791418685).
    @Test func aDeletionWaitingOnARecordNumberedLowerGoesThrough() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("trip", "add", "--name", "Porto", "--start", "2027-03-20", "--end", "2027-03-22")
        try a.sync()
        // Tombstones purged up to past every token: a record new to the server starts above them.
        _ = try server.psql("UPDATE tripboard.zones SET change_sequence = change_sequence + 3, purged_through = change_sequence + 3")
        let trip = try b.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        let id = try #require(trip.split(separator: "\n").last.map(String.init))
        _ = try b.app("sync", "now")
        try a.sync()
        try b.ok("trip", "delete", id)
        _ = try server.psql("UPDATE tripboard.records SET version = version - 1 WHERE id = '\(id)'")
        for _ in 0..<2 { _ = try b.app("sync", "now", "--compare") }
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try b.ok("sync", "status", "--json").utf8)) as? [String: Any])
        #expect(status["pending"] as? Int == 0, "the deletion went: \(status)")
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(id)'") == "t")
        try a.sync()
        #expect(try a.app("trip", "show", id).status == 66, "the other device has the deletion")
    }

    /// A's deletion of a trip reaches B, which takes the trip's place to the trash with it and
    /// owes the server the place's deletion; the server has that deletion already, numbered below
    /// the version B holds (it went back: the trip's and the place's deletions were sent again as
    /// new after it lost them). B acknowledges it and nothing stays pending: B's push used to meet
    /// the server's version at every run, and the pulled deletion was passed over as older, for
    /// good (the sync model, seed 1054974559).
    @Test func aDeletionOnBothSidesNumberedLowerThereIsAcknowledged() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Lisbon", start: "2027-03-27", end: "2027-03-30")
        let place = try a.ok("place", "add", "--trip", trip, "--name", "Miradouro")
        try a.sync()
        for name in ["Miradouro da Graça", "Miradouro de Santa Luzia"] {
            try a.ok("trip", "edit", trip, "--notes", name)
            try a.ok("place", "edit", place, "--name", name)
            try a.sync()
        }
        // The last record B's change token covers is another (else B would reconcile).
        let porto = try a.container.addTrip("Porto", start: "2027-04-02", end: "2027-04-05")
        try a.sync()
        try b.sync()
        #expect(try b.container.sqlite("SELECT remote_version FROM places UNION ALL SELECT remote_version FROM trips WHERE id = '\(trip)'").trimmedStdout == "3\n3")
        try a.ok("trip", "delete", trip)
        try a.sync()
        // Numbered again from the start, the trip first, as a server that lost both records
        // numbers the deletions sent again.
        for (id, version) in [(trip, 1), (place, 2)] {
            _ = try server.psql("""
                UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = 'default';
                UPDATE tripboard.records SET version = \(version),
                    change_sequence = (SELECT change_sequence FROM tripboard.zones WHERE name = 'default') WHERE id = '\(id)'
                """)
        }
        let deleted = try b.sync()
        #expect(deleted["trashed"] as? Int == 1 && deleted["pending"] as? Int == 0 && deleted["skipped"] as? Int == 0, "\(deleted)")
        #expect(try b.ok("sync", "pending") == "Everything is synchronized.")
        let again = try b.sync()
        #expect(again["pushed"] as? Int == 0 && again["conflicts"] as? Int ?? 0 == 0, "\(again)")
        #expect(try server.psql("SELECT bool_and(deleted) FROM tripboard.records WHERE id <> '\(porto)'") == "t")
        try a.sync()
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
    }

    /// An older sealed value re-served under a new version number is refused by every device —
    /// the one that wrote the newer value and the one that only pulled it — whichever syncs
    /// first: 65, one line, the newer value kept and sent again, and no conflict kept for it.
    @Test(arguments: [true, false])
    func anOlderValueServedAgainIsRefusedByEveryDevice(writerFirst: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30", "--notes", "door code 1234")
        try a.sync()
        try b.sync()
        let id = try #require(trip.split(separator: "\n").last.map(String.init))
        try Self.keepFields(server, id: id, as: "old")
        try a.ok("trip", "edit", id, "--notes", "door code 9876 (changed)")
        try a.sync()
        try b.sync()
        try Self.serveAgain(server, id: id, kept: "old")

        for device in writerFirst ? [a, b] : [b, a] {
            let first = device === (writerFirst ? a : b)
            let result = try device.app("sync", "now", "--json")
            if first {
                #expect(result.status == 65, "\(result)")
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 2 && lines[0].hasPrefix("warning: 1 record came back from the server with values older than this device holds")
                        && lines[1].hasPrefix("error: this device refused 1 record"), "\(result.stderr)")
                let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
                #expect(report["refused"] as? Int == 1 && report["conflictsKept"] as? Int == 0
                        && (report["refusedBecause"] as? [String: Int]) == ["olderValue": 1], "\(report)")
            } else {
                // The first device sent its value again: the second pulls the newer value back.
                #expect(result.status == 0, "\(result)")
            }
            #expect(try SyncServerMemoryTests.notes(device, id).notes == "door code 9876 (changed)")
            #expect((try device.json("sync", "conflicts") as? [Any])?.isEmpty == true, "no conflict is kept for a rollback")
        }
        for device in [a, b] { #expect(try device.app("sync", "now").status == 0) }
        for device in [a, b] { #expect(try SyncServerMemoryTests.notes(device, id).notes == "door code 9876 (changed)") }
    }

    /// A record served twice in one page — its current copy, then the older one under the next
    /// version and change sequence, a row the operator added after dropping the table's key — is
    /// judged against what the first copy told the device, though a page writes the shadows of
    /// records new here only at its end: the older value is refused, the newer one stays.
    @Test func aRecordServedTwiceInOnePageIsJudgedAgainstItsFirstCopy() throws {
        let (server, a, b, id) = try Self.lisbonKeptThenEdited(notes: "door code 1234", keptAs: "old", editedTo: "door code 9876 (changed)")
        defer { withExtendedLifetime(server) {} }
        _ = try server.psql("""
            ALTER TABLE tripboard.records DROP CONSTRAINT records_pkey;
            UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = 'default';
            INSERT INTO tripboard.records (zone, kind, id, version, change_sequence, deleted, fields, byte_count)
            SELECT zone, kind, id, version + 1, (SELECT change_sequence FROM tripboard.zones WHERE name = 'default'), deleted,
                   (SELECT fields FROM public.kept WHERE name = 'old'), byte_count
            FROM tripboard.records WHERE id = '\(id)'
            """)
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(id)'") == "2")
        // The pull refuses the older copy and commits; the push that would send the newer value
        // again then meets the table without its key (the server's error: 69).
        let result = try b.app("sync", "now")
        #expect(result.status == 69 && result.stderr.contains("no unique or exclusion constraint"), "\(result)")
        #expect(try SyncServerMemoryTests.notes(b, id).notes == "door code 9876 (changed)")
        // The operator puts the table back: nothing older is left on either device.
        _ = try server.psql("""
            DELETE FROM tripboard.records WHERE id = '\(id)' AND version = (SELECT max(version) FROM tripboard.records WHERE id = '\(id)');
            ALTER TABLE tripboard.records ADD PRIMARY KEY (zone, kind, id)
            """)
        for device in [b, a] { #expect(try device.app("sync", "now").status == 0) }
        for device in [a, b] { #expect(try SyncServerMemoryTests.notes(device, id).notes == "door code 9876 (changed)") }
    }

    /// A field set to A, then B, then back to A: the server serves the first A again (the same
    /// value, an older stamp), then B. The harmless first replay must not lower what the device
    /// knows of the field, or B — newer than the first A, older than the A it holds — would be
    /// believed: refused (65), and the A the user set last stays on both devices. Likewise a
    /// field edited here back to the value the server replays keeps its edit and sends it.
    @Test(arguments: [false, true])
    func aValueSetAgainCannotBeRolledBackInTwoSteps(editedHere: Bool) throws {
        let (server, a, b, id) = try Self.lisbonKeptThenEdited(notes: "A", keptAs: "first A", editedTo: "B")
        defer { withExtendedLifetime(server) {} }
        try Self.keepFields(server, id: id, as: "B")
        if editedHere {
            // B holds B from the server; its user sets A again (not yet sent).
            try b.sync()
            try b.ok("trip", "edit", id, "--notes", "A")
        } else {
            try a.ok("trip", "edit", id, "--notes", "A")
            try a.sync()
            try b.sync()
        }
        try Self.serveAgain(server, id: id, kept: "first A")
        _ = try b.app("sync", "now")
        try Self.serveAgain(server, id: id, kept: "B")
        let second = try b.app("sync", "now", "--json")
        if editedHere {
            // B's own edit is later than both replays: it wins and goes to the server.
            #expect(second.status == 0 || second.status == 65, "\(second)")
        } else {
            #expect(second.status == 65 && second.stderr.contains("values older than this device holds"), "\(second)")
        }
        #expect(try SyncServerMemoryTests.notes(b, id).notes == "A")
        for device in [b, a, b] { _ = try device.app("sync", "now") }
        for device in [a, b] {
            #expect(try device.app("sync", "now").status == 0)
            #expect(try SyncServerMemoryTests.notes(device, id).notes == "A", "the A set last is kept")
        }
    }

    /// The same two-step rollback on a migratable keychain item: token 1, token 2, token 1 again;
    /// the server serves the first token 1, then token 2 — refused, token 1 stays.
    @Test func aTokenSetAgainCannotBeRolledBackInTwoSteps() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try SyncKeychainTests.set(a, "api.example", "traveller", "token-1")
        try a.sync()
        let id = try server.psql("SELECT id FROM tripboard.records WHERE kind = 'secret'")
        try Self.keepFields(server, id: id, as: "first token-1")
        try SyncKeychainTests.set(a, "api.example", "traveller", "token-2")
        try a.sync()
        try Self.keepFields(server, id: id, as: "token-2")
        try SyncKeychainTests.set(a, "api.example", "traveller", "token-1")
        try a.sync()
        try b.sync()
        try Self.serveAgain(server, id: id, kept: "first token-1")
        #expect(try b.app("sync", "now").status == 0, "the same value: nothing to take or refuse")
        try Self.serveAgain(server, id: id, kept: "token-2")
        let refused = try b.app("sync", "now")
        #expect(refused.status == 65 && refused.stderr.contains("values older than this device holds"), "\(refused)")
        for device in [b, a] { #expect(try device.app("sync", "now").status == 0) }
        for device in [a, b] { #expect(try SyncKeychainTests.get(device, "api.example", "traveller").trimmedStdout == "token-1") }
    }

    /// A rotated (revoked) migratable token served again is refused: the device keeps the new
    /// token, sends it again, and says so (65); the other device never takes the old one back.
    @Test func aRotatedTokenServedAgainIsRefused() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try SyncKeychainTests.set(a, "api.example", "traveller", "token-1 (revoked)")
        try a.sync()
        try b.sync()
        let id = try server.psql("SELECT id FROM tripboard.records WHERE kind = 'secret'")
        try Self.keepFields(server, id: id, as: "revoked")
        try SyncKeychainTests.set(a, "api.example", "traveller", "token-2")
        try a.sync()
        try b.sync()
        try Self.serveAgain(server, id: id, kept: "revoked")

        let refused = try b.app("sync", "now", "--json")
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("values older than this device holds"), "\(refused.stderr)")
        #expect(try SyncKeychainTests.get(b, "api.example", "traveller").trimmedStdout == "token-2")
        let fromA = try a.app("sync", "now")
        #expect(fromA.status == 0, "\(fromA)")
        #expect(try SyncKeychainTests.get(a, "api.example", "traveller").trimmedStdout == "token-2")
        let again = try b.app("sync", "now")
        #expect(again.status == 0, "\(again)")
    }

    /// A sealed field whose ciphertext the server flipped, or that it moved to another record (a
    /// cut-and-paste of another trip's name), does not open: damaged server data, 65, one line,
    /// nothing of it written — every run, until the server serves what a device sealed.
    @Test(arguments: ["flipped", "moved"])
    func aFieldTheServerAlteredOrMovedIsRefused(how: String) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let lisbon = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        let porto = try a.ok("trip", "add", "--name", "Porto", "--start", "2027-05-01", "--end", "2027-05-03")
        try a.sync()
        let change = how == "flipped"
            ? "fields = jsonb_set(fields, '{name,ciphertext}', to_jsonb(translate(fields->'name'->>'ciphertext', 'ABCDEFGHabcdefgh', 'BCDEFGHAbcdefgha')))"
            : "fields = jsonb_set(fields, '{name}', (SELECT fields->'name' FROM tripboard.records WHERE id = '\(porto)'))"
        try Self.rewrite(server, where: "id = '\(lisbon)'", set: change)
        for _ in 0..<2 {
            let result = try b.app("sync", "now")
            #expect(result.status == 65, "\(result)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.hasPrefix("error: the sync server holds data TripBoard cannot trust"),
                    "\(result.stderr)")
        }
        // Nothing of the page was written on B; A's trips are as A made them.
        #expect(try b.app("trip", "show", lisbon).status == 66)
        #expect(try SyncServerMemoryTests.notes(a, lisbon).name == "Lisbon")
        #expect(try SyncServerMemoryTests.notes(a, porto).name == "Porto")
    }

    /// Two devices on a fresh server, and a trip "Lisbon" made on A that both have synced.
    static func lisbonOnBoth() throws -> (PostgresServer, SyncDevice, SyncDevice, String) {
        let (server, a, b) = try SyncTests.twoDevices()
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try a.sync()
        try b.sync()
        return (server, a, b, trip)
    }

    static func tripListed(_ device: SyncDevice, _ name: String) throws -> Bool {
        try device.ok("trip", "list").contains(name)
    }

    /// `records.deleted = true` written by the server (a tombstone no device sealed) deletes
    /// nothing: every device that holds the trip refuses it (65, one line), sends the trip again,
    /// and it stays live everywhere, its places with it.
    @Test func aDeletionNoDeviceSealedIsRefused() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try a.ok("place", "add", "--trip", trip, "--name", "Belém Tower")
        try a.sync()
        try b.sync()
        try Self.rewrite(server, where: "id = '\(trip)'", set: "deleted = true, fields = '{}'")
        let refused = try b.syncRefusing()
        #expect(refused["trashed"] as? Int == 0, "\(refused)")
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "f", "B sent the trip again")
        #expect(try a.app("sync", "now").status == 0)
        for device in [a, b] {
            #expect(try Self.tripListed(device, "Lisbon"))
            #expect(try device.ok("place", "list", "--trip", trip).contains("Belém Tower"))
        }
    }

    /// A deletion no device sealed, served to a device that deleted the trip too, does not stand
    /// for that device's: it refuses it and sends its own sealed deletion, which the device
    /// holding the trip live (edited before the deletion) believes — delete beats edit. It used
    /// to acknowledge the forgery; the other device refused it and sent the trip again, and the
    /// deleting device, reinstalled, could not say otherwise (found by the sync model, seed
    /// 2151896647).
    @Test func aDeletionNoDeviceSealedDoesNotStandForOneMadeHere() throws {
        let (server, a, b, trip) = try Self.lisbonOnBoth()
        defer { withExtendedLifetime(server) {} }
        try Self.rewrite(server, where: "id = '\(trip)'", set: "deleted = true, fields = '{}'")
        try b.ok("trip", "edit", trip, "--notes", "pack the umbrella")
        try a.ok("trip", "delete", trip)
        let refused = try a.syncRefusing()
        #expect((refused["refusedBecause"] as? [String: Int]) == ["unsealedDeletion": 1], "\(refused)")
        #expect(try server.psql("SELECT deleted, fields ? 'deletion' FROM tripboard.records WHERE id = '\(trip)'") == "t|t",
                "A sent its sealed deletion")
        let pulled = try b.sync()
        #expect(pulled["trashed"] as? Int == 1, "\(pulled)")
        for device in [a, b] {
            #expect(try !Self.tripListed(device, "Lisbon"))
            #expect(try device.ok("trash", "list").contains("Lisbon"))
            #expect(try device.app("sync", "now").status == 0)
        }
    }

    /// Likewise a sealed deletion of a life that is over, served to a device that deleted the
    /// life after it: not taken for this device's deletion, which goes again; the other device,
    /// holding the later life live, believes that one.
    @Test func aReplayedDeletionDoesNotStandForALaterOneMadeHere() throws {
        let (server, a, b, trip) = try Self.lisbonDeletedThenRestored()
        defer { withExtendedLifetime(server) {} }
        try a.ok("trip", "delete", trip)
        try Self.rewrite(server, where: "id = '\(trip)'", set: "deleted = true, fields = (SELECT fields FROM public.kept WHERE name = 'deletion')")
        try a.sync()
        #expect(try server.psql("SELECT fields->'deletion' = (SELECT fields->'deletion' FROM public.kept WHERE name = 'deletion') "
                                + "FROM tripboard.records WHERE id = '\(trip)'") == "f", "A sent its own deletion")
        let pulled = try b.sync()
        #expect(pulled["trashed"] as? Int == 1, "\(pulled)")
        for device in [a, b] {
            #expect(try !Self.tripListed(device, "Lisbon"))
            #expect(try device.app("sync", "now").status == 0)
        }
    }

    /// Puts a trip row of 9 MiB in the default zone, as a hostile server may: every pull that
    /// reaches it fails (65). Returns its id.
    static func growARowPast8MiB(_ server: PostgresServer) throws -> String {
        let grown = "00000000-0000-4000-8000-000000000001"
        _ = try server.psql("""
            UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = 'default';
            INSERT INTO tripboard.records (zone, kind, id, version, change_sequence, fields)
            SELECT 'default', 'trip', '\(grown)', 1, change_sequence,
                   jsonb_build_object('name', jsonb_build_object('stamp', '0000000000000-0000-00', 'nonce', 'AA',
                                      'ciphertext', repeat('A', 9 * 1024 * 1024)))
            FROM tripboard.zones WHERE name = 'default'
            """)
        return grown
    }

    /// A device whose first pull broke (a row the server grew past 8 MiB) after its own push went
    /// holds records the server has, with no change token yet: its next pull takes the zone's
    /// tombstones too, not only live records, so that a deletion of a record it holds is judged —
    /// here one no device sealed, refused and counted — rather than passed over.
    @Test func aDeviceWhoseFirstPullBrokeStillJudgesDeletionsOfWhatItPushed() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let grown = try Self.growARowPast8MiB(server)
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        let broken = try a.app("sync", "now")
        #expect(broken.status == 65 && broken.stderr.contains("cannot trust"), "\(broken)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(trip)'") == "1", "A's push went")
        try Self.rewrite(server, where: "id = '\(trip)'", set: "deleted = true, fields = '{}'")
        _ = try server.psql("DELETE FROM tripboard.records WHERE id = '\(grown)'")
        let refused = try a.syncRefusing()
        #expect((refused["refusedBecause"] as? [String: Int]) == ["unsealedDeletion": 1], "\(refused)")
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "f", "A sent the trip again")
        try b.sync()
        for device in [a, b] { #expect(try Self.tripListed(device, "Lisbon")) }
    }

    /// A device whose pulls all broke (a row grown past 8 MiB) while its push went, whose server
    /// is then restored from a dump taken before that push: it has no change token, and its trip
    /// is `synchronized` here and gone from the server. Its next sync compares (the server no
    /// longer has its last batch) and sends the trip again; another device then gets it. Found by
    /// the sync model test (seed 3460905143), where the device was then reinstalled and the trip
    /// lost.
    @Test func aDeviceThatPushedButNeverPulledSendsAgainWhatARestoreLost() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let dump = server.directory + "/before-push.dump"
        try server.backUp(to: dump)
        _ = try Self.growARowPast8MiB(server)
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        #expect(try a.app("sync", "now").status == 65)
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(trip)'") == "1", "A's push went")
        #expect(try a.ok("sync", "pending") == "Everything is synchronized.")
        try server.restore(from: dump)
        let compared = try a.sync()
        #expect(compared["reconciled"] as? String == "serverLostChanges" && compared["reuploaded"] as? Int == 1, "\(compared)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(trip)'") == "1", "A sent the trip again")
        try b.sync()
        #expect(try Self.tripListed(b, "Lisbon"))
    }

    /// A server that went back twice numbers two states of a trip v2: A's tombstone, sent again
    /// after the first restore, and the trip B brought back from the trash (a new incarnation)
    /// and pushed after the second. The live copy of the later incarnation is news to A whatever
    /// its version (it was kept out as "v2 already"; the sync model's seed 1332436197).
    @Test func aTripBroughtBackAfterTheServerWentBackTwiceReachesTheDeviceThatDeletedIt() throws {
        let (server, a, b, trip) = try Self.lisbonOnBoth()
        defer { withExtendedLifetime(server) {} }
        let dump = server.directory + "/both.dump"
        try server.backUp(to: dump)
        try a.ok("trip", "delete", trip)
        try a.sync()
        try b.sync()
        #expect(try !Self.tripListed(b, "Lisbon"), "the deletion reached B")
        // Each restore is noticed (a refusal, 65, on the first sync after it, as a server that
        // went back is): what matters is where the devices end.
        try server.restore(from: dump)
        _ = try a.app("sync", "now")
        _ = try a.app("sync", "now")
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "t", "A sent its deletion again")
        try b.ok("trash", "restore", trip)
        try server.restore(from: dump)
        for device in [b, b, a, a, b, a] { _ = try device.app("sync", "now") }
        #expect(try Self.tripListed(b, "Lisbon"))
        #expect(try Self.tripListed(a, "Lisbon"), "A took the trip B brought back")
    }

    /// A genuine, sealed deletion replayed after the trip was brought back from the trash (a new
    /// incarnation) cannot take it again: the device that made it knows it (`sync_deletions_seen`)
    /// and refuses it (65, `replayedDeletion`), and the trip stays live on both.
    /// Lisbon deleted on A and synced by both, its sealed deletion kept as `deletion` (to serve
    /// again), then brought back from B's trash and synced by both.
    static func lisbonDeletedThenRestored() throws -> (PostgresServer, SyncDevice, SyncDevice, String) {
        let (server, a, b, trip) = try lisbonOnBoth()
        try a.ok("trip", "delete", trip)
        try a.sync()
        try b.sync()
        #expect(try server.psql("SELECT deleted, fields ? 'deletion' FROM tripboard.records WHERE id = '\(trip)'") == "t|t",
                "the tombstone carries a sealed deletion")
        try keepFields(server, id: trip, as: "deletion")
        try b.ok("trash", "restore", trip)
        try b.sync()
        try a.sync()
        #expect(try tripListed(a, "Lisbon"))
        return (server, a, b, trip)
    }

    @Test func aReplayedDeletionCannotTakeARestoredTrip() throws {
        let (server, a, b, trip) = try Self.lisbonDeletedThenRestored()
        defer { withExtendedLifetime(server) {} }
        try Self.rewrite(server, where: "id = '\(trip)'", set: "deleted = true, fields = (SELECT fields FROM public.kept WHERE name = 'deletion')")
        let replayed = try a.syncRefusing()
        #expect(replayed["trashed"] as? Int == 0 && (replayed["refusedBecause"] as? [String: Int]) == ["replayedDeletion": 1], "\(replayed)")
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "f", "A sent the trip again")
        #expect(try b.app("sync", "now").status == 0)
        for device in [a, b] {
            #expect(try Self.tripListed(device, "Lisbon"))
            #expect(try device.app("sync", "now").status == 0)
        }
    }

    /// The honest case the ledger must not call a replay: B deletes the trip and syncs while A,
    /// offline, deletes it too and brings it back from its trash. A's deletion never left A, so
    /// its restore is an undo, not a new life: B's deletion reaches A as the deletion of the life
    /// A holds — applied (delete beats edit), not counted, exit 0. (A restore of a deletion the
    /// server had is a new life, which a replay cannot take: `aReplayedDeletionCannotTakeARestoredTrip`.)
    @Test func aDeletionThatReachesADeviceAfterItsRestoreIsNotARefusal() throws {
        let (server, a, b, trip) = try Self.lisbonOnBoth()
        defer { withExtendedLifetime(server) {} }
        try b.ok("trip", "delete", trip)
        try b.sync()
        try a.ok("trip", "delete", trip)
        try a.ok("trash", "restore", trip)
        let late = try a.sync()
        #expect(late["refused"] as? Int == 0 && late["trashed"] as? Int == 1, "\(late)")
        #expect(try b.app("sync", "now").status == 0)
        for device in [a, b] {
            #expect(try !Self.tripListed(device, "Lisbon"))
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
        }
    }

    /// The ledger: a trip deleted, synced and emptied from every trash stays deleted when the
    /// server serves its old live copy again — the devices refuse it and send its deletion again.
    @Test func aTripEmptiedFromTheTrashDoesNotComeBackFromAReplayedCopy() throws {
        let (server, a, b, trip) = try Self.lisbonOnBoth()
        defer { withExtendedLifetime(server) {} }
        try Self.keepFields(server, id: trip, as: "live")
        try a.ok("trip", "delete", trip)
        try a.sync()
        try b.sync()
        for device in [a, b] { try device.ok("trash", "empty", "--yes") }
        try Self.rewrite(server, where: "id = '\(trip)'", set: "deleted = false, fields = (SELECT fields FROM public.kept WHERE name = 'live')")
        try a.syncRefusing()
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "t", "A sent the deletion again")
        #expect(try b.app("sync", "now").status == 0)
        for device in [a, b] { #expect(try !Self.tripListed(device, "Lisbon")) }
    }

    /// A `purged_through` raised by the server past a device's token (the horizon door) trashes
    /// nothing: the device reconciles, and what the server lacks is sent again.
    @Test func aRaisedHorizonTrashesNothing() throws {
        let (server, a, b, trip) = try Self.lisbonOnBoth()
        defer { withExtendedLifetime(server) {} }
        _ = try server.psql("""
            DELETE FROM tripboard.records WHERE id = '\(trip)';
            UPDATE tripboard.zones SET change_sequence = change_sequence + 5, purged_through = change_sequence + 5 WHERE name = 'default'
            """)
        let back = try b.sync()
        #expect(back["reconciled"] as? String == "horizonPassed" && back["trashed"] as? Int == 0, "\(back)")
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "f", "sent again")
        try a.sync()
        for device in [a, b] { #expect(try Self.tripListed(device, "Lisbon")) }
    }

    /// A keychain item set on A and synced by both, then marked deleted by the server itself
    /// (no sealed deletion).
    static func itemOnBothMarkedDeleted() throws -> (PostgresServer, SyncDevice, SyncDevice) {
        let (server, a, b) = try SyncTests.twoDevices()
        try SyncKeychainTests.set(a, "api.example", "traveller", "token-1")
        try a.sync()
        try b.sync()
        try rewrite(server, where: "kind = 'secret'", set: "deleted = true, fields = '{}'")
        return (server, a, b)
    }

    /// A migratable keychain item the server marks deleted (no sealed deletion) is not deleted
    /// anywhere: refused (65), sent again; and a genuine deletion still reaches the other device.
    @Test func aKeychainDeletionNoDeviceSealedIsRefused() throws {
        let (server, a, b) = try Self.itemOnBothMarkedDeleted()
        defer { withExtendedLifetime(server) {} }
        try b.syncRefusing()
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE kind = 'secret'") == "f", "B sent the item again")
        #expect(try a.app("sync", "now").status == 0)
        for device in [a, b] { #expect(try SyncKeychainTests.get(device, "api.example", "traveller").trimmedStdout == "token-1") }

        try a.ok("keychain", "delete", "api.example", "traveller")
        try a.sync()
        #expect(try server.psql("SELECT deleted, fields ? 'deletion' FROM tripboard.records WHERE kind = 'secret'") == "t|t")
        try b.sync()
        #expect(try SyncKeychainTests.get(b, "api.example", "traveller").status != 0, "a sealed deletion is believed")
    }

    /// A keychain deletion waiting on A is not acknowledged by a deletion no device sealed: A
    /// refuses it and sends its own, which B, holding the item, believes.
    @Test func aKeychainDeletionNoDeviceSealedDoesNotStandForOneMadeHere() throws {
        let (server, a, b) = try Self.itemOnBothMarkedDeleted()
        defer { withExtendedLifetime(server) {} }
        try a.ok("keychain", "delete", "api.example", "traveller")
        let refused = try a.syncRefusing()
        #expect((refused["refusedBecause"] as? [String: Int]) == ["unsealedDeletion": 1], "\(refused)")
        #expect(try server.psql("SELECT deleted, fields ? 'deletion' FROM tripboard.records WHERE kind = 'secret'") == "t|t",
                "A sent its sealed deletion")
        try b.sync()
        #expect(try SyncKeychainTests.get(b, "api.example", "traveller").status != 0, "the sealed deletion is believed")
        for device in [a, b] { #expect(try device.app("sync", "now").status == 0) }
    }

    /// The honest case the model found (seed 2517366560): A deletes the trip, its sync is killed
    /// with the deletion saved but unsent, A brings the trip back from the trash, and the next
    /// sync, killed right after the push, sends the old deletion at last. Pulled back, that is the
    /// server's latest state, not a replay: not applied (the restore is later), not counted, and
    /// the restored trip reaches B.
    @Test func anOwnDeletionSentAfterARestoreComesBackAsNoRefusal() throws {
        let (server, a, b, trip) = try Self.lisbonOnBoth()
        defer { withExtendedLifetime(server) {} }
        try a.ok("trip", "delete", trip)
        #expect(try a.app("sync", "now", environment: ["TRIPBOARD_CRASH_AT": "sync.batch-saved"]).status != 0)
        try a.ok("trash", "restore", trip)
        #expect(try a.app("sync", "now", environment: ["TRIPBOARD_CRASH_AT": "sync.pushed"]).status != 0)
        let after = try a.sync()
        #expect(after["refused"] as? Int == 0, "\(after)")
        for device in [b, a, b] { _ = try device.app("sync", "now") }
        for device in [a, b] {
            #expect(try device.app("sync", "now").status == 0)
            #expect(try Self.tripListed(device, "Lisbon"))
        }
    }

    /// The model's seed 904870592: the server lost a trip's row; B, which deleted the trip, sends
    /// its deletion again as a new tombstone, which the server numbers from the start — below the
    /// version A holds live after its edits. Versions are tokens, never proof: a sealed deletion A
    /// has not seen is news, and delete beats edit on A too; nothing brings the trip back.
    @Test func aDeletionSentAgainUnderALowerVersionStillArrives() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try b.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try b.sync()
        try a.sync()
        try a.ok("trip", "edit", trip, "--notes", "first")
        try a.sync()
        try a.ok("trip", "edit", trip, "--notes", "second")
        try a.sync()
        try b.ok("trip", "delete", trip)
        _ = try server.psql("DELETE FROM tripboard.records WHERE id = '\(trip)'")
        try b.sync()
        #expect(try server.psql("SELECT deleted, version FROM tripboard.records WHERE id = '\(trip)'") == "t|1")
        let pulled = try a.sync()
        #expect(pulled["trashed"] as? Int == 1, "\(pulled)")
        for device in [a, b] {
            #expect(try device.app("sync", "now", "--compare").status == 0)
            #expect(try !Self.tripListed(device, "Lisbon"))
        }
    }

    /// The model's seed 3621381880: A sends a trip the server lost again, its sync killed right
    /// after the push; the server loses it once more; A deletes the trip — to A, a trip the server
    /// never confirmed, so no tombstone — and B sends its copy again. Pulled by A, that copy must
    /// not take the trip out of A's trash (that is for a deletion the server made): A's deletion
    /// is owed, goes as a sealed tombstone, and the trip is gone on both.
    @Test func aTripDeletedBeforeTheServerConfirmedItStaysDeletedWhenAnotherDeviceSendsItAgain() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try b.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try b.sync()
        try a.sync()
        _ = try server.psql("DELETE FROM tripboard.records WHERE id = '\(trip)'")
        #expect(try a.app("sync", "now", "--compare", environment: ["TRIPBOARD_CRASH_AT": "sync.pushed"]).status != 0)
        _ = try server.psql("DELETE FROM tripboard.records WHERE id = '\(trip)'")
        try a.ok("trip", "delete", trip)
        #expect(try b.app("sync", "now", "--compare").status == 0)
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "f", "B sent the trip again")
        for device in [a, b, a, b] { _ = try device.app("sync", "now", "--compare") }
        for device in [a, b] {
            #expect(try device.app("sync", "now", "--compare").status == 0)
            #expect(try !Self.tripListed(device, "Lisbon"), "deleted on A, it stays deleted")
        }
    }

    /// A keychain item's sealed deletion served again after the item was set anew (a new
    /// incarnation) is refused by both devices, which saw it — the one that made it and the one
    /// that pulled it — and the new value stays.
    @Test(arguments: [true, false])
    func aReplayedKeychainDeletionIsRefused(makerFirst: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try SyncKeychainTests.set(a, "api.example", "traveller", "token-1")
        try a.sync()
        try b.sync()
        try a.ok("keychain", "delete", "api.example", "traveller")
        try a.sync()
        try b.sync()
        let id = try server.psql("SELECT id FROM tripboard.records WHERE kind = 'secret'")
        try Self.keepFields(server, id: id, as: "deletion")
        try SyncKeychainTests.set(b, "api.example", "traveller", "token-2")
        try b.sync()
        try a.sync()
        try Self.rewrite(server, where: "kind = 'secret'", set: "deleted = true, fields = (SELECT fields FROM public.kept WHERE name = 'deletion')")
        let refused = try (makerFirst ? a : b).syncRefusing()
        #expect((refused["refusedBecause"] as? [String: Int]) == ["replayedDeletion": 1], "\(refused)")
        for device in makerFirst ? [b, a] : [a, b] { #expect(try device.app("sync", "now").status == 0) }
        for device in [a, b] { #expect(try SyncKeychainTests.get(device, "api.example", "traveller").trimmedStdout == "token-2") }
    }

    /// Upgrading: a container of the previous build (store schema 11) believes the unsealed
    /// tombstones an earlier build left up to where it had reached, so that a reconcile that
    /// reads the whole zone again brings back nothing an earlier build deleted; and this build
    /// raises the zone's `min_client_version` to 2, so earlier builds only receive.
    @Test func anUpgradedDeviceBelievesTheEarlierBuildsTombstonesItHadReached() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try a.ok("trip", "add", "--name", "Porto", "--start", "2027-05-01", "--end", "2027-05-03")
        try a.sync()
        try b.sync()
        #expect(try server.psql("SELECT min_client_version FROM tripboard.zones") == "2")
        try a.ok("trip", "delete", trip)
        try a.sync()
        try b.sync()
        // As an earlier build left it: the tombstone without a sealed deletion, and B's store at
        // schema 11 (no incarnations, no ledger, no unsealed_before yet).
        _ = try server.psql("UPDATE tripboard.records SET fields = '{}' WHERE id = '\(trip)'")
        #expect(try b.container.sqlite(BookingZoneTests.stepSeventeenUndone + BookingZoneTests.stepSixteenUndone + BookingZoneTests.stepFifteenUndone + """
            DROP TABLE sync_send_whole; DROP TABLE sync_deletions_seen; DROP TABLE sync_incarnations; DROP TABLE sync_dead;
            ALTER TABLE sync_account DROP COLUMN unsealed_before;
            PRAGMA user_version = 11
            """).status == 0)
        // The horizon passed (as the server says): B reconciles, reading the whole zone again.
        _ = try server.psql("UPDATE tripboard.zones SET change_sequence = change_sequence + 3, purged_through = change_sequence + 3")
        let back = try b.sync()
        #expect(back["reconciled"] as? String == "horizonPassed" && back["refused"] as? Int == 0, "\(back)")
        #expect(try !Self.tripListed(b, "Lisbon") && Self.tripListed(b, "Porto"))
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(trip)'") == "t")
    }
}
