@testable import TripBoardKeychain
@testable import TripBoardDevice
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardTestSupport

/// The keychain in-process: sealing, identity binding, device scope, recovery.
struct KeychainTests {
    /// A container plus device directories and a machine id the test controls.
    struct Fixture {
        let temporary: TemporaryDirectory
        let container: Container

        init() throws {
            temporary = try TemporaryDirectory()
            container = try Container.openForWriting(at: temporary.child("container"), options: ContainerOptions())
            try temporary.write("machine-one\n", to: "machine-id")
        }

        func location(_ name: String = "device", machineID: String = "machine-id") -> DeviceLocation {
            DeviceLocation(directory: temporary.child(name), machineIDFile: temporary.child(machineID))
        }

        func device(_ name: String = "device", machineID: String = "machine-id") throws -> DeviceKey {
            try DeviceKey.loadOrCreate(at: location(name, machineID: machineID))
        }

        func keychain(_ device: DeviceKey? = nil) throws -> Keychain {
            try Keychain(container: container, device: try device ?? self.device())
        }
    }

    static func secret(_ text: String) throws -> SecureBytes { try SecureBytes(copying: Array(text.utf8)) }

    static func text(_ value: SecureBytes) -> String {
        value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test(arguments: KeychainAccessibility.allCases)
    func storedValuesReadBack(accessibility: KeychainAccessibility) throws {
        let fixture = try Fixture()
        let keychain = try fixture.keychain()
        try keychain.set(service: "api", account: "alice", value: try Self.secret("token-1"), accessibility: accessibility)
        #expect(Self.text(try keychain.get(service: "api", account: "alice")) == "token-1")
        try keychain.set(service: "api", account: "alice", value: try Self.secret("token-2"), accessibility: accessibility)
        #expect(Self.text(try keychain.get(service: "api", account: "alice")) == "token-2")
        #expect(try keychain.list().map(\.service) == ["api"])
    }

    @Test func everyFlippedCiphertextByteIsDataCorrupted() throws {
        let fixture = try Fixture()
        let keychain = try fixture.keychain()
        try keychain.set(service: "api", account: "alice", value: try Self.secret("a token of some length"))
        let original = try keychain.connection.statement("SELECT ciphertext FROM items").rows { $0.blob(0) }[0]
        for index in original.indices {
            var flipped = original
            flipped[index] ^= 0x01
            try keychain.connection.statement("UPDATE items SET ciphertext = ?").run([.blob(flipped)])
            #expect(throws: KeychainError.dataCorrupted(service: "api", account: "alice")) {
                try keychain.get(service: "api", account: "alice")
            }
        }
        for bad in [[], Array(original.prefix(10)), Array(original.dropLast())] {
            try keychain.connection.statement("UPDATE items SET ciphertext = ?").run([.blob(bad)])
            #expect(throws: KeychainError.dataCorrupted(service: "api", account: "alice")) {
                try keychain.get(service: "api", account: "alice")
            }
        }
    }

    @Test func ciphertextsSwappedBetweenRowsFailToOpen() throws {
        let fixture = try Fixture()
        let keychain = try fixture.keychain()
        try keychain.set(service: "api", account: "alice", value: try Self.secret("alice-token"))
        try keychain.set(service: "api", account: "bob", value: try Self.secret("bob-token"))
        try keychain.connection.execute("""
            CREATE TEMP TABLE saved AS SELECT account, nonce, ciphertext FROM items;
            UPDATE items SET nonce = (SELECT nonce FROM saved WHERE saved.account <> items.account),
                             ciphertext = (SELECT ciphertext FROM saved WHERE saved.account <> items.account);
            """)
        for account in ["alice", "bob"] {
            #expect(throws: KeychainError.dataCorrupted(service: "api", account: account)) {
                try keychain.get(service: "api", account: account)
            }
        }
    }

    /// Another device sees nothing of this device's items — and destroys nothing: they stay, and
    /// this device still reads them. Before, opening the keychain purged them.
    @Test func anotherDeviceKeyFindsNothingAndKeepsTheItems() throws {
        let fixture = try Fixture()
        try fixture.keychain().set(service: "api", account: "alice", value: try Self.secret("token"))
        let other = try fixture.keychain(try fixture.device("other-device"))
        #expect(throws: KeychainError.sealedOnAnotherDevice(service: "api", account: "alice")) { try other.get(service: "api", account: "alice") }
        #expect(try other.list().isEmpty)
        #expect(try other.otherDevicesItemCount() == 1)
        #expect(throws: KeychainError.sealedOnAnotherDevice(service: "api", account: "alice")) { try other.delete(service: "api", account: "alice") }
        #expect(try other.deleteAll() == 0)
        #expect(try other.connection.integer("SELECT count(*) FROM items") == 1, "kept")
        #expect(Self.text(try fixture.keychain().get(service: "api", account: "alice")) == "token")
    }

    /// A device with no key yet (a read with the wrong `$HOME`) creates none and sees nothing.
    @Test func aDeviceWithoutAKeyReadsWithoutCreatingOne() throws {
        let fixture = try Fixture()
        try fixture.keychain().set(service: "api", account: "alice", value: try Self.secret("token"))
        let stranger = try Keychain(container: fixture.container, device: fixture.location("nowhere"))
        #expect(throws: KeychainError.sealedOnAnotherDevice(service: "api", account: "alice")) { try stranger.get(service: "api", account: "alice") }
        #expect(try stranger.list().isEmpty && stranger.otherDevicesItemCount() == 1)
        #expect(throws: KeychainError.noDeviceKey(path: fixture.temporary.child("nowhere") + "/device.key")) { try stranger.forgetOtherDevices() }
        #expect(!FileManager.default.fileExists(atPath: fixture.temporary.child("nowhere")))
    }

    /// The one way to remove other devices' items, and a write that creates a device key beside
    /// them says so.
    @Test func forgettingOtherDevicesRemovesOnlyTheirItems() throws {
        let fixture = try Fixture()
        try fixture.keychain().set(service: "api", account: "alice", value: try Self.secret("old device"))
        try fixture.keychain().set(service: "sync", account: "bob", value: try Self.secret("shared"), accessibility: .afterFirstUnlock)
        var notices: [String] = []
        let fresh = try Keychain(container: fixture.container, device: fixture.location("fresh")) { notices.append($0) }
        try fresh.set(service: "api", account: "carol", value: try Self.secret("new device"))
        #expect(notices.count == 1 && notices[0].includes("beside 1 item sealed on another device"), "\(notices)")
        #expect(try fresh.forgetOtherDevices() == 1)
        #expect(try fresh.otherDevicesItemCount() == 0)
        #expect(try fresh.list().map(\.account) == ["carol", "bob"], "by service: api, then sync")
        #expect(try fresh.connection.integer("SELECT count(*) FROM items") == 2, "carol's and the migratable item stay")
    }

    @Test func aChangedMachineIDIsAnotherDevice() throws {
        let fixture = try Fixture()
        try fixture.keychain().set(service: "api", account: "alice", value: try Self.secret("token"))
        try fixture.temporary.write("machine-two\n", to: "other-machine-id")
        let moved = try fixture.keychain(try fixture.device(machineID: "other-machine-id"))
        #expect(throws: KeychainError.sealedOnAnotherDevice(service: "api", account: "alice")) { try moved.get(service: "api", account: "alice") }
    }

    /// Every write advances the generation and this device's record follows; a keychain behind
    /// its record is refused, except by the two ways of taking it on purpose: a restore (new
    /// identity) and `acceptRollback`.
    @Test func aRestoredKeychainIsNeverTakenForARollback() throws {
        let fixture = try Fixture()
        let device = try fixture.device()
        let keychain = try fixture.keychain(device)
        try keychain.set(service: "api", account: "alice", value: try Self.secret("one"))
        try keychain.set(service: "api", account: "bob", value: try Self.secret("two"))
        let before = try keychain.identity()
        #expect(before.generation == 2)
        #expect(try keychain.generations.recorded(for: before.id) == 2)
        // What a restore of an older backup leaves: the same id, an earlier generation.
        try keychain.connection.execute("UPDATE keychain_state SET generation = 1")
        #expect(throws: KeychainError.rolledBack(path: keychain.connection.path, found: 1, recorded: 2)) { try fixture.keychain(device) }

        let restored = try Keychain.openRestored(container: fixture.container, device: device)
        let after = try restored.identity()
        #expect(after.id != before.id && after.generation == 2)
        #expect(try restored.generations.recorded(for: after.id) == 2)
        #expect(Self.text(try fixture.keychain(device).get(service: "api", account: "bob")) == "two")
        #expect(try fixture.keychain(device).rollback() == nil)
    }

    /// Raising the record reads it first: a damaged record is replaced, but one that cannot be
    /// read for another reason (here a symbolic link, which is never followed; in life EIO or
    /// EMFILE) is left as it is and the raise fails — taken for "no record", a record of 100
    /// would have been lowered to 3, and a keychain put back at 3 would no longer read as rolled back.
    @Test func aRecordThatCannotBeReadIsNeverLowered() throws {
        let fixture = try Fixture()
        let device = try fixture.device()
        let generations = try fixture.keychain(device).generations
        let id = String(repeating: "ab", count: 16)
        let record = generations.path(for: id)
        try fixture.temporary.write("100\n", to: "elsewhere")
        try FileManager.default.createSymbolicLink(atPath: record, withDestinationPath: fixture.temporary.child("elsewhere"))
        #expect(throws: (any Error).self) { try generations.raise(id, to: 3) }
        #expect(throws: (any Error).self) { try generations.replace(id, with: 3) }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: record) == fixture.temporary.child("elsewhere"))
        #expect(try String(contentsOfFile: fixture.temporary.child("elsewhere"), encoding: .utf8) == "100\n")

        try FileManager.default.removeItem(atPath: record)
        try "1O0\n".write(toFile: record, atomically: false, encoding: .utf8)
        #expect(throws: KeychainError.damagedGenerationRecord(path: record)) { try generations.recorded(for: id) }
        try generations.raise(id, to: 3)
        #expect(try generations.recorded(for: id) == 3)
        try generations.raise(id, to: 2)
        #expect(try generations.recorded(for: id) == 3)
    }

    @Test func migratableItemsAreLockedElsewhereUntilRecovered() throws {
        let fixture = try Fixture()
        let home = try fixture.keychain()
        try home.set(service: "sync", account: "bob", value: try Self.secret("shared"), accessibility: .afterFirstUnlock)
        try home.setRecoveryPassphrase(try Self.secret("correct horse battery"), parameters: .fastForTesting())

        let away = try fixture.keychain(try fixture.device("new-device"))
        #expect(throws: KeychainError.locked(service: "sync", account: "bob")) { try away.get(service: "sync", account: "bob") }
        #expect(try away.list().map(\.status) == ["locked"])
        #expect(throws: KeychainError.wrongPassphrase) { try away.recover(passphrase: try Self.secret("wrong passphrase")) }
        try away.recover(passphrase: try Self.secret("correct horse battery"))
        #expect(Self.text(try away.get(service: "sync", account: "bob")) == "shared")
        #expect(Self.text(try home.get(service: "sync", account: "bob")) == "shared", "the first device still reads it")
    }

    @Test func storingMigratableItemsNeedsTheContainerKeyUnlockedHere() throws {
        let fixture = try Fixture()
        try fixture.keychain().set(service: "sync", account: "bob", value: try Self.secret("shared"), accessibility: .afterFirstUnlock)
        let away = try fixture.keychain(try fixture.device("new-device"))
        #expect(throws: KeychainError.containerKeyLocked) {
            try away.set(service: "sync", account: "carol", value: try Self.secret("more"), accessibility: .afterFirstUnlock)
        }
        #expect(throws: KeychainError.containerKeyLocked) {
            try away.setRecoveryPassphrase(try Self.secret("long enough passphrase"), parameters: .fastForTesting())
        }
        // This-device-only items need no container key.
        try away.set(service: "api", account: "alice", value: try Self.secret("token"))
    }

    @Test func aTamperedContainerKeyWrapIsDataCorrupted() throws {
        let fixture = try Fixture()
        let keychain = try fixture.keychain()
        try keychain.set(service: "sync", account: "bob", value: try Self.secret("shared"), accessibility: .afterFirstUnlock)
        try keychain.connection.execute("UPDATE container_key_wraps SET ciphertext = zeroblob(length(ciphertext))")
        #expect(throws: KeychainError.dataCorrupted(service: "sync", account: "bob")) { try keychain.get(service: "sync", account: "bob") }
    }

    @Test func recoveryWithoutAPassphraseSaysSo() throws {
        let fixture = try Fixture()
        #expect(throws: KeychainError.noRecoveryPassphrase) { try fixture.keychain().recover(passphrase: try Self.secret("anything at all")) }
        #expect(throws: KeychainError.self) { try fixture.keychain().setRecoveryPassphrase(try Self.secret("short")) }
    }

    @Test func deviceKeyFileIsPrivateAndStable() throws {
        let fixture = try Fixture()
        let first = try fixture.device()
        let second = try fixture.device()
        #expect(first.fingerprint == second.fingerprint)
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.temporary.child("device/device.key"))
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(attributes[.size] as? Int == 32)
    }

    @Test func readableOrWronglySizedDeviceKeysAreRefused() throws {
        let fixture = try Fixture()
        _ = try fixture.device()
        let keyPath = fixture.temporary.child("device/device.key")
        chmod(keyPath, 0o644)
        #expect {
            try fixture.device()
        } throws: { error in
            guard case DeviceError.insecureDeviceKey(_, let reason) = error else { return false }
            return reason.includes("group or others")
        }
        chmod(keyPath, 0o600)
        try fixture.temporary.write(Array(repeating: 7, count: 31), to: "device/device.key")
        chmod(keyPath, 0o600)
        #expect {
            try fixture.device()
        } throws: { error in
            guard case DeviceError.badDeviceKey(_, let reason) = error else { return false }
            return reason.includes("shorter than 32")
        }
    }

    @Test func associatedDataEncodingIsUnambiguous() {
        let a = Keychain.itemAssociatedData(service: "ab", account: "c", accessibility: .afterFirstUnlockThisDeviceOnly, legacy: true, keyID: "k", keybag: nil, rowID: 1)
        let b = Keychain.itemAssociatedData(service: "a", account: "bc", accessibility: .afterFirstUnlockThisDeviceOnly, legacy: true, keyID: "k", keybag: nil, rowID: 1)
        #expect(a != b)
    }

    @Test(arguments: ["", String(repeating: "x", count: 257), "tab\there"])
    func badNamesAreRefused(name: String) throws {
        let fixture = try Fixture()
        #expect(throws: KeychainError.self) {
            try fixture.keychain().set(service: name, account: "a", value: try Self.secret("v"))
        }
    }
}
