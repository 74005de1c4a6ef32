import TripBoardSystem

/// Wrong passcodes in a row, kept in `passcode-attempts.json` in the device directory so that the
/// delay survives restarts, as a phone's does: after the fifth failure each attempt waits (1, 5,
/// 15, 15, then 60 minutes from the last failure). Someone holding a copy of the device directory
/// can roll this back and guess offline; what stands against that is the passcode's Argon2id cost
/// (docs/security.md).
struct PasscodeAttempts: Codable, Equatable {
    var failures: Int
    /// Seconds since the epoch of the last failure.
    var lastFailure: Int64

    static let none = PasscodeAttempts(failures: 0, lastFailure: 0)

    /// The wait after `failures` failures in a row, in seconds.
    static func delay(after failures: Int) -> Int64 {
        switch failures {
        case ..<5: 0
        case 5: 60
        case 6: 300
        case 7, 8: 900
        default: 3600
        }
    }

    /// When the next attempt is allowed, if that is after `now`.
    func nextAttempt(now: Timestamp) -> Timestamp? {
        let allowed = lastFailure + Self.delay(after: failures)
        guard failures > 0, allowed > now.secondsSinceEpoch else { return nil }
        return Timestamp(secondsSinceEpoch: allowed, offsetSeconds: Timestamp.localOffset(at: allowed))
    }

    mutating func recordFailure(at now: Timestamp) {
        failures += 1
        lastFailure = now.secondsSinceEpoch
    }

    /// The record, or `none` when there is no file. A damaged record counts as the longest delay
    /// from now rather than as no failures: rewriting it must not be a way around the wait.
    static func read(in directory: Directory) throws -> PasscodeAttempts {
        guard let bytes = try directory.readFileIfPresent(DeviceLock.attemptsFileName, limit: 4096) else { return .none }
        guard let record = try? JSON.decode(PasscodeAttempts.self, from: bytes), record.failures >= 0 else {
            return PasscodeAttempts(failures: 9, lastFailure: Timestamp.now().secondsSinceEpoch)
        }
        return record
    }

    func write(in directory: Directory) throws {
        try directory.writeAtomically(try JSON.encode(self), to: DeviceLock.attemptsFileName, staging: directory)
    }

    static func clear(in directory: Directory) throws {
        try directory.removeFile(DeviceLock.attemptsFileName)
        try directory.synchronize()
    }
}
