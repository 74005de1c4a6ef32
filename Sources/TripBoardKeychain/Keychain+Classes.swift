import TripBoardDevice
import TripBoardModel
import TripBoardStorage
import TripBoardSQLite
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem

/// An item's row as the keys see it: its identity, what seals it, and its sealed value.
struct ItemRow {
    /// The columns `init(reading:)` reads, in order.
    static let columns = "id, service, account, accessibility, protection, key_id, keybag_id, nonce, ciphertext"

    var id: Int64
    var service: String
    var account: String
    var accessibility: KeychainAccessibility
    /// Sealed before protection classes (`protection` NULL): the v1 keys and associated data.
    var isLegacy: Bool
    var keyID: String
    var keybag: String?
    var nonce: [UInt8] = []
    var ciphertext: [UInt8] = []

    init(id: Int64, service: String, account: String, accessibility: KeychainAccessibility, isLegacy: Bool, keyID: String, keybag: String?) {
        (self.id, self.service, self.account, self.accessibility) = (id, service, account, accessibility)
        (self.isLegacy, self.keyID, self.keybag) = (isLegacy, keyID, keybag)
    }

    /// nil for an accessibility this build does not know (the schema's CHECKs make that damage).
    init?(reading row: Statement) {
        guard let accessibility = KeychainAccessibility(scope: row.text(3), protection: row.optionalText(4)) else { return nil }
        self.init(id: row.integer(0), service: row.text(1), account: row.text(2), accessibility: accessibility,
                  isLegacy: row.optionalText(4) == nil, keyID: row.text(5), keybag: row.optionalText(6))
        (nonce, ciphertext) = (row.blob(7), row.blob(8))
    }

    var associatedData: [UInt8] {
        Keychain.itemAssociatedData(service: service, account: account, accessibility: accessibility, legacy: isLegacy,
                                    keyID: keyID, keybag: keybag, rowID: id)
    }
}

/// Items sealed before protection classes, converted in place (docs/security.md, "Keychain
/// accessibility").
extension Keychain {
    func itemRow(service: String, account: String) throws -> ItemRow? {
        let rows = try connection.statement("SELECT \(ItemRow.columns) FROM items WHERE service = ? AND account = ?")
            .rows([.text(service), .text(account)]) { ItemRow(reading: $0) }
        guard let first = rows.first else { return nil }
        guard let row = first else { throw KeychainError.dataCorrupted(service: service, account: account) }
        return row
    }

