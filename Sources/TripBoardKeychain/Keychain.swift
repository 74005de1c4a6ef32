public import TripBoardDevice
import TripBoardModel
public import TripBoardStorage
package import TripBoardSQLite
import TripBoardSodium
public import TripBoardKeys
public import TripBoardSystem

/// When and where a keychain item can be read, as in Apple's keychain: `when-unlocked` items only
/// while the device is unlocked, `after-first-unlock` ones from the first unlock after the computer
/// starts; `this-device-only` ones never leave this device (sealed under its key), the others
/// travel — sync, backups, recovery — sealed under the container key. docs/security.md, "Keychain
/// accessibility".
public enum KeychainAccessibility: String, Sendable, Codable, CaseIterable {
    case whenUnlocked = "when-unlocked"
    case afterFirstUnlock = "after-first-unlock"
    case whenUnlockedThisDeviceOnly = "when-unlocked-this-device-only"
    case afterFirstUnlockThisDeviceOnly = "after-first-unlock-this-device-only"

    /// An accessibility as `keychain set --accessibility` takes it: the four names, and the two of
    /// earlier builds (`this-device-only` is `after-first-unlock-this-device-only`, `migratable`
    /// is `after-first-unlock`).
    public init?(typed: String) {
        switch typed {
        case "this-device-only": self = .afterFirstUnlockThisDeviceOnly
        case "migratable": self = .afterFirstUnlock
        default: self.init(rawValue: typed)
        }
    }

    /// Whether the item travels (sync, backups, the recovery passphrase) under the container key.
    public var isMigratable: Bool { self == .whenUnlocked || self == .afterFirstUnlock }

    /// The protection class whose key seals it: `complete` or `until-first-unlock`.
    public var protectionClass: ProtectionClass {
        self == .whenUnlocked || self == .whenUnlockedThisDeviceOnly ? .complete : .untilFirstUnlock
    }

    /// The database's `accessibility` column: where the item may go.
    var scope: String { isMigratable ? "migratable" : "thisDeviceOnly" }

    /// The database's `protection` column: when the item can be read.
    var protection: String { protectionClass == .complete ? "when-unlocked" : "after-first-unlock" }

    /// The accessibility of a row: its scope, and its protection (NULL: sealed before classes,
    /// read as after-first-unlock).
    init?(scope: String, protection: String?) {
        let whenUnlocked: Bool
        switch protection {
        case nil, "after-first-unlock": whenUnlocked = false
        case "when-unlocked": whenUnlocked = true
        default: return nil
        }
        switch scope {
        case "migratable": self = whenUnlocked ? .whenUnlocked : .afterFirstUnlock
        case "thisDeviceOnly": self = whenUnlocked ? .whenUnlockedThisDeviceOnly : .afterFirstUnlockThisDeviceOnly
        default: return nil
        }
    }
}

/// A keychain item's identity and metadata: never its value.
public struct KeychainItemInfo: Sendable, Equatable, Codable {
    public var service: String
    public var account: String
    public var accessibility: KeychainAccessibility
    /// `available`; `locked` (the device is locked, or has not been unlocked since it started, or
    /// the container key is not unlocked on this device); or `reset` (sealed under a keybag that
    /// `app device passcode reset` replaced: unreadable here for good); `no-keybag` (this device's
    /// keybag is missing from its directory); `damaged` (the wrapped key
    /// that would open it does not authenticate).
    public var status: String
    public var createdAt: String
    public var updatedAt: String
}

/// Secrets shared by the app and its extensions through the container, sealed with libsodium
/// (XChaCha20-Poly1305) under keys that never leave this device. Format: docs/security.md.
///
/// The keychain is seen as one device sees it: `this-device-only` items sealed on another device
/// (a copied container, another `device.key`, another machine id) are invisible to `get`,
/// `list`, `delete` — but kept, counted by `otherDevicesItemCount`, and removed only by
/// `forgetOtherDevices`. Nothing that only reads creates or changes anything outside the container.
public final class Keychain {
    package let connection: Connection
    let location: DeviceLocation
    /// This device's key; `nil` while this device has none (nothing is sealed for it yet). The
    /// first write creates it (`deviceForWriting`).
    var device: DeviceKey?
    let clock: @Sendable () -> Timestamp
    let lockTimeout: Double
    /// Where this device's unlocked class keys are held (`TRIPBOARD_KEYRING`).
    let keyring: KernelKeyring.Anchor
    /// This device's lock, once a class key was needed (`lock(_:)`).
    var deviceLock: DeviceLock?
    /// Receives one-line warnings for the user: a new device key beside other devices' items, an
    /// item of another device replaced.
    let notice: (String) -> Void

