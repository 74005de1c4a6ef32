import TripBoardDevice
import TripBoardModel
import TripBoardStorage
import TripBoardSQLite
import TripBoardSodium
public import TripBoardKeys
import TripBoardSystem

/// The keys that seal items, the container key and its wraps, recovery, and the associated data
/// that binds every ciphertext to its identity. Derivations: docs/security.md.
extension Keychain {
    // MARK: - Keys

    /// A key that seals or opens items, with what the row records of it.
    struct ItemKey {
        var key: SecureBytes
        /// `device:<fingerprint>` or `container:<container key id>`.
        var keyID: String
        /// The keybag whose class key it comes from (this-device-only items).
        var keybag: String?
    }

    /// The key that seals a new value of `accessibility` for `device` now: for this-device-only
    /// items from the class key and the device key, for migratable ones from the container key of
    /// the class (made now if the container has none). Throws `.deviceLocked` when the class key
    /// is not in the kernel.
    func sealingKey(_ accessibility: KeychainAccessibility, device: DeviceKey, item: (String, String)) throws -> ItemKey {
        if accessibility.isMigratable {
            guard let container = try containerKey(.of(accessibility.protectionClass), device: device, creating: true, item: item) else {
                throw KeychainError.containerKeyLocked
            }
            return ItemKey(key: try Self.itemKey(fromContainerKey: container.key), keyID: "container:" + container.id, keybag: nil)
        }
        let (classKey, keybag) = try classKey(accessibility.protectionClass, device: device, creating: true, item: item)!
        return ItemKey(key: try Self.deviceItemKey(classKey: classKey, device: device, accessibility), keyID: Self.deviceKeyID(device),
                       keybag: keybag)
    }

    /// The key that opens a stored item: `.locked` when its container key is not unlocked here,
    /// `.deviceLocked` when its class key is not in the kernel, `.sealedUnderResetKeybag` when the
    /// keybag that sealed it was replaced, `.dataCorrupted` when a wrapped key does not open.
    func openingKey(_ row: ItemRow, device: DeviceKey) throws -> SecureBytes {
        let item = (row.service, row.account)
        do {
            switch (row.accessibility.isMigratable, row.isLegacy) {
            case (false, true):
                return try Self.legacyDeviceItemKey(device)
            case (false, false):
                guard try keybag(device) != nil else {
                    throw KeychainError.keybagMissing(path: location.directory + "/" + Keybag.fileName, keybag: row.keybag ?? "")
                }
                guard let sealedUnder = row.keybag,
                      let classKey = try classKey(row.accessibility.protectionClass, sealedUnder: sealedUnder, device: device, item: item) else {
                    throw KeychainError.sealedUnderResetKeybag(service: row.service, account: row.account)
                }
                return try Self.deviceItemKey(classKey: classKey, device: device, row.accessibility)
            case (true, _):
                let use: ContainerKeyUse = row.isLegacy ? .legacyItems : .of(row.accessibility.protectionClass)
                guard let container = try containerKey(use, device: device, creating: false, item: item),
                      "container:" + container.id == row.keyID else {
                    throw KeychainError.locked(service: row.service, account: row.account)
                }
                return try Self.itemKey(fromContainerKey: container.key)
            }
        } catch KeychainError.containerKeyLocked {
            throw KeychainError.locked(service: row.service, account: row.account)
        } catch is CryptoError {
            // A wrapped key that does not authenticate: as corrupted as the item itself.
            throw KeychainError.dataCorrupted(service: row.service, account: row.account)
        }
    }

    /// `BLAKE2b-256("tripboard keychain item v2 " || protection || KDF(deviceKey, 1, "TBitems1"),
    /// key = class key)`: needs the class key (the lock) and the device key (this device).
    static func deviceItemKey(classKey: SecureBytes, device: DeviceKey, _ accessibility: KeychainAccessibility) throws -> SecureBytes {
        try KeyDerivation.combine(classKey, with: try legacyDeviceItemKey(device), label: "tripboard keychain item v2 " + accessibility.protection)
    }

    /// The key of this-device-only items sealed before classes: `KDF(deviceKey, 1, "TBitems1")`.
    static func legacyDeviceItemKey(_ device: DeviceKey) throws -> SecureBytes {
        try KeyDerivation.deriveSubkey(from: device.key, subkeyID: 1, context: "TBitems1")
    }