    /// Re-seals this device's items sealed before classes as after-first-unlock (what they were:
    /// readable at any time after a start), and replaces the wrap of the container key under the
    /// device key alone by this device's wraps under its class keys — in one transaction, so that
    /// a crash leaves either the old form or the new. Needs both class keys: on a locked device
    /// nothing is converted, and the items stay readable as they were until it is unlocked. At
    /// open, a device without a keybag (it never had a passcode) waits for its first write
    /// (`creatingKeybag`), so that reading never creates a file outside the container. An item
    /// that does not open under its old key is left as it is (`get` says it is corrupted).
    ///
    /// The same pass moves what was sealed under a keybag that `passcode set` or `change` replaced
    /// (`Keybag.previous`) to the current one: this device's this-device-only items are sealed
    /// again under its class keys, and the container key wrapped under them.
    func convertItemsSealedBeforeClasses(creatingKeybag: Bool) throws {
        guard let device else { return }
        let legacyWrap = try wrap(wrappingKeyID: device.fingerprint)
        let waiting = try connection.integer("""
            SELECT count(*) FROM items WHERE protection IS NULL AND (accessibility = 'migratable' OR key_id = ?)
            """, [.text(Self.deviceKeyID(device))])
        let earlier = try earlierKeybagWork(device: device)
        guard waiting > 0 || legacyWrap != nil || earlier.items > 0 || earlier.wraps else { return }
        do {
            guard try classKey(.complete, device: device, creating: creatingKeybag) != nil,
                  try classKey(.untilFirstUnlock, device: device, creating: creatingKeybag) != nil else { return }
        } catch KeychainError.deviceLocked {
            return
        } catch KeychainError.keybagMissing {
            return  // said by whatever needs a class key; the old form reads meanwhile
        } catch DeviceError.keyringUnavailable {
            return
        }
        try write {
            // Read again inside the transaction: another process may have converted them. A wrap
            // that does not open is left as it is (the items it seals then wait, and `get` says
            // they are damaged): the conversion never stands in the way of the rest.
            var root: (key: SecureBytes, id: String)?
            if let legacyWrap = try wrap(wrappingKeyID: device.fingerprint) {
                do {
                    let key = try open(legacyWrap, with: try Self.deviceWrappingKey(device))
                    try storeClassWraps(of: key, id: legacyWrap.containerKeyID, device: device)
                    root = (key, legacyWrap.containerKeyID)
                } catch is CryptoError {
                    root = nil
                }
            } else {
                do {
                    root = try unlockedContainerKey(device: device)
                } catch is CryptoError {
                    root = nil
                }
                if let root, try earlierKeybagWork(device: device).wraps {
                    try storeClassWraps(of: root.key, id: root.id, device: device)
                }
            }
            let earlierKeybags = try keybag(device)?.previous.map(\.id) ?? []
            let earlierRows = try connection.statement("""
                SELECT \(ItemRow.columns) FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id = ? AND protection IS NOT NULL
                    AND keybag_id IN (SELECT value FROM json_each(?))
                """).rows([.text(Self.deviceKeyID(device)), .text(JSONWriter.array(of: earlierKeybags))]) { ItemRow(reading: $0) }
            for case let row? in earlierRows {
                try reseal(row, device: device)
                CrashPoint.reach("keychain.converting")
            }
            let rows = try connection.statement("""
                SELECT \(ItemRow.columns) FROM items WHERE protection IS NULL AND (accessibility = 'migratable' OR key_id = ?)
                """).rows([.text(Self.deviceKeyID(device))]) { ItemRow(reading: $0) }
            for case let row? in rows {
                try convert(row, root: root, device: device)
                CrashPoint.reach("keychain.converting")
            }
        }
    }

    /// What a passcode change left to move to the current keybag: this device's items sealed
    /// under an earlier one, and whether the container key is wrapped under an earlier one only.
    private func earlierKeybagWork(device: DeviceKey) throws -> (items: Int64, wraps: Bool) {
        guard let keybag = try keybag(device), !keybag.previous.isEmpty else { return (0, false) }
        let earlier = keybag.previous.map(\.id)
        let items = try connection.integer("""
            SELECT count(*) FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id = ? AND protection IS NOT NULL
                AND keybag_id IN (SELECT value FROM json_each(?))
            """, [.text(Self.deviceKeyID(device)), .text(JSONWriter.array(of: earlier))])
        let current = try wrap(wrappingKeyID: Self.classWrapID(device: device, keybag: keybag.id, .complete)) != nil
        let wraps = try !current && earlier.contains { try wrap(wrappingKeyID: Self.classWrapID(device: device, keybag: $0, .complete)) != nil }
        return (items, wraps)
    }

    /// A this-device-only item sealed under an earlier keybag, sealed again under the current
    /// one, inside the conversion's transaction; one that does not open is left as it is.
    private func reseal(_ earlier: ItemRow, device: DeviceKey) throws {
        guard let sealedUnder = earlier.keybag,
              let classKey = try classKey(earlier.accessibility.protectionClass, sealedUnder: sealedUnder, device: device) else { return }
        let value: SecureBytes
        do {
            value = try open(earlier, key: try Self.deviceItemKey(classKey: classKey, device: device, earlier.accessibility))
        } catch {
            return
        }
        let key = try sealingKey(earlier.accessibility, device: device, item: (earlier.service, earlier.account))
        var row = earlier
        row.keybag = key.keybag
        try connection.statement("UPDATE items SET keybag_id = ? WHERE id = ?").run([.optional(row.keybag), .integer(row.id)])
        try seal(value, row, key: key.key)
    }

