import TripBoardSQLite

/// Why the store refused a request. Messages are one line, name what and where, and never include
/// secret values.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No live record of `kind` matches `id` (tombstones count as absent).
    case notFound(kind: RecordKind, id: String)
    /// No record of any kind, tombstones included, matches `id`.
    case noRecord(id: String)
    /// Nothing in the trash matches `id` (an entry's id, or a unique prefix of one).
    case notInTrash(id: String)
    /// A prefix matches several records.
    case ambiguous(kind: RecordKind, prefix: String, candidates: [String])
    /// The input is malformed: not an id, a bad command-line value.
    case invalidArgument(String)
    /// A field breaks its rule (`FieldRules`): `field` is its name as the JSON contract spells it
    /// (`name`, `updatedAt`), `rule` says what is wrong ("must not be empty").
    case invalidField(field: String, rule: String)
    /// The input is well-formed but breaks a rule (end before start, conflicting import).
    case invalidData(String)
    /// Another process changed the record while this one was editing it.
    case conflict(String)
    /// The store file is not a database or is damaged. Left byte-for-byte as it was.
    case corrupt(path: String, detail: String)
    /// The store was written by a newer TripBoard. Left as it was.
    case newerSchema(path: String, found: Int64, supported: Int64)
    /// The store exists but cannot be opened for reading and writing (permissions, not a file).
    case unreadable(path: String, detail: String)
    /// The manifest says a store existed, but the file is gone: refusing to create an empty one.
    case missing(path: String)
    /// A reader found a store that a writer has not finished setting up or migrating.
    case notReady(path: String)
    /// A command met a damaged page in this store earlier (`Manifest.storeDamage`): writers refuse it.
    case damaged(path: String, foundAt: String, detail: String)
    /// The container was opened without its store (`StoreRequirement.none`): a programming error
    /// of the command that then asked for it.
    case notOpened

    public var description: String {
        switch self {
        case .notFound(let kind, let id):
            "no \(kind.rawValue) with id \(id)"
        case .noRecord(let id):
            "no trip, place, booking or attachment with id \(id)"
        case .notInTrash(let id):
            "nothing in the trash has id \(id) (`app trash list` shows what is there)"
        case .ambiguous(let kind, let prefix, let candidates):
            "id prefix '\(prefix)' matches several \(kind.rawValue)s: \(candidates.joined(separator: ", ")); give more characters"
        case .invalidArgument(let message), .invalidData(let message), .conflict(let message):
            message
        case .invalidField(let field, let rule):
            "\(field) \(rule)"
        case .corrupt(let path, let detail):
            "the store at \(path) cannot be read (\(detail)); it was left untouched: restore it from a backup or an export, or move it aside to start over"
        case .newerSchema(let path, let found, let supported):
            "the store at \(path) has schema version \(found), newer than this build understands (\(supported)); update TripBoard. The file was left untouched"
        case .unreadable(let path, let detail):
            "the store at \(path) cannot be opened (\(detail)); check its permissions. Nothing was changed"
        case .missing(let path):
            "the store \(path) is missing although this container had one; refusing to create an empty store in its place. Restore it from a backup, or remove container.json to start a new container"
        case .notReady(let path):
            "the store at \(path) is being set up or updated by another process"
        case .damaged(let path, let foundAt, let detail):
            "the store at \(path) has a damaged page (met at \(foundAt): \(detail)); nothing was written. Run `app container check`; if it finds damage, `app container salvage` copies what can be read into a new store"
        case .notOpened:
            "the store was not opened for this command"
        }
    }
}

/// What a failure SQLite reports means to a command, for the modules above the store that do not
/// see SQLite's types (the command line's exit statuses).
public enum DatabaseFailure: Sendable, Equatable {
    /// Another connection holds a lock this one needed (`SQLITE_BUSY`, `SQLITE_LOCKED`).
    case busy
    /// The file is damaged or not a database.
    case corrupt
    /// The disk is full, or a read or write failed.
    case diskFullOrIO
    /// Anything else: a misuse, a constraint, an error nobody foresaw.
    case other

    /// The failure `error` is, when it is one of SQLite's; `nil` otherwise.
    public init?(_ error: any Error) {
        guard let error = error as? SQLiteError else { return nil }
        if error.isBusy {
            self = .busy
        } else if error.isCorruption {
            self = .corrupt
        } else if error.code == .full || error.code == .ioError {
            self = .diskFullOrIO
        } else {
            self = .other
        }
    }
}
