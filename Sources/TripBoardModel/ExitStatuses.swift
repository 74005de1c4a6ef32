public import TripBoardSystem
public import TripBoardSQLite

extension StoreError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch self {
        case .invalidArgument, .invalidField, .ambiguous: .usage
        case .invalidData, .corrupt, .newerSchema, .damaged: .dataError
        case .notFound, .noRecord, .notInTrash, .missing, .unreadable: .noInput
        case .conflict, .notReady: .temporaryFailure
        case .notOpened: .internalError
        }
    }
}

extension ContainerError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch self {
        case .noLocation: .usage
        case .badManifest: .dataError
        case .notFound: .noInput
        case .unusable: .cannotCreate
        }
    }
}

/// A database error's status follows what it means to the store (`DatabaseFailure`).
extension SQLiteError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch DatabaseFailure(self) {
        case .busy: .temporaryFailure
        case .corrupt: .dataError
        case .diskFullOrIO: .ioError
        case .other, nil: .internalError
        }
    }
}
