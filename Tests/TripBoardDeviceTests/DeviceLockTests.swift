@testable import TripBoardDevice
import Foundation
import Testing
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardTestSupport

/// The lock in-process: which class keys a process gets in each state, read from the kernel.
@Suite(.enabled(if: KernelKeyring.unavailability(anchor: .session) == nil, "the kernel keyring is unavailable here"))
struct DeviceLockStateTests {
    static func lock(_ temporary: TemporaryDirectory) throws -> DeviceLock {
        try temporary.write("machine-two\n", to: "machine-id")
        let device = try DeviceKey.loadOrCreate(at: DeviceLocation(directory: temporary.child("device"), machineIDFile: temporary.child("machine-id")))
        return try DeviceLock(device: device, anchor: .session, passcodeDerivation: { try Argon2id.deriveKey(passphrase: $0, parameters: $1) })
    }

    static func drop(_ lock: DeviceLock) throws {
        if let keyring = try lock.deviceKeyring() { try KernelKeyring.unlink(keyring, from: KernelKeyring.Anchor.session.serial) }
    }

    @Test func eachStateOpensItsClassesAndNoOthers() throws {
        let temporary = try TemporaryDirectory()
        let lock = try Self.lock(temporary)
        defer { try? Self.drop(lock) }

        // No passcode: every class, from the keybag made on first use.
        let always = try lock.classKey(.always)
        let complete = try lock.classKey(.complete)
        #expect(try lock.classKey(.complete) == complete, "the keybag made once is used from then on")

        let before = try #require(try lock.keybag())
        let passcode = try SecureBytes(copying: Array("river-stone".utf8))
        _ = try lock.setPasscode(passcode)
        // New keys under the passcode; the old ones live on in the new keybag, opened by its own.
        #expect(try lock.classKey(.complete) != complete, "new class keys with the passcode")
        #expect(try lock.classKey(.complete, sealedUnder: before.id) == complete)
        #expect(try lock.classKey(.always, sealedUnder: before.id) == always)
        let (alwaysNow, completeNow) = (try lock.classKey(.always), try lock.classKey(.complete))
        let open = try lock.classKey(.completeUnlessOpen)
        #expect(try SealedBox.publicKey(of: open) == (try lock.keybag())?.completeUnlessOpenPublicKey)

        try lock.lock()
        #expect(throws: DeviceError.locked) { try lock.classKey(.complete) }
        #expect(throws: DeviceError.locked) { try lock.classKey(.completeUnlessOpen) }
        #expect(try lock.classKey(.untilFirstUnlock) == (try lock.keybag()!.open([.untilFirstUnlock], device: lock.device,
            passcodeKey: try Argon2id.deriveKey(passphrase: passcode, parameters: (try lock.keybag())!.passcode!)))[.untilFirstUnlock])
        #expect(try lock.classKey(.always) == alwaysNow)

        try Self.drop(lock)
        #expect(throws: DeviceError.notUnlockedSinceStart) { try lock.classKey(.untilFirstUnlock) }
        #expect(try lock.classKey(.always) == alwaysNow, "always: even before the first unlock")

        _ = try lock.unlock(passcode)
        #expect(try lock.classKey(.complete) == completeNow)
    }

    @Test func theKernelKeyringKeepsWhatItIsGivenForAsLongAsItIsTold() throws {
        let ring = try KernelKeyring.addKeyring("tripboard:test:\(UUID().uuidString)", into: KernelKeyring.Anchor.session.serial)
        defer { try? KernelKeyring.unlink(ring, from: KernelKeyring.Anchor.session.serial) }
        let payload: [UInt8] = Array(0..<32)
        let key = try payload.withUnsafeBytes { try KernelKeyring.addUserKey("k", payload: $0, into: ring) }
        #expect(try KernelKeyring.search(ring, type: "user", description: "k") == key)
        var buffer = [UInt8](repeating: 0, count: 32)
        #expect(try buffer.withUnsafeMutableBytes { try KernelKeyring.read(key, into: $0) } == 32)
        #expect(buffer == payload)
        try KernelKeyring.setTimeout(key, seconds: 1)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try KernelKeyring.search(ring, type: "user", description: "k") == nil, "expired")
        #expect(try buffer.withUnsafeMutableBytes { try KernelKeyring.read(key, into: $0) } == nil)
        let other = try payload.withUnsafeBytes { try KernelKeyring.addUserKey("other", payload: $0, into: ring) }
        try KernelKeyring.invalidate(other)
        try KernelKeyring.invalidate(other)
        #expect(try KernelKeyring.search(ring, type: "user", description: "other") == nil, "invalidated, twice without complaint")
    }
}
