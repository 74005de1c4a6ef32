public import TripBoardSystem

/// Why a request about this device — its key, its keybag, its lock — failed. Descriptions never
/// contain a passcode or key material.
public enum DeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The device key file is unusable: wrong size, not a file.
    case badDeviceKey(path: String, reason: String)
    /// The device key file or its directory could be read by others, or is not ours.
    case insecureDeviceKey(path: String, reason: String)
    /// Neither `TRIPBOARD_DEVICE_DIR`, `XDG_STATE_HOME` nor `HOME` says where device state lives.
    case noDeviceDirectory
    /// The keybag is not a keybag this build reads, or one of its values is out of bounds.
    case damagedKeybag(path: String, reason: String)
    /// The keybag was made for another device key (a copied state directory, another machine id).
    case keybagOfAnotherDevice(path: String)
    /// The keybag is not in the device directory, though one was made there (`keybag.made`).
    case keybagMissing(path: String)
    /// The passcode does not open the keybag.
    case wrongPasscode(failures: Int, nextAttempt: Timestamp?)
    /// Too many wrong passcodes lately: no attempt is made before `retryAt`.
    case attemptsDelayed(failures: Int, retryAt: Timestamp)
    /// `passcode change`, `remove` or an unlock-only operation on a device without a passcode.
    case noPasscode
    /// `passcode set` on a device that has one.
    case passcodeAlreadySet
    /// A new passcode shorter than `DeviceLock.minimumPasscodeLength` characters, or malformed.
    case invalidPasscode(String)
    /// The device is locked: the keys of `complete` data are not in the kernel.
    case locked
    /// The device has not been unlocked since it started (the kernel keyring holds none of its keys).
    case notUnlockedSinceStart
    /// The kernel's key retention service cannot be used by this process.
    case keyringUnavailable(reason: String)
    /// Another failure of the kernel's key retention service (a full quota, a key that vanished).
    case keyring(reason: String, quotaExceeded: Bool)
    /// A malformed request (a bad duration, a missing confirmation).
    case invalidArgument(String)
    /// A sealed file (a ticket, a thumbnail) whose keybag this device does not have: sealed on
    /// another device (a copied container), or under a keybag `passcode reset` replaced.
    case sealedElsewhere(path: String)
    /// This device has no class keys yet and the container's files are sealed under another
    /// device's: making keys now would seal new tickets where the real device cannot open them.
    case noKeysForSealedFiles(path: String)
    /// A sealed file that is not one, or was changed, cut short or damaged.
    case damagedSealedFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .badDeviceKey(let path, let reason):
            "the device key \(path) is unusable: \(reason). Move it aside to make a new one (items sealed for this device are then lost)"
        case .insecureDeviceKey(let path, let reason):
            "refusing to use \(path): \(reason)"
        case .noDeviceDirectory:
            "cannot tell where this device's key lives: set TRIPBOARD_DEVICE_DIR (HOME is not set)"
        case .damagedKeybag(let path, let reason):
            "the keybag \(path) is damaged (\(reason)); nothing was changed. Move it aside only if you accept that what was sealed under it is lost"
        case .keybagMissing(let path):
            "this device's keybag \(path) is missing, though one was made here; nothing was changed. Put it back (a retired or backed-up copy of keybag.json), or run `app device passcode reset` to start a new one (what the old one sealed then stays unreadable here)"
        case .keybagOfAnotherDevice(let path):
            "the keybag \(path) belongs to another device key (a copied state directory or another machine); nothing was changed"
        case .wrongPasscode(let failures, let nextAttempt):
            "wrong passcode (\(failures) failed attempt\(failures == 1 ? "" : "s") in a row"
                + (nextAttempt.map { "; the next attempt is possible at \($0.clockText)" } ?? "") + ")"
        case .attemptsDelayed(let failures, let retryAt):
            "too many wrong passcodes (\(failures) in a row): try again at \(retryAt.clockText); nothing was tried"
        case .noPasscode:
            "this device has no passcode (it is always unlocked); `app device passcode set` sets one"
        case .passcodeAlreadySet:
            "this device already has a passcode; `app device passcode change` changes it"
        case .invalidPasscode(let reason):
            "\(reason); nothing was changed"
        case .locked:
            "the device is locked; `app device unlock`"
        case .notUnlockedSinceStart:
            "the device has not been unlocked since it started; `app device unlock`"
        case .keyringUnavailable(let reason):
            "the kernel keyring is unavailable to this process (\(reason)), so this device cannot hold its keys unlocked; nothing was changed"
        case .keyring(let reason, _):
            "the kernel keyring refused: \(reason)"
        case .invalidArgument(let message):
            message
        case .sealedElsewhere(let path):
            "\(path) was sealed on another device, or under a keybag that `app device passcode reset` replaced: this device cannot open it; nothing was changed. A backup made where it was sealed (`app backup`) carries it"
        case .noKeysForSealedFiles(let path):
            "this device has no keys yet, and the container's tickets are sealed under another device's (\(path)): is TRIPBOARD_DEVICE_DIR (or HOME) the right one? nothing was changed"
        case .damagedSealedFile(let path, let reason):
            "\(path) cannot be opened: \(reason); nothing was changed"
        }
    }

    /// Whether this is the lock saying no (locked, not unlocked since the start, no keyring):
    /// what waits for an unlock rather than fails.
    public var isLockRefusal: Bool {
        switch self {
        case .locked, .notUnlockedSinceStart, .keyringUnavailable: true
        default: false
        }
    }

    /// The error for a failed call to the kernel keyring.
    static func from(_ error: KeyringError) -> DeviceError {
        error.isUnavailable ? .keyringUnavailable(reason: error.description) : .keyring(reason: error.description, quotaExceeded: error.isQuotaExceeded)
    }
}

/// The exit status of each refusal, for every executable that reads sealed data (the share
/// extension as much as `app`).
extension DeviceError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch self {
        case .badDeviceKey, .damagedKeybag, .keybagOfAnotherDevice, .wrongPasscode, .damagedSealedFile: .dataError
        case .insecureDeviceKey: .cannotCreate
        case .noDeviceDirectory, .invalidArgument, .noPasscode, .passcodeAlreadySet, .invalidPasscode: .usage
        case .keybagMissing, .sealedElsewhere, .noKeysForSealedFiles: .noInput
        case .locked, .notUnlockedSinceStart, .keyringUnavailable: .unavailable
        case .attemptsDelayed: .temporaryFailure
        case .keyring(_, let quotaExceeded): quotaExceeded ? .cannotCreate : .ioError
        }
    }
}
