public import TripBoardSystem

/// What `app device status` reports: the lock's state and the protection actually in force.
public struct DeviceStatus: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// No passcode: the class keys open with the device key alone, at any time.
        case noPasscode
        /// Unlocked: the kernel holds every class key.
        case unlocked
        /// Locked after an unlock since the computer started: `until-first-unlock` is still held.
        case locked
        /// Not unlocked since the computer started (or since the device's keyring was dropped).
        case lockedSinceStart
        /// A passcode is set, but this process cannot reach the kernel keyring: nothing can be unlocked.
        case keyringUnavailable(String)

        /// The word `status --json` uses.
        public var name: String {
            switch self {
            case .noPasscode: "no-passcode"
            case .unlocked: "unlocked"
            case .locked: "locked"
            case .lockedSinceStart: "locked-since-start"
            case .keyringUnavailable: "keyring-unavailable"
            }
        }
    }

    public var state: State
    /// Where unlocked keys are held, or why they cannot be.
    public var keyring: String
    /// The auto-lock of the next unlock, in seconds; nil: never (or no passcode).
    public var autoLockSeconds: UInt32?
    /// When an unlocked device locks by itself; nil: never, or not unlocked.
    public var locksAt: Timestamp?
    public var failedAttempts: Int
    /// When a wrong passcode's delay ends, if one runs.
    public var nextAttemptAt: Timestamp?
    /// The keybag's id; nil when the device has none yet.
    public var keybag: String?

    public init(state: State, keyring: String, autoLockSeconds: UInt32?, locksAt: Timestamp?, failedAttempts: Int,
                nextAttemptAt: Timestamp?, keybag: String?) {
        self.state = state
        self.keyring = keyring
        self.autoLockSeconds = autoLockSeconds
        self.locksAt = locksAt
        self.failedAttempts = failedAttempts
        self.nextAttemptAt = nextAttemptAt
        self.keybag = keybag
    }

    /// A device that has no device key yet: no passcode, nothing sealed.
    public static func withoutDevice(anchor: KernelKeyring.Anchor) -> DeviceStatus {
        DeviceStatus(state: .noPasscode, keyring: DeviceLock.keyringDescription(anchor: anchor), autoLockSeconds: nil, locksAt: nil,
                     failedAttempts: 0, nextAttemptAt: nil, keybag: nil)
    }

    /// Which classes this process can open now.
    public var readableClasses: [ProtectionClass] {
        switch state {
        case .noPasscode, .unlocked: ProtectionClass.allCases
        case .locked: [.untilFirstUnlock, .always]
        case .lockedSinceStart, .keyringUnavailable: [.always]
        }
    }

    /// The protection in force, in a sentence.
    public var protection: String {
        switch state {
        case .noPasscode: "device key only: no passcode, so every class opens at any time on this device"
        case .keyringUnavailable: "passcode and device key; the kernel keyring is unavailable here, so this process can open only `always` data"
        default: "passcode (Argon2id) and device key; unlocked keys are held by the kernel keyring, never on disk"
        }
    }
}
