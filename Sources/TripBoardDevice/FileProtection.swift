import Synchronization
import TripBoardKeys
public import TripBoardSystem

/// The keys of this device's sealed files, from its lock: a new file is sealed under the class
/// key the lock gives now (or, for `complete-unless-open`, to the keybag's public key, which
/// needs nothing unlocked); a file is opened with the key of the keybag that sealed it — this
/// one's, or an earlier one's a passcode change replaced (`Keybag.previous`).
///
/// Sealing makes the device key and the keybag when this device has none yet (a phone without a
/// passcode has class keys too); opening creates nothing: a device without them has no file of
/// its own to open.
///
/// The device key and its lock are loaded once per instance (the key never changes; the lock reads
/// the keybag and asks the kernel for class keys on every request, so a lock or a passcode change
/// is seen at once), under a mutex: a bulk reader (the hashing pass on two threads, a sync of many
/// files) pays for them once.
public final class FileProtection: FileKeys {
    public let location: DeviceLocation
    public let anchor: KernelKeyring.Anchor
    private let guarding = Mutex<Void>(())
    private let loaded = LoadedLock()

    /// The lock once loaded. @unchecked Sendable: `lock` is read and written only while
    /// `guarding` is held.
    private final class LoadedLock: @unchecked Sendable {
        var lock: DeviceLock?
    }

    public init(location: DeviceLocation, anchor: KernelKeyring.Anchor) {
        self.location = location
        self.anchor = anchor
    }

    /// `body` with this device's lock: the one loaded before, else one loaded now (the device
    /// key made first when `creating`); nil when there is no device key and not `creating`.
    private func withLock<T: Sendable>(creating: Bool, _ body: (DeviceLock?) throws -> T) throws -> T {
        try guarding.withLock { _ in
            if loaded.lock == nil {
                let device = creating ? try DeviceKey.loadOrCreate(at: location) : try DeviceKey.existing(at: location)
                loaded.lock = try device.map { try DeviceLock(device: $0, anchor: anchor) }
            }
            return try body(loaded.lock)
        }
    }

    /// The device the environment names (`TRIPBOARD_DEVICE_DIR`…, `TRIPBOARD_KEYRING`).
    public convenience init(environment: [String: String]) throws {
        self.init(location: try DeviceLocation(environment: environment), anchor: try DeviceLock.anchor(environment: environment))
    }

    public func sealingKey(_ protection: ProtectionClass) throws -> FileSealingKey {
        try withLock(creating: true) { lock in
            let lock = lock!
            if protection == .completeUnlessOpen {
                let keybag = try lock.keybagMadeIfAbsent()
                return FileSealingKey(protection: protection, keybag: keybag.id, material: .publicKey(keybag.completeUnlessOpenPublicKey))
            }
            guard let (key, keybag) = try lock.classKey(protection, creatingKeybag: true) else { throw DeviceError.locked }
            return FileSealingKey(protection: protection, keybag: keybag, material: .classKey(key))
        }
    }

    /// The keybag file's id: no class key is asked of the kernel.
    public func sealingKeybag(_ protection: ProtectionClass) throws -> String {
        try withLock(creating: true) { lock in try lock!.keybagMadeIfAbsent().id }
    }

    public func openingKey(_ protection: ProtectionClass, keybag: String, path: String) throws -> FileOpeningKey {
        let key: SecureBytes? = try withLock(creating: false) { lock in
            guard let lock else { return nil }
            do {
                return try lock.classKey(protection, sealedUnder: keybag)
            } catch DeviceError.keybagOfAnotherDevice {
                return nil
            }
        }
        guard let key else {
            // A keybag this device made and has lost is said as such, not as another device's.
            if let missing = try withLock(creating: false, { lock in try lock?.missingKeybag() }) { throw missing }
            throw DeviceError.sealedElsewhere(path: path)
        }
        guard protection == .completeUnlessOpen else { return FileOpeningKey(material: .classKey(key)) }
        return FileOpeningKey(material: .keyPair(publicKey: try SealedBox.publicKey(of: key), privateKey: key))
    }

    public func hasKeys() throws -> Bool {
        try withLock(creating: false) { lock in try lock?.keybag() != nil }
    }

