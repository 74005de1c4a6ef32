public import TripBoardSystem

/// A usage or input problem found by the command line layer.
public struct CommandLineError: Error, Sendable, CustomStringConvertible, DomainExitStatus {
    public let status: ExitStatus
    public let message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    package static func usage(_ message: String) -> CommandLineError { CommandLineError(.usage, message) }

    public var description: String { message }

    public var exitStatus: ExitStatus { status }
}

/// The exit status of an error that says its own (`DomainExitStatus`: the command line's, the
/// basement's and the model's, and those of the floors above that the executable links); 1 for
/// any other. `exitStatus(for:)` (TripBoardCLI) adds the backup archive's and the AEAD's errors
/// and falls back to this one.
public func commonExitStatus(for error: any Error) -> ExitStatus {
    (error as? any DomainExitStatus)?.exitStatus ?? .internalError
}
