public import TripBoardStorage
public import TripBoardTickets
public import TripBoardSystem
import TripBoardCommandLine

/// Why the extension refuses a container the app would open: it leaves the app's work to the app.
public enum ShareRefusal: Error, Equatable, CustomStringConvertible {
    /// The app's first launch has TripBoard 1's data (at `legacyPath`) to move into this container
    /// (`FirstLaunchMigration.due`).
    case migrationDue(legacyPath: String)

    public var description: String {
        switch self {
        case .migrationDue(let legacyPath):
            terminalSafe("TripBoard 1's data in \(legacyPath) has not been moved into the container yet; open the app first, then share the ticket again")
        }
    }
}

// The exit statuses of what filing a ticket can meet (docs/cli.md, Exit statuses); `app` links
// them from here too.

extension ShareRefusal: DomainExitStatus {
    public var exitStatus: ExitStatus { .temporaryFailure }
}

extension AttachmentError: DomainExitStatus {
    /// A file over the size limit, or a path that is not an attachment's: bad data, nothing stored.
    public var exitStatus: ExitStatus { .dataError }
}

extension PDFImportError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch kind {
        case .notPDF, .encrypted, .damaged, .tooLarge, .tooComplex: .dataError
        case .unreadable: .noInput
        case .workerMissing: .unavailable
        case .workerFailed: .internalError
        }
    }
}

extension TicketFilingError: DomainExitStatus {
    public var exitStatus: ExitStatus {
        switch self {
        case .empty: .dataError
        case .tripNeeded, .bookingNotInTrip: .usage
        }
    }
}