    /// Whether the keys of `protection` can be used now (the device unlocked, or the class open
    /// without a passcode): `nil` when they can, else why not. Creates nothing.
    public func refusal(_ protection: ProtectionClass) throws -> DeviceError? {
        try withLock(creating: false) { lock in
            guard let lock else { return nil }
            do {
                _ = try lock.classKey(protection, creatingKeybag: false)
                return nil
            } catch let error as DeviceError {
                switch error {
                case .locked, .notUnlockedSinceStart, .keyringUnavailable: return error
                default: throw error
                }
            }
        }
    }
}

extension FileProtection {
    /// The keys of the device the environment names; when it names none (no `HOME`), keys that
    /// say so when first asked (`DeviceError.noDeviceDirectory`), so that a command that never
    /// touches a sealed file does not fail for it. A malformed `TRIPBOARD_KEYRING` is an error now.
    public static func keys(environment: [String: String]) throws -> any FileKeys {
        let anchor = try DeviceLock.anchor(environment: environment)
        do {
            return FileProtection(location: try DeviceLocation(environment: environment), anchor: anchor)
        } catch let error as DeviceError {
            return UnavailableFileKeys(error: error)
        }
    }
}

/// Keys that are not there: every request fails with `error`.
public struct UnavailableFileKeys: FileKeys {
    public let error: DeviceError

    public init(error: DeviceError) { self.error = error }

    public func sealingKey(_ protection: ProtectionClass) throws -> FileSealingKey { throw error }

    public func openingKey(_ protection: ProtectionClass, keybag: String, path: String) throws -> FileOpeningKey { throw error }

    public func refusal(_ protection: ProtectionClass) throws -> DeviceError? { error }

    public func hasKeys() throws -> Bool { throw error }
}

/// Class keys that live in this process's memory only, under a keybag id of their own: what a
/// restore seals its staged files with before it may touch the device directory (a refused
/// restore writes nothing there), sealed again under the device's keys once it is accepted.
public final class EphemeralFileKeys: FileKeys {
    public let keybag = Sodium.hexString(Sodium.randomBytes(count: 16))
    let classKeys: [ProtectionClass: SecureBytes]
    let pair: (publicKey: [UInt8], privateKey: SecureBytes)

    public init() throws {
        var keys: [ProtectionClass: SecureBytes] = [:]
        for protection in ProtectionClass.allCases where protection != .completeUnlessOpen { keys[protection] = try XChaCha20Poly1305.makeKey() }
        classKeys = keys
        pair = try SealedBox.makeKeyPair()
    }

    public func sealingKey(_ protection: ProtectionClass) throws -> FileSealingKey {
        if protection == .completeUnlessOpen { return FileSealingKey(protection: protection, keybag: keybag, material: .publicKey(pair.publicKey)) }
        return FileSealingKey(protection: protection, keybag: keybag, material: .classKey(classKeys[protection]!))
    }

    public func openingKey(_ protection: ProtectionClass, keybag: String, path: String) throws -> FileOpeningKey {
        guard keybag == self.keybag else { throw DeviceError.sealedElsewhere(path: path) }
        if protection == .completeUnlessOpen { return FileOpeningKey(material: .keyPair(publicKey: pair.publicKey, privateKey: pair.privateKey)) }
        return FileOpeningKey(material: .classKey(classKeys[protection]!))
    }

    public func refusal(_ protection: ProtectionClass) throws -> DeviceError? { nil }

    public func hasKeys() throws -> Bool { true }
}

/// A device's keys that also open what `transient` sealed (a restore's staged files): new files
/// are sealed under the device's keys.
public struct DeviceAndTransientFileKeys: FileKeys {
    public let device: any FileKeys
    public let transient: EphemeralFileKeys

    public init(device: any FileKeys, transient: EphemeralFileKeys) {
        self.device = device
        self.transient = transient
    }

    public func sealingKey(_ protection: ProtectionClass) throws -> FileSealingKey { try device.sealingKey(protection) }

    public func sealingKeybag(_ protection: ProtectionClass) throws -> String { try device.sealingKeybag(protection) }

    public func openingKey(_ protection: ProtectionClass, keybag: String, path: String) throws -> FileOpeningKey {
        keybag == transient.keybag ? try transient.openingKey(protection, keybag: keybag, path: path)
            : try device.openingKey(protection, keybag: keybag, path: path)
    }

    public func refusal(_ protection: ProtectionClass) throws -> DeviceError? { try device.refusal(protection) }

    /// True: a restore seals its files under this device's keys on purpose, making them if it
    /// has none (its staged files are sealed under `transient`, not another device's).
    public func hasKeys() throws -> Bool { true }
}
