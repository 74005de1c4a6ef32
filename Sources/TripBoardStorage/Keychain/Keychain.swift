/// Who may read a keychain item, as in Apple's keychain.
public enum KeychainAccessibility: String, Sendable, Codable, CaseIterable {
    /// Sealed under a key derived from this device's key: unreadable on any other device, even
    /// from a full copy of the container. The default, and always used for tokens.
    case thisDeviceOnly
    /// Sealed under the container key, which is stored wrapped for each device that may use it
    /// and, once a recovery passphrase is set, under that passphrase too.
    case migratable
}

/// A keychain item's identity and metadata: never its value.
public struct KeychainItemInfo: Sendable, Equatable, Codable {
    public var service: String
    public var account: String
    public var accessibility: KeychainAccessibility
    /// `available`, or `locked` (migratable, container key not unlocked on this device).
    public var status: String
    public var createdAt: String
    public var updatedAt: String
}

/// Secrets shared by the app and its extensions through the container, sealed with libsodium
/// (XChaCha20-Poly1305) under keys that never leave this device. Format: docs/security.md.
public final class Keychain {
    let connection: Connection
    let device: DeviceKey
    let clock: @Sendable () -> Timestamp

    /// Opens the container's keychain for this device, removing items that were sealed for
    /// another device (they could never be read here).
    public init(container: Container, device: DeviceKey) throws {
        connection = try KeychainSchema.open(in: container)
        self.device = device
        clock = container.options.clock
        try purgeOtherDevicesItems()
    }

    // MARK: - Items

    /// The keychain services of the sign-in tokens; the account is the signed-in email.
    public static let accessTokenService = "tripboard.auth.access-token"
    public static let refreshTokenService = "tripboard.auth.refresh-token"

    /// Signs `account` in: replaces any earlier tokens with these, as this-device-only items.
    public func signIn(account: String, accessToken: SecureBytes?, refreshToken: SecureBytes?) throws {
        try deleteAll(service: Self.accessTokenService)
        try deleteAll(service: Self.refreshTokenService)
        if let accessToken { try set(service: Self.accessTokenService, account: account, value: accessToken) }
        if let refreshToken { try set(service: Self.refreshTokenService, account: account, value: refreshToken) }
    }

    /// Stores `value` for (service, account), replacing any earlier value.
    public func set(service: String, account: String, value: SecureBytes,
                    accessibility: KeychainAccessibility = .thisDeviceOnly) throws {
        let service = try Self.checkedName(service, "service")
        let account = try Self.checkedName(account, "account")
        guard value.count > 0 else { throw KeychainError.invalidArgument("the value is empty") }
        try connection.writeTransaction {
            let (key, keyID) = try itemKey(accessibility, creatingContainerKey: true)
            let now = clock().utcStamp
            try connection.statement("""
                INSERT INTO items (service, account, accessibility, key_id, nonce, ciphertext, created_at, updated_at)
                VALUES (?1, ?2, ?3, ?4, x'', x'', ?5, ?5)
                ON CONFLICT (service, account) DO UPDATE SET accessibility = ?3, key_id = ?4, updated_at = ?5
                """).run([.text(service), .text(account), .text(accessibility.rawValue), .text(keyID), .text(now)])
            let rowID = try connection.integer("SELECT id FROM items WHERE service = ? AND account = ?", [.text(service), .text(account)])
            let sealed = try XChaCha20Poly1305.seal(
                plaintext: value, key: key,
                associatedData: Self.itemAssociatedData(service: service, account: account, accessibility: accessibility, keyID: keyID, rowID: rowID))
            try connection.statement("UPDATE items SET nonce = ?, ciphertext = ? WHERE id = ?")
                .run([.blob(sealed.nonce), .blob(sealed.ciphertext), .integer(rowID)])
        }
    }

