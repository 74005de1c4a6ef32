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
    /// The record could not be read (not a record, not a regular file, too large): it counts as
    /// `damagedFailures` failures just now, and the next attempt writes it so.
    var isDamaged = false

    static let none = PasscodeAttempts(failures: 0, lastFailure: 0)
    /// What a damaged record counts as: the longest wait.
    static let damagedFailures = 9

    private enum CodingKeys: String, CodingKey { case failures, lastFailure }

    init(failures: Int, lastFailure: Int64, isDamaged: Bool = false) {
        self.failures = failures
        self.lastFailure = lastFailure
        self.isDamaged = isDamaged
    }

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

    /// When the next attempt is allowed, if that is after `now`: the delay from the last failure
    /// — from `now` when the record says it is later (a clock set back must not lock the device
    /// for longer than the longest wait) — rounded up to the minute, so that the minute printed
    /// is one at which an attempt is allowed.
    func nextAttempt(now: Timestamp) -> Timestamp? {
        guard failures > 0 else { return nil }
        let last = min(lastFailure, now.secondsSinceEpoch)
        var allowed = last + Self.delay(after: failures)
        guard allowed > now.secondsSinceEpoch else { return nil }
        if allowed % 60 != 0 { allowed += 60 - allowed % 60 }
        return Timestamp(secondsSinceEpoch: allowed).inLocalZone
    }

    mutating func recordFailure(at now: Timestamp) {
        failures = min(max(failures, 0), 1_000_000) + 1
        lastFailure = now.secondsSinceEpoch
        isDamaged = false
    }

    /// The record, or `none` when there is no file; a record that cannot be read is a damaged one
    /// (`isDamaged`): the longest wait, from `now`.
    static func read(in directory: Directory, now: Timestamp) throws -> PasscodeAttempts {
        let damaged = PasscodeAttempts(failures: damagedFailures, lastFailure: now.secondsSinceEpoch, isDamaged: true)
        let bytes: [UInt8]
        do {
            guard let read = try directory.readFileIfPresent(DeviceLock.attemptsFileName, limit: 4096) else { return .none }
            bytes = read
        } catch {
            guard [.symbolicLink, .notRegularFile, .tooLarge, .isADirectory].contains(error.code) else { throw error }
            return damaged
        }
        guard let record = try? JSON.decode(PasscodeAttempts.self, from: bytes), record.failures >= 0, record.lastFailure >= 0 else {
            return damaged
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