    /// One item, inside the conversion's transaction.
    private func convert(_ legacy: ItemRow, root: (key: SecureBytes, id: String)?, device: DeviceKey) throws {
        let oldKey: SecureBytes
        if legacy.accessibility.isMigratable {
            guard let root, legacy.keyID == "container:" + root.id else { return }  // another container key's: it waits
            oldKey = try Self.itemKey(fromContainerKey: root.key)
        } else {
            oldKey = try Self.legacyDeviceItemKey(device)
        }
        let value: SecureBytes
        do {
            value = try open(legacy, key: oldKey)
        } catch {
            return  // it does not open: left as it is, and `get` says it is corrupted
        }
        var row = legacy
        row.isLegacy = false
        let accessibility = legacy.accessibility
        if accessibility.isMigratable {
            row.keybag = nil
            row.keyID = "container:" + root!.id
        } else {
            let (_, keybag) = try classKey(accessibility.protectionClass, device: device, creating: false)!
            row.keybag = keybag
        }
        try connection.statement("UPDATE items SET protection = ?, keybag_id = ? WHERE id = ?")
            .run([.text(accessibility.protection), .optional(row.keybag), .integer(row.id)])
        try seal(value, row, key: try sealingKey(accessibility, device: device, item: (row.service, row.account)).key)
    }
}

/// What this device's keychain holds under one keybag: what `app device passcode reset` would
/// leave unreadable here.
public struct KeybagDependents: Sendable {
    /// This device's this-device-only items sealed under the keybag's class keys: lost here.
    public var thisDeviceOnly: [(service: String, account: String)]
    /// Migratable items, when this device's wrap of the container key is under the keybag:
    /// unreadable here until `keychain recover`, a restore, or (another device) a sync.
    public var migratable: Int
}

extension Keychain {
    /// The ids of the keybags this device's items and wraps in this keychain are sealed under.
    public func keybagsInUse() throws -> Set<String> {
        guard let device else { return [] }
        return try keybagsInUse(device: device)
    }

    func keybagsInUse(device: DeviceKey) throws -> Set<String> {
        var ids = Set(try connection.statement("""
            SELECT DISTINCT keybag_id FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id = ? AND keybag_id IS NOT NULL
            """).rows([.text(Self.deviceKeyID(device))]) { $0.text(0) })
        let prefix = device.fingerprint + "/"
        for wrapID in try connection.statement("SELECT wrapping_key_id FROM container_key_wraps WHERE wrapped_by = 'device' AND substr(wrapping_key_id, 1, ?) = ?")
            .rows([.integer(Int64(prefix.utf8.count)), .text(prefix)], { $0.text(0) }) {
            let parts = wrapID.split(separator: "/")
            if parts.count == 3 { ids.insert(String(parts[1])) }
        }
        return ids
    }

    /// What is sealed under `keybags` on this device (a keybag and those it replaced; nothing when
    /// this device has no key).
    public func dependents(ofKeybags keybags: [String]) throws -> KeybagDependents {
        guard let device else { return KeybagDependents(thisDeviceOnly: [], migratable: 0) }
        let items = try connection.statement("""
            SELECT service, account FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id = ?
                AND keybag_id IN (SELECT value FROM json_each(?)) ORDER BY service, account
            """).rows([.text(Self.deviceKeyID(device)), .text(JSONWriter.array(of: keybags))]) { ($0.text(0), $0.text(1)) }
        let wrapped = try keybags.contains { try wrap(wrappingKeyID: Self.classWrapID(device: device, keybag: $0, .complete)) != nil }
        let migratable = wrapped ? Int(try connection.integer("SELECT count(*) FROM items WHERE accessibility = 'migratable'")) : 0
        return KeybagDependents(thisDeviceOnly: items.map { (service: $0.0, account: $0.1) }, migratable: migratable)
    }
}
