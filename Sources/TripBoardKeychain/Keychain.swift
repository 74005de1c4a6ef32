public import TripBoardDevice
import TripBoardModel
public import TripBoardStorage
package import TripBoardSQLite
public import TripBoardSodium
import TripBoardSystem

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
    /// Receives one-line warnings for the user: a new device key beside other devices' items, an
    /// item of another device replaced.
    let notice: (String) -> Void

    /// Opens the container's keychain as the device at `location` sees it. Creates nothing outside
    /// the container: if this device has no key yet, the first write makes one. A keychain older
    /// than this device last saw it is refused (`.rolledBack`).
    public convenience init(container: Container, device location: DeviceLocation,
                            notice: @escaping (String) -> Void = { _ in }) throws {
        try self.init(container: container, location: location, device: try DeviceKey.existing(at: location),
                      notice: notice, refusingRollback: true)
    }

    /// Opens the container's keychain for `device`, loaded or created by the caller (the
    /// migration, a restore).
    public convenience init(container: Container, device: DeviceKey, notice: @escaping (String) -> Void = { _ in }) throws {
        try self.init(container: container, location: device.location, device: device, notice: notice, refusingRollback: true)
    }

    /// Opens the keychain even when it is rolled back, for `acceptRollback` and nothing else.
    public static func openedToAcceptRollback(container: Container, device location: DeviceLocation,
                                              notice: @escaping (String) -> Void = { _ in }) throws -> Keychain {
        try Keychain(container: container, location: location, device: try DeviceKey.existing(at: location),
                     notice: notice, refusingRollback: false)
    }

    /// Opens a keychain that `app restore` has just put in place, and gives it a new identity
    /// (recorded for `device`): a restored keychain — often older than the one it replaces, with
    /// the same id — is never taken for a rollback.
    public static func openRestored(container: Container, device: DeviceKey,
                                    notice: @escaping (String) -> Void = { _ in }) throws -> Keychain {
        let keychain = try Keychain(container: container, location: device.location, device: device, notice: notice, refusingRollback: false)
        try keychain.renewIdentity()
        return keychain
    }

    private init(container: Container, location: DeviceLocation, device: DeviceKey?, notice: @escaping (String) -> Void,
                 refusingRollback: Bool) throws {
        connection = try KeychainSchema.open(in: container)
        self.location = location
        self.device = device
        clock = container.options.clock
        lockTimeout = container.options.lockTimeout
        self.notice = notice
        if refusingRollback { try refuseIfRolledBack() }
        if let device, device.isNew { try warnIfOtherDevicesHoldItems(device) }
    }

    // MARK: - Items

    /// The keychain services of the sign-in tokens; the account is the signed-in email.
    public static let accessTokenService = "tripboard.auth.access-token"
    public static let refreshTokenService = "tripboard.auth.refresh-token"

    /// Signs `account` in, in one transaction: replaces this device's earlier tokens with these,
    /// as this-device-only items. Other devices' tokens are left alone.
    public func signIn(account: String, accessToken: SecureBytes?, refreshToken: SecureBytes?) throws {
        let account = try Self.checkedName(account, "account")
        let device = try deviceForWriting()
        let replaced = try write { () throws -> Bool in
            try deleteVisibleItems(service: Self.accessTokenService, device: device)
            try deleteVisibleItems(service: Self.refreshTokenService, device: device)
            var replaced = false
            for (service, token) in [(Self.accessTokenService, accessToken), (Self.refreshTokenService, refreshToken)] {
                guard let token else { continue }
                replaced = try store(token, service: service, account: account, accessibility: .thisDeviceOnly, device: device) || replaced
            }
            return replaced
        }
        if replaced { notice("the sign-in of \(account) sealed on another device was replaced by this one") }
    }

    /// Stores `value` for (service, account), replacing any earlier value — also one sealed on
    /// another device, which is then this device's (and a notice says so).
    public func set(service: String, account: String, value: SecureBytes,
                    accessibility: KeychainAccessibility = .thisDeviceOnly) throws {
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
        let (key, keyID) = try itemKey(accessibility, device: device, creatingContainerKey: true)
        let now = clock().utcStamp
        if accessibility == .thisDeviceOnly {
            try tombstoneMigratableItems(where: "service = ?2 AND account = ?3", [.text(service), .text(account)], at: now)
        }
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
        switch (accessibility, fromSync) {
        case (.thisDeviceOnly, _):
            try connection.statement("""
                UPDATE items SET sync_pending = 0, sync_version = NULL, sync_stamp = NULL, sync_digest = NULL,
                    sync_conflict_version = NULL WHERE id = ?
                """).run([.integer(rowID)])
        case (.migratable, false):
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
        case (.migratable, true):
            break
        }
        return replaced
    }

    /// The value of (service, account). Throws `.notFound`, `.sealedOnAnotherDevice`, `.locked`
    /// or `.dataCorrupted` — never partial data.
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
        guard let device, accessibility == .migratable || keyID == Self.deviceKeyID(device) else {
            if accessibility == .thisDeviceOnly { throw KeychainError.sealedOnAnotherDevice(service: service, account: account) }
            throw KeychainError.locked(service: service, account: account)
        }
        let key = try readingKey(accessibility, keyID: keyID, device: device, service: service, account: account)
        do {
            return try XChaCha20Poly1305.open(
                ciphertext: ciphertext, nonce: nonce, key: key,
                associatedData: Self.itemAssociatedData(service: service, account: account, accessibility: accessibility, keyID: keyID, rowID: rowID))
        } catch {
            throw KeychainError.dataCorrupted(service: service, account: account)
        }
    }

    /// The key that opens an item sealed under `keyID`: `.locked` when it is a container key this
    /// device has not unlocked, `.dataCorrupted` when the wrapped container key does not open.
    func readingKey(_ accessibility: KeychainAccessibility, keyID: String, device: DeviceKey,
                    service: String, account: String) throws -> SecureBytes {
        do {
            let (key, currentID) = try itemKey(accessibility, device: device, creatingContainerKey: false)
            guard currentID == keyID else { throw KeychainError.locked(service: service, account: account) }
            return key
        } catch KeychainError.containerKeyLocked {
            throw KeychainError.locked(service: service, account: account)
        } catch is CryptoError {
            // The wrapped container key does not authenticate: as corrupted as the item itself.
            throw KeychainError.dataCorrupted(service: service, account: account)
        }
    }

    /// The identity of every item this device sees (its own and the migratable ones), sorted by
    /// service and account. Items sealed on other devices are counted by `otherDevicesItemCount`.
    public func list() throws -> [KeychainItemInfo] {
        // nil when there is no container key or it is locked here.
        let unlockedContainerKeyID = try device.flatMap { try unlockedContainerKey(device: $0) }.map { "container:" + $0.id }
        return try connection.statement("""
            SELECT service, account, accessibility, key_id, created_at, updated_at FROM items
            WHERE \(Self.visibleToDevice(parameter: 1)) ORDER BY service, account
            """).rows([.text(myKeyID)]) { row in
            let accessibility = KeychainAccessibility(rawValue: row.text(2)) ?? .thisDeviceOnly
            let available = accessibility == .thisDeviceOnly || row.text(3) == unlockedContainerKeyID
            return KeychainItemInfo(service: row.text(0), account: row.text(1), accessibility: accessibility,
                                    status: available ? "available" : "locked", createdAt: row.text(4), updatedAt: row.text(5))
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
