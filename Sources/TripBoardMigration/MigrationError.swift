import TripBoardStorage
/// Why the container migration refused or stopped. Messages are one line, name the paths
/// involved, and never contain a preference value or a token.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `--from DIR` names a directory that does not exist.
    case legacyNotFound(path: String)
    /// The old location is not a version-1 TripBoard directory (tables or columns missing).
    case notLegacyStore(path: String, reason: String)
    /// `quick_check` found damage in the legacy store.
    case legacyCorrupt(path: String, detail: String)
    /// A legacy record cannot become a valid record of the new store.
    case invalidLegacyRecord(path: String, detail: String)
    /// The destination already holds trips and `--merge` was not given.
    case destinationHasTrips(container: String, legacy: String, trips: Int)
    /// Not enough free space at the destination for what must be copied.
    case insufficientSpace(path: String, needed: Int64, available: Int64)
    /// A legacy file no longer matches what the plan recorded (changed or removed since).
    case sourceChanged(path: String)
    /// A file is in the way at the destination and is not the one being migrated.
    case destinationConflict(path: String)
    /// An unfinished migration from another location is recorded in the container.
    case otherMigrationUnfinished(container: String, recorded: String, requested: String)
    /// The journal or plan cannot be read.
    case damagedJournal(path: String)
    /// A check after copying failed; the old location was left complete.
    case verificationFailed(detail: String)

    public var description: String {
        switch self {
        case .legacyNotFound(let path):
            "there is no version-1 TripBoard directory at \(path)"
        case .notLegacyStore(let path, let reason):
            "\(path) is not a version-1 TripBoard store (\(reason)); nothing was migrated or changed"
        case .legacyCorrupt(let path, let detail):
            "the version-1 store \(path) is damaged (\(detail)); nothing was migrated or changed. Restore it from a backup, or move the directory aside to start without it"
        case .invalidLegacyRecord(let path, let detail):
            "the version-1 store \(path) holds a record the new store cannot take: \(detail); nothing was migrated or changed"
        case .destinationHasTrips(let container, let legacy, let trips):
            "the container \(container) already holds \(trips) trip\(trips == 1 ? "" : "s"); refusing to migrate \(legacy) into it. Run container-migration --merge to add the version-1 records whose ids are not there yet"
        case .insufficientSpace(let path, let needed, let available):
            "not enough free space at \(path): the migration needs \(needed) bytes, \(available) are available; nothing was changed. Free some space and run it again"
        case .sourceChanged(let path):
            "\(path) changed since the migration planned it; the old location was left complete. Run the migration again"
        case .destinationConflict(let path):
            "\(path) is in the way and is not the file being migrated; nothing was overwritten. Move it aside and run the migration again"
        case .otherMigrationUnfinished(let container, let recorded, let requested):
            "the container \(container) has an unfinished migration from \(recorded), not \(requested); run container-migration --from \(recorded) to finish it first"
        case .damagedJournal(let path):
            "the migration journal \(path) cannot be read; nothing was changed. Restore it, or move the container's migration/ directory aside to start the migration over"
        case .verificationFailed(let detail):
            "verification failed: \(detail); the old location was left complete. Run the migration again"
        }
    }
}
