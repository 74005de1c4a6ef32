import Foundation
import Testing
import TripBoardStorage

/// When the change feed alone cannot be trusted — a server restored from an older backup, a zone
/// emptied under a new epoch, a device offline past the tombstone horizon — the device compares
/// everything with the server and settles each difference by `remoteVersion`: nothing deleted
/// comes back, nothing made only here is lost, nothing is duplicated.
@Suite struct SyncReconcileTests {
    func count(_ device: SyncDevice, _ sql: String) throws -> String { try device.container.sqlite(sql).trimmedStdout }

    /// The live records of a device, without sync metadata.
    func live(_ device: SyncDevice) throws -> String {
        try count(device, "SELECT id, name, start_date, end_date, notes FROM trips WHERE trashed_at IS NULL AND sync_state <> 'pendingDeletion' ORDER BY id")
            + "\n" + count(device, "SELECT id, trip_id, name FROM places WHERE trashed_at IS NULL AND sync_state <> 'pendingDeletion' ORDER BY id")
    }

    /// Timeline: A and B share Porto and Braga → B goes offline → A deletes Porto and syncs → 401
    /// days pass on the server (its tombstones aged by hand) → A syncs, which purges them → B,
    /// back, has edited Porto's notes and made Faro meanwhile → B's sync reconciles: absence from
    /// the server proves no deletion (a server could claim any horizon), so Porto goes up again
    /// with Faro → A's ledger knows Porto's incarnation deleted: A refuses it (65) and sends its
    /// sealed deletion again → B takes it: Porto goes to B's trash with B's edit (delete beats
    /// edit, even a year later) → restoring Porto on B sends a new incarnation, which A takes.
    @Test func aDeviceOfflinePastTheTombstoneHorizonLosesNoDeletionAndNoNewRecord() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let porto = try a.container.addTrip("Porto", start: "2027-05-01", end: "2027-05-03")
        let braga = try a.container.addTrip("Braga", start: "2027-06-01", end: "2027-06-02")
        try a.ok("place", "add", "--trip", porto, "--name", "Livraria Lello")
        try a.sync()
        try b.sync()

        try a.ok("trip", "delete", porto)
        try a.sync()
        #expect(try server.psql("UPDATE tripboard.records SET updated_at = now() - interval '401 days' WHERE deleted") == "UPDATE 2")
        let purging = try a.sync()
        #expect(purging["tombstonesPurged"] as? Int == 2, "\(purging)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE deleted") == "0")
        #expect(try server.psql("SELECT purged_through > 0 FROM tripboard.zones") == "t")

        try b.ok("trip", "edit", porto, "--notes", "Francesinha at Café Santiago")
        let faro = try b.container.addTrip("Faro", start: "2027-07-01", end: "2027-07-04")
        let back = try b.sync()
        #expect(back["reconciled"] as? String == "horizonPassed", "\(back)")
        #expect(back["trashed"] as? Int == 0 && back["pending"] as? Int == 0, "\(back)")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE kind = 'trip' AND NOT deleted") == "3")

