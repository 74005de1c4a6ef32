public import TripBoardBackup
public import TripBoardKeychain
import TripBoardDevice
import TripBoardCommandLine
public import TripBoardSystem
import TripBoardSodium
import TripBoardKeys
public import TripBoardMigration
import TripBoardStorage
import TripBoardTickets
public import TripBoardSync


/// The one mapping from an error to an exit status for `app` and `container-migration`: the
/// errors that say their own status (`DomainExitStatus`: the keychain's, backup's, migration's and
/// sync's here, the tickets' with `share-extension`) and those of the floors every executable
/// stands on, in `commonExitStatus(for:)`; the backup archive's and the AEAD's here.
public func exitStatus(for error: any Error) -> ExitStatus {
    switch error {
    case let error as CryptoError: error == .authenticationFailed ? .dataError : .internalError
    // A wrong passphrase, a damaged, truncated or foreign file: bad data, nothing written.
    case is AgeError, is TarError: .dataError
    default: commonExitStatus(for: error)
    }
}

extension MigrationError: DomainExitStatus {
    public var exitStatus: ExitStatus {
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
    public var exitStatus: ExitStatus {
        switch self {
        case .notFound, .sealedOnAnotherDevice, .sealedUnderResetKeybag, .noDeviceKey, .keybagMissing: .noInput
        case .locked, .containerKeyLocked, .noRecoveryPassphrase, .deviceLocked: .unavailable
        case .dataCorrupted, .wrongPassphrase, .damagedRecoveryParameters, .rolledBack, .damagedGenerationRecord: .dataError
        case .invalidArgument: .usage
        }
    }
}

extension BackupError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch self {
        case .attachmentMismatch: .dataError
        case .weakPassphrase: .usage
        }
    }
}

extension RestoreError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch self {
        case .targetHoldsAContainer: .cannotCreate
        case .noStore, .attachmentMismatch, .damagedStore, .newerSchema, .badPreferences: .dataError
        case .insufficientSpace, .replacedButUnsettled: .ioError
        case .anotherRestoreRunning: .temporaryFailure
        }
    }
}

extension KeychainBackupError: DomainExitStatus {
    public var exitStatus: ExitStatus { .dataError }
}

extension SyncError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch self {
        case .invalidArgument: .usage
        case .wrongPassphrase, .damagedServerData, .refusedServerData, .alreadySetUp, .attachmentChanged: .dataError
        case .zoneKeyMissing, .zoneMissing, .noSuchConflict: .noInput
        case .agentMissing, .serverUnavailable, .serverSchema, .serverFailed, .notSetUp: .unavailable
        case .agentFailed, .serverBusy: .temporaryFailure
        }
    }
}
