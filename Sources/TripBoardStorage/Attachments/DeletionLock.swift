/// Attachment files leave the container only through deletions (`attachment delete`, purges of
/// the trash), and a backup must never name a file that vanishes under it. The two meet on a
/// `flock` of the `attachments/` directory's own descriptor — no extra file in the layout: a
/// backup holds it shared for its whole run; a deleter takes it exclusive before it unlinks
/// files (and, failing within its deadline, leaves them queued for the next writer).
extension AttachmentFiles {
    /// Runs `body` holding deletions back (the shared side), waiting at most `timeout` seconds
    /// for a deletion in progress to finish.
    public func holdingDeletionsBack<T>(timeout: Double, _ body: () throws -> T) throws -> T {
        let lock = FileLock(descriptor: attachments.descriptor)
        try lock.lock(.shared, timeout: timeout)
        defer { lock.unlock() }
        return try body()
    }
}
