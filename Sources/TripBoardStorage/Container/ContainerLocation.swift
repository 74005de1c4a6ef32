/// Where the shared container lives: `--container DIR` › `TRIPBOARD_CONTAINER` ›
/// `$XDG_DATA_HOME/tripboard/shared-container` (default `~/.local/share/tripboard/shared-container`).
public enum ContainerLocation {
    public static func resolve(explicit: String?, environment: [String: String]) throws -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment["TRIPBOARD_CONTAINER"], !fromEnvironment.isEmpty { return fromEnvironment }
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return dataHome + "/tripboard/shared-container"
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw ContainerError.noLocation
        }
        return home + "/.local/share/tripboard/shared-container"
    }
}

/// The fixed names inside a container (layout version 1). `shared-container/README.md` documents them.
public enum ContainerLayout {
    public static let version = 1
    public static let lockFile = "container.lock"
    public static let manifestFile = "container.json"
    public static let storeDirectory = "store"
    public static let storeFile = "TripBoard.sqlite"
    public static let preferencesDirectory = "preferences"
    public static let preferencesFile = "preferences.json"
    public static let attachmentsDirectory = "attachments"
    public static let cachesDirectory = "caches"
    public static let thumbnailsDirectory = "thumbnails"
    public static let keychainDirectory = "keychain"
    public static let stagingDirectory = "tmp"

    /// Directories a writer creates, in order (parents first), all mode 0700.
    static let directories = [storeDirectory, preferencesDirectory, attachmentsDirectory, cachesDirectory,
                              cachesDirectory + "/" + thumbnailsDirectory, keychainDirectory, stagingDirectory]
}