    /// Migratable items' key from their container key (`KDF(key, 1, "TBitems1")`): the class's
    /// container key, or the root for items sealed before classes.
    static func itemKey(fromContainerKey key: SecureBytes) throws -> SecureBytes {
        try KeyDerivation.deriveSubkey(from: key, subkeyID: 1, context: "TBitems1")
    }

    static func deviceKeyID(_ device: DeviceKey) -> String { "device:" + device.fingerprint }

    package static func keyID(_ key: SecureBytes) throws -> String {
        Sodium.hexString(try blake2b(Array("tripboard key id v1".utf8), outputLength: 16, key: key))
    }

    // MARK: - Class keys

    /// This device's keybag as the keychain sees it: nil when there is none, or when the one in
    /// the directory belongs to another device key (a changed machine id: this device has none of
    /// its own; the lock refuses to replace it when a class key is asked for).
    func keybag(_ device: DeviceKey) throws -> Keybag? {
        do {
            return try lock(device).keybag()
        } catch DeviceError.keybagOfAnotherDevice {
            return nil
        }
    }

    /// This device's lock, made once per keychain.
    func lock(_ device: DeviceKey) throws -> DeviceLock {
        if let deviceLock, deviceLock.device.fingerprint == device.fingerprint { return deviceLock }
        let made = try DeviceLock(device: device, anchor: keyring)
        deviceLock = made
        return made
    }

    /// The key of `protection` now, with its keybag's id; nil when this device has no keybag and
    /// `creating` is false. The lock's refusals become `.deviceLocked` (naming `item`, if any).
    func classKey(_ protection: ProtectionClass, device: DeviceKey, creating: Bool,
                  item: (String, String)? = nil) throws -> (key: SecureBytes, keybag: String)? {
        // A keybag is made on demand only for a device that never had one: one that went missing
        // while this keychain holds what it sealed is not replaced behind the user's back (a new
        // keybag without a passcode would leave everything written next unlocked).
        if try keybag(device) == nil, let missing = try keybagsInUse(device: device).sorted().first {
            throw KeychainError.keybagMissing(path: location.directory + "/" + Keybag.fileName, keybag: missing)
        }
        return try Self.lockRefusals(item: item) { try lock(device).classKey(protection, creatingKeybag: creating) }
    }

    /// `body`, with the lock's refusals said as the keychain's: `.deviceLocked`, naming `item`.
    static func lockRefusals<T>(item: (String, String)? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch DeviceError.locked {
            throw KeychainError.deviceLocked(service: item?.0, account: item?.1, sinceStart: false)
        } catch DeviceError.notUnlockedSinceStart {
            throw KeychainError.deviceLocked(service: item?.0, account: item?.1, sinceStart: true)
        }
    }

    /// The key of `protection` that sealed what names `keybag` (this device's keybag or one it
    /// replaced at a passcode change); nil when the keybag never replaced that one.
    func classKey(_ protection: ProtectionClass, sealedUnder keybag: String, device: DeviceKey, item: (String, String)? = nil) throws -> SecureBytes? {
        try Self.lockRefusals(item: item) { try lock(device).classKey(protection, sealedUnder: keybag) }
    }

    // MARK: - The container key

    /// Which container key: the root (which travels: recovery and backup wraps hold it), or the
    /// one of a class, derived from the root, that seals that class's migratable items.
    enum ContainerKeyUse: Equatable {
        case root
        case of(ProtectionClass)
        /// The root, to open items an earlier build sealed with it (after-first-unlock items).
        case legacyItems
    }

    /// The key of `protection`'s migratable items: `KDF(root, 1, "TBclassK")` for `complete`
    /// (when-unlocked), `KDF(root, 2, "TBclassK")` for `until-first-unlock`.
    static func classContainerKey(root: SecureBytes, _ protection: ProtectionClass) throws -> SecureBytes {
        try KeyDerivation.deriveSubkey(from: root, subkeyID: protection == .complete ? 1 : 2, context: "TBclassK")
    }

    /// The `wrapping_key_id` of this device's wrap under a class: `<fingerprint>/<keybag>/<class>`.
    static func classWrapID(device: DeviceKey, keybag: String, _ protection: ProtectionClass) -> String {
        device.fingerprint + "/" + keybag + "/" + protection.rawValue
    }

