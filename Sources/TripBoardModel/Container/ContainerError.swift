/// Problems with the container itself, as opposed to the records in it.
public enum ContainerError: Error, Sendable, CustomStringConvertible {
    /// Neither `--container`, `TRIPBOARD_CONTAINER`, `XDG_DATA_HOME` nor `HOME` says where it is.
    case noLocation
    /// The path exists but is not a directory we may use.
    case unusable(path: String, reason: String)
    /// `container.json` cannot be parsed or is from a newer layout.
    case badManifest(path: String, reason: String)
    /// The container does not exist (for commands that never create one).
    case notFound(path: String)

    public var description: String {
        switch self {
        case .noLocation:
            "cannot tell where the container is: pass --container DIR or set TRIPBOARD_CONTAINER (HOME is not set)"
        case .unusable(let path, let reason):
            "cannot use the container at \(path): \(reason)"
        case .badManifest(let path, let reason):
            "the container manifest \(path) is unusable (\(reason)); it was left untouched"
        case .notFound(let path):
            "no TripBoard container at \(path)"
        }
    }
}
