import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

/// A keychain sealed before protection classes (Tests/Fixtures/keychain-before-classes, made by an
/// earlier release build) opened by this one: read as it was, converted in place at the first open
/// that can, crash-safe, and the recovery passphrase still opening its migratable item.
struct KeychainConversionTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/keychain-before-classes").standardized.path
    static let recoveryPassphrase = "recovery words here"

    /// The fixture's keychain put into `test`'s container and its device directory beside it;
    /// returns the environment of that device.
    static func install(into test: TestContainer) throws -> [String: String] {
        let files = FileManager.default
        let device = test.root.path + "/device-old"
        try files.createDirectory(atPath: device, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for name in try files.contentsOfDirectory(atPath: fixture + "/device") {
            try files.copyItem(atPath: fixture + "/device/" + name, toPath: device + "/" + name)
            try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: device + "/" + name)
        }
        try files.copyItem(atPath: fixture + "/machine-id", toPath: test.root.path + "/machine-id-old")
        let environment = ["TRIPBOARD_DEVICE_DIR": device, "TRIPBOARD_MACHINE_ID_FILE": test.root.path + "/machine-id-old"]
        // The container made by that device: its store is sealed under the device's keys.
        if !files.fileExists(atPath: test.path) { #expect(try test.app(arguments: ["container", "init"], environment: environment).status == 0) }
        try files.copyItem(atPath: fixture + "/Keychain.sqlite", toPath: test.keychainPath)
        try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: test.keychainPath)
        return environment
    }

    /// `protection` of each item, by service (`-` for none: not converted).
    static func protections(_ test: TestContainer) throws -> String {
        try test.sqlite("SELECT group_concat(service || '=' || coalesce(protection, '-'), ' ') FROM (SELECT * FROM items ORDER BY service)",
                        database: test.keychainPath).trimmedStdout
    }

    static func deviceWraps(_ test: TestContainer) throws -> String {
        try test.sqlite("SELECT count(*) FROM container_key_wraps WHERE wrapped_by = 'device'", database: test.keychainPath).trimmedStdout
    }

    static func expectValues(_ test: TestContainer, _ device: [String: String], _ context: String) throws {
        #expect(try test.app(arguments: ["keychain", "get", "api", "ana"], environment: device).stdout == "device-secret", "\(context)")
        #expect(try test.app(arguments: ["keychain", "get", "sync", "ana"], environment: device).stdout == "travelling-secret", "\(context)")
    }

    /// No passcode: the keychain's first open converts both items and the container key's wrap
    /// (the device's keybag exists since its container was made); values, names and recovery hold.
    @Test func aDeviceWithoutPasscodeConvertsAtItsFirstWrite() throws {
        let test = try TestContainer()
        let device = try Self.install(into: test)
        let listed = try test.app(arguments: ["keychain", "list"], environment: device)
        #expect(listed.status == 0 && listed.stdout.contains("after-first-unlock-this-device-only")
                    && listed.stdout.contains(" after-first-unlock "), "the earlier names, read as their new ones: \(listed)")
        try Self.expectValues(test, device, "before the conversion")
        // The device's keybag was made with the container (its store is sealed under the class
        // keys), so the keychain's first open, a read's too, moves the items to them.
        #expect(FileManager.default.fileExists(atPath: device["TRIPBOARD_DEVICE_DIR"]! + "/keybag.json"))
        #expect(try Self.protections(test) == "api=after-first-unlock sync=after-first-unlock")

        #expect(try test.app(arguments: ["keychain", "set", "other", "ana"], stdin: "x", environment: device).status == 0)
        #expect(try Self.protections(test) == "api=after-first-unlock other=after-first-unlock sync=after-first-unlock")
        #expect(try Self.deviceWraps(test) == "2", "the wrap under the device key alone replaced by one per class")
        try Self.expectValues(test, device, "after the conversion")

        // The recovery passphrase still opens the migratable item on another device (a copy in
        // the clear: a sealed container opens on its own device only).
        try test.unsealDatabases(environment: device)
        let other = try TestContainer()
        try FileManager.default.removeItem(atPath: other.root.path)
        try FileManager.default.copyItem(atPath: test.root.path, toPath: other.root.path)
        let elsewhere = try BackupRestoreTests.device(other, "elsewhere", machine: "fedcba9876543210fedcba9876543210")
        #expect(try other.app(arguments: ["keychain", "get", "sync", "ana"], environment: elsewhere).status == 69)
        let recovered = try other.app(arguments: ["keychain", "recover"], stdin: Self.recoveryPassphrase + "\n", environment: elsewhere)
        #expect(recovered.status == 0, "\(recovered)")
        #expect(try other.app(arguments: ["keychain", "get", "sync", "ana"], environment: elsewhere).stdout == "travelling-secret")
    }

    /// With a passcode: nothing converts while locked (the items read as they did: after first
    /// unlock); the first open while unlocked converts; from then on a restart locks them.
    @Test func aLockedDeviceWaitsForItsUnlockToConvert() throws {
        let test = try TestContainer()
        let device = try Self.install(into: test)
        #expect(try test.app(arguments: ["device", "passcode", "set"], stdin: "river-stone\n", environment: device).status == 0)
        defer { _ = try? test.app(arguments: ["device", "lock"], environment: device) }
        #expect(try test.app(arguments: ["device", "lock"], environment: device).status == 0)
        try Self.expectValues(test, device, "locked, before the conversion")
        #expect(try test.app(arguments: ["keychain", "set", "api", "ana"], stdin: "device-secret", environment: device).status == 0,
                "an after-first-unlock item is written while locked")
        #expect(try Self.protections(test) == "api=after-first-unlock sync=-", "the written one is sealed anew, the other waits")
        // The container key's old wrap opens under the device key alone, but a when-unlocked
        // item still waits for the unlock.
        let whenUnlocked = try test.app(arguments: ["keychain", "set", "web", "ana", "--accessibility", "when-unlocked"], stdin: "w",
                                        environment: device)
        #expect(whenUnlocked.status == 69 && whenUnlocked.stderr.contains("the device is locked"), "\(whenUnlocked)")

        #expect(try test.app(arguments: ["device", "unlock"], stdin: "river-stone\n", environment: device).status == 0)
        #expect(try test.app(arguments: ["keychain", "list"], environment: device).status == 0)
        #expect(try Self.protections(test) == "api=after-first-unlock sync=after-first-unlock")
        #expect(try Self.deviceWraps(test) == "2")
        try Self.expectValues(test, device, "unlocked, converted")
        #expect(try test.app(arguments: ["device", "lock"], environment: device).status == 0)
        try Self.expectValues(test, device, "locked after the first unlock")
    }

    /// Killed in the middle of the conversion: nothing of it is left, and the next open does it all.
    @Test func aConversionKilledHalfwayLeavesTheOldFormWhole() throws {
        let test = try TestContainer()
        let device = try Self.install(into: test)
        let killed = try test.app(arguments: ["keychain", "set", "other", "ana"], stdin: "x",
                                  environment: device.merging(["TRIPBOARD_CRASH_AT": "keychain.converting"]) { $1 })
        #expect(killed.status != 0, "\(killed)")
        #expect(try Self.protections(test) == "api=- sync=-")
        try Self.expectValues(test, device, "after the kill")
        #expect(try test.app(arguments: ["keychain", "set", "other", "ana"], stdin: "x", environment: device).status == 0)
        #expect(try Self.protections(test) == "api=after-first-unlock other=after-first-unlock sync=after-first-unlock")
        try Self.expectValues(test, device, "converted after the kill")
    }
}
