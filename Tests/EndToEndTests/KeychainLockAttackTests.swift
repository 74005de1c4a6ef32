import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

/// What an independent attack on the device lock and keychain classes tried (docs/security.md,
/// "Keychain accessibility", "The keybag"): an old keybag put back, a key planted in the kernel,
/// a keybag taken away, a when-unlocked item overwritten while locked, a damaged wrap beside an
/// item sealed before classes, a damaged keybag before the widget, a restore's dry run while
/// locked. Each with the built executables.
@Suite(.serialized) struct KeychainLockAttackTests {
    static let passcode = "river-stone"

    final class Phone: @unchecked Sendable {
        // @unchecked: immutable after init.
        let device: SyncDevice
        var directory: String { device.container.environment["TRIPBOARD_DEVICE_DIR"]! }
        init() throws { device = try SyncDevice() }
        deinit { try? KeychainAccessibilityTests.restart(device) }

        @discardableResult
        func app(_ arguments: String..., stdin: String? = nil) throws -> ProcessResult {
            try device.container.app(arguments: arguments, stdin: stdin)
        }
        func set(_ service: String, _ value: String, _ accessibility: String) throws -> ProcessResult {
            try app("keychain", "set", service, "ana", "--accessibility", accessibility, stdin: value + "\n")
        }
        func get(_ service: String) throws -> ProcessResult { try app("keychain", "get", service, "ana") }
        var keybagPath: String { directory + "/keybag.json" }
        func status() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try app("device", "status", "--json").stdout.utf8)) as? [String: Any])
        }
    }

    /// A copy of the keybag from before the passcode (an old backup of the device directory) put
    /// back while locked opens nothing sealed since: the passcode brought new class keys, and the
    /// items and the container key's wraps were moved to them.
    @Test func anOldKeybagPutBackOpensNothingSealedSince() throws {
        let phone = try Phone()
        #expect(try phone.set("before", "sealed-before", "when-unlocked-this-device-only").status == 0)
        #expect(try phone.set("before.mig", "migratable-before", "when-unlocked").status == 0)
        let old = try Data(contentsOf: URL(fileURLWithPath: phone.keybagPath))
        try phone.app("device", "passcode", "set", stdin: Self.passcode + "\n")
        #expect(try phone.set("after", "SECRET-AFTER", "when-unlocked-this-device-only").status == 0)
        #expect(try phone.set("after.mig", "MIGRATABLE-AFTER", "when-unlocked").status == 0)
        // Everything reads under the new keys, old items included.
        for (service, value) in [("before", "sealed-before"), ("before.mig", "migratable-before"), ("after", "SECRET-AFTER")] {
            #expect(try phone.get(service).stdout == value, "\(service)")
        }
        try phone.app("device", "lock")
        try old.write(to: URL(fileURLWithPath: phone.keybagPath))
        for service in ["before", "before.mig", "after", "after.mig"] {
            let got = try phone.get(service)
            #expect(got.status != 0 && !got.stdout.contains("before") && !got.stdout.contains("AFTER"), "\(service) read with the old keybag: \(got)")
        }

        // The same after a passcode change: the old keybag with the old passcode opens nothing new.
        let changed = try Phone()
        try changed.app("device", "passcode", "set", stdin: "old-passcode\n")
        let beforeChange = try Data(contentsOf: URL(fileURLWithPath: changed.keybagPath))
        #expect(try changed.app("device", "passcode", "change", stdin: "old-passcode\nnew-passcode\n").status == 0)
        #expect(try changed.status()["state"] as? String == "unlocked", "a change leaves the device unlocked under the new keys")
        #expect(try changed.set("k1", "AFTER-CHANGE", "when-unlocked-this-device-only").status == 0)
        try changed.app("device", "lock")
        try beforeChange.write(to: URL(fileURLWithPath: changed.keybagPath))
        try KeychainAccessibilityTests.restart(changed.device)
        #expect(try changed.app("device", "unlock", stdin: "old-passcode\n").status == 0, "the old keybag still opens with its passcode")
        let got = try changed.get("k1")
        #expect(got.status != 0 && !got.stdout.contains("AFTER-CHANGE"), "\(got)")
    }

    /// A key put into the device's keyring under a class's name is not the keybag's (its check
    /// value differs): the device stays locked, and nothing is read or sealed with it.
    @Test func aKeyPlantedInTheKernelIsNotTaken() throws {
        let phone = try Phone()
        try phone.app("device", "passcode", "set", stdin: Self.passcode + "\n")
        #expect(try phone.set("tdo", "real", "when-unlocked-this-device-only").status == 0)
        try phone.app("device", "lock")
        let status = try phone.status()
        let fingerprint = try #require(status["device"] as? String)
        let keyring = try #require(try KernelKeyring.search(KernelKeyring.Anchor.session.serial, type: "keyring",
                                                            description: "tripboard:device:\(fingerprint)"))
        let keybag = try #require(status["keybag"] as? String)
        _ = try [UInt8](repeating: 0x5a, count: 32).withUnsafeBytes { bytes in
            try KernelKeyring.addUserKey("tripboard:\(keybag):complete", payload: bytes, timeout: 0, into: keyring)
        }
        #expect(try phone.status()["state"] as? String == "locked")
        let got = try phone.get("tdo")
        #expect(got.status == 69 && got.stderr.contains("the device is locked"), "\(got)")
        let written = try phone.set("new", "x", "when-unlocked-this-device-only")
        #expect(written.status == 69, "\(written)")
        #expect(try phone.app("device", "unlock", stdin: Self.passcode + "\n").status == 0)
        #expect(try phone.get("tdo").stdout == "real")
    }

    /// A keybag taken away is said, not replaced by a new one without a passcode.
    @Test func aMissingKeybagIsSaidNotReplaced() throws {
        let phone = try Phone()
        try phone.app("device", "passcode", "set", stdin: Self.passcode + "\n")
        #expect(try phone.set("wu", "v", "when-unlocked-this-device-only").status == 0)
        try phone.app("device", "lock")
        try FileManager.default.moveItem(atPath: phone.keybagPath, toPath: phone.directory + "/../keybag.saved")
        let written = try phone.set("other", "NEW", "when-unlocked-this-device-only")
        #expect(written.status == 66 && written.stderr.contains("keybag") && written.stderr.contains("is missing"), "\(written)")
        #expect(!FileManager.default.fileExists(atPath: phone.keybagPath), "no new keybag made")
        // The keychain's database is sealed under the keybag's class keys: without it, nothing opens.
        let listed = try phone.app("keychain", "list")
        #expect(listed.status == 66 && listed.stderr.contains("is missing"), "\(listed)")
        let status = try phone.app("device", "status")
        #expect(status.stderr.contains("is missing"), "\(status)")
        // Another container on the same device, and `passcode set`, do not make a new one either.
        let elsewhere = try phone.device.container.app(arguments: ["keychain", "set", "c", "c"], stdin: "z",
                                                       environment: ["TRIPBOARD_CONTAINER": phone.device.container.root.path + "/container3"])
        #expect(elsewhere.status == 66 && elsewhere.stderr.contains("is missing"), "\(elsewhere)")
        let set = try phone.app("device", "passcode", "set", stdin: "ffffff-1\n")
        #expect(set.status == 66, "\(set)")
        #expect(!FileManager.default.fileExists(atPath: phone.keybagPath), "no new keybag made")
        try FileManager.default.moveItem(atPath: phone.directory + "/../keybag.saved", toPath: phone.keybagPath)
        #expect(try phone.app("device", "unlock", stdin: Self.passcode + "\n").status == 0)
        #expect(try phone.get("wu").stdout == "v")
    }

    /// However often the passcode changes, the keybag stays far below its bound: the newest 32
    /// earlier keybags are kept (a keychain opened within 32 changes keeps everything).
    @Test func manyPasscodeChangesKeepTheKeybagReadable() throws {
        let phone = try Phone()
        try phone.app("device", "passcode", "set", stdin: "pw000000\n")
        #expect(try phone.set("early", "kept", "after-first-unlock-this-device-only").status == 0)
        var previous = "pw000000"
        for round in 1...36 {
            let next = String(format: "pw%06d", round)
            let changed = try phone.app("device", "passcode", "change", stdin: previous + "\n" + next + "\n")
            try #require(changed.status == 0, "change \(round): \(changed)")
            previous = next
            // Opened now and then, as a keychain in use is: each open moves it to the newest keys.
            if round % 10 == 0 { #expect(try phone.get("early").stdout == "kept", "round \(round)") }
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: phone.keybagPath)[.size] as? Int)
        #expect(size < 48 << 10, "\(size) bytes")
        #expect(try phone.get("early").stdout == "kept")
    }

    /// A when-unlocked item is not overwritten while locked, whatever accessibility the new value asks.
    @Test func aWhenUnlockedItemIsNotOverwrittenWhileLocked() throws {
        let phone = try Phone()
        try phone.app("device", "passcode", "set", stdin: Self.passcode + "\n")
        #expect(try phone.set("svc", "original", "when-unlocked").status == 0)
        try phone.app("device", "lock")
        for accessibility in ["after-first-unlock", "after-first-unlock-this-device-only", "when-unlocked"] {
            let over = try phone.set("svc", "OVER", accessibility)
            #expect(over.status == 69, "\(accessibility): \(over)")
        }
        #expect(try phone.app("keychain", "list").stdout.contains("when-unlocked "))
        #expect(try phone.app("device", "unlock", stdin: Self.passcode + "\n").status == 0)
        #expect(try phone.get("svc").stdout == "original")
    }

    /// An item sealed before classes beside a damaged wrap: the conversion leaves what it cannot
    /// open, and every command goes on (list says `damaged`, delete works).
    @Test func aDamagedWrapDoesNotStopTheConversionOrTheCommands() throws {
        let test = try TestContainer()
        let device = try KeychainConversionTests.install(into: test)
        #expect(try test.sqlite("UPDATE container_key_wraps SET ciphertext = zeroblob(48) WHERE wrapped_by = 'device'",
                                database: test.keychainPath).status == 0)
        let set = try test.app(arguments: ["keychain", "set", "other", "ana"], stdin: "x", environment: device)
        #expect(set.status == 0, "\(set)")
        let listed = try test.app(arguments: ["keychain", "list"], environment: device)
        #expect(listed.status == 0 && listed.stdout.contains("damaged"), "\(listed)")
        #expect(try test.app(arguments: ["keychain", "get", "api", "ana"], environment: device).stdout == "device-secret")
        #expect(try test.app(arguments: ["keychain", "delete", "sync", "ana"], environment: device).status == 0)
    }

    /// A keybag the widget cannot read shows the placeholder, not the trip.
    @Test func theWidgetShowsThePlaceholderForAKeybagItCannotRead() throws {
        let phone = try Phone()
        try phone.device.container.addTrip("Lisbon", start: "2027-03-27", end: "2027-03-30")
        try phone.app("device", "passcode", "set", stdin: Self.passcode + "\n")
        try Data("{".utf8).write(to: URL(fileURLWithPath: phone.keybagPath))
        let widget = try ProcessRunner.run("widget", ["--now", "2027-03-01T09:00:00Z"], environment: phone.device.container.environment)
        #expect(widget.status == 0 && widget.stdout == "Unlock to see your next trip\n", "\(widget)")
        try FileManager.default.removeItem(atPath: phone.keybagPath)  // so that the phone's keyring can be found and dropped
    }

    /// A restore's dry run on a locked device says what the restore would: 69 for a backup with
    /// migratable items.
    @Test func aRestoresDryRunWhileLockedSaysWhatTheRestoreWould() throws {
        let phone = try Phone()
        try phone.app("device", "passcode", "set", stdin: Self.passcode + "\n")
        #expect(try phone.set("mig", "travelling", "after-first-unlock").status == 0)
        let file = phone.device.container.root.path + "/b.age"
        #expect(try phone.device.container.app(arguments: ["backup", "--output", file], stdin: BackupRestoreTests.passphrase + "\n",
                                               environment: BackupRestoreTests.fast).status == 0)
        try phone.app("device", "lock")
        let target = phone.device.container.root.path + "/elsewhere"
        for extra in [["--dry-run"], []] {
            let restore = try phone.device.container.app(arguments: ["restore", file] + extra, stdin: BackupRestoreTests.passphrase + "\n",
                                                         environment: ["TRIPBOARD_CONTAINER": target])
            #expect(restore.status == 69 && restore.stderr.contains("the device is locked"), "\(extra): \(restore)")
        }
    }
}