    /// The value of (service, account). Throws `.notFound`, `.locked` or `.dataCorrupted` —
    /// never partial data.
    public func get(service: String, account: String) throws -> SecureBytes {
        let rows = try connection.statement(
            "SELECT id, accessibility, key_id, nonce, ciphertext FROM items WHERE service = ? AND account = ?"
        ).rows([.text(service), .text(account)]) { row in
            (row.integer(0), KeychainAccessibility(rawValue: row.text(1)), row.text(2), row.blob(3), row.blob(4))
        }
        guard let (rowID, accessibilityValue, keyID, nonce, ciphertext) = rows.first else {
            throw KeychainError.notFound(service: service, account: account)
        }
        guard let accessibility = accessibilityValue else { throw KeychainError.dataCorrupted(service: service, account: account) }
        let key: SecureBytes
        do {
            let (current, currentID) = try itemKey(accessibility, creatingContainerKey: false)
            guard currentID == keyID else {
                if accessibility == .thisDeviceOnly { throw KeychainError.notFound(service: service, account: account) }
                throw KeychainError.locked(service: service, account: account)
            }
            key = current
        } catch KeychainError.containerKeyLocked {
            throw KeychainError.locked(service: service, account: account)
        } catch is CryptoError {
            // The wrapped container key does not authenticate: as corrupted as the item itself.
            throw KeychainError.dataCorrupted(service: service, account: account)
        }
        do {
            return try XChaCha20Poly1305.open(
                ciphertext: ciphertext, nonce: nonce, key: key,
                associatedData: Self.itemAssociatedData(service: service, account: account, accessibility: accessibility, keyID: keyID, rowID: rowID))
        } catch {
            throw KeychainError.dataCorrupted(service: service, account: account)
        }
    }

    /// Every item's identity, sorted by service and account.
    public func list() throws -> [KeychainItemInfo] {
        // nil when there is no container key or it is locked here.
        let unlockedContainerKeyID = (try? containerKey(creating: false)).map { "container:" + $0.id }
        return try connection.statement(
            "SELECT service, account, accessibility, key_id, created_at, updated_at FROM items ORDER BY service, account"
        ).rows { row in
            let accessibility = KeychainAccessibility(rawValue: row.text(2)) ?? .thisDeviceOnly
            let available = accessibility == .thisDeviceOnly || row.text(3) == unlockedContainerKeyID
            return KeychainItemInfo(service: row.text(0), account: row.text(1), accessibility: accessibility,
                                    status: available ? "available" : "locked", createdAt: row.text(4), updatedAt: row.text(5))
        }
    }

    /// Deletes (service, account); `.notFound` when there is no such item.
    public func delete(service: String, account: String) throws {
        try connection.writeTransaction {
            try connection.statement("DELETE FROM items WHERE service = ? AND account = ?").run([.text(service), .text(account)])
            if connection.changes == 0 { throw KeychainError.notFound(service: service, account: account) }
        }
    }

    /// Deletes every item, or those of one service; returns how many.
    @discardableResult
    public func deleteAll(service: String? = nil) throws -> Int {
        try connection.writeTransaction {
            if let service {
                try connection.statement("DELETE FROM items WHERE service = ?").run([.text(service)])
            } else {
                try connection.statement("DELETE FROM items").run()
            }
            return connection.changes
        }
    }

    /// Items sealed for another device can never be read here: remove them, as a restore onto
    /// new hardware does.
    func purgeOtherDevicesItems() throws {
        let mine = Self.deviceKeyID(device)
        if try connection.integer("SELECT count(*) FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id <> ?", [.text(mine)]) > 0 {
            try connection.writeTransaction {
                try connection.statement("DELETE FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id <> ?").run([.text(mine)])
            }
        }
    }

    // MARK: - Keys