    /// Opens the container's keychain as the device at `location` sees it. Creates nothing outside
    /// the container: if this device has no key yet, the first write makes one. A keychain older
    /// than this device last saw it is refused (`.rolledBack`).
    public convenience init(container: Container, device location: DeviceLocation, keyring: KernelKeyring.Anchor = .user,
                            notice: @escaping (String) -> Void = { _ in }) throws {
        try self.init(container: container, location: location, device: try DeviceKey.existing(at: location), keyring: keyring,
                      notice: notice, refusingRollback: true)
    }

    /// Opens the container's keychain for `device`, loaded or created by the caller (the
    /// migration, a restore).
    public convenience init(container: Container, device: DeviceKey, keyring: KernelKeyring.Anchor = .user,
                            notice: @escaping (String) -> Void = { _ in }) throws {
        try self.init(container: container, location: device.location, device: device, keyring: keyring, notice: notice,
                      refusingRollback: true)
    }

    /// Opens the keychain even when it is rolled back, for `acceptRollback` and nothing else.
    public static func openedToAcceptRollback(container: Container, device location: DeviceLocation, keyring: KernelKeyring.Anchor = .user,
                                              notice: @escaping (String) -> Void = { _ in }) throws -> Keychain {
        try Keychain(container: container, location: location, device: try DeviceKey.existing(at: location), keyring: keyring,
                     notice: notice, refusingRollback: false)
    }

    /// Opens a keychain that `app restore` has just put in place, and gives it a new identity
    /// (recorded for `device`): a restored keychain — often older than the one it replaces, with
    /// the same id — is never taken for a rollback.
    public static func openRestored(container: Container, device: DeviceKey, keyring: KernelKeyring.Anchor = .user,
                                    notice: @escaping (String) -> Void = { _ in }) throws -> Keychain {
        let keychain = try Keychain(container: container, location: device.location, device: device, keyring: keyring, notice: notice,
                                    refusingRollback: false)
        try keychain.renewIdentity()
        return keychain
    }

    private init(container: Container, location: DeviceLocation, device: DeviceKey?, keyring: KernelKeyring.Anchor,
                 notice: @escaping (String) -> Void, refusingRollback: Bool) throws {
        connection = try KeychainSchema.open(in: container)
        self.location = location
        self.device = device
        self.keyring = keyring
        clock = container.options.clock
        lockTimeout = container.options.lockTimeout
        self.notice = notice
        if refusingRollback { try refuseIfRolledBack() }
        if let device, device.isNew { try warnIfOtherDevicesHoldItems(device) }
        if refusingRollback { try convertItemsSealedBeforeClasses(creatingKeybag: false) }
    }

    // MARK: - Items

    /// The keychain services of the sign-in tokens; the account is the signed-in email.
    public static let accessTokenService = "tripboard.auth.access-token"
    public static let refreshTokenService = "tripboard.auth.refresh-token"

    /// Signs `account` in, in one transaction: replaces this device's earlier tokens with these —
    /// the access token `when-unlocked-this-device-only` (only the app in use needs it), the
    /// refresh token `after-first-unlock-this-device-only` (a background task renews with it).
    /// Other devices' tokens are left alone.
    public func signIn(account: String, accessToken: SecureBytes?, refreshToken: SecureBytes?) throws {
        let account = try Self.checkedName(account, "account")
        let device = try deviceForWriting()
        let replaced = try write { () throws -> Bool in
            try deleteVisibleItems(service: Self.accessTokenService, device: device)
            try deleteVisibleItems(service: Self.refreshTokenService, device: device)
            var replaced = false
            for (service, token, accessibility) in [(Self.accessTokenService, accessToken, KeychainAccessibility.whenUnlockedThisDeviceOnly),
                                                    (Self.refreshTokenService, refreshToken, .afterFirstUnlockThisDeviceOnly)] {
                guard let token else { continue }
                replaced = try store(token, service: service, account: account, accessibility: accessibility, device: device) || replaced
            }
            return replaced
        }
        if replaced { notice("the sign-in of \(account) sealed on another device was replaced by this one") }
    }

