import TripBoardSQLite
import TripBoardModel

/// How many items the keychain holds, by accessibility — never a service, an account or a value:
/// for `container diagnose`.
public struct KeychainStatistics: Sendable, Equatable, Codable {
    public var schemaVersion: Int64
    public var items: Int
    public var thisDeviceOnly: Int
    public var migratable: Int
    /// Whether a recovery passphrase wraps the container key.
    public var hasRecoveryPassphrase: Bool
}

extension KeychainStatistics {
    /// Reads the keychain database of `container` without creating, migrating or writing
    /// anything (an `immutable=1` connection when its `-wal` is absent, as the widget reads the
    /// store); `nil` when there is no keychain database yet.
    public static func read(in container: Container) throws -> KeychainStatistics? {
        let directory = try container.directory(ContainerLayout.keychainDirectory)
        guard try directory.status(of: ContainerLayout.keychainFile) != nil else { return nil }
        let path = directory.childPath(ContainerLayout.keychainFile)
        let sealing = try DatabaseKeyFile.read(in: directory, database: ContainerLayout.keychainFile, keys: container.options.fileKeys)
        let connection = try directory.status(of: ContainerLayout.keychainFile + "-wal") == nil
            ? try Connection(path: "file:\(SQLiteURI.escapedPath(path))?immutable=1", mode: .readOnly, uri: true, sealing: sealing)
            : try Connection(path: path, mode: .readOnly, sealing: sealing)
        return try connection.readTransaction {
            let version = try connection.userVersion()
            guard version >= 1 else { return KeychainStatistics(schemaVersion: version, items: 0, thisDeviceOnly: 0, migratable: 0, hasRecoveryPassphrase: false) }
            func count(_ condition: String) throws -> Int { Int(try connection.integer("SELECT count(*) FROM items" + condition)) }
            return KeychainStatistics(
                schemaVersion: version, items: try count(""), thisDeviceOnly: try count(" WHERE accessibility = 'thisDeviceOnly'"),
                migratable: try count(" WHERE accessibility = 'migratable'"),
                hasRecoveryPassphrase: try connection.integer("SELECT count(*) FROM container_key_wraps WHERE wrapped_by = 'passphrase'") > 0)
        }
    }
}
