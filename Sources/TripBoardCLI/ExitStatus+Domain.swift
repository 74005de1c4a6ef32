public import TripBoardCommandLine
import TripBoardSodium
import TripBoardMigration
import TripBoardStorage
import TripBoardTickets
import TripBoardSync
import TripBoardSystem

/// The one mapping from an error to an exit status for the executables that open the container
/// for writing: the errors of the floors above the read path here, the rest in
/// `commonExitStatus(for:)`.
public func exitStatus(for error: any Error) -> ExitStatus {
    switch error {
    case let error as any DomainExitStatus: error.exitStatus
    case let error as CryptoError: error == .authenticationFailed ? .dataError : .internalError
    // A wrong passphrase, a damaged, truncated or foreign file: bad data, nothing written.
    case is AgeError, is TarError, is AttachmentError: .dataError
    default: commonExitStatus(for: error)
    }
}

/// An error of a floor above the read path that says its own exit status (docs/cli.md, Exit statuses).
protocol DomainExitStatus: Error {
    var exitStatus: ExitStatus { get }
}

extension MigrationError: DomainExitStatus {
    var exitStatus: ExitStatus {
        switch self {
        case .legacyNotFound: .noInput
        case .insufficientSpace: .ioError
        case .otherMigrationUnfinished: .usage
        case .notLegacyStore, .legacyCorrupt, .invalidLegacyRecord, .destinationHasTrips, .sourceChanged, .destinationConflict,
             .damagedJournal, .verificationFailed: .dataError
        }
    }
}

extension KeychainError: DomainExitStatus {
    var exitStatus: ExitStatus {
        switch self {
        case .notFound, .sealedOnAnotherDevice, .noDeviceKey: .noInput
        case .locked, .containerKeyLocked, .noRecoveryPassphrase: .unavailable
        case .dataCorrupted, .wrongPassphrase, .damagedRecoveryParameters, .rolledBack, .damagedGenerationRecord, .badDeviceKey: .dataError
        case .insecureDeviceKey: .cannotCreate
        case .noDeviceDirectory, .invalidArgument: .usage
        }
    }
}

extension BackupError: DomainExitStatus {
    var exitStatus: ExitStatus {
        switch self {
        case .attachmentMismatch: .dataError
        case .weakPassphrase: .usage
        }
    }
}

extension RestoreError: DomainExitStatus {
    var exitStatus: ExitStatus {
        switch self {
        case .targetHoldsAContainer: .cannotCreate
        case .noStore, .attachmentMismatch, .damagedStore, .newerSchema, .badPreferences: .dataError
        case .insufficientSpace, .replacedButUnsettled: .ioError
        case .anotherRestoreRunning: .temporaryFailure
        }
    }
}

extension KeychainBackupError: DomainExitStatus {
    var exitStatus: ExitStatus { .dataError }
}

extension SyncError: DomainExitStatus {
    var exitStatus: ExitStatus {
        switch self {
        case .invalidArgument: .usage
        case .wrongPassphrase, .damagedServerData, .refusedServerData, .alreadySetUp, .attachmentChanged: .dataError
        case .zoneKeyMissing, .zoneMissing, .noSuchConflict: .noInput
        case .agentMissing, .serverUnavailable, .serverSchema, .serverFailed, .notSetUp: .unavailable
        case .agentFailed, .serverBusy: .temporaryFailure
        }
    }
}

extension PDFImportError: DomainExitStatus {
    var exitStatus: ExitStatus {
        switch kind {
        case .notPDF, .encrypted, .damaged, .tooLarge, .tooComplex: .dataError
        case .unreadable: .noInput
        case .workerMissing: .unavailable
        case .workerFailed: .internalError
        }
    }
}

extension TicketFilingError: DomainExitStatus {
    var exitStatus: ExitStatus {
        switch self {
        case .empty: .dataError
        case .tripNeeded, .bookingNotInTrip: .usage
        }
    }
}