    /// Stores `value` for (service, account), replacing any earlier value — also one sealed on
    /// another device, which is then this device's (and a notice says so).
    public func set(service: String, account: String, value: SecureBytes,
                    accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly) throws {
        let service = try Self.checkedName(service, "service")
        let account = try Self.checkedName(account, "account")
        guard value.count > 0 else { throw KeychainError.invalidArgument("the value is empty") }
        let device = try deviceForWriting()
        let replaced = try write {
            try store(value, service: service, account: account, accessibility: accessibility, device: device)
        }
        if replaced { notice("the item for service '\(service)' and account '\(account)' was sealed on another device; this device's value replaced it") }
    }

    /// Inserts or updates the row inside the caller's write transaction, then seals `value` with
    /// the row id in its associated data. True when the row was another device's item.
    ///
    /// Sync bookkeeping follows in the same transaction (docs/sync.md, "Keychain items"): a
    /// migratable item written here waits for the server (taking over the version of a tombstone
    /// it replaces); one made this-device-only leaves a tombstone when the server had it.
    /// `fromSync` (a value pulled from the server) leaves the bookkeeping to the sync engine.
    func store(_ value: SecureBytes, service: String, account: String, accessibility: KeychainAccessibility,
               device: DeviceKey, fromSync: Bool = false) throws -> Bool {
        let replaced = try isOtherDevicesItem(service: service, account: account, device: device)
        if let existing = try itemRow(service: service, account: account), !existing.isLegacy, existing.accessibility.protectionClass == .complete,
           existing.accessibility.isMigratable || existing.keyID == Self.deviceKeyID(device) {
            // A when-unlocked item is not written while locked, whatever the new value's
            // accessibility (as iOS refuses to update one): neither its value nor its class changes.
            _ = try classKey(.complete, device: device, creating: false, item: (service, account))
        }
        let key = try sealingKey(accessibility, device: device, item: (service, account))
        let now = clock().utcStamp
        if !accessibility.isMigratable {
            try tombstoneMigratableItems(where: "service = ?2 AND account = ?3", [.text(service), .text(account)], at: now)
        }
        try connection.statement("""
            INSERT INTO items (service, account, accessibility, protection, key_id, keybag_id, nonce, ciphertext, created_at, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, x'', x'', ?7, ?7)
            ON CONFLICT (service, account) DO UPDATE SET accessibility = ?3, protection = ?4, key_id = ?5, keybag_id = ?6, updated_at = ?7
            """).run([.text(service), .text(account), .text(accessibility.scope), .text(accessibility.protection), .text(key.keyID),
                      .optional(key.keybag), .text(now)])
        let rowID = try connection.integer("SELECT id FROM items WHERE service = ? AND account = ?", [.text(service), .text(account)])
        try seal(value, ItemRow(id: rowID, service: service, account: account, accessibility: accessibility, isLegacy: false,
                                keyID: key.keyID, keybag: key.keybag), key: key.key)
        switch (accessibility.isMigratable, fromSync) {
        case (false, _):
            try connection.statement("""
                UPDATE items SET sync_pending = 0, sync_version = NULL, sync_stamp = NULL, sync_digest = NULL,
                    sync_conflict_version = NULL WHERE id = ?
                """).run([.integer(rowID)])
        case (true, false):
            let tombstone = try connection.statement("DELETE FROM sync_tombstones WHERE service = ? AND account = ? RETURNING remote_version, incarnation")
                .rows([.text(service), .text(account)]) { ($0.integer(0), $0.optionalText(1)) }.first
            try connection.statement("UPDATE items SET sync_pending = 1, sync_version = coalesce(sync_version, ?) WHERE id = ?")
                .run([.optional(tombstone?.0), .integer(rowID)])
            if let tombstone {
                // Set again after its deletion: a new incarnation, sealed with its next push; the
                // deleted one is over, and a replay of its deletion cannot take this one.
                try noteDeadIncarnation(service: service, account: account, tombstone.1 ?? Self.legacySyncIncarnation)
                try setSyncIncarnation(service: service, account: account, SyncLedger.newIncarnation())
            }
        case (true, true):
            break
        }
        return replaced
    }

    /// Seals `value` into `row` (its nonce and ciphertext) with the row's identity bound.
    func seal(_ value: SecureBytes, _ row: ItemRow, key: SecureBytes) throws {
        let sealed = try XChaCha20Poly1305.seal(plaintext: value, key: key, associatedData: row.associatedData)
        try connection.statement("UPDATE items SET nonce = ?, ciphertext = ? WHERE id = ?")
            .run([.blob(sealed.nonce), .blob(sealed.ciphertext), .integer(row.id)])
    }

