package import TripBoardKeys
import TripBoardSystem

/// Where this device's state lives, outside any container: its key (`device.key`) and its record
/// of the generation each keychain has reached (`KeychainGenerations`).
public struct DeviceLocation: Sendable, Equatable {
    /// `TRIPBOARD_DEVICE_DIR` › `$XDG_STATE_HOME/tripboard` › `~/.local/state/tripboard`.
    public var directory: String
    /// The machine id mixed into the key (`/etc/machine-id`; `TRIPBOARD_MACHINE_ID_FILE` in tests).
    public var machineIDFile: String

    public init(directory: String, machineIDFile: String = "/etc/machine-id") {
        self.directory = directory
        self.machineIDFile = machineIDFile
    }

    /// The location the environment names.
    public init(environment: [String: String]) throws {
        let machineIDFile = environment["TRIPBOARD_MACHINE_ID_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/machine-id"
        guard let directory = DeviceLockProbe.deviceDirectory(environment: environment) else { throw DeviceError.noDeviceDirectory }
        self.init(directory: directory, machineIDFile: machineIDFile)
    }
}

/// The key that makes this device this device: it never travels with the container.
///
/// `device.key` (32 random bytes, 0600, in a 0700 directory outside the container, see
/// `DeviceLocation`) is mixed with an app-specific keyed hash of `/etc/machine-id`, so neither a
/// copied container nor a copied state directory carries the device to another machine.
/// docs/security.md has the exact derivation.
///
/// Only a command that writes the keychain creates the key (`loadOrCreate`); reading commands
/// use `existing`, which creates nothing, not even the directory: a read with the wrong
/// `$HOME` must not leave a new device behind.
public final class DeviceKey {
    /// The effective device key (never printed; see `SecureBytes`).
    package let key: SecureBytes
    /// A public, stable identifier of the effective key: 16 bytes of keyed BLAKE2b, in hex.
    public let fingerprint: String
    /// Where the key file is.
    public let path: String
    /// Where this device's state lives.
    public let location: DeviceLocation
    /// True when this process created the key file (it did not exist).
    public let isNew: Bool

    package static let fileName = "device.key"
    static let keyLength = 32
    /// Fixed, public key of the keyed hash that turns the machine id into an app-specific value
    /// (as systemd's sd_id128_get_machine_app_specific does): the raw id is never stored or used.
    static let machineIDHashKey: [UInt8] = Array("TripBoard app-specific machine id".utf8.prefix(32))

    private init(fileKey: inout [UInt8], location: DeviceLocation, isNew: Bool) throws {
        let deviceKeyFile = try SecureBytes(wiping: &fileKey)
        let machine = try Self.appSpecificMachineID(file: location.machineIDFile)
        var effective = try blake2b(Array("tripboard device key v1".utf8) + machine, outputLength: Self.keyLength, key: deviceKeyFile)
        key = try SecureBytes(wiping: &effective)
        fingerprint = Sodium.hexString(try blake2b(Array("tripboard key id v1".utf8), outputLength: 16, key: key))
        path = location.directory.hasSuffix("/") ? location.directory + Self.fileName : location.directory + "/" + Self.fileName
        self.location = location
        self.isNew = isNew
    }

    /// This device's key if it has one; `nil` when the directory or the key file does not exist.
    /// Creates and changes nothing.
    public static func existing(at location: DeviceLocation) throws -> DeviceKey? {
        guard let directory = try Directory.openIfPresent(path: location.directory) else { return nil }
        try checkOwner(of: directory)
        guard var fileKey = try readKeyFile(in: directory) else { return nil }
        return try DeviceKey(fileKey: &fileKey, location: location, isNew: false)
    }