        let refusing = try a.syncRefusing()
        #expect(refusing["refused"] as? Int ?? 0 >= 1, "\(refusing)")
        let deleted = try b.sync()
        #expect(deleted["trashed"] as? Int ?? 0 >= 1, "\(deleted)")
        #expect(try count(b, "SELECT trashed_at IS NOT NULL, notes FROM trips WHERE id = '\(porto)'") == "1|Francesinha at Café Santiago",
                "the edited version is what B's trash keeps")
        #expect(try count(b, "SELECT count(*) FROM places WHERE trashed_at IS NOT NULL") == "1", "its place went with it")
        try a.sync()
        #expect(try live(a) == live(b))
        #expect(try count(a, "SELECT name FROM trips WHERE trashed_at IS NULL ORDER BY name") == "Braga\nFaro")

        // Restored on B, it comes back as a new incarnation, which the ledger does not refuse.
        try b.ok("trash", "restore", porto)
        try b.sync()
        try a.sync()
        #expect(try count(a, "SELECT name FROM trips WHERE trashed_at IS NULL ORDER BY name") == "Braga\nFaro\nPorto")
        #expect(try live(a) == live(b))
        _ = (braga, faro)
    }

    /// Timeline: A and B share Lisbon → the operator backs the server up → A renames Lisbon and
    /// adds Sintra, B adds Évora, both sync → the server is restored from the backup (it forgets
    /// the rename, Sintra and Évora) → each device notices on its next sync (B: its token is past
    /// the server's counter; A: the server no longer has its last batch) and sends again what
    /// the server lost → both end equal, every record once on the server.
    @Test func aServerRestoredFromAnOlderBackupGetsBackWhatItLost() throws {
        let (server, a, b) = try SyncTests.twoDevices(durable: true)
        defer { withExtendedLifetime(server) {} }
        let lisbon = try a.container.addTrip("Lisbon", start: "2027-05-01", end: "2027-05-03")
        try a.sync()
        try b.sync()
        let backup = server.directory + "/tripboard.dump"
        try server.backUp(to: backup)

        try a.ok("trip", "edit", lisbon, "--name", "Lisboa")
        try a.container.addTrip("Sintra", start: "2027-05-02", end: "2027-05-02")
        try a.sync()
        try b.container.addTrip("Évora", start: "2027-05-04", end: "2027-05-05")
        try b.sync()
        try a.sync()
        #expect(try server.psql("SELECT count(*) FROM tripboard.records") == "3")

        try server.restore(from: backup)
        #expect(try server.psql("SELECT count(*) FROM tripboard.records") == "1")
        // B pulls the rename's older value back: refused (65), its own sent again.
        let fromB = try b.syncRefusing()
        #expect(fromB["reconciled"] as? String == "serverLostChanges", "\(fromB)")
        let fromA = try a.sync()
        #expect(fromA["reconciled"] as? String == "serverLostChanges", "\(fromA)")
        try b.sync()
        #expect(try live(a) == live(b))
        #expect(try count(a, "SELECT name FROM trips ORDER BY name") == "Lisboa\nSintra\nÉvora")
        #expect(try server.psql("SELECT count(*), count(DISTINCT id) FROM tripboard.records WHERE NOT deleted") == "3|3")
        for device in [a, b] {
            #expect(try device.ok("sync", "pending") == "Everything is synchronized.")
            #expect(try device.container.integrity() == "ok")
        }
        // From then on the feed is followed again: an edit travels as usual.
        try b.ok("trip", "edit", lisbon, "--notes", "Tram 28")
        #expect(try b.sync()["reconciled"] is NSNull)
        #expect(try a.sync()["reconciled"] is NSNull)
        #expect(try count(a, "SELECT notes FROM trips WHERE id = '\(lisbon)'") == "Tram 28")
    }

    /// The same for keychain items, which follow their own token: A and B share item X →
    /// backup → A sets X again and adds Y, B adds Z, all synced → the server is restored → each
    /// device sends again what the server lost (X against the version it has, Y and Z as new),
    /// and its keychain token follows the server's counter back, so an item set afterwards still
    /// reaches the other device.
    @Test func aServerRestoredFromAnOlderBackupGetsBackTheKeychainItemsItLost() throws {
        let (server, a, b) = try SyncTests.twoDevices(durable: true)
        defer { withExtendedLifetime(server) {} }
        func value(_ device: SyncDevice, _ account: String) throws -> String {
            try SyncKeychainTests.get(device, "restore.example", account).trimmedStdout
        }
        try SyncKeychainTests.set(a, "restore.example", "x", "x-first")
        try a.sync()
        try b.sync()
        let backup = server.directory + "/tripboard.dump"
        try server.backUp(to: backup)

        try SyncKeychainTests.set(a, "restore.example", "x", "x-second")
        try SyncKeychainTests.set(a, "restore.example", "y", "y-only-on-a")
        try a.sync()
        try SyncKeychainTests.set(b, "restore.example", "z", "z-only-on-b")
        try b.sync()
        try a.sync()
        #expect(try SyncKeychainTests.secretRecords(server) == "3|0")

        try server.restore(from: backup)
        #expect(try SyncKeychainTests.secretRecords(server) == "1|0")
        #expect(try b.sync()["reconciled"] as? String == "serverLostChanges")
        #expect(try a.sync()["reconciled"] as? String == "serverLostChanges")
        try b.sync()
        #expect(try SyncKeychainTests.secretRecords(server) == "3|0")
        #expect(try server.psql("SELECT count(DISTINCT id) FROM tripboard.records WHERE kind = 'secret'") == "3")
        for device in [a, b] {
            #expect(try [value(device, "x"), value(device, "y"), value(device, "z")] == ["x-second", "y-only-on-a", "z-only-on-b"])
            #expect(try SyncKeychainTests.pendingKeychainItems(device) == 0)
        }
        // Set after the reconcile, at a change sequence below the tokens the devices had: it arrives.
        try SyncKeychainTests.set(a, "restore.example", "w", "w-after")
        try a.sync()
        #expect(try b.sync()["secretsPulled"] as? Int == 1)
        #expect(try value(b, "w") == "w-after")
    }

    /// A deletes a keychain item B holds at a later version than the server's backup has; the
    /// server is restored, and A's deletion, sent again, is numbered below B's version: it still
    /// deletes the item on B (a sealed deletion B has not seen is news at any version), and the
    /// two keychains end equal (found by the sync model, seed 2361700159).
    @Test func aKeychainDeletionSentAgainAfterARestoreReachesADeviceAhead() throws {
        let (server, a, b) = try SyncTests.twoDevices(durable: true)
        defer { withExtendedLifetime(server) {} }
        try SyncKeychainTests.set(a, "restore.example", "x", "x-1")
        try a.sync()
        let backup = server.directory + "/tripboard.dump"
        try server.backUp(to: backup)
        for value in ["x-2", "x-3", "x-4"] {
            try SyncKeychainTests.set(a, "restore.example", "x", value)
            try a.sync()
        }
        try b.sync()
        #expect(try SyncKeychainTests.get(b, "restore.example", "x").trimmedStdout == "x-4")
        #expect(try a.ok("keychain", "delete", "restore.example", "x") == "")
        try a.sync()

        try server.restore(from: backup)
        // The restore serves the live copy of an incarnation A deleted: refused (65), the
        // deletion sent again, numbered 2 against the restored version 1.
        #expect(try a.syncRefusing()["reconciled"] as? String == "serverLostChanges")
        #expect(try server.psql("SELECT version, deleted FROM tripboard.records WHERE kind = 'secret'") == "2|t")
        let pulled = try b.sync()
        #expect(pulled["secretsDeleted"] as? Int == 1, "\(pulled)")
        #expect(try SyncKeychainTests.get(b, "restore.example", "x").status == 66)
        try a.sync()
        #expect(try SyncKeychainTests.get(a, "restore.example", "x").status == 66)
        #expect(try SyncKeychainTests.pendingKeychainItems(b) == 0)
    }

    /// A and B share Lisbon; the server is backed up (the file returned); A adds Porto after it.
    func lisbonBackedUpThenPorto() throws -> (PostgresServer, SyncDevice, SyncDevice, String, String) {
        let (server, a, b) = try SyncTests.twoDevices(durable: true)
        let trip = try a.container.addTrip("Lisbon", start: "2027-03-27", end: "2027-03-30")
        try a.sync()
        try b.sync()
        let backup = server.directory + "/tripboard.dump"
        try server.backUp(to: backup)
        try a.container.addTrip("Porto", start: "2027-05-01", end: "2027-05-02")
        try a.sync()
        return (server, a, b, trip, backup)
    }

    /// The last record a device's token covers is edited again after the server went back, to a
    /// version above the one the device saw but numbered below its token: the device notices
    /// (a later version is proof only when numbered after the token) and gets the edit (found by
    /// the sync model, seed 443118136).
    @Test func aTokenRecordEditedAgainAfterARestoreIsNotTakenForProgress() throws {
        let (server, a, b, trip, backup) = try lisbonBackedUpThenPorto()
        defer { withExtendedLifetime(server) {} }
        try a.ok("trip", "edit", trip, "--notes", "seen by c")
        try a.sync()
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        try c.sync()  // its token's record: the trip, version 2, the zone's last change

        try server.restore(from: backup)
        for notes in ["b once", "b twice"] {  // version 3, numbered below c's token
            try b.ok("trip", "edit", trip, "--notes", notes)
            try b.sync()
        }
        #expect(try c.sync()["reconciled"] as? String == "serverLostChanges")
        try c.sync()
        let shown = try #require(try c.json("trip", "show", trip) as? [String: Any])
        #expect(shown["notes"] as? String == "b twice", "\(shown)")
    }

    /// The record a device's token covers is lost to a restore and sent again by another device
    /// whole, with the stamps it had, landing at the same version and sequence — while the
    /// sequences below it went to changes this device never saw. The server's write time of the
    /// record tells the copy sent again from the one the device saw (found by the sync model,
    /// seed 443118136, where a reconcile's re-send did exactly this).
    @Test func aTokenRecordSentAgainAtItsOwnNumbersIsStillNoticed() throws {
        let (server, _, b, trip, backup) = try lisbonBackedUpThenPorto()
        defer { withExtendedLifetime(server) {} }
        let other = try SyncDevice()
        #expect(try other.join(server).status == 0)
        let covered = try other.container.addTrip("Sintra", start: "2027-06-01", end: "2027-06-01")
        try other.sync()
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        try c.sync()  // its token covers Sintra, the zone's last change
        _ = try server.psql("CREATE TABLE public.kept AS SELECT * FROM tripboard.records WHERE id = '\(covered)'")

        try server.restore(from: backup)
        try b.ok("trip", "edit", trip, "--notes", "edited after the restore")
        try b.sync()  // numbered below c's token
        // Sintra sent again as it was — version, sequence, stamps — written now.
        _ = try server.psql("""
            INSERT INTO tripboard.records (zone, kind, id, version, change_sequence, deleted, fields, byte_count)
                SELECT zone, kind, id, version, change_sequence, deleted, fields, byte_count FROM public.kept;
            UPDATE tripboard.zones SET change_sequence = (SELECT max(change_sequence) FROM tripboard.records);
            """)
        #expect(try c.sync()["reconciled"] as? String == "serverLostChanges")
        let shown = try #require(try c.json("trip", "show", trip) as? [String: Any])
        #expect(shown["notes"] as? String == "edited after the restore", "\(shown)")
    }

    /// A zone emptied and given a new epoch (recreated with the same key): both devices send
    /// everything again, once.
    @Test func aZoneRecreatedUnderANewEpochGetsEverythingAgainOnce() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.container.addTrip("Madeira", start: "2027-08-01", end: "2027-08-08")
        try b.container.addTrip("Azores", start: "2027-09-01", end: "2027-09-08")
        for device in [a, b, a] { try device.sync() }
        _ = try server.psql("DELETE FROM tripboard.records; DELETE FROM tripboard.mutations; UPDATE tripboard.zones SET epoch = gen_random_uuid()::text, change_sequence = 0")

        #expect(try a.sync()["reconciled"] as? String == "zoneRecreated")
        #expect(try b.sync()["reconciled"] as? String == "zoneRecreated")
        try a.sync()
        #expect(try server.psql("SELECT count(*), count(DISTINCT id) FROM tripboard.records") == "2|2")
        #expect(try live(a) == live(b))
        #expect(try count(a, "SELECT count(*) FROM trips") == "2")
    }

    /// A device reinstalled (a fresh container joining the zone with the passphrase) gets
    /// everything once, and its first syncs change nothing on the others.
    @Test func aReinstalledDeviceGetsEverythingOnceAndDuplicatesNothing() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Kyoto", start: "2027-03-01", end: "2027-03-08")
        try a.ok("place", "add", "--trip", trip, "--name", "Kinkaku-ji")
        try a.sync()
        try b.sync()
        let reinstalled = try SyncDevice()
        #expect(try reinstalled.join(server).status == 0)
        let first = try reinstalled.sync()
        #expect(first["pulled"] as? Int == 2 && first["pushed"] as? Int == 0 && first["reconciled"] is NSNull, "\(first)")
        #expect(try reinstalled.sync()["pulled"] as? Int == 0)
        #expect(try a.sync()["pulled"] as? Int == 0)
        #expect(try live(reinstalled) == live(a))
        #expect(try server.psql("SELECT count(*), max(version) FROM tripboard.records") == "2|1")
    }

    /// Timeline, with each device's clock injected: the trips are made a month ago; B goes offline three weeks ago and edits
    /// the trip's notes and deletes Braga on its first day away; A renames the trip a week
    /// later, edits the notes two weeks later and edits Braga → B comes back today: the later
    /// notes (A's) win on both, B's losing notes are kept for `sync conflicts`, the rename
    /// stays, and Braga goes to the trash on both (delete beats edit, however late the edit).
    @Test func threeWeeksOfflineMergeByTheClockAndDeletionsStillWin() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let day: TimeInterval = 86_400
        func at(_ daysAgo: Double) -> [String: String] {
            ["TRIPBOARD_NOW": ISO8601DateFormatter().string(from: Date(timeIntervalSinceNow: -daysAgo * day))]
        }
        let trip = try a.ok("trip", "add", "--name", "Porto", "--start", "2027-05-01", "--end", "2027-05-03", environment: at(30))
        let braga = try a.ok("trip", "add", "--name", "Braga", "--start", "2027-06-01", "--end", "2027-06-02", environment: at(30))
        try a.sync()
        try b.sync()

        try b.ok("trip", "edit", trip, "--notes", "B, offline", environment: at(21))
        try b.ok("trip", "delete", braga, environment: at(21))
        try a.ok("trip", "edit", trip, "--name", "Porto e Gaia", environment: at(14))
        try a.sync()
        try a.ok("trip", "edit", trip, "--notes", "A, two weeks later", environment: at(7))
        try a.ok("trip", "edit", braga, "--notes", "A, still going", environment: at(7))
        try a.sync()

        let back = try b.sync()
        #expect(back["conflictsKept"] as? Int == 1, "\(back)")
        try a.sync()
        for device in [a, b] {
            let row = try count(device, "SELECT name, notes FROM trips WHERE id = '\(trip)'")
            #expect(row == "Porto e Gaia|A, two weeks later", "\(row)")
            #expect(try count(device, "SELECT trashed_at IS NOT NULL FROM trips WHERE id = '\(braga)'") == "1")
        }
        #expect(try b.ok("sync", "conflicts").contains("B, offline"))
        #expect(try live(a) == live(b))
    }
}
