public import TripBoardCommandLine
import TripBoardSodium
import TripBoardStorage
import TripBoardSystem

/// The one mapping from an error to an exit status for the executables that open the container
/// for writing: the errors of the floors above the read path here, the rest in
/// `commonExitStatus(for:)`.
public func exitStatus(for error: any Error) -> ExitStatus {
    switch error {
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
    default:
        return commonExitStatus(for: error)
    }
}
