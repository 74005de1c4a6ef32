package import TripBoardDevice
import TripBoardSQLite
package import TripBoardSystem
import TripBoardModel

/// `app container protect`'s conversion of a database an earlier build left in the clear — the
/// store, the keychain's database — into a sealed one (docs/security.md, "Sealed stores"), in
/// place and resumable:
///
/// 1. the database's WAL is checkpointed into its main file (which is then all of it);
/// 2. a sealed copy is made in `<directory>/sealing/` (`VACUUM INTO` through the sealed-page VFS,
///    a new page key), fsynced, checked (`quick_check`), and its key file written beside it;
/// 3. the plaintext `-wal` and `-shm` are removed, the sealed copy is renamed over the database
///    (the plaintext is gone in that one rename, only once the sealed copy is durable), then its
///    key file is renamed into place, and `sealing/` removed.
///
/// A kill before step 3's first rename leaves the database in the clear and `sealing/` to be
/// made again; a kill after it leaves the database sealed and its key file in `sealing/`, which
/// the next run (or the next setup of the container: `finishInterrupted`) moves into place. A
/// sealed database is never without its key longer than that.
package enum DatabaseSealing {
    static let workDirectory = ContainerLayout.sealingDirectory

    /// Seals `database` in `directory` when it is in the clear, finishing an interrupted run
    /// first; under the exclusive container lock, with no connection of this process to it.
    /// Returns whether it sealed it now.
    package static func seal(_ database: String, in directory: Directory, keys: any FileKeys) throws -> Bool {
        try finishInterrupted(database, in: directory)
        guard try directory.status(of: database)?.kind == .regular,
              try DatabaseKeyFile.read(in: directory, database: database, keys: keys) == nil
        else { return false }
        let path = directory.childPath(database)
        // Step 1. `uri`: VACUUM INTO takes a URI (the output's VFS).
        let plain = try Connection(path: path, mode: .readWrite, uri: true)
        try plain.persistWriteAheadLog()
        if try plain.text("PRAGMA journal_mode")?.lowercased() == "wal" {
            let busy = try plain.integer("PRAGMA wal_checkpoint(TRUNCATE)")
            guard busy == 0 else { throw StoreError.notReady(path: path) }
        }
        // Step 2.
        let work = try directory.openDirectory(workDirectory, create: true)
        for name in try work.entries() { try work.removeFile(name) }
        _ = try work.openFile(database, .readWrite, creating: .newFile, mode: 0o600)
        let key = try PageKey.random()
        try plain.vacuumSealed(into: work.childPath(database), key: key)
        try work.openFile(database, .readWrite).synchronize()
        let check = try Connection(path: work.childPath(database), mode: .readOnly, sealing: key)
        let verdict = try check.statement("PRAGMA quick_check(1)").rows { $0.text(0) }
        guard verdict == ["ok"] else {
            throw StoreError.corrupt(path: path, detail: "its sealed copy does not check (\(verdict.first ?? "no answer")); it is left in the clear")
        }
        try DatabaseKeyFile.write(key, in: work, database: database, keys: keys, replacing: false)
        try work.synchronize()
        CrashPoint.reach("protect.copied")
        // Step 3: no connection may hold the plaintext while it is replaced.
        _ = consume plain
        _ = consume check
        for suffix in ["-wal", "-shm"] { try directory.removeFile(database + suffix) }
        try work.rename(database, to: directory, as: database)
        try directory.synchronize()
        CrashPoint.reach("protect.swapped")
        try finishInterrupted(database, in: directory)
        return true
    }

    /// Moves the key file of a sealed copy already renamed into place, or removes the copy of
    /// a run killed before its swap (the database is still in the clear: it is made again).
    package static func finishInterrupted(_ database: String, in directory: Directory) throws {
        guard try isInterrupted(in: directory) else { return }
        let work = try directory.openDirectory(workDirectory)
        let keyFile = DatabaseKeyFile.name(for: database)
        if try work.status(of: database) == nil, try work.status(of: keyFile) != nil, try directory.status(of: keyFile) == nil {
            try work.rename(keyFile, to: directory, as: keyFile)
            try directory.synchronize()
        }
        for name in try work.entries() { try work.removeFile(name) }
        try directory.removeDirectory(workDirectory)
        try directory.synchronize()
    }

    /// Whether a conversion of `database` was interrupted (its work directory is there).
    package static func isInterrupted(in directory: Directory) throws -> Bool {
        try directory.status(of: workDirectory)?.kind == .directory
    }
}
