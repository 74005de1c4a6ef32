import TripBoardKeychain
import Foundation
import Testing
import TripBoardSystem

/// Migratable keychain items synced between two devices through a real PostgreSQL (records of
/// kind `secret`, sealed under a zone subkey, re-sealed on arrival under the receiving device's
/// own keychain seal); this-device-only items never leave. docs/sync.md, "Keychain items".
@Suite struct SyncKeychainTests {
    static func set(_ device: SyncDevice, _ service: String, _ account: String, _ value: String,
                    accessibility: String = "migratable", now: Date? = nil) throws {
        var environment: [String: String] = [:]
        if let now { environment["TRIPBOARD_NOW"] = ISO8601DateFormatter().string(from: now) }
        try device.ok("keychain", "set", service, account, "--accessibility", accessibility, stdin: value + "\n", environment: environment)
    }

    static func get(_ device: SyncDevice, _ service: String, _ account: String) throws -> ProcessResult {
        try device.app("keychain", "get", service, account)
    }

    static func secretRecords(_ server: PostgresServer) throws -> String {
        try server.psql("SELECT count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted) FROM tripboard.records WHERE kind = 'secret'")
    }

    static func pendingKeychainItems(_ device: SyncDevice) throws -> Int? {
        (try device.json("sync", "status") as? [String: Any])?["pendingKeychainItems"] as? Int
    }

