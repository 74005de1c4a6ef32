import TripBoardSystem
import TripBoardModel
import TripBoardDevice

/// The state of a container's store in one word, for reports (`container info`, `container
/// diagnose`): what a person or a script needs to decide what to do next.
public enum StoreHealth: String, Sendable, Codable {
    /// Opened at the current schema, no damage recorded.
    case ok
    /// Opens, but a command met a damaged page in it (`Manifest.storeDamage`).
    case damaged
    /// Not a database, or damaged where opening reads it (header, schema).
    case corrupt
    /// Written by a newer TripBoard.
    case newerSchema
    /// Gone although the container had one.
    case missing
    /// Cannot be opened for reading and writing (permissions), not a regular file, or sealed
    /// under keys this device cannot use now (another device's, or before the first unlock).
    case unreadable

    /// How the store of `container` is, from the way it opened.
    public init(of container: Container) throws {
        guard let problem = container.storeProblem else {
            self = try container.manifest()?.storeDamage == nil ? .ok : .damaged
            return
        }
        switch problem {
        case StoreError.damaged: self = .damaged
        case StoreError.newerSchema: self = .newerSchema
        case StoreError.missing: self = .missing
        case StoreError.unreadable, ContainerError.unusable, is FileSystemError, is DeviceError: self = .unreadable
        default: self = .corrupt
        }
    }
}
