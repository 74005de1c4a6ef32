import TripBoardDevice
import TripBoardModel
import TripBoardStorage
import TripBoardSQLite
public import TripBoardSodium
import TripBoardSystem

/// The keys that seal items, the container key and its wraps, recovery, and the associated data
/// that binds every ciphertext to its identity. Derivations: docs/security.md.
extension Keychain {
    // MARK: - Keys

    /// The key that seals items of `accessibility` for `device`, with its id.
    func itemKey(_ accessibility: KeychainAccessibility, device: DeviceKey, creatingContainerKey: Bool) throws -> (SecureBytes, String) {
        switch accessibility {
        case .thisDeviceOnly:
            return (try KeyDerivation.deriveSubkey(from: device.key, subkeyID: 1, context: "TBitems1"), Self.deviceKeyID(device))
        case .migratable:
            guard let containerKey = try containerKey(device: device, creating: creatingContainerKey) else {
                throw KeychainError.containerKeyLocked
            }
            return (try KeyDerivation.deriveSubkey(from: containerKey.key, subkeyID: 1, context: "TBitems1"), "container:" + containerKey.id)
        }
    }

    static func deviceKeyID(_ device: DeviceKey) -> String { "device:" + device.fingerprint }

    package static func keyID(_ key: SecureBytes) throws -> String {
        Sodium.hexString(try blake2b(Array("tripboard key id v1".utf8), outputLength: 16, key: key))
    }

    /// The container key as `device` can unwrap it; `nil` when none exists (and `creating` is
    /// false). Throws `.containerKeyLocked` when one exists but is not wrapped for `device`.
    func containerKey(device: DeviceKey, creating: Bool) throws -> (key: SecureBytes, id: String)? {
        let wraps = try connection.statement("""
            SELECT container_key_id, nonce, ciphertext FROM container_key_wraps WHERE wrapped_by = 'device' AND wrapping_key_id = ?
            """).rows([.text(device.fingerprint)]) { ($0.text(0), $0.blob(1), $0.blob(2)) }
        if let (id, nonce, ciphertext) = wraps.first {
            let key = try XChaCha20Poly1305.open(
                ciphertext: ciphertext, nonce: nonce, key: try Self.deviceWrappingKey(device),
                associatedData: Self.wrapAssociatedData(containerKeyID: id, wrappedBy: "device", wrappingKeyID: device.fingerprint))
            return (key, id)
        }
        if try connection.integer("SELECT count(*) FROM container_key_wraps") > 0 {
            throw KeychainError.containerKeyLocked
        }
        guard creating else { return nil }
        let key = try SecureBytes(randomCount: 32)
        let id = try Self.keyID(key)
        try storeWrap(of: key, id: id, wrappedBy: "device", wrappingKeyID: device.fingerprint,
                      wrappingKey: try Self.deviceWrappingKey(device), parameters: nil)
        return (key, id)
    }

    /// The container key, if this device can open it: nil when there is none or it is locked
    /// here. Anything else — a wrap that does not open, a keychain that cannot be read — is
    /// thrown, not taken for "locked".
    func unlockedContainerKey(device: DeviceKey) throws -> (key: SecureBytes, id: String)? {
        do {
            return try containerKey(device: device, creating: false)
        } catch {
            if case KeychainError.containerKeyLocked = error { return nil }
            throw error
        }
    }

    static func deviceWrappingKey(_ device: DeviceKey) throws -> SecureBytes {
        try KeyDerivation.deriveSubkey(from: device.key, subkeyID: 2, context: "TBwrapCK")
    }

    func storeWrap(of key: SecureBytes, id: String, wrappedBy: String, wrappingKeyID: String, wrappingKey: SecureBytes,
                   parameters: PasswordHashParameters?) throws {
        try Self.storeWrap(of: key, id: id, wrappedBy: wrappedBy, wrappingKeyID: wrappingKeyID, wrappingKey: wrappingKey,
                           parameters: parameters, into: connection, at: clock().utcStamp)
    }

