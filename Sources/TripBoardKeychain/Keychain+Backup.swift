public import TripBoardStorage
public import TripBoardDevice
public import TripBoardSQLite
import TripBoardModel
import TripBoardSodium
public import TripBoardKeys
public import TripBoardSystem

/// What a backup holds of the keychain, and what a restore could make readable again.
public struct KeychainBackupState: Sendable, Equatable, Codable {
    /// Items sealed for the device that made the backup: readable again only on that device.
    public var thisDeviceOnly: Int
    /// Items sealed under the container key.
    public var migratable: Int
    /// True when the backup wraps the container key under its passphrase, so that the
    /// migratable items open on any device the backup is restored on. False when this device
    /// could not unwrap the container key (then only a recovery passphrase set earlier unlocks them).
    public var migratableUnlockable: Bool
}

/// A backup's keychain: a copy of the keychain database with the container key wrapped under
/// the backup passphrase as well (`wrapped_by = 'passphrase'`, `wrapping_key_id = 'backup'`,
/// Argon2id, the recovery passphrase's construction in docs/security.md) — the root container key,
/// whatever the items' classes: the backup passphrase opens both. The items stay as they are
/// sealed: this-device-only ones under this device's class and device keys, which never leave it.
extension Keychain {
    static let backupWrapID = "backup"

