import TripBoardSystem
import TripBoardModel

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

/// A usage or input problem found by the command line layer.
public struct CommandLineError: Error, Sendable, CustomStringConvertible {
    public let status: ExitStatus
    public let message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    package static func usage(_ message: String) -> CommandLineError { CommandLineError(.usage, message) }

    public var description: String { message }
}

/// An error of a floor above the model that says its own exit status (docs/cli.md, Exit
/// statuses): the conformance lives in the lowest module that sees both the error and this
/// protocol, so each executable links the statuses of the errors it can meet and no others.
public protocol DomainExitStatus: Error {
    var exitStatus: ExitStatus { get }
}

/// The exit status of an error that says its own (`DomainExitStatus`), or of one from the floors
/// every executable stands on: the command line, the model and the basement.
/// `exitStatus(for:)` (TripBoardCLI) adds the backup archive's and the AEAD's errors and falls
/// back to this one.
public func commonExitStatus(for error: any Error) -> ExitStatus {
    switch error {
    case let error as any DomainExitStatus:
        return error.exitStatus
    case let error as CommandLineError:
        return error.status
    case let error as StoreError:
        switch error {
        case .invalidArgument, .invalidField, .ambiguous: return .usage
        case .invalidData, .corrupt, .newerSchema, .damaged: return .dataError
        case .notFound, .noRecord, .notInTrash, .missing, .unreadable: return .noInput
        case .conflict, .notReady: return .temporaryFailure
        case .notOpened: return .internalError
        }
    case is LockBusyError:
        return .temporaryFailure
    case let error as ContainerError:
        switch error {
        case .noLocation: return .usage
        case .badManifest: return .dataError
        case .notFound: return .noInput
        case .unusable: return .cannotCreate
        }
    case let error as FileSystemError:
        switch error.code {
        case .notFound: return .noInput
        case .permissionDenied, .readOnlyFileSystem, .symbolicLink, .notRegularFile: return .cannotCreate
        case .tooLarge: return .dataError
        default: return .ioError
        }
    default:
        switch DatabaseFailure(error) {
        case .busy: return .temporaryFailure
        case .corrupt: return .dataError
        case .diskFullOrIO: return .ioError
        case .other, nil: return .internalError
        }
    }
}
