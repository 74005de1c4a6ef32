import TripBoardDevice
import TripBoardModel
import TripBoardStorage
/// The device scope: which items this device sees, the device key a write needs, and the one
/// explicit way to remove what other devices sealed.
extension Keychain {
    /// This device's key for a write, created now (with its directory) if this device has none.
    /// Only writes call this: a read never leaves a new device key behind.
    func deviceForWriting() throws -> DeviceKey {
        if let device {
            try convertItemsSealedBeforeClasses(creatingKeybag: true)
            return device
        }
        let created = try DeviceKey.loadOrCreate(at: location)
        device = created
        if created.isNew { try warnIfOtherDevicesHoldItems(created) }
        try convertItemsSealedBeforeClasses(creatingKeybag: true)
        return created
    }

    /// A new device key beside items sealed for another device most often means the real device
    /// key is elsewhere (a wrong `$HOME`, `XDG_STATE_HOME` or `TRIPBOARD_DEVICE_DIR`): say so.
    func warnIfOtherDevicesHoldItems(_ device: DeviceKey) throws {
        let count = try otherDevicesItemCount(device: device)
        guard count > 0 else { return }
        notice("created a new device key \(device.path) beside \(Self.items(count)) sealed on another device (kept, unreadable here); "
            + "if this is that device, its key is elsewhere: check TRIPBOARD_DEVICE_DIR, XDG_STATE_HOME and HOME")
    }

    /// `device:<fingerprint>` of this device, or an empty string (no row's key id) while it has none.
    var myKeyID: String { device.map(Self.deviceKeyID) ?? "" }

    /// The SQL condition of an item this device sees: migratable (readable once the container key
    /// is unlocked here) or sealed under this device's key, which is bound as parameter `parameter`.
    static func visibleToDevice(parameter: Int) -> String {
        "(accessibility = 'migratable' OR key_id = ?\(parameter))"
    }

    /// How many this-device-only items were sealed on other devices (of one service, if given).
    public func otherDevicesItemCount(service: String? = nil) throws -> Int {
        try otherDevicesItemCount(device: device, service: service)
    }

    func otherDevicesItemCount(device: DeviceKey?, service: String? = nil) throws -> Int {
        let mine = device.map(Self.deviceKeyID) ?? ""
        let count = try connection.integer("""
            SELECT count(*) FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id <> ?1 AND (?2 IS NULL OR service = ?2)
            """, [.text(mine), .optional(service)])
        return Int(count)
    }

    /// True when (service, account) is an item sealed on another device.
    func isOtherDevicesItem(service: String, account: String, device: DeviceKey?) throws -> Bool {
        try connection.integer("""
            SELECT count(*) FROM items WHERE service = ?1 AND account = ?2 AND accessibility = 'thisDeviceOnly' AND key_id <> ?3
            """, [.text(service), .text(account), .text(device.map(Self.deviceKeyID) ?? "")]) > 0
    }

    /// Deletes the items `device` sees (of one service, if given) inside the caller's transaction.
    @discardableResult
    func deleteVisibleItems(service: String?, device: DeviceKey?) throws -> Int {
        try tombstoneMigratableItems(where: "(?2 IS NULL OR service = ?2)", [.optional(service)], at: clock().utcStamp)
        try connection.statement("DELETE FROM items WHERE (?1 IS NULL OR service = ?1) AND \(Self.visibleToDevice(parameter: 2))")
            .run([.optional(service), .text(device.map(Self.deviceKeyID) ?? "")])
        return connection.changes
    }

    /// Removes every this-device-only item sealed on another device (they can never be read
    /// here), as a restore onto new hardware does; returns how many. Refused while this device
    /// has no key: every item would count as another device's, and the likeliest reason is a
    /// wrong `$HOME` on the device that sealed them.
    public func forgetOtherDevices() throws -> Int {
        guard let device else { throw KeychainError.noDeviceKey(path: location.directory + "/" + DeviceKey.fileName) }
        return try write {
            try connection.statement("DELETE FROM items WHERE accessibility = 'thisDeviceOnly' AND key_id <> ?")
                .run([.text(Self.deviceKeyID(device))])
            return connection.changes
        }
    }

    /// "1 item", "3 items".
    static func items(_ count: Int) -> String { "\(count) item\(count == 1 ? "" : "s")" }
}
