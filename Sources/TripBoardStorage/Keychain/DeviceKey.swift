import Glibc

/// The key that makes this device this device: it never travels with the container.
///
/// `device.key` (32 random bytes, 0600, in a 0700 directory outside the container:
/// `TRIPBOARD_DEVICE_DIR` › `$XDG_STATE_HOME/tripboard` › `~/.local/state/tripboard`) is mixed
/// with an app-specific keyed hash of `/etc/machine-id`, so neither a copied container nor a
/// copied state directory carries the device to another machine. docs/security.md has the exact
/// derivation.
public final class DeviceKey {
    /// The effective device key (never printed; see `SecureBytes`).
    let key: SecureBytes
    /// A public, stable identifier of the effective key: 16 bytes of keyed BLAKE2b, in hex.
    public let fingerprint: String
    /// Where the key file is.
    public let path: String

    static let fileName = "device.key"
    static let keyLength = 32
    /// Fixed, public key of the keyed hash that turns the machine id into an app-specific value
    /// (as systemd's sd_id128_get_machine_app_specific does): the raw id is never stored or used.
    static let machineIDHashKey: [UInt8] = Array("TripBoard app-specific machine id".utf8.prefix(32))

    init(key: SecureBytes, path: String) throws {
        self.key = key
        self.path = path
        fingerprint = Sodium.hexString(try blake2b(Array("tripboard key id v1".utf8), outputLength: 16, key: key))
    }

    /// Where the device state lives, from the environment.
    public static func directory(environment: [String: String]) throws -> String {
        if let explicit = environment["TRIPBOARD_DEVICE_DIR"], !explicit.isEmpty { return explicit }
        if let stateHome = environment["XDG_STATE_HOME"], stateHome.hasPrefix("/") { return stateHome + "/tripboard" }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw KeychainError.noDeviceDirectory
        }
        return home + "/.local/state/tripboard"
    }

    /// Loads this device's key, creating the key file on first use. Ten processes starting at
    /// once end with one key: each writes a complete candidate under a temporary name and
    /// `link`s it into place, which fails for all but the first.
    public static func load(directory path: String, machineIDFile: String = "/etc/machine-id") throws -> DeviceKey {
        let directory = try Directory.create(path: path, mode: 0o700)
        let status = try directory.status()
        guard status.ownerUserID == geteuid() else {
            throw KeychainError.insecureDeviceKey(path: path, reason: "the directory belongs to another user")
        }
        if status.permissions & 0o077 != 0 && fchmod(directory.descriptor.rawValue, 0o700) != 0 {
            throw FileSystemError.fromErrno("fchmod", path: path)
        }
        var fileKey = try readKeyFile(in: directory) ?? createKeyFile(in: directory)
        let deviceKeyFile = try SecureBytes(wiping: &fileKey)
        let machine = try appSpecificMachineID(file: machineIDFile)
        let effective = try blake2b(Array("tripboard device key v1".utf8) + machine, outputLength: keyLength, key: deviceKeyFile)
        var effectiveBytes = effective
        return try DeviceKey(key: try SecureBytes(wiping: &effectiveBytes), path: directory.childPath(fileName))
    }

    /// The key file's 32 bytes, or `nil` when there is none yet. Refuses a file that others can
    /// read, that another user owns, or that is not exactly 32 bytes.
    static func readKeyFile(in directory: Directory) throws -> [UInt8]? {
        let file: FileDescriptor
        do {
            file = try directory.openFileForReading(fileName)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
        let status = try file.status()
        let path = directory.childPath(fileName)
        guard status.kind == .regular else { throw KeychainError.badDeviceKey(path: path, reason: "not a regular file") }
        guard status.ownerUserID == geteuid() else {
            throw KeychainError.insecureDeviceKey(path: path, reason: "it belongs to another user")
        }
        guard status.permissions & 0o077 == 0 else {
            throw KeychainError.insecureDeviceKey(
                path: path, reason: "group or others may access it (mode \(String(status.permissions, radix: 8))); run chmod 600 on it if you trust it")
        }
        let bytes = try file.read(upTo: keyLength + 1)
        guard bytes.count == keyLength else {
            throw KeychainError.badDeviceKey(path: path, reason: "it is \(bytes.count > keyLength ? "longer" : "shorter") than \(keyLength) bytes")
        }
        return bytes
    }

    static func createKeyFile(in directory: Directory) throws -> [UInt8] {
        let temporaryName = Directory.uniqueTemporaryName(for: fileName)
        do {
            let file = try directory.openFile(temporaryName, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            var candidate = Sodium.randomBytes(count: keyLength)
            defer { for index in candidate.indices { candidate[index] = 0 } }
            try file.write(all: candidate)
            try file.synchronize()
            let won = try directory.linkUnlessExists(temporaryName, as: fileName)
            try directory.removeFile(temporaryName)
            try directory.synchronize()
            if won { return candidate }
        } catch {
            try? directory.removeFile(temporaryName)
            throw error
        }
        // Another process created it first: use theirs.
        guard let theirs = try readKeyFile(in: directory) else {
            throw KeychainError.badDeviceKey(path: directory.childPath(fileName), reason: "it vanished while being created")
        }
        return theirs
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
