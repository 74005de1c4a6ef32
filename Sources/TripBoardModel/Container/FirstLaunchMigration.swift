import TripBoardSystem

/// Whether the app's first launch has TripBoard 1's data to move into a container
/// (docs/migration.md, "On the app's first launch"). It lives below the migration because an
/// extension must tell that a migration is due without linking it: `share-extension` refuses
/// and leaves the move to the app, as an iOS extension would.
public enum FirstLaunchMigration {
    /// What a container says about the migration.
    public enum State: Sendable, Equatable {
        /// No journal and no commit marker.
        case notStarted
        /// A journal: a run stopped before finishing (or one is running now).
        case unfinished
        /// The commit marker and no journal: nothing left to do.
        case finished
    }

    /// A migration the app runs before its command: from `legacyPath`, in `state`.
    public struct Due: Sendable, Equatable {
        public var state: State
        public var legacyPath: String
    }

    /// The name of TripBoard 1's store in its directory: a directory without it holds nothing the
    /// migration can move.
    public static let legacyStoreFile = "TripBoard.sqlite"

    /// The migration the app's first launch runs into the container at `containerPath`, or `nil`:
    /// none when it has finished there, or when none was started and TripBoard 1's directory
    /// (`defaultLegacyPath`) holds no store — missing, not a directory, or without
    /// `TripBoard.sqlite` (an empty `~/.tripboard` is nobody's TripBoard 1 data, and must not stop
    /// every command with a migration that can only refuse). A container the command line names (`containerIsExplicit`)
    /// gets no version-1 data by itself — a one-off or mistyped path must not carry the user's
    /// data away from where they expect it — but an unfinished migration into it was started on
    /// purpose and is finished wherever it is. Two or three `fstatat`s; creates nothing.
    public static func due(containerPath: String, containerIsExplicit: Bool, environment: [String: String]) throws -> Due? {
        let state = try state(containerPath: containerPath)
        guard state != .finished, let legacyPath = defaultLegacyPath(environment: environment) else { return nil }
        if state == .notStarted {
            if containerIsExplicit { return nil }
            if try !legacyStoreExists(in: legacyPath) { return nil }
        }
        return Due(state: state, legacyPath: legacyPath)
    }

    /// Two `fstatat`s when the container has no `migration/` directory; creates nothing.
    public static func state(containerPath: String) throws -> State {
        let root: Directory
        do {
            root = try Directory.open(path: containerPath)
        } catch {
            if error.code == .notFound { return .notStarted }
            if error.code == .notADirectory { throw ContainerError.unusable(path: containerPath, reason: "it is not a directory") }
            throw error
        }
        guard let directory = try ContainerLayout.openMigrationDirectory(in: root) else { return .notStarted }
        if try directory.status(of: ContainerLayout.migrationJournalFile) != nil { return .unfinished }
        return try directory.status(of: ContainerLayout.migrationCommitMarkerFile) != nil ? .finished : .notStarted
    }

    /// TripBoard 1's directory when no `--from` names one: `TRIPBOARD_LEGACY_DIR` ›
    /// `$HOME/.tripboard`; `nil` when neither applies.
    public static func defaultLegacyPath(environment: [String: String]) -> String? {
        if let fromEnvironment = environment["TRIPBOARD_LEGACY_DIR"], !fromEnvironment.isEmpty { return fromEnvironment }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return (home.hasSuffix("/") ? home : home + "/") + ".tripboard"
    }

    /// True when `path` is a directory holding TripBoard 1's store (`legacyStoreFile`). Missing or
    /// not a directory: false; a directory that cannot be read is an error (whether it holds the
    /// store cannot be told).
    public static func legacyStoreExists(in path: String) throws -> Bool {
        let directory: Directory
        do {
            directory = try Directory.open(path: path)
        } catch {
            if error.code == .notFound || error.code == .notADirectory { return false }
            throw error
        }
        return try directory.status(of: legacyStoreFile) != nil
    }

    /// True when the directory at `path` exists (`container-migration`'s check of the directory
    /// it is given).
    public static func legacyDirectoryExists(at path: String) throws -> Bool { try Directory.openIfPresent(path: path) != nil }
}
