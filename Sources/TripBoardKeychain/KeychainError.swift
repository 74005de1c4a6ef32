import TripBoardModel
import TripBoardStorage
/// Why a keychain request failed. Descriptions never contain a secret value or key material.
public enum KeychainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No item for (service, account).
    case notFound(service: String, account: String)
    /// A this-device-only item sealed on another device (another `device.key` or machine id): it
    /// cannot be read here, and it is kept — only `forget-other-devices` removes it.
    case sealedOnAnotherDevice(service: String, account: String)
    /// `forget-other-devices` on a device that has no key yet: every item would count as another
    /// device's.
    case noDeviceKey(path: String)
    /// A migratable item whose container key has not been unlocked on this device yet.
    case locked(service: String, account: String)
    /// The device is locked (or, `sinceStart`, has not been unlocked since it started), so the class
    /// key that seals the item — named when there is one — is not in the kernel.
    case deviceLocked(service: String?, account: String?, sinceStart: Bool)
    /// A this-device-only item sealed under a keybag that `app device passcode reset` replaced:
    /// unreadable here for good (it is kept until deleted).
    case sealedUnderResetKeybag(service: String, account: String)
    /// This device's keybag is not in its directory, but the keychain holds items sealed under
    /// one (`keybag`): it went missing; a new one is not made behind the user's back.
    case keybagMissing(path: String, keybag: String)
    /// The container key exists but is not unlocked on this device (storing a migratable item
    /// or setting the recovery passphrase needs it).
    case containerKeyLocked
    /// The ciphertext does not authenticate: changed, truncated, or moved to another row.
    case dataCorrupted(service: String, account: String)
    /// The recovery passphrase does not open the container key.
    case wrongPassphrase
    /// `keychain recover` with no recovery passphrase ever set.
    case noRecoveryPassphrase
    /// The recovery passphrase's stored Argon2id parameters are not a valid document or are out
    /// of the accepted range (tampered or damaged): refused before any key derivation.
    case damagedRecoveryParameters(reason: String)
    /// The keychain is at an older generation than this device recorded: an older copy was put
    /// back, which would bring back old and deleted secrets.
    case rolledBack(path: String, found: Int64, recorded: Int64)
    /// This device's record of a keychain's generation is not a generation.
    case damagedGenerationRecord(path: String)
    /// A malformed request (empty value, bad name).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .notFound(let service, let account):
            "no keychain item for service '\(service)' and account '\(account)'"
        case .sealedOnAnotherDevice(let service, let account):
            "the keychain item for service '\(service)' and account '\(account)' is not found on this device: it was sealed on another device (it is kept; `app keychain forget-other-devices` removes such items)"
        case .noDeviceKey(let path):
            "this device has no device key yet (\(path)), so every item sealed for a device would count as another device's; nothing was forgotten. If that is the right place, store a secret first; otherwise check TRIPBOARD_DEVICE_DIR, XDG_STATE_HOME and HOME"
        case .locked(let service, let account):
            "the keychain item for service '\(service)' and account '\(account)' is locked on this device: run `app keychain recover` with the recovery passphrase"
        case .deviceLocked(let service, let account, let sinceStart):
            (service.map { "the keychain item for service '\($0)' and account '\(account ?? "")' cannot be read or written now: " } ?? "")
                + (sinceStart ? "the device has not been unlocked since it started; `app device unlock`" : "the device is locked; `app device unlock`")
        case .sealedUnderResetKeybag(let service, let account):
            "the keychain item for service '\(service)' and account '\(account)' was sealed under a keybag that this device's keybag no longer opens (one `app device passcode reset` replaced, or a newer one than the keybag put back): it cannot be read here (it is kept; `app keychain delete` removes it)"
        case .keybagMissing(let path, let keybag):
            "this device's keybag \(path) is missing, but the keychain holds items sealed under keybag \(keybag); nothing was changed. Put the keybag back (a retired or backed-up copy of keybag.json), or run `app device passcode reset` to start a new one (what it sealed then stays unreadable here)"
        case .dataCorrupted(let service, let account):
            "the keychain item for service '\(service)' and account '\(account)' is corrupted (it does not authenticate); delete it and store it again"
        case .containerKeyLocked:
            "this container's migratable items are locked on this device: run `app keychain recover` with the recovery passphrase first"
        case .wrongPassphrase:
            "the recovery passphrase is wrong"
        case .noRecoveryPassphrase:
            "no recovery passphrase was ever set for this container's keychain, so its migratable items cannot be recovered here"
        case .damagedRecoveryParameters(let reason):
            "the recovery passphrase's stored parameters are damaged (\(reason)), so the passphrase cannot be checked; nothing was changed. On a device that reads the migratable items, run `app keychain set-recovery-passphrase` again"
        case .rolledBack(let path, let found, let recorded):
            "the keychain \(path) is older than this device last saw it (generation \(found), this device recorded \(recorded)): an older copy was put back, which brings back old and deleted secrets; nothing was read or changed. If that copy was put back on purpose, run `app keychain accept-rollback`"
        case .damagedGenerationRecord(let path):
            "this device's record of the keychain's generation, \(path), is damaged; nothing was read or changed. Run `app keychain accept-rollback` to accept the keychain as it is"
        case .invalidArgument(let message):
            message
        }
    }
}
