import TripBoardStorage
import TripBoardSQLite
import TripBoardSodium
import TripBoardSystem
import TripBoardReadPath

/// Exit statuses, from sysexits(3). Documented in docs/cli.md; scripts rely on them.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// A bug or an error nobody foresaw.
    case internalError = 1
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

    static func usage(_ message: String) -> CommandLineError { CommandLineError(.usage, message) }

    public var description: String { message }
}

/// The one mapping from an error to an exit status.
public func exitStatus(for error: any Error) -> ExitStatus {
    switch error {
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
    case let error as MigrationError:
        switch error {
        case .legacyNotFound: return .noInput
        case .insufficientSpace: return .ioError
        case .otherMigrationUnfinished: return .usage
        case .notLegacyStore, .legacyCorrupt, .invalidLegacyRecord, .destinationHasTrips, .sourceChanged, .destinationConflict,
             .damagedJournal, .verificationFailed: return .dataError
        }
    case let error as CryptoError:
        return error == .authenticationFailed ? .dataError : .internalError
    case let error as KeychainError:
        switch error {
        case .notFound, .sealedOnAnotherDevice, .noDeviceKey: return .noInput
        case .locked, .containerKeyLocked, .noRecoveryPassphrase: return .unavailable
        case .dataCorrupted, .wrongPassphrase, .damagedRecoveryParameters, .rolledBack, .damagedGenerationRecord, .badDeviceKey:
            return .dataError
        case .insecureDeviceKey: return .cannotCreate
        case .noDeviceDirectory, .invalidArgument: return .usage
        }
    case let error as ContainerError:
        switch error {
        case .noLocation: return .usage
        case .badManifest: return .dataError
        case .notFound: return .noInput
        case .unusable: return .cannotCreate
        }
    case is AgeError, is TarError:
        // A wrong passphrase, a damaged, truncated or foreign file: bad data, nothing written.
        return .dataError
    case let error as BackupError:
        switch error {
        case .attachmentMismatch: return .dataError
        case .weakPassphrase: return .usage
        }
    case let error as RestoreError:
        switch error {
        case .targetHoldsAContainer: return .cannotCreate
        case .noStore, .attachmentMismatch, .damagedStore, .newerSchema: return .dataError
        case .insufficientSpace: return .ioError
        }
    case let error as SyncError:
        switch error {
        case .invalidArgument: return .usage
        case .wrongPassphrase, .damagedServerData, .alreadySetUp, .attachmentChanged: return .dataError
        case .zoneKeyMissing, .zoneMissing, .noSuchConflict: return .noInput
        case .agentMissing, .serverUnavailable, .serverSchema, .serverFailed, .notSetUp: return .unavailable
        case .agentFailed, .serverBusy: return .temporaryFailure
        }
    case let error as PDFImportError:
        switch error.kind {
        case .notPDF, .encrypted, .damaged, .tooLarge, .tooComplex: return .dataError
        case .unreadable: return .noInput
        case .workerMissing: return .unavailable
        case .workerFailed: return .internalError
        }
    case let error as TicketImportError:
        switch error {
        case .empty: return .dataError
        case .tripNeeded, .bookingNotInTrip: return .usage
        }
    case is AttachmentError:
        return .dataError
    case let error as FileSystemError:
        switch error.code {
        case .notFound: return .noInput
        case .permissionDenied, .readOnlyFileSystem, .symbolicLink, .notRegularFile: return .cannotCreate
        case .tooLarge: return .dataError
        default: return .ioError
        }
    case let error as SQLiteError:
        if error.isBusy { return .temporaryFailure }
        if error.isCorruption { return .dataError }
        if error.primaryCode == SQLiteError.full || error.primaryCode == SQLiteError.ioError { return .ioError }
        return .internalError
    default:
        return .internalError
    }
}