    /// This device's key, creating the directory (0700) and the key file on first use — for a
    /// command that writes the keychain, or a restore. Ten processes starting at once end with one
    /// key: each writes a complete candidate under a temporary name and `link`s it into place,
    /// which fails for all but the first.
    public static func loadOrCreate(at location: DeviceLocation) throws -> DeviceKey {
        let directory = try Directory.create(path: location.directory, mode: 0o700)
        let status = try checkOwner(of: directory)
        if status.permissions & 0o077 != 0 { try directory.setOwnPermissions(0o700) }
        if var fileKey = try readKeyFile(in: directory) {
            return try DeviceKey(fileKey: &fileKey, location: location, isNew: false)
        }
        var (fileKey, created) = try createKeyFile(in: directory)
        return try DeviceKey(fileKey: &fileKey, location: location, isNew: created)
    }

    /// Refuses a device directory that another user owns.
    @discardableResult
    static func checkOwner(of directory: Directory) throws -> FileStatus {
        let status = try directory.status()
        guard status.isOwnedByCurrentUser else {
            throw DeviceError.insecureDeviceKey(path: directory.path, reason: "the directory belongs to another user")
        }
        return status
    }

    /// The key file's 32 bytes, or `nil` when there is none yet. Refuses a file that others can
    /// read, that another user owns, or that is not exactly 32 bytes.
    static func readKeyFile(in directory: Directory) throws -> [UInt8]? {
        guard let file = try directory.openFileForReadingIfPresent(fileName) else { return nil }
        let status = try file.status()
        let path = directory.childPath(fileName)
        guard status.kind == .regular else { throw DeviceError.badDeviceKey(path: path, reason: "not a regular file") }
        guard status.isOwnedByCurrentUser else {
            throw DeviceError.insecureDeviceKey(path: path, reason: "it belongs to another user")
        }
        guard status.permissions & 0o077 == 0 else {
            throw DeviceError.insecureDeviceKey(
                path: path, reason: "group or others may access it (mode \(String(status.permissions, radix: 8))); run chmod 600 on it if you trust it")
        }
        let bytes = try file.read(upTo: keyLength + 1)
        guard bytes.count == keyLength else {
            throw DeviceError.badDeviceKey(path: path, reason: "it is \(bytes.count > keyLength ? "longer" : "shorter") than \(keyLength) bytes")
        }
        return bytes
    }

    /// A new key file's bytes, or the bytes of the one another process created first (then
    /// `created` is false).
    static func createKeyFile(in directory: Directory) throws -> (bytes: [UInt8], created: Bool) {
        let temporaryName = Directory.uniqueTemporaryName(for: fileName)
        do {
            let file = try directory.openFile(temporaryName, .writeOnly, creating: .newFile, mode: 0o600)
            var candidate = Sodium.randomBytes(count: keyLength)
            defer { for index in candidate.indices { candidate[index] = 0 } }
            try file.write(all: candidate)
            try file.synchronize()
            let won = try directory.linkUnlessExists(temporaryName, as: fileName)
            try directory.removeFile(temporaryName)
            try directory.synchronize()
            if won { return (candidate, true) }
        } catch {
            try? directory.removeFile(temporaryName)
            throw error
        }
        // Another process created it first: use theirs.
        guard let theirs = try readKeyFile(in: directory) else {
            throw DeviceError.badDeviceKey(path: directory.childPath(fileName), reason: "it vanished while being created")
        }
        return (theirs, false)
    }

    /// BLAKE2b-256 of the machine id under a fixed app key: stable per machine, useless elsewhere,
    /// and not the id itself. A machine without a machine id contributes an empty one.
    static func appSpecificMachineID(file path: String) throws -> [UInt8] {
        var identifier: [UInt8] = []
        do {
            identifier = try FileDescriptor.openForReading(path: path).readToEnd(limit: 4096)
        } catch {
            if error.code != .notFound { throw error }
        }
        while let last = identifier.last, last == 0x0a || last == 0x20 { identifier.removeLast() }
        return try blake2b(identifier, outputLength: 32, key: try SecureBytes(copying: machineIDHashKey))
    }
}