    /// `BLAKE2b-256("tripboard container key wrap v2 " || class || KDF(deviceKey, 2, "TBwrapCK"),
    /// key = class key)`.
    static func classWrappingKey(classKey: SecureBytes, device: DeviceKey, _ protection: ProtectionClass) throws -> SecureBytes {
        try KeyDerivation.combine(classKey, with: try deviceWrappingKey(device), label: "tripboard container key wrap v2 " + protection.rawValue)
    }

    /// The container key `use` as `device` can open it now; `nil` when the container has none
    /// (and `creating` is false). This device keeps the root wrapped under its `complete` class
    /// key, and the `until-first-unlock` class's container key under that class's key, so that a
    /// locked device opens after-first-unlock items and nothing else; an earlier build's wrap of
    /// the root under the device key alone is used until the conversion replaces it. Throws
    /// `.containerKeyLocked` when a container key exists that this device has no wrap of (another
    /// device's, or one a passcode reset left behind), `.deviceLocked` when the class key is not
    /// in the kernel.
    func containerKey(_ use: ContainerKeyUse, device: DeviceKey, creating: Bool,
                      item: (String, String)? = nil) throws -> (key: SecureBytes, id: String)? {
        func derived(_ root: SecureBytes) throws -> SecureBytes {
            guard case .of(let protection) = use else { return root }
            return try Self.classContainerKey(root: root, protection)
        }
        if let legacy = try wrap(wrappingKeyID: device.fingerprint) {
            // Not converted yet (the device was locked at every open since this build came): the
            // root opens under the device key alone, but what is complete — a when-unlocked item,
            // the root itself — still waits for the class key, so it is asked for.
            if use == .root || use == .of(.complete), try keybag(device) != nil {
                _ = try classKey(.complete, device: device, creating: false, item: item)
            }
            return (try derived(try open(legacy, with: try Self.deviceWrappingKey(device))), legacy.containerKeyID)
        }
        // This keybag's wraps, else those under a keybag it replaced at a passcode change (the
        // conversion wraps the key under this one's at the next open that can).
        for keybag in try keybag(device).map({ [$0.id] + $0.previous.map(\.id) }) ?? [] {
            if use == .of(.untilFirstUnlock), let wrapped = try wrap(wrappingKeyID: Self.classWrapID(device: device, keybag: keybag, .untilFirstUnlock)),
               let classKey = try classKey(.untilFirstUnlock, sealedUnder: keybag, device: device, item: item) {
                do {
                    return (try open(wrapped, with: try Self.classWrappingKey(classKey: classKey, device: device, .untilFirstUnlock)), wrapped.containerKeyID)
                } catch is CryptoError {
                    // A damaged wrap: the root's, below, derives the same key while unlocked.
                }
            }
            if let wrapped = try wrap(wrappingKeyID: Self.classWrapID(device: device, keybag: keybag, .complete)),
               let classKey = try classKey(.complete, sealedUnder: keybag, device: device, item: item) {
                // (`.legacyItems` too: an earlier build's item left after the conversion is opened
                // with the root, which only the complete wrap holds.)
                let root = try open(wrapped, with: try Self.classWrappingKey(classKey: classKey, device: device, .complete))
                return (try derived(root), wrapped.containerKeyID)
            }
        }
        if try keybag(device) == nil, let missing = try keybagsInUse(device: device).sorted().first {
            throw KeychainError.keybagMissing(path: location.directory + "/" + Keybag.fileName, keybag: missing)
        }
        if try connection.integer("SELECT count(*) FROM container_key_wraps") > 0 {
            throw KeychainError.containerKeyLocked
        }
        guard creating else { return nil }
        let root = try SecureBytes(randomCount: 32)
        let id = try Self.keyID(root)
        try storeClassWraps(of: root, id: id, device: device, item: item)
        return (try derived(root), id)
    }