    /// The value of (service, account). Throws `.notFound`, `.sealedOnAnotherDevice`, `.locked`
    /// or `.dataCorrupted` — never partial data.
    public func get(service: String, account: String) throws -> SecureBytes {
        guard let row = try itemRow(service: service, account: account) else {
            throw KeychainError.notFound(service: service, account: account)
        }
        guard let device, row.accessibility.isMigratable || row.keyID == Self.deviceKeyID(device) else {
            if !row.accessibility.isMigratable { throw KeychainError.sealedOnAnotherDevice(service: service, account: account) }
            throw KeychainError.locked(service: service, account: account)
        }
        return try open(row, key: try openingKey(row, device: device))
    }

    /// The value sealed in `row`, or `.dataCorrupted`.
    func open(_ row: ItemRow, key: SecureBytes) throws -> SecureBytes {
        do {
            return try XChaCha20Poly1305.open(ciphertext: row.ciphertext, nonce: row.nonce, key: key, associatedData: row.associatedData)
        } catch {
            throw KeychainError.dataCorrupted(service: row.service, account: row.account)
        }
    }

    /// The identity of every item this device sees (its own and the migratable ones), sorted by
    /// service and account, each with whether it can be read now. Items sealed on other devices
    /// are counted by `otherDevicesItemCount`.
    public func list() throws -> [KeychainItemInfo] {
        var statuses: [String: String] = [:]
        let rows = try connection.statement("""
            SELECT \(ItemRow.columns), created_at, updated_at FROM items
            WHERE \(Self.visibleToDevice(parameter: 1)) ORDER BY service, account
            """).rows([.text(myKeyID)]) { (ItemRow(reading: $0), $0.text(9), $0.text(10)) }
        return try rows.map { row, createdAt, updatedAt in
            guard let row else { throw StoreError.corrupt(path: connection.path, detail: "a keychain item's accessibility is not one this build knows") }
            // Whether the key opens is the same for every item of one kind: asked once per kind.
            let kind = [row.accessibility.rawValue, row.isLegacy ? "legacy" : "", row.keyID, row.keybag ?? ""].joined(separator: "|")
            let status = try statuses[kind] ?? availability(of: row)
            statuses[kind] = status
            return KeychainItemInfo(service: row.service, account: row.account, accessibility: row.accessibility, status: status,
                                    createdAt: createdAt, updatedAt: updatedAt)
        }
    }

    /// `available`, `locked` or `reset`, as `list` shows it.
    private func availability(of row: ItemRow) throws -> String {
        guard let device else { return "locked" }
        do {
            _ = try openingKey(row, device: device)
            return "available"
        } catch KeychainError.sealedUnderResetKeybag {
            return "reset"
        } catch KeychainError.locked, KeychainError.deviceLocked {
            return "locked"
        } catch KeychainError.dataCorrupted {
            return "damaged"
        } catch KeychainError.keybagMissing {
            return "no-keybag"
        }
    }

    /// Deletes (service, account); `.notFound` when there is no such item, `.sealedOnAnotherDevice`
    /// when it is another device's (only `forgetOtherDevices` removes those).
    public func delete(service: String, account: String) throws {
        try write {
            try tombstoneMigratableItems(where: "service = ?2 AND account = ?3", [.text(service), .text(account)], at: clock().utcStamp)
            try connection.statement("DELETE FROM items WHERE service = ?1 AND account = ?2 AND \(Self.visibleToDevice(parameter: 3))")
                .run([.text(service), .text(account), .text(myKeyID)])
            guard connection.changes == 0 else { return }
            if try isOtherDevicesItem(service: service, account: account, device: device) {
                throw KeychainError.sealedOnAnotherDevice(service: service, account: account)
            }
            throw KeychainError.notFound(service: service, account: account)
        }
    }

    /// Deletes every item this device sees, or those of one service; returns how many. Other
    /// devices' items are kept.
    @discardableResult
    public func deleteAll(service: String? = nil) throws -> Int {
        try write { try deleteVisibleItems(service: service, device: device) }
    }

    package static func checkedName(_ name: String, _ what: String) throws -> String {
        guard !name.isEmpty, name.utf8.count <= 256,
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw KeychainError.invalidArgument("the \(what) must be 1–256 bytes without control characters")
        }
        return name
    }
}