    /// Seals the container key under `wrappingKey` into `connection`'s `container_key_wraps`
    /// (this keychain's, or a backup's copy of it), replacing an earlier wrap of the same kind.
    static func storeWrap(of key: SecureBytes, id: String, wrappedBy: String, wrappingKeyID: String, wrappingKey: SecureBytes,
                          parameters: PasswordHashParameters?, into connection: Connection, at stamp: String) throws {
        let sealed = try XChaCha20Poly1305.seal(
            plaintext: key, key: wrappingKey,
            associatedData: Self.wrapAssociatedData(containerKeyID: id, wrappedBy: wrappedBy, wrappingKeyID: wrappingKeyID))
        let parametersJSON = try parameters.map { String(decoding: try JSON.encode($0, pretty: false), as: UTF8.self) }
        try connection.statement("""
            INSERT INTO container_key_wraps (container_key_id, wrapped_by, wrapping_key_id, password_hash_parameters, nonce, ciphertext, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (wrapped_by, wrapping_key_id) DO UPDATE SET container_key_id = excluded.container_key_id,
                password_hash_parameters = excluded.password_hash_parameters, nonce = excluded.nonce,
                ciphertext = excluded.ciphertext, created_at = excluded.created_at
            """).run([.text(id), .text(wrappedBy), .text(wrappingKeyID), .optional(parametersJSON), .blob(sealed.nonce),
                      .blob(sealed.ciphertext), .text(stamp)])
    }

    // MARK: - Recovery

    /// Wraps the container key (creating it if needed) under `passphrase` too, so migratable
    /// items can be recovered on another device. Replaces an earlier passphrase.
    public func setRecoveryPassphrase(_ passphrase: SecureBytes, parameters: PasswordHashParameters = .moderate()) throws {
        guard passphrase.count >= 8 else { throw KeychainError.invalidArgument("the recovery passphrase must be at least 8 bytes long") }
        let device = try deviceForWriting()
        let wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)
        try write {
            guard let (key, id) = try containerKey(device: device, creating: true) else { return }
            try storeWrap(of: key, id: id, wrappedBy: "passphrase", wrappingKeyID: "recovery", wrappingKey: wrappingKey, parameters: parameters)
        }
    }

    /// Unlocks the container key on this device with the recovery passphrase and wraps it for
    /// this device, so migratable items read here from now on.
    public func recover(passphrase: SecureBytes) throws {
        let rows = try connection.statement("""
            SELECT container_key_id, password_hash_parameters, nonce, ciphertext FROM container_key_wraps
            WHERE wrapped_by = 'passphrase' AND wrapping_key_id = 'recovery'
            """).rows { ($0.text(0), $0.optionalText(1), $0.blob(2), $0.blob(3)) }
        guard let (id, parametersJSON, nonce, ciphertext) = rows.first else { throw KeychainError.noRecoveryPassphrase }
        let parameters = try Self.storedParameters(parametersJSON)
        let wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)
        let key: SecureBytes
        do {
            key = try XChaCha20Poly1305.open(ciphertext: ciphertext, nonce: nonce, key: wrappingKey,
                                             associatedData: Self.wrapAssociatedData(containerKeyID: id, wrappedBy: "passphrase", wrappingKeyID: "recovery"))
        } catch {
            throw KeychainError.wrongPassphrase
        }
        let device = try deviceForWriting()
        try write {
            try storeWrap(of: key, id: id, wrappedBy: "device", wrappingKeyID: device.fingerprint,
                          wrappingKey: try Self.deviceWrappingKey(device), parameters: nil)
        }
    }

    /// The recovery wrap's Argon2id parameters, refused (before Argon2id runs with them) when they
    /// are not a valid document or ask for more than `PasswordHashParameters` accepts: a tampered
    /// row could otherwise ask for hours of work or terabytes of memory.
    static func storedParameters(_ json: String?) throws -> PasswordHashParameters {
        do {
            return try JSON.decode(PasswordHashParameters.self, from: Array((json ?? "").utf8))
        } catch DecodingError.dataCorrupted(let context) {
            // Our own reasons ("invalid password hash memory limit: must be …"): no secret in them.
            throw KeychainError.damagedRecoveryParameters(reason: context.debugDescription)
        } catch {
            throw KeychainError.damagedRecoveryParameters(reason: json == nil ? "missing" : "not the expected JSON object")
        }
    }

    // MARK: - Associated data

    /// Binds a ciphertext to its identity: moved to another row, service, account, accessibility
    /// or key, it no longer opens. Fields are length-prefixed so no two identities encode alike.
    static func itemAssociatedData(service: String, account: String, accessibility: KeychainAccessibility,
                                   keyID: String, rowID: Int64) -> [UInt8] {
        encode(["tripboard-keychain-item/v1", service, account, accessibility.rawValue, keyID, String(rowID)])
    }

    static func wrapAssociatedData(containerKeyID: String, wrappedBy: String, wrappingKeyID: String) -> [UInt8] {
        encode(["tripboard-container-key/v1", containerKeyID, wrappedBy, wrappingKeyID])
    }

    package static func encode(_ fields: [String]) -> [UInt8] { Sodium.lengthPrefixed(fields) }
}