    /// Wraps the root container key for `device` under its two classes (needs both class keys:
    /// an unlocked device, or one without a passcode), replacing this device's wrap under the
    /// device key alone and its wraps under this keybag and those it replaced. Wraps under a
    /// keybag a passcode reset retired are kept: put back, that keybag opens them again.
    func storeClassWraps(of root: SecureBytes, id: String, device: DeviceKey, item: (String, String)? = nil) throws {
        let (complete, keybag) = try classKey(.complete, device: device, creating: true, item: item)!
        let (afterFirstUnlock, _) = try classKey(.untilFirstUnlock, device: device, creating: true, item: item)!
        // Its wraps under the keybags this one replaced at a passcode change go too: a copy of
        // such a keybag must open nothing from now on (their keys live on in this one).
        var replaced = [device.fingerprint]
        for id in [keybag] + (try self.keybag(device)?.previous.map(\.id) ?? []) {
            replaced += [Self.classWrapID(device: device, keybag: id, .complete), Self.classWrapID(device: device, keybag: id, .untilFirstUnlock)]
        }
        try connection.statement("DELETE FROM container_key_wraps WHERE wrapped_by = 'device' AND wrapping_key_id IN (SELECT value FROM json_each(?))")
            .run([.text(JSONWriter.array(of: replaced))])
        try storeWrap(of: root, id: id, wrappedBy: "device", wrappingKeyID: Self.classWrapID(device: device, keybag: keybag, .complete),
                      wrappingKey: try Self.classWrappingKey(classKey: complete, device: device, .complete), parameters: nil)
        try storeWrap(of: try Self.classContainerKey(root: root, .untilFirstUnlock), id: id, wrappedBy: "device",
                      wrappingKeyID: Self.classWrapID(device: device, keybag: keybag, .untilFirstUnlock),
                      wrappingKey: try Self.classWrappingKey(classKey: afterFirstUnlock, device: device, .untilFirstUnlock), parameters: nil)
    }

    /// A wrap of the container key kept for a device.
    struct StoredWrap {
        var containerKeyID: String
        var wrappingKeyID: String
        var nonce: [UInt8]
        var ciphertext: [UInt8]
    }

    func wrap(wrappingKeyID: String) throws -> StoredWrap? {
        try connection.statement("""
            SELECT container_key_id, nonce, ciphertext FROM container_key_wraps WHERE wrapped_by = 'device' AND wrapping_key_id = ?
            """).rows([.text(wrappingKeyID)]) { StoredWrap(containerKeyID: $0.text(0), wrappingKeyID: wrappingKeyID, nonce: $0.blob(1), ciphertext: $0.blob(2)) }
            .first
    }

    func open(_ wrap: StoredWrap, with key: SecureBytes) throws -> SecureBytes {
        try XChaCha20Poly1305.open(ciphertext: wrap.ciphertext, nonce: wrap.nonce, key: key,
                                   associatedData: Self.wrapAssociatedData(containerKeyID: wrap.containerKeyID, wrappedBy: "device",
                                                                           wrappingKeyID: wrap.wrappingKeyID))
    }

    /// The root container key, if this device can open it: nil when there is none or it is
    /// another device's. A device lock, a wrap that does not open, a keychain that cannot be read
    /// are thrown, not taken for "none".
    func unlockedContainerKey(device: DeviceKey) throws -> (key: SecureBytes, id: String)? {
        do {
            return try containerKey(.root, device: device, creating: false)
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
            guard let (key, id) = try containerKey(.root, device: device, creating: true) else { return }
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
        try write { try storeClassWraps(of: key, id: id, device: device) }
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
    /// Items sealed before classes (`protection` NULL) bind
    /// `["tripboard-keychain-item/v1", service, account, scope, keyID, rowID]`; the others
    /// `["tripboard-keychain-item/v2", service, account, scope, protection, keyID, keybag, rowID]`.
    static func itemAssociatedData(service: String, account: String, accessibility: KeychainAccessibility, legacy: Bool,
                                   keyID: String, keybag: String?, rowID: Int64) -> [UInt8] {
        guard !legacy else { return encode(["tripboard-keychain-item/v1", service, account, accessibility.scope, keyID, String(rowID)]) }
        return encode(["tripboard-keychain-item/v2", service, account, accessibility.scope, accessibility.protection, keyID,
                       keybag ?? "", String(rowID)])
    }

    static func wrapAssociatedData(containerKeyID: String, wrappedBy: String, wrappingKeyID: String) -> [UInt8] {
        encode(["tripboard-container-key/v1", containerKeyID, wrappedBy, wrappingKeyID])
    }

    package static func encode(_ fields: [String]) -> [UInt8] { Sodium.lengthPrefixed(fields) }
}
