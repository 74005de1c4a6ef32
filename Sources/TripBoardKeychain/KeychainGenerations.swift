import TripBoardDevice
import TripBoardModel
import TripBoardStorage
import TripBoardSystem

/// This device's record, beside its key, of the generation each keychain has reached — one file
/// per keychain id (one device key serves many containers): `keychain-<id>.generation`, holding
/// the decimal generation and a newline. A keychain found at a lower generation than recorded is
/// an older copy put back (a rollback), which would bring back old and deleted secrets.
///
/// A record is written only after the keychain's commit, so it may lag behind the keychain (a
/// process killed in between) but never lead it; several writers raise it to the highest
/// generation under a `flock` on the device directory.
struct KeychainGenerations {
    let location: DeviceLocation
    let lockTimeout: Double

    static func fileName(for keychainID: String) -> String { "keychain-\(keychainID).generation" }

    func path(for keychainID: String) -> String { location.directory + "/" + Self.fileName(for: keychainID) }

    /// The recorded generation; `nil` when this device has recorded none (no directory, no file).
    func recorded(for keychainID: String) throws -> Int64? {
        guard let directory = try existingDirectory() else { return nil }
        return try read(keychainID, in: directory)
    }

    /// Raises the record to `generation` (never lowers it: another writer may have recorded a
    /// later one). Does nothing when the device directory does not exist: a device without a key
    /// has nothing to protect, and a read-only stranger must not create one.
    func raise(_ keychainID: String, to generation: Int64) throws {
        try update(keychainID) { recorded in max(recorded ?? generation, generation) }
    }

    /// Sets the record to `generation` whatever it was (a keychain accepted as it is).
    func replace(_ keychainID: String, with generation: Int64) throws {
        try update(keychainID) { _ in generation }
    }

    /// Read-modify-write of one record under the device directory's lock, with a deadline (a
    /// stopped writer must not block everyone), replaced atomically (temp file, fsync, rename,
    /// fsync of the directory).
    private func update(_ keychainID: String, _ newValue: (Int64?) -> Int64) throws {
        guard let directory = try existingDirectory() else { return }
        let lock = FileLock(descriptor: directory.descriptor)
        try lock.lock(.exclusive, timeout: lockTimeout)
        defer { lock.unlock() }
        // A damaged record is replaced; any other failure to read it (EIO, EMFILE, a link
        // refused) leaves it alone: taking it for "no record" would lower a higher generation.
        let recorded: Int64?
        do { recorded = try read(keychainID, in: directory) } catch KeychainError.damagedGenerationRecord { recorded = nil }
        let generation = newValue(recorded)
        if recorded == generation { return }
        try directory.writeAtomically(Array("\(generation)\n".utf8), to: Self.fileName(for: keychainID), staging: directory)
    }

    private func existingDirectory() throws -> Directory? {
        try Directory.openIfPresent(path: location.directory)
    }

    /// The record's generation: `nil` when there is no file; `.damagedGenerationRecord` for
    /// anything but 1–18 decimal digits and a newline in a regular file.
    private func read(_ keychainID: String, in directory: Directory) throws -> Int64? {
        let name = Self.fileName(for: keychainID)
        guard let file = try directory.openFileForReadingIfPresent(name) else { return nil }
        guard try file.status().kind == .regular else { throw KeychainError.damagedGenerationRecord(path: path(for: keychainID)) }
        let bytes = try file.read(upTo: 32)
        guard bytes.last == 0x0a, (2...19).contains(bytes.count), bytes.dropLast().allSatisfy({ (0x30...0x39).contains($0) }),
              let generation = Int64(String(decoding: bytes.dropLast(), as: UTF8.self)) else {
            throw KeychainError.damagedGenerationRecord(path: path(for: keychainID))
        }
        return generation
    }
}
