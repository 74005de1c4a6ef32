import TripBoardSystem

/// The deletion queue's file side (docs/storage.md §4.4): a purge marks attachment rows `deleting`
/// in the store first (`Store.queuePurge`, committed), then — holding the deletion lock, so that
/// no backup loses a file it is copying — unlinks each file and fsyncs its directory, removes the
/// thumbnail, then drops the rows (or keeps sync tombstones). A crash anywhere leaves queued rows
/// that the next writer (or `container check --repair`) finishes; each step may run twice.
public enum AttachmentDeletion {
    /// What finishing the queue did.
    public struct Progress: Sendable, Equatable {
        /// Files removed and rows dropped.
        public var finished = 0
        /// Left queued because a backup holds the deletion lock: the next writer finishes them.
        public var postponed = 0
    }

    /// Finishes every queued deletion, waiting up to `lockTimeout` seconds for the deletion lock
    /// (0: try once, as a writer does on opening the container).
    @discardableResult
    public static func finishQueued(container: Container, lockTimeout: Double) throws -> Progress {
        let store = try container.store
        let queued = try store.trash.queuedAttachments()
        guard !queued.isEmpty else { return Progress() }
        let files = try AttachmentFiles(container: container)
        let cache = try? ThumbnailCache(container: container)
        do {
            try files.withDeletionLock(timeout: lockTimeout) {
                for row in queued {
                    try removeFile(of: row, files: files)
                    cache?.removeThumbnail(of: row.id.text)
                }
                CrashPoint.reach("purge.unlinked")
                try store.trash.finishAttachmentDeletions(ids: queued.map(\.id.text))
            }
        } catch is LockBusyError {
            return Progress(postponed: queued.count)
        }
        return Progress(finished: queued.count)
    }

    /// Finishes one queued deletion (`container check --repair`); throws `LockBusyError` when a
    /// backup holds the deletion lock for longer than `lockTimeout`.
    static func finish(_ row: Attachment, files: AttachmentFiles, store: Store, lockTimeout: Double = 5) throws {
        try files.withDeletionLock(timeout: lockTimeout) {
            try removeFile(of: row, files: files)
            try store.trash.finishAttachmentDeletions(ids: [row.id.text])
        }
    }

    private static func removeFile(of row: Attachment, files: AttachmentFiles) throws {
        do {
            try files.remove(relativePath: row.relativePath)
        } catch let error as FileSystemError where error.code == .notFound {
            // Already gone (a previous attempt got this far).
        }
    }
}