    /// The key that seals items of `accessibility` here, with its id.
    func itemKey(_ accessibility: KeychainAccessibility, creatingContainerKey: Bool) throws -> (SecureBytes, String) {
        switch accessibility {
        case .thisDeviceOnly:
            return (try KeyDerivation.deriveSubkey(from: device.key, subkeyID: 1, context: "TBitems1"), Self.deviceKeyID(device))
        case .migratable:
            guard let containerKey = try containerKey(creating: creatingContainerKey) else {
                throw KeychainError.containerKeyLocked
            }
            return (try KeyDerivation.deriveSubkey(from: containerKey.key, subkeyID: 1, context: "TBitems1"), "container:" + containerKey.id)
        }
    }

    static func deviceKeyID(_ device: DeviceKey) -> String { "device:" + device.fingerprint }

    static func keyID(_ key: SecureBytes) throws -> String {
        Sodium.hexString(try blake2b(Array("tripboard key id v1".utf8), outputLength: 16, key: key))
    }

    /// The container key as this device can unwrap it; `nil` when none exists (and `creating` is
    /// false). Throws `.locked` when one exists but is not wrapped for this device.
    func containerKey(creating: Bool) throws -> (key: SecureBytes, id: String)? {
        let wraps = try connection.statement("""
            SELECT container_key_id, nonce, ciphertext FROM container_key_wraps WHERE wrapped_by = 'device' AND wrapping_key_id = ?
            """).rows([.text(device.fingerprint)]) { ($0.text(0), $0.blob(1), $0.blob(2)) }
        if let (id, nonce, ciphertext) = wraps.first {
            let key = try XChaCha20Poly1305.open(
                ciphertext: ciphertext, nonce: nonce, key: try deviceWrappingKey(),
                associatedData: Self.wrapAssociatedData(containerKeyID: id, wrappedBy: "device", wrappingKeyID: device.fingerprint))
            return (key, id)
        }
        if try connection.integer("SELECT count(*) FROM container_key_wraps") > 0 {
            throw KeychainError.containerKeyLocked
        }
        guard creating else { return nil }
        let key = try SecureBytes(randomCount: 32)
        let id = try Self.keyID(key)
        try storeWrap(of: key, id: id, wrappedBy: "device", wrappingKeyID: device.fingerprint, wrappingKey: try deviceWrappingKey(), parameters: nil)
        return (key, id)
    }

    func deviceWrappingKey() throws -> SecureBytes {
        try KeyDerivation.deriveSubkey(from: device.key, subkeyID: 2, context: "TBwrapCK")
    }

    func storeWrap(of key: SecureBytes, id: String, wrappedBy: String, wrappingKeyID: String, wrappingKey: SecureBytes,
                   parameters: PasswordHashParameters?) throws {
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
                      .blob(sealed.ciphertext), .text(clock().utcStamp)])
    }

    // MARK: - Recovery

    /// Wraps the container key (creating it if needed) under `passphrase` too, so migratable
    /// items can be recovered on another device. Replaces an earlier passphrase.
    public func setRecoveryPassphrase(_ passphrase: SecureBytes, parameters: PasswordHashParameters = .moderate()) throws {
        guard passphrase.count >= 8 else { throw KeychainError.invalidArgument("the recovery passphrase must be at least 8 bytes long") }
        let wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)
        try connection.writeTransaction {
            guard let (key, id) = try containerKey(creating: true) else { return }
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
        try connection.writeTransaction {
            try storeWrap(of: key, id: id, wrappedBy: "device", wrappingKeyID: device.fingerprint, wrappingKey: try deviceWrappingKey(), parameters: nil)
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

    static func encode(_ fields: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            let utf8 = Array(field.utf8)
            let count = UInt32(utf8.count)
            bytes += [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)] + utf8
        }
        return bytes
    }

    static func checkedName(_ name: String, _ what: String) throws -> String {
        guard !name.isEmpty, name.utf8.count <= 256,
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw KeychainError.invalidArgument("the \(what) must be 1–256 bytes without control characters")
        }
        return name
    }
}
