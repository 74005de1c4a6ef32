/// iOS's data protection classes: *when* data sealed under a class can be read on this device.
/// One random 32-byte key per class lives in the keybag (`Keybag`); the lock decides which of them
/// the kernel holds (`DeviceLock`).
public enum ProtectionClass: String, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Readable only while the device is unlocked (iOS's `NSFileProtectionComplete`).
    case complete
    /// Readable only while unlocked, but writable at any time: sealed to the class's X25519 public
    /// key, which is stored in the clear (iOS's `CompleteUnlessOpen`).
    case completeUnlessOpen = "complete-unless-open"
    /// Readable from the first unlock after the computer starts until it stops
    /// (`CompleteUntilFirstUserAuthentication`).
    case untilFirstUnlock = "until-first-unlock"
    /// Readable at any time on this device: wrapped under the device key alone (`None`).
    case always

    public var description: String { rawValue }

    /// Whether the key is wrapped under the passcode (when one is set) as well as the device key.
    public var needsPasscode: Bool { self != .always }

    /// Whether locking the device takes the key out of the kernel again (the first unlock after a
    /// start puts `untilFirstUnlock` there for good).
    public var dropsAtLock: Bool { self == .complete || self == .completeUnlessOpen }
}
