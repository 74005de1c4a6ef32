import TripBoardKeys
import TripBoardSystem

extension DeviceLock {
    /// Puts `keys` (those of the classes that live in the kernel) into the device's keyring, made
    /// first if the kernel has none; the classes that drop at lock, and the `unlocked` marker
    /// holding the deadline, expire after the auto-lock — each key given its expiry before it is
    /// linked where other processes find it. A failure takes back what this call put there.
    func putInKernel(_ keys: Keybag.ClassKeys, keybag: Keybag) throws {
        var added: [KernelKeyring.Serial] = []
        do {
            let description = DeviceLockProbe.keyringName(device: device.fingerprint)
            let keyring = try KernelKeyring.search(anchor.serial, type: "keyring", description: description)
                ?? KernelKeyring.addKeyring(description, into: anchor.serial)
            let timeout = keybag.autoLockSeconds ?? 0
            for protection in [ProtectionClass.untilFirstUnlock, .completeUnlessOpen, .complete] {
                guard let key = keys[protection] else { continue }
                added.append(try key.withUnsafeBytes { bytes throws(KeyringError) in
                    try KernelKeyring.addUserKey(DeviceLockProbe.keyName(keybag: keybag.id, protection.rawValue), payload: bytes,
                                                 timeout: protection.dropsAtLock ? timeout : 0, into: keyring)
                })
            }
            let deadline = keybag.autoLockSeconds.map { clock().secondsSinceEpoch + Int64($0) }
            let marker = Array((deadline.map { "until \($0)" } ?? "never").utf8)
            added.append(try marker.withUnsafeBytes { bytes throws(KeyringError) in
                try KernelKeyring.addUserKey(DeviceLockProbe.keyName(keybag: keybag.id, "unlocked"), payload: bytes, timeout: timeout, into: keyring)
            })
        } catch let error as KeyringError {
            for serial in added { try? KernelKeyring.invalidate(serial) }
            throw DeviceError.from(error)
        }
    }

    /// Invalidates the kernel's keys of `classes` (nil: every class) and the `unlocked` marker;
    /// true when one of those classes' keys was there.
    @discardableResult
    func dropFromKernel(keybag: Keybag, classes: [ProtectionClass]?) throws -> Bool {
        try requireKeyring()
        guard let keyring = try deviceKeyring() else { return false }
        var dropped = false
        do {
            for name in (classes ?? ProtectionClass.allCases).map(\.rawValue) + ["unlocked"] {
                guard let serial = try kernelKey(name, keybag: keybag, in: keyring) else { continue }
                try KernelKeyring.invalidate(serial)
                if name != "unlocked" { dropped = true }
            }
        } catch let error as KeyringError {
            throw DeviceError.from(error)
        }
        return dropped
    }

    /// A class key read from the kernel into guarded memory; nil when it expired meanwhile.
    static func readKey(_ serial: KernelKeyring.Serial) throws -> SecureBytes? {
        var failure: KeyringError?
        var length: Int?
        do {
            return try SecureBytes(count: 32) { buffer throws(CryptoError) in
                do throws(KeyringError) {
                    length = try KernelKeyring.read(serial, into: UnsafeMutableRawBufferPointer(buffer))
                } catch {
                    failure = error
                }
                // Gone, refused or of another size: the guarded bytes are wiped and freed.
                if length != 32 { throw .authenticationFailed }
            }
        } catch .authenticationFailed {
            if let failure { throw DeviceError.from(failure) }
            // Gone, or of another size: not a class key of ours (a key planted there), so absent.
            return nil
        }
    }

    /// The auto-lock deadline the `unlocked` marker holds (nil: never, or it expired meanwhile).
    static func readDeadline(_ serial: KernelKeyring.Serial) throws -> Timestamp? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let length: Int?
        do {
            length = try buffer.withUnsafeMutableBytes { try KernelKeyring.read(serial, into: $0) }
        } catch let error as KeyringError {
            throw DeviceError.from(error)
        }
        guard let length, length <= buffer.count else { return nil }
        let text = String(decoding: buffer[..<length], as: UTF8.self)
        guard text.hasPrefix("until "), let seconds = Int64(text.dropFirst(6)) else { return nil }
        return Timestamp(secondsSinceEpoch: seconds)
    }
}
