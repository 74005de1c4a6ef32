import TripBoardSystem
public import TripBoardModel

/// Deleting, restoring and purging as the commands do it: the store's side (`StoreTrash`) plus
/// the files' — thumbnails removed when a record goes to the trash, attachment files removed
/// through the deletion queue when it is purged (docs/storage.md §4.4).
public enum Trash {
    /// Moves a live record and what it holds to the trash (one transaction), then removes the
    /// thumbnails of the attachments that went with it (a cache: they are made again on restore).
    @discardableResult
    public static func delete(_ kind: RecordKind, id: String, container: Container) throws -> TrashEntry {
        let store = try container.store
        let entry = try store.trash.moveToTrash(kind, id: id)
        CrashPoint.reach("trash.moved")
        removeThumbnails(of: try store.trash.attachmentIDs(inTrashEntry: entry.id, of: kind), container: container)
        return entry
    }

    /// What emptying the trash did.
    public struct Purge: Sendable, Equatable {
        public var entries: [TrashEntry] = []
        public var files = AttachmentDeletion.Progress()
    }

    /// Purges `entries` for good now: out of the store first (step 1), then the files of their
    /// attachments (steps 2–3), waiting up to `lockTimeout` for a backup to finish; past it the
    /// files stay queued, and the next writer removes them (`Purge.files.postponed`).
    public static func empty(_ entries: [TrashEntry], container: Container, lockTimeout: Double) throws -> Purge {
        try container.store.trash.queuePurge(entries.map { ($0.kind, $0.id) })
        CrashPoint.reach("purge.queued")
        return Purge(entries: entries, files: try AttachmentDeletion.finishQueued(container: container, lockTimeout: lockTimeout))
    }

    /// A writer's chore once it has opened the container with its store (opening only opens: the
    /// commands declare it, `AppCommandSpec.chores`): purge what was trashed more than 30 days
    /// ago and finish a deletion queue that an interrupted purge left. Costs one indexed query
    /// when there is nothing to do. Never waits for a backup (the files stay queued) and never
    /// fails the command that opened the container: whatever goes wrong, the next writer tries again.
    package static func tidyUp(container: Container) {
        do {
            let store = try container.store
            let now = store.clock()
            let cutoff = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - StoreTrash.trashRetentionSeconds,
                                   milliseconds: now.milliseconds).utcStamp
            guard try store.trash.hasTrashWork(purgingBefore: cutoff) else { return }
            let due = try store.trash.trashEntries(trashedBefore: cutoff)
            if !due.isEmpty {
                try store.trash.queuePurge(due)
                CrashPoint.reach("purge.queued")
            }
            try AttachmentDeletion.finishQueued(container: container, lockTimeout: 0)
        } catch {
            // Best effort, by design: see above.
        }
    }

    package static func removeThumbnails(of attachmentIDs: [String], container: Container) {
        guard !attachmentIDs.isEmpty, let cache = try? ThumbnailCache(container: container) else { return }
        for id in attachmentIDs { cache.removeThumbnail(of: id) }
    }
}
