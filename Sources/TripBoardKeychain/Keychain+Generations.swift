import TripBoardStorage
import TripBoardSystem
import TripBoardModel

/// Rollback detection: every write transaction advances the keychain's generation (stored in the
/// keychain, beside its random id), and this device records the generation it has seen
/// (`KeychainGenerations`). A keychain behind its record is an older copy put back, refused
/// until accepted. docs/security.md, "Rollback".
extension Keychain {
    /// The keychain's stable random id and the generation it has reached.
    public struct Identity: Sendable, Equatable {
        /// 32 lowercase hex digits, random, stored in the keychain.
        public let id: String
        /// The number of write transactions committed since the keychain got this id.
        public let generation: Int64
    }

    /// A keychain found behind this device's record of it.
    public struct Rollback: Sendable, Equatable {
        /// The generation the keychain is at.
        public let found: Int64
        /// The generation this device had recorded; `nil` when the record was damaged.
        public let recorded: Int64?
    }

    var generations: KeychainGenerations { KeychainGenerations(location: location, lockTimeout: lockTimeout) }

    /// The keychain's id and generation, as committed now.
    public func identity() throws -> Identity {
        let rows = try connection.statement("SELECT keychain_id, generation FROM keychain_state WHERE singleton = 1")
            .rows { ($0.text(0), $0.integer(1)) }
        return try Self.checkedIdentity(rows.first, path: connection.path)
    }

    /// Refuses a state row that is missing or whose id is not 32 hex digits (the id names a file
    /// in the device directory: nothing else may reach that name).
    static func checkedIdentity(_ row: (String, Int64)?, path: String) throws -> Identity {
        guard let (id, generation) = row, id.utf8.count == 32, generation >= 0,
              id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw StoreError.corrupt(path: path, detail: "the keychain's id and generation (keychain_state) are missing or malformed")
        }
        return Identity(id: id, generation: generation)
    }

    /// Runs `body` in one write transaction that also advances the generation; after the commit,
    /// raises this device's record to it. The record is written after the commit on purpose: a
    /// kill in between leaves it behind the keychain, which reads as no rollback.
    package func write<T>(_ body: () throws -> T) throws -> T {
        let (result, identity) = try connection.writeTransaction { () throws -> (T, Identity) in
            let result = try body()
            let rows = try connection.statement("UPDATE keychain_state SET generation = generation + 1 RETURNING keychain_id, generation")
                .rows { ($0.text(0), $0.integer(1)) }
            return (result, try Self.checkedIdentity(rows.first, path: connection.path))
        }
        CrashPoint.reach("keychain.committed")
        do {
            try generations.raise(identity.id, to: identity.generation)
        } catch {
            // The write stands (it is committed); only the protection lags until the next write.
            notice("could not record the keychain's generation in \(location.directory) (\(errorMessage(for: error))); rollback detection lags until the next write")
        }
        return result
    }

    /// The rollback this device's record shows, or `nil`. The record is read before the keychain's
    /// generation: records only follow commits, so a write between the two reads cannot make a
    /// current keychain look rolled back. Throws `.damagedGenerationRecord`.
    public func rollback() throws -> Rollback? {
        let id = try identity().id
        guard let recorded = try generations.recorded(for: id) else { return nil }
        let found = try identity()
        guard found.id == id, found.generation < recorded else { return nil }
        return Rollback(found: found.generation, recorded: recorded)
    }

    /// Refuses a rolled-back keychain (or a damaged record of it) with one line naming the fix.
    func refuseIfRolledBack() throws {
        guard let rollback = try rollback() else { return }
        throw KeychainError.rolledBack(path: connection.path, found: rollback.found, recorded: rollback.recorded ?? rollback.found)
    }

    /// Accepts a rolled-back keychain as it is (`app keychain accept-rollback`): it gets a new id
    /// (`renewIdentity`), so the history it left no longer compares with its own, while an even
    /// older copy still reads as rolled back against the old id's record. `nil` when there was
    /// nothing to accept.
    public func acceptRollback() throws -> Rollback? {
        let accepted: Rollback
        do {
            guard let rollback = try rollback() else { return nil }
            accepted = rollback
        } catch KeychainError.damagedGenerationRecord {
            accepted = Rollback(found: try identity().generation, recorded: nil)
        }
        _ = try renewIdentity()
        return accepted
    }

    /// Gives the keychain a new random id and records its generation for this device: for a
    /// keychain put in place on purpose — `app restore`, or `accept-rollback` — which would
    /// otherwise be compared with the history of the one it replaced. Creates this device's key
    /// if it has none, since the record lives beside it.
    @discardableResult
    public func renewIdentity() throws -> Identity {
        _ = try deviceForWriting()
        try write { try connection.execute("UPDATE keychain_state SET keychain_id = lower(hex(randomblob(16)))") }
        return try identity()
    }
}
