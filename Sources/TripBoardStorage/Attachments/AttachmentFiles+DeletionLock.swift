import TripBoardSystem

/// The lock that keeps attachment files from vanishing under a backup (docs/storage.md §1.1).
///
/// A `flock` on the descriptor of the `attachments/` directory (flock(2) locks any open file,
/// directories included): whoever removes attachment files — a purge of the trash finishing the
/// deletion queue, `container check --repair` finishing an interrupted one — holds it
/// **exclusively** while it unlinks and drops the rows; a backup holds it **shared** for its whole
/// run, so that no file its snapshot names is removed before it has been read. Files are never
/// removed without it; files are added (imports) and restored freely, since a snapshot taken
/// earlier does not name them. Like the container lock it is polled with a deadline (a stopped
/// holder must not hang anyone) and dies with its holder.
extension AttachmentFiles {
    /// Runs `body` holding the deletion lock exclusively; throws `LockBusyError` when it cannot be
    /// had within `timeout` seconds (a backup is running): the caller leaves the files queued for
    /// the next writer rather than fail the user's command.
    public func withDeletionLock<T>(timeout: Double, _ body: () throws -> T) throws -> T {
        try Self.holding(.exclusive, on: attachments, timeout: timeout, body)
    }

    /// Runs `body` holding the deletion lock shared, so that no attachment file is removed while
    /// it runs (for a backup, from its snapshot to its last file); waits at most `timeout` seconds
    /// for a deletion in progress to end, else throws `LockBusyError`.
    public func holdingDeletionsBack<T>(timeout: Double, _ body: () throws -> T) throws -> T {
        try Self.holding(.shared, on: attachments, timeout: timeout, body)
    }

    private static func holding<T>(_ mode: FileLock.Mode, on directory: Directory, timeout: Double, _ body: () throws -> T) throws -> T {
        let lock = FileLock(descriptor: directory.descriptor)
        try lock.lock(mode, timeout: timeout)
        defer { lock.unlock() }
        return try body()
    }
}
