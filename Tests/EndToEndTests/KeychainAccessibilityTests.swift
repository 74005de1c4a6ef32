import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

/// Keychain accessibility (docs/security.md, "Keychain accessibility") with the built executables,
/// the kernel keyring of the run's session and a real PostgreSQL: each accessibility × lock state ×
/// operation (get, list, set, sync of a migratable item, backup, restore on another device,
/// delete), with the outcome a phone would give.
@Suite(.serialized) struct KeychainAccessibilityTests {
    /// The states of the device holding the items.
    enum State: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case noPasscode, unlocked, lockedAfterFirstUnlock, beforeFirstUnlock, unlockedAfterRestart
        var testDescription: String { rawValue }
        var hasPasscode: Bool { self != .noPasscode }
    }

    static let passcode = "river-stone"
    static let accessibilities = ["when-unlocked", "after-first-unlock", "when-unlocked-this-device-only", "after-first-unlock-this-device-only"]

    static func service(_ accessibility: String) -> String { "svc." + accessibility }

    /// Whether an item of `accessibility` opens in `state`.
    static func readable(_ accessibility: String, in state: State) -> Bool {
        switch state {
        case .noPasscode, .unlocked, .unlockedAfterRestart: true
        case .lockedAfterFirstUnlock: accessibility.hasPrefix("after-first-unlock")
        case .beforeFirstUnlock: false
        }
    }

    /// Whether the device can use its root container key (backups): only while unlocked.
    static func unlocked(_ state: State) -> Bool { state != .lockedAfterFirstUnlock && state != .beforeFirstUnlock }

    /// What a restart does: the device's keyring goes (docs/security.md, "The device lock").
    static func restart(_ device: SyncDevice) throws {
        let status = try JSONSerialization.jsonObject(with: Data(try device.ok("device", "status", "--json").utf8)) as? [String: Any]
        let fingerprint = try #require(status?["device"] as? String)
        let anchor = KernelKeyring.Anchor.session
        guard let keyring = try KernelKeyring.search(anchor.serial, type: "keyring", description: "tripboard:device:\(fingerprint)") else { return }
        try KernelKeyring.unlink(keyring, from: anchor.serial)
    }

    static func listing(_ device: SyncDevice) throws -> (items: [String: [String: Any]], others: Int) {
        let result = try device.app("keychain", "list", "--json")
        try #require(result.status == 0, "keychain list: \(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        // The test's items only: the sync zone key and password are the device's own.
        let mine = items.filter { ($0["service"] as? String ?? "").hasPrefix("svc.") }
        return (Dictionary(uniqueKeysWithValues: mine.map { ($0["service"] as? String ?? "", $0) }), object["otherDeviceItems"] as? Int ?? -1)
    }

    static func expectLockedRefusal(_ result: ProcessResult, _ state: State, _ what: String) {
        let hint = state == .beforeFirstUnlock ? "has not been unlocked since it started" : "the device is locked"
        #expect(result.status == 69 && result.stderr.contains(hint) && result.stderr.contains("app device unlock"),
                "\(what) in \(state): \(result)")
    }

    @Test(arguments: State.allCases)
    func eachAccessibilityInEachState(state: State) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        defer { try? Self.restart(a) }
        if state.hasPasscode { try a.ok("device", "passcode", "set", stdin: Self.passcode + "\n") }
        for accessibility in Self.accessibilities {
            try a.ok("keychain", "set", Self.service(accessibility), "ana", "--accessibility", accessibility, stdin: "v1 \(accessibility)\n")
        }
        try a.sync()
        try b.sync()
        // A backup made while unlocked, for a restore on this device in the state below.
        let early = a.container.root.path + "/early.age"
        try a.ok("backup", "--output", early, stdin: BackupRestoreTests.passphrase + "\n", environment: BackupRestoreTests.fast)
        // The migratable items reach B with their accessibility; the this-device-only ones never leave.
        let atB = try Self.listing(b).items
        #expect(Set(atB.keys) == ["svc.when-unlocked", "svc.after-first-unlock"], "\(atB)")
        for service in atB.keys { #expect(atB[service]?["accessibility"] as? String == String(service.dropFirst(4))) }

        switch state {
        case .noPasscode, .unlocked: break
        case .lockedAfterFirstUnlock: try a.ok("device", "lock")
        case .beforeFirstUnlock: try Self.restart(a)
        case .unlockedAfterRestart:
            try Self.restart(a)
            try a.ok("device", "unlock", stdin: Self.passcode + "\n")
        }

        // get and list: before the first unlock the list itself is refused (69), as every get is
        var listed: [String: [String: Any]] = [:]
        if state == .beforeFirstUnlock {
            Self.expectLockedRefusal(try a.app("keychain", "list", "--json"), state, "list")
        } else {
            listed = try Self.listing(a).items
        }
        for accessibility in Self.accessibilities {
            let service = Self.service(accessibility)
            let got = try a.app("keychain", "get", service, "ana")
            if Self.readable(accessibility, in: state) {
                #expect(got.status == 0 && got.stdout == "v1 \(accessibility)", "get \(accessibility) in \(state): \(got)")
            } else {
                Self.expectLockedRefusal(got, state, "get \(accessibility)")
                #expect(!got.stdout.contains("v1"))
            }
            guard state != .beforeFirstUnlock else { continue }
            #expect(listed[service]?["accessibility"] as? String == accessibility)
            #expect(listed[service]?["status"] as? String == (Self.readable(accessibility, in: state) ? "available" : "locked"),
                    "list \(accessibility) in \(state): \(listed[service] ?? [:])")
        }

        // sync of the migratable items: B changes them, A pulls (only while A is unlocked; the
        // records of the store keep syncing while it is locked after a first unlock)
        for accessibility in Self.accessibilities.prefix(2) {
            try b.ok("keychain", "set", Self.service(accessibility), "ana", "--accessibility", accessibility, stdin: "v2 \(accessibility)\n")
        }
        try b.sync()
        try b.container.addTrip("Made on B")
        try b.sync()
        let pulled = try a.app("sync", "now", "--json")
        if state == .beforeFirstUnlock {
            // The zone key is after-first-unlock: nothing syncs before the first unlock.
            Self.expectLockedRefusal(pulled, state, "sync now")
        } else {
            let report = try #require(try JSONSerialization.jsonObject(with: Data(pulled.stdout.utf8)) as? [String: Any], "\(pulled)")
            #expect(pulled.status == 0 && report["keychainWaitsForUnlock"] as? Bool == (state == .lockedAfterFirstUnlock), "\(pulled)")
            #expect(try a.container.sqlite("SELECT count(*) FROM trips WHERE name = 'Made on B'").trimmedStdout == "1")
            for accessibility in Self.accessibilities.prefix(2) where Self.readable(accessibility, in: state) {
                let expected = state == .lockedAfterFirstUnlock ? "v1" : "v2"
                #expect(try a.app("keychain", "get", Self.service(accessibility), "ana").stdout == "\(expected) \(accessibility)", "\(state)")
            }
        }

        // set: refused exactly where get is, and nothing changed then
        for accessibility in Self.accessibilities {
            let service = Self.service(accessibility)
            let set = try a.app("keychain", "set", service, "ana", "--accessibility", accessibility, stdin: "v3 \(accessibility)\n")
            if Self.readable(accessibility, in: state) {
                #expect(set.status == 0, "set \(accessibility) in \(state): \(set)")
            } else {
                Self.expectLockedRefusal(set, state, "set \(accessibility)")
            }
        }

        // backup, and a restore of it on another device
        let file = a.container.root.path + "/backup.age"
        let backup = try a.app("backup", "--output", file, stdin: BackupRestoreTests.passphrase + "\n", environment: BackupRestoreTests.fast)
        if Self.unlocked(state) {
            #expect(backup.status == 0, "backup in \(state): \(backup)")
            let other = try SyncDevice()
            let restored = try other.app("restore", file, stdin: BackupRestoreTests.passphrase + "\n")
            #expect(restored.status == 0, "restore: \(restored)")
            let there = try Self.listing(other)
            #expect(there.others == 3, "the this-device-only items (and the zone key) are A's, unreadable there: \(there)")
            for accessibility in Self.accessibilities.prefix(2) {
                let got = try other.app("keychain", "get", Self.service(accessibility), "ana")
                #expect(got.stdout == "v3 \(accessibility)", "restored \(accessibility): \(got)")
                #expect(there.items[Self.service(accessibility)]?["accessibility"] as? String == accessibility)
            }
        } else {
            Self.expectLockedRefusal(backup, state, "backup")
            #expect(!FileManager.default.fileExists(atPath: file), "a refused backup leaves no file")
            // Restoring migratable items needs this device's class keys: refused before anything is restored.
            let target = a.container.root.path + "/restored"
            let restore = try a.app("restore", early, stdin: BackupRestoreTests.passphrase + "\n", environment: ["TRIPBOARD_CONTAINER": target])
            Self.expectLockedRefusal(restore, state, "restore")
            let left = try FileManager.default.contentsOfDirectory(atPath: a.container.root.path).filter { $0.contains("restored") }
            #expect(left.isEmpty, "nothing restored, nothing staged left: \(left)")
        }

        // delete needs no item's key, only the keychain's database, which is sealed
        // until-first-unlock: allowed in every state but before the first unlock since a start
        if state == .beforeFirstUnlock {
            for accessibility in Self.accessibilities {
                Self.expectLockedRefusal(try a.app("keychain", "delete", Self.service(accessibility), "ana"), state, "delete \(accessibility)")
            }
            Self.expectLockedRefusal(try a.app("keychain", "list"), state, "list")
            try a.ok("device", "unlock", stdin: Self.passcode + "\n")
        }
        for accessibility in Self.accessibilities {
            let deleted = try a.app("keychain", "delete", Self.service(accessibility), "ana")
            #expect(deleted.status == 0, "delete \(accessibility) in \(state): \(deleted)")
        }
        #expect(try Self.listing(a).items.isEmpty)

        // Unlocked again, A sends its deletions; B follows.
        if !Self.unlocked(state) { try a.ok("device", "unlock", stdin: Self.passcode + "\n") }
        #expect(try Self.listing(a).items.isEmpty)
        try a.sync()
        try b.sync()
        #expect(try Self.listing(b).items.isEmpty, "the deletions reached B")
    }
}
