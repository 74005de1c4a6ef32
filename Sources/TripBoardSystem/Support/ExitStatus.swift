/// Exit statuses, from sysexits(3). Documented in docs/cli.md; scripts rely on them.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// A bug or an error nobody foresaw.
    case internalError = 1
    /// Two things compared are sound but not the same (`app backup verify`: the backup does not
    /// hold what the container holds). Not in sysexits(3), which has no such status.
    case differs = 3
    /// The command was used wrongly: unknown command or flag, missing or malformed argument.
    case usage = 64
    /// The input data is wrong: a rule broken (end before start), malformed import, corrupt store.
    case dataError = 65
    /// Something named does not exist: an unknown id, a missing file, a missing store.
    case noInput = 66
    /// A service is unavailable.
    case unavailable = 69
    /// The container or a file could not be created.
    case cannotCreate = 73
    /// A read or write failed (disk full, I/O error).
    case ioError = 74
    /// Busy: another process holds the container, or changed a record meanwhile. Try again later.
    case temporaryFailure = 75
}

/// An error that says the exit status it ends a program with (docs/cli.md, Exit statuses). The
/// conformance lives with the error where its module can see this one, else in the lowest module
/// that sees both: each executable links the statuses of the errors it can meet and no others.
public protocol DomainExitStatus: Error {
    var exitStatus: ExitStatus { get }
}

extension FileSystemError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch code {
        case .notFound: .noInput
        case .permissionDenied, .readOnlyFileSystem, .symbolicLink, .notRegularFile: .cannotCreate
        case .tooLarge: .dataError
        default: .ioError
        }
    }
}

extension LockBusyError: DomainExitStatus {
    public var exitStatus: ExitStatus { .temporaryFailure }
}
