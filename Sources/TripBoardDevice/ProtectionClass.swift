import TripBoardSystem

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

    /// The name a file's class goes by (`attachment list`, `--protection`, the store, sync): iOS's
    /// `none` for `always` — a file of that class is still sealed, under a key this device
    /// always has.
    public var fileClassName: String { self == .always ? "none" : rawValue }

    /// The class a file's class name names (`none`, or the class's own name).
    public init?(fileClassName: String) {
        if fileClassName == "none" { self = .always; return }
        guard let protection = ProtectionClass(rawValue: fileClassName), protection != .always else { return nil }
        self = protection
    }

    /// The names `--protection` takes, in the order they are offered.
    public static let fileClassNames = ["complete", "complete-unless-open", "until-first-unlock", "none"]

    /// The class `text` names as `option`'s value (`--protection`); a usage error otherwise.
    public static func fileClass(_ text: String, option: String) throws(DeviceError) -> ProtectionClass {
        guard let protection = ProtectionClass(fileClassName: text) else {
            throw .invalidArgument("\(option) must be one of \(fileClassNames.joined(separator: ", ")), not '\(terminalSafe(String(text.prefix(40))))'")
        }
        return protection
    }
}