    /// Writes the copy to `path` (a new file in the container's `tmp/`) through the backup API —
    /// one consistent snapshot, then switched to a rollback journal so that the file alone is the
    /// database — and adds the backup wrap.
    /// `sealing`: the copy's ephemeral page key (the keychain database is sealed).
    public func writeBackupCopy(to path: String, passphrase: SecureBytes, sealing: PageKey? = nil) throws -> KeychainBackupState {
        try connection.scratchCopy(to: path, sealing: sealing)
        let copy = try Connection(path: path, mode: .readWrite, sealing: sealing)
        try copy.execute("PRAGMA synchronous = OFF; PRAGMA journal_mode = DELETE")
        let thisDeviceOnly = Int(try copy.integer("SELECT count(*) FROM items WHERE accessibility = 'thisDeviceOnly'"))
        let migratable = Int(try copy.integer("SELECT count(*) FROM items WHERE accessibility = 'migratable'"))
        var unlockable = false
        // The root container key: on a device with a passcode, only while it is unlocked (a backup
        // that could not restore its migratable items is refused rather than written).
        if migratable > 0, let device, let (key, id) = try unlockedContainerKey(device: device) {
            let parameters = PasswordHashParameters.moderate()
            let wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)
            try copy.writeTransaction {
                try Self.storeWrap(of: key, id: id, wrappedBy: "passphrase", wrappingKeyID: Self.backupWrapID, wrappingKey: wrappingKey,
                                   parameters: parameters, into: copy, at: clock().utcStamp)
            }
            unlockable = true
        }
        return KeychainBackupState(thisDeviceOnly: thisDeviceOnly, migratable: migratable, migratableUnlockable: unlockable || migratable == 0)
    }

    /// Throws `.deviceLocked` when the device at `location` could not wrap a restored container key
    /// now (its class keys are not in the kernel); a device without a key or keybag has no passcode.
    public static func requireClassKeys(device location: DeviceLocation, keyring: KernelKeyring.Anchor) throws {
        guard let device = try DeviceKey.existing(at: location) else { return }
        let lock = try DeviceLock(device: device, anchor: keyring)
        try lockRefusals {
            for protection in [ProtectionClass.complete, .untilFirstUnlock] { _ = try lock.classKey(protection, creatingKeybag: false) }
        }
    }

    /// The container key a backup's keychain wraps under its passphrase, and its id.
    public struct BackupKey: Sendable {
        let id: String
        let key: SecureBytes
    }

    /// Checks a backup's keychain copy at `path` before anything is written for it (a restore's
    /// dry run too), reading it only — read-only, with SQLite's defensive settings: a schema
    /// version this build knows, exactly the tables and indexes its migrations make at that
    /// version, `integrity_check`; and the backup's wrap of the container key opens with
    /// `passphrase` (one that does not is a keychain from another backup). Returns the key
    /// unwrapped (nil when the backup holds no wrap), so the restore derives it once.
    /// `sealing`: the page key the copy was staged under.
    public static func checkBackupCopy(at path: String, passphrase: SecureBytes, sealing: PageKey? = nil) throws -> BackupKey? {
        let copy = try Connection(path: path, mode: .readOnly, sealing: sealing)
        try copy.refuseUntrustedSchema()
        let version = try copy.userVersion()
        guard version <= KeychainSchema.currentVersion else {
            throw KeychainBackupError("its schema version \(version) is newer than this build understands (\(KeychainSchema.currentVersion)); update TripBoard")
        }
        if let difference = try Schema.difference(of: copy, steps: KeychainSchema.migrations, database: "keychain") {
            throw KeychainBackupError("its schema is not the one this build makes: " + difference)
        }
        if let problem = try copy.statement("PRAGMA integrity_check(1)").rows({ $0.text(0) }).first(where: { $0 != "ok" }) {
            throw KeychainBackupError(problem)
        }
        let rows = try copy.statement("""
            SELECT container_key_id, password_hash_parameters, nonce, ciphertext FROM container_key_wraps
            WHERE wrapped_by = 'passphrase' AND wrapping_key_id = ?1
            """).rows([.text(backupWrapID)]) { ($0.text(0), $0.optionalText(1), $0.blob(2), $0.blob(3)) }
        guard let (id, parametersJSON, nonce, ciphertext) = rows.first else { return nil }
        let wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, parameters: try storedParameters(parametersJSON))
        do {
            let key = try XChaCha20Poly1305.open(ciphertext: ciphertext, nonce: nonce, key: wrappingKey,
                                                 associatedData: wrapAssociatedData(containerKeyID: id, wrappedBy: "passphrase", wrappingKeyID: backupWrapID))
            return BackupKey(id: id, key: key)
        } catch {
            throw KeychainBackupError("its container key does not open with this backup's passphrase: the keychain is from another backup")
        }
    }

    /// Completes a keychain that a restore has just put in place, for `device`: the container key
    /// is unwrapped from the backup's wrap with `passphrase` and wrapped for this device, the
    /// backup's wrap removed (the container is then as the backed-up one was), and the keychain
    /// given a new identity, so that it is never taken for a rollback. Returns the restored state
    /// as this device sees it.
    public static func adoptRestored(container: Container, device: DeviceKey, keyring: KernelKeyring.Anchor = .user, backupKey: BackupKey?,
                                     notice: @escaping (String) -> Void = { _ in }) throws -> KeychainBackupState {
        let keychain = try openRestored(container: container, device: device, keyring: keyring, notice: notice)
        var unlocked = false
        if let backupKey {
            let (id, key) = (backupKey.id, backupKey.key)
            try keychain.write {
                // Under this device's class keys: a device with a passcode must be unlocked.
                try keychain.storeClassWraps(of: key, id: id, device: device)
                try keychain.connection.statement("DELETE FROM container_key_wraps WHERE wrapped_by = 'passphrase' AND wrapping_key_id = ?1")
                    .run([.text(backupWrapID)])
            }
            unlocked = true
            // The backup's items sealed before classes (an earlier build's) are converted now.
            try keychain.convertItemsSealedBeforeClasses(creatingKeybag: true)
        }
        let migratable = Int(try keychain.connection.integer("SELECT count(*) FROM items WHERE accessibility = 'migratable'"))
        let mine = Int(try keychain.connection.integer("SELECT count(*) FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id = ?1",
                                                       [.text(deviceKeyID(device))]))
        let unlockable = try unlocked || migratable == 0 || keychain.unlockedContainerKey(device: device) != nil
        return KeychainBackupState(thisDeviceOnly: mine, migratable: migratable, migratableUnlockable: unlockable)
    }
}

/// What is wrong with a backup's keychain (`Keychain.checkBackupCopy`); the restore refuses the
/// backup with it (65).
public struct KeychainBackupError: Error, Sendable, Equatable, CustomStringConvertible {
    public let detail: String
    init(_ detail: String) { self.detail = detail }
    public var description: String { "the backup's keychain cannot be used (\(detail)); nothing was restored" }
}
