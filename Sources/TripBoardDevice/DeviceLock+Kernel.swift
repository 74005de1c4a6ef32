import TripBoardSodium
import TripBoardSystem

extension DeviceLock {
    /// Puts `keys` (those of the classes that live in the kernel) into the device's keyring, made
    /// first if the kernel has none; the classes that drop at lock, and the `unlocked` marker
    /// holding the deadline, expire after the auto-lock.
    func putInKernel(_ keys: Keybag.ClassKeys, keybag: Keybag) throws {
        do {
            let description = "tripboard:device:\(device.fingerprint)"
            let keyring = try KernelKeyring.search(anchor.serial, type: "keyring", description: description)
                ?? KernelKeyring.addKeyring(description, into: anchor.serial)
            let timeout = keybag.autoLockSeconds ?? 0
            for protection in [ProtectionClass.untilFirstUnlock, .completeUnlessOpen, .complete] {
                guard let key = keys[protection] else { continue }
                let serial = try key.withUnsafeBytes { bytes throws(KeyringError) in
                    try KernelKeyring.addUserKey("tripboard:\(keybag.id):\(protection.rawValue)", payload: bytes, into: keyring)
                }
                if protection.dropsAtLock { try KernelKeyring.setTimeout(serial, seconds: timeout) }
            }
            // The marker last: a reader that sees it sees the keys.
            let deadline = keybag.autoLockSeconds.map { clock().secondsSinceEpoch + Int64($0) }
            let marker = Array((deadline.map { "until \($0)" } ?? "never").utf8)
            let serial = try marker.withUnsafeBytes { bytes throws(KeyringError) in
                try KernelKeyring.addUserKey("tripboard:\(keybag.id):unlocked", payload: bytes, into: keyring)
            }
            try KernelKeyring.setTimeout(serial, seconds: timeout)
        } catch let error as KeyringError {
            throw DeviceError.from(error)
        }
    }

    /// Invalidates the kernel's keys of `classes` (nil: every class) and the `unlocked` marker.
    func dropFromKernel(keybag: Keybag, classes: [ProtectionClass]?) throws {
        guard KernelKeyring.unavailability(anchor: anchor) == nil, let keyring = try deviceKeyring() else { return }
        let names = ["unlocked"] + (classes ?? ProtectionClass.allCases).map(\.rawValue)
        do {
            for name in names {
                if let serial = try kernelKey(name, keybag: keybag, in: keyring) { try KernelKeyring.invalidate(serial) }
            }
        } catch let error as KeyringError {
            throw DeviceError.from(error)
        }
    }

    /// A class key read from the kernel into guarded memory; nil when it expired meanwhile.
    static func readKey(_ serial: KernelKeyring.Serial) throws -> SecureBytes? {
        var failure: KeyringError?
        var gone = false
        let key = try? SecureBytes(count: 32) { buffer throws(CryptoError) in
            let length: Int?
            do throws(KeyringError) {
                length = try KernelKeyring.read(serial, into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
                throw CryptoError.authenticationFailed
            }
            guard let length else {
                gone = true
                throw CryptoError.authenticationFailed
            }
            guard length == 32 else { throw CryptoError.authenticationFailed }
        }
        if let failure { throw DeviceError.from(failure) }
        if gone { return nil }
        guard let key else { throw DeviceError.keyring(reason: "a class key in the kernel is not 32 bytes", quotaExceeded: false) }
        return key
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
