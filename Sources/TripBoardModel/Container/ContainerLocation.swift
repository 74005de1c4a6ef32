package import TripBoardSystem
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
    /// What every program that opens a container says of it in `--version`: the store schema and
    /// the layout it was built for, from `Schema.migrations` and this layout, never by hand.
    public static var versionDetail: String { "store schema \(Schema.currentVersion), layout \(version)" }
    public static let lockFile = "container.lock"
    public static let manifestFile = "container.json"
    public static let storeDirectory = "store"
    public static let storeFile = "TripBoard.sqlite"
    /// Beside a database `app container protect` is sealing: its sealed copy and key file until
    /// both are in place (`DatabaseSealing`).
    public static let sealingDirectory = "sealing"
    public static let preferencesDirectory = "preferences"
    public static let preferencesFile = "preferences.json"
    public static let attachmentsDirectory = "attachments"
    public static let cachesDirectory = "caches"
    public static let thumbnailsDirectory = "thumbnails"
    public static let keychainDirectory = "keychain"
    /// The keychain's database, in `keychainDirectory` (its schema is the keychain module's).
    public static let keychainFile = "Keychain.sqlite"
    public static let stagingDirectory = "tmp"

    /// Where `container-migration` keeps its journal; the migration owns what is inside, the
    /// container only asks whether one is unfinished.
    public static let migrationDirectory = "migration"
    package static let migrationJournalFile = "journal.json"
    package static let migrationCommitMarkerFile = "committed.json"

    /// Directories a writer creates, in order (parents first), all mode 0700.
    package static let directories = [storeDirectory, preferencesDirectory, attachmentsDirectory, cachesDirectory,
                              cachesDirectory + "/" + thumbnailsDirectory, keychainDirectory, stagingDirectory]
}

extension ContainerLayout {
    /// True while a migration has recorded its plan but not its commit marker: the store may be
    /// empty or half-filled, so readers show "updating" and extensions refuse. One `fstatat` when
    /// there is no `migration/` directory (the usual case).
    package static func migrationIsUnfinished(in root: Directory) throws -> Bool {
        guard let status = try root.status(of: migrationDirectory) else { return false }
        guard status.kind == .directory else {
            throw ContainerError.unusable(path: root.childPath(migrationDirectory), reason: "it is not a directory")
        }
        let migration = try root.openDirectory(migrationDirectory)
        return try migration.status(of: migrationJournalFile) != nil && migration.status(of: migrationCommitMarkerFile) == nil
    }

    /// The `migration/` directory, if it exists (or created, with `create`): the migration keeps
    /// its journal there, and the attachment hashing pass it leaves due its marker.
    package static func openMigrationDirectory(in root: Directory, create: Bool = false) throws(FileSystemError) -> Directory? {
        if !create, try root.status(of: migrationDirectory) == nil { return nil }
        return try root.openDirectory(migrationDirectory, create: create)
    }
}