    @Test func aMigratableItemTravelsItsEditComesBackAndItsDeletionFollows() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "api.example.com", "ana@example.com", "first-secret")
        #expect(try Self.pendingKeychainItems(a) == 1)
        #expect(try a.ok("sync", "status").contains("1 to send"))
        let pushed = try a.sync()
        #expect(pushed["secretsPushed"] as? Int == 1 && pushed["secretsPending"] as? Int == 0, "\(pushed)")
        #expect(try Self.pendingKeychainItems(a) == 0)
        let pulled = try b.sync()
        #expect(pulled["secretsPulled"] as? Int == 1, "\(pulled)")
        #expect(try Self.get(b, "api.example.com", "ana@example.com").trimmedStdout == "first-secret")
        // Re-sealed under B's own keychain: a migratable item of B's, listed as available.
        let listed = try #require((try b.json("keychain", "list") as? [String: Any])?["items"] as? [[String: Any]])
        #expect(listed.contains { $0["service"] as? String == "api.example.com" && $0["accessibility"] as? String == "after-first-unlock"
            && $0["status"] as? String == "available" }, "\(listed)")

        try Self.set(b, "api.example.com", "ana@example.com", "second-secret")
        try b.sync()
        try a.sync()
        #expect(try Self.get(a, "api.example.com", "ana@example.com").trimmedStdout == "second-secret")
        #expect(try server.psql("SELECT version FROM tripboard.records WHERE kind = 'secret'") == "2")

        try a.ok("keychain", "delete", "api.example.com", "ana@example.com")
        #expect(try Self.pendingKeychainItems(a) == 1, "the tombstone waits")
        try a.sync()
        #expect(try Self.secretRecords(server) == "0|1")
        let deleted = try b.sync()
        #expect(deleted["secretsDeleted"] as? Int == 1, "\(deleted)")
        #expect(try Self.get(b, "api.example.com", "ana@example.com").status == 66)
        #expect(try Self.pendingKeychainItems(a) == 0 && Self.pendingKeychainItems(b) == 0)

        // Set again after the deletion: a new version of the same record, on both devices.
        try Self.set(b, "api.example.com", "ana@example.com", "third-secret")
        try b.sync()
        try a.sync()
        #expect(try Self.get(a, "api.example.com", "ana@example.com").trimmedStdout == "third-secret")
        #expect(try Self.secretRecords(server) == "1|0")
    }

    @Test func thisDeviceOnlyItemsNeverLeaveAndSwitchingToItDeletesTheItemElsewhere() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let planted = (service: "planted-service-Qx71", account: "planted-account-Wm3", value: "planted-value-Zt8831")
        let local = (service: "planted-local-service-Hk2", account: "planted-local-account-Pv9", value: "planted-local-value-Rr44")
        try Self.set(a, planted.service, planted.account, planted.value)
        try Self.set(a, local.service, local.account, local.value, accessibility: "this-device-only")
        try a.sync()
        try b.sync()
        #expect(try Self.get(b, planted.service, planted.account).trimmedStdout == planted.value)
        #expect(try Self.get(b, local.service, local.account).status == 66)
        #expect(try Self.secretRecords(server) == "1|0", "only the migratable item")

        // Made this-device-only on A (with a new value): deleted on B, its new value never sent.
        let switched = "planted-switched-value-Yy52"
        try Self.set(a, planted.service, planted.account, switched, accessibility: "this-device-only")
        try a.sync()
        #expect(try Self.secretRecords(server) == "0|1")
        try b.sync()
        #expect(try Self.get(b, planted.service, planted.account).status == 66)
        #expect(try Self.get(a, planted.service, planted.account).trimmedStdout == switched)
        // A later sync of A sends nothing of it either.
        let again = try a.sync()
        #expect(again["secretsPushed"] as? Int == 0 && again["secretsPending"] as? Int == 0, "\(again)")

        let dump = try server.dump()
        #expect(dump.contains("'secret'") || dump.contains("\tsecret\t"), "the dump holds the secret records")
        for text in [planted.service, planted.account, planted.value, local.service, local.account, local.value, switched] {
            #expect(!dump.lowercased().contains(text.lowercased()), "\(text) is on the server in the clear")
            let hex = text.utf8.map { String(format: "%02x", $0) }.joined()
            #expect(!dump.lowercased().contains(hex), "\(text) is on the server as hex")
        }
        // Nor in B's store (the store and its backups never hold a keychain item or its name).
        let store = try b.container.sqlite(".dump").stdout
        #expect(!store.contains(planted.service) && !store.contains(planted.value))
    }

    /// Killed after the server committed the keychain batch and before the device recorded it:
    /// the retry sends the same batch, the server answers what it did, nothing is applied twice.
    @Test func aKillAfterThePushThenARetryConverges() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "mail.example.com", "ana", "kill-secret")
        let killed = try a.app("sync", "now", environment: [CrashPoint.environmentVariable: "sync.pushed"])
        #expect(killed.wasSignaled && killed.status == 9, "\(killed)")
        #expect(try server.psql("SELECT count(*), max(version) FROM tripboard.records WHERE kind = 'secret'") == "1|1")
        #expect(try a.container.sqlite("SELECT count(*) FROM sync_outgoing", database: a.container.keychainPath).trimmedStdout == "1")
        #expect(try Self.pendingKeychainItems(a) == 1)

        let resumed = try a.sync()
        #expect(resumed["replayed"] as? Int == 1 && resumed["secretsPending"] as? Int == 0, "\(resumed)")
        #expect(try server.psql("SELECT count(*), max(version) FROM tripboard.records WHERE kind = 'secret'") == "1|1", "nothing applied twice")
        #expect(try a.container.sqlite("SELECT count(*) FROM sync_outgoing", database: a.container.keychainPath).trimmedStdout == "0")

        // Killed on B after the pulled page is committed: the retry converges too.
        let pulledThenKilled = try b.app("sync", "now", environment: [CrashPoint.environmentVariable: "sync.page-applied"])
        #expect(pulledThenKilled.wasSignaled, "\(pulledThenKilled)")
        try b.sync()
        #expect(try Self.get(b, "mail.example.com", "ana").trimmedStdout == "kill-secret")
        #expect(try Self.pendingKeychainItems(b) == 0)

        // Killed before the batch was sent: sent on the next run, once.
        try Self.set(b, "mail.example.com", "ana", "kill-secret-2")
        let unsent = try b.app("sync", "now", environment: [CrashPoint.environmentVariable: "sync.batch-saved"])
        #expect(unsent.wasSignaled, "\(unsent)")
        try b.sync()
        try a.sync()
        #expect(try Self.get(a, "mail.example.com", "ana").trimmedStdout == "kill-secret-2")
        #expect(try server.psql("SELECT max(version) FROM tripboard.records WHERE kind = 'secret'") == "2")
    }

    /// An item whose version the server numbered lower (with no change to pull) takes the
    /// server's version once a push meets it, so the next edit goes up on a plain `sync now`:
    /// it used to meet a conflict at every push, for good (the sync model, seed 2861802693).
    /// An older value served at a lower version is not taken, and this device's goes again.
    @Test func anItemTheServerNumberedLowerIsSentAgainstItsVersion() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "api.example.com", "ana@example.com", "first-secret")
        try a.sync()
        try Self.set(a, "api.example.com", "ana@example.com", "second-secret")
        try a.sync()
        try b.sync()
        let id = try server.psql("SELECT id FROM tripboard.records WHERE kind = 'secret'")
        try SyncHostileServerTests.keepFields(server, id: id, as: "second")
        _ = try server.psql("UPDATE tripboard.records SET version = version - 1 WHERE kind = 'secret'")
        try Self.set(a, "api.example.com", "ana@example.com", "third-secret")
        let pushed = try a.sync()
        #expect(pushed["secretsPushed"] as? Int == 1 && pushed["secretsPending"] as? Int == 0, "\(pushed)")
        #expect(try Self.pendingKeychainItems(a) == 0)
        try b.sync()
        #expect(try Self.get(b, "api.example.com", "ana@example.com").trimmedStdout == "third-secret")

        // The second value served again one version below what the devices hold, with no change
        // to pull: the comparison fetches it, does not take it, and the value held goes again.
        _ = try server.psql("""
            UPDATE tripboard.records SET version = version - 1, fields = (SELECT fields FROM public.kept WHERE name = 'second')
            WHERE kind = 'secret'
            """)
        let compared = try b.app("sync", "now", "--compare", "--json")
        #expect(compared.status == 0, "\(compared)")
        #expect(try server.psql("SELECT version FROM tripboard.records WHERE kind = 'secret'") == "2")
        #expect(try Self.pendingKeychainItems(b) == 0)
        #expect(try Self.get(b, "api.example.com", "ana@example.com").trimmedStdout == "third-secret")
        try a.sync()
        #expect(try Self.get(a, "api.example.com", "ana@example.com").trimmedStdout == "third-secret")
        #expect(try Self.pendingKeychainItems(a) == 0)
    }

    /// An older value served again under the very version a device holds (a new change, the same
    /// number): refused (65), the value held kept and sent again — it used to be taken for the
    /// device's own push coming back and ignored, leaving the other devices on the older value
    /// (the sync model, seed 1497526849).
    @Test func anOlderValueServedAgainUnderTheVersionHeldIsRefused() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "vpn.example.net", "ana", "first-secret")
        try a.sync()
        let id = try server.psql("SELECT id FROM tripboard.records WHERE kind = 'secret'")
        try SyncHostileServerTests.keepFields(server, id: id, as: "first")
        try Self.set(a, "vpn.example.net", "ana", "second-secret")
        try a.sync()
        try b.sync()
        _ = try server.psql("""
            UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = 'default';
            UPDATE tripboard.records SET fields = (SELECT fields FROM public.kept WHERE name = 'first'),
                change_sequence = (SELECT change_sequence FROM tripboard.zones WHERE name = 'default') WHERE kind = 'secret'
            """)
        for device in [a, b] {
            let result = try device.app("sync", "now")
            #expect(result.status == 65 || result.status == 0, "\(result)")
            #expect(try Self.get(device, "vpn.example.net", "ana").trimmedStdout == "second-secret")
        }
        let newcomer = try SyncDevice()
        #expect(try newcomer.join(server).status == 0)
        try newcomer.sync()
        #expect(try Self.get(newcomer, "vpn.example.net", "ana").trimmedStdout == "second-secret", "the server has the later value again")
    }

    /// Both devices change the same item; B's change is the later one. Whichever pushes first,
    /// both end with B's value, and nothing is left pending.
    @Test(arguments: [true, false])
    func concurrentEditsConvergeWhateverThePushOrder(aPushesFirst: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "shared.example.com", "team", "original")
        try a.sync()
        try b.sync()
        try Self.set(a, "shared.example.com", "team", "value-from-A", now: Date().addingTimeInterval(60))
        try Self.set(b, "shared.example.com", "team", "value-from-B", now: Date().addingTimeInterval(65))
        let (first, second) = aPushesFirst ? (a, b) : (b, a)
        try first.sync()
        try second.sync()
        try first.sync()
        #expect(try Self.get(a, "shared.example.com", "team").trimmedStdout == "value-from-B")
        #expect(try Self.get(b, "shared.example.com", "team").trimmedStdout == "value-from-B")
        #expect(try Self.pendingKeychainItems(a) == 0 && Self.pendingKeychainItems(b) == 0)
    }

    /// A deletes the item while B changes it: delete beats edit, whichever reaches the server
    /// first; the item is gone on both and nothing is left pending.
    @Test(arguments: [true, false])
    func deleteBeatsAConcurrentEdit(deletionPushedFirst: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "shared.example.com", "team", "original")
        try a.sync()
        try b.sync()
        try a.ok("keychain", "delete", "shared.example.com", "team")
        try Self.set(b, "shared.example.com", "team", "edited-on-B", now: Date().addingTimeInterval(60))
        let (first, second) = deletionPushedFirst ? (a, b) : (b, a)
        try first.sync()
        try second.sync()
        try first.sync()
        #expect(try Self.get(a, "shared.example.com", "team").status == 66)
        #expect(try Self.get(b, "shared.example.com", "team").status == 66)
        #expect(try Self.secretRecords(server) == "0|1")
        #expect(try Self.pendingKeychainItems(a) == 0 && Self.pendingKeychainItems(b) == 0)
    }

    /// Both devices create the same item before either syncs: one record, the later value on both.
    @Test func theSameItemCreatedOnBothDevicesIsOneRecord() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "wifi", "home", "created-on-A", now: Date().addingTimeInterval(60))
        try Self.set(b, "wifi", "home", "created-on-B", now: Date().addingTimeInterval(65))
        try b.sync()
        try a.sync()
        try b.sync()
        #expect(try Self.get(a, "wifi", "home").trimmedStdout == "created-on-B")
        #expect(try Self.get(b, "wifi", "home").trimmedStdout == "created-on-B")
        #expect(try Self.secretRecords(server) == "1|0")
    }

    /// B never held A's item. A deletes it; B then makes an item of the same name. The deletion
    /// is not of B's item: it reaches the server and A, whether B's pull meets the deletion
    /// (`pulledFirst`) or B's push meets it. The sync model found the second (seed 2227541982).
    /// An item B made before A's deletion loses to it, as an older value would.
    @Test(arguments: [(true, true), (false, true), (true, false), (false, false)])
    func anItemMadeWhereTheDeletedOneNeverWasIsNotDeleted(pulledFirst: Bool, madeAfter: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        if !madeAfter { try Self.set(b, "vpn.example.net", "ana", "made-on-B", now: Date().addingTimeInterval(-600)) }
        try Self.set(a, "vpn.example.net", "ana", "made-on-A")
        try a.sync()
        try a.ok("keychain", "delete", "vpn.example.net", "ana")
        try a.sync()
        #expect(try Self.secretRecords(server) == "0|1")
        if !pulledFirst {
            // B pulls the deletion of an item it never had, then makes one: its push meets the deletion.
            try b.sync()
        }
        if madeAfter { try Self.set(b, "vpn.example.net", "ana", "made-on-B") }
        let synced = try b.sync()
        try a.sync()
        if madeAfter {
            #expect(synced["secretsDeleted"] as? Int ?? 0 == 0, "\(synced)")
            #expect(try Self.get(b, "vpn.example.net", "ana").trimmedStdout == "made-on-B")
            #expect(try Self.get(a, "vpn.example.net", "ana").trimmedStdout == "made-on-B")
            #expect(try Self.secretRecords(server) == "1|0")
        } else {
            #expect(try Self.get(b, "vpn.example.net", "ana").status == 66)
            #expect(try Self.get(a, "vpn.example.net", "ana").status == 66)
            #expect(try Self.secretRecords(server) == "0|1")
        }
        #expect(try Self.pendingKeychainItems(a) == 0 && Self.pendingKeychainItems(b) == 0)
        #expect(synced["refused"] as? Int ?? 0 == 0, "\(synced)")
    }

    /// A keychain of schema 2 (before keychain sync) on a device that already syncs: its
    /// migratable items wait for the server once it is upgraded, and the first sync sends them.
    @Test func aKeychainOfSchemaTwoSendsItsMigratableItemsOnTheFirstSync() throws {
        // An earlier build's keychain (items sealed before protection classes), taken back to
        // schema 2: the sync columns and tables gone, the items kept.
        let server = try PostgresServer()
        let old = try TestContainer()
        let device = try KeychainConversionTests.install(into: old)
        let downgrade = try old.sqlite("""
            DROP TABLE sync_deletions_seen; ALTER TABLE items DROP COLUMN sync_incarnation; DROP TABLE sync_dead; DROP TABLE sync_unsealed;
            ALTER TABLE items DROP COLUMN sync_pending; ALTER TABLE items DROP COLUMN sync_version;
            ALTER TABLE items DROP COLUMN sync_stamp; ALTER TABLE items DROP COLUMN sync_digest;
            ALTER TABLE items DROP COLUMN sync_conflict_version;
            DROP TABLE sync_tombstones; DROP TABLE sync_outgoing; DROP TABLE sync_token; PRAGMA user_version = 2;
            """, database: old.keychainPath)
        #expect(downgrade.status == 0, "\(downgrade)")
        defer { withExtendedLifetime((server, old)) {} }
        let a = try SyncDevice(extra: device)
        try? FileManager.default.removeItem(atPath: a.container.path)
        try FileManager.default.copyItem(atPath: old.path, toPath: a.container.path)
        let b = try SyncDevice()
        try a.ok("sync", "init-server", "--server", server.conninfo)
        #expect(try a.join(server).status == 0)
        #expect(try b.join(server).status == 0)
        try a.container.addTrip("Oslo")
        #expect(try a.container.sqlite("PRAGMA user_version", database: a.container.keychainPath).trimmedStdout == "6")
        #expect(try Self.pendingKeychainItems(a) == 1)
        let pushed = try a.sync()
        #expect(pushed["secretsPushed"] as? Int == 1, "\(pushed)")
        try b.sync()
        #expect(try Self.get(b, "sync", "ana").trimmedStdout == "travelling-secret")
        #expect(try b.container.sqlite("SELECT count(*) FROM trips").trimmedStdout == "1")
    }

    /// While the container key is locked on a device, its keychain items are neither sent nor
    /// received, and the keychain's token waits: once `keychain recover` unlocks it, what was
    /// pushed meanwhile arrives.
    @Test func aLockedContainerKeyHoldsKeychainItemsBackUntilRecovered() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "local.example.com", "ana", "made-before-the-lock")
        try a.ok("keychain", "set-recovery-passphrase", stdin: "recovery passphrase 42\n")
        // The container key stays wrapped under the passphrase only: locked on A.
        #expect(try a.container.sqlite("DELETE FROM container_key_wraps WHERE wrapped_by = 'device'",
                                       database: a.container.keychainPath).status == 0)
        try Self.set(b, "api.example.com", "ana", "sent-while-locked")
        try b.sync()
        try a.container.addTrip("Lima")
        let locked = try a.sync()
        #expect(locked["keychainLocked"] as? Bool == true && locked["secretsPulled"] as? Int == 0
                && locked["secretsPushed"] as? Int == 0 && locked["pushed"] as? Int == 1, "\(locked)")
        #expect(try a.ok("sync", "now").contains("the container key is locked on this device"))
        #expect(try Self.get(a, "api.example.com", "ana").status == 66)

        try a.ok("keychain", "recover", stdin: "recovery passphrase 42\n")
        let recovered = try a.sync()
        #expect(recovered["keychainLocked"] as? Bool == false && recovered["secretsPulled"] as? Int == 1
                && recovered["secretsPushed"] as? Int == 1, "\(recovered)")
        #expect(try Self.get(a, "api.example.com", "ana").trimmedStdout == "sent-while-locked")
        try b.sync()
        #expect(try Self.get(b, "local.example.com", "ana").trimmedStdout == "made-before-the-lock")
    }

    /// `sync leave` keeps the items; joining again sends them again, merged with what the server has.
    @Test func leavingKeepsTheItemsAndJoiningAgainConverges() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try Self.set(a, "vault", "ana", "kept-on-leave")
        try a.sync()
        try b.sync()
        try b.ok("sync", "leave")
        #expect(try Self.get(b, "vault", "ana").trimmedStdout == "kept-on-leave")
        #expect(try b.join(server).status == 0)
        try b.sync()
        try a.sync()
        #expect(try Self.get(a, "vault", "ana").trimmedStdout == "kept-on-leave")
        #expect(try Self.secretRecords(server) == "1|0")
        #expect(try Self.pendingKeychainItems(b) == 0)
    }
}
