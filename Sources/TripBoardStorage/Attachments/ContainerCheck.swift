import Glibc

/// What `container check` found, and with `--repair` what it did.
public struct ContainerCheckReport: Sendable, Equatable, Codable {
    /// `PRAGMA integrity_check` and `foreign_key_check` problems of the store.
    public var storeProblems: [String] = []
    /// Attachment rows whose file is gone: `<id> <path>`.
    public var missingFiles: [String] = []
    /// Attachment files with the wrong size or hash, or not a regular file: `<id> <path> <state>`.
    public var damagedFiles: [String] = []
    /// Files under attachments/ that no row names, older than the grace period.
    public var orphanFiles: [String] = []
    /// Files in tmp/ older than the grace period (interrupted imports and writes).
    public var stagingLeftovers: [String] = []
    /// Deletions that were queued but not finished: attachment ids.
    public var unfinishedDeletions: [String] = []
    /// What --repair changed, one line each.
    public var repairs: [String] = []

    /// True when nothing needs attention (after repairs, if any were made).
    public var isClean: Bool {
        storeProblems.isEmpty && missingFiles.isEmpty && damagedFiles.isEmpty && orphanFiles.isEmpty
            && stagingLeftovers.isEmpty && unfinishedDeletions.isEmpty
    }
}

/// Verifies that every attachment row has its file with the right size and hash, finds orphans
/// and unfinished work, and with `repair` finishes or removes what can be safely removed —
/// never user data that a row still names.
public enum ContainerCheck {
    /// Files younger than this may belong to an import in flight (file published, row not yet
    /// committed) and are left alone.
    public static let defaultGracePeriod: Int64 = 3600

    public static func run(container: Container, repair: Bool, gracePeriod: Int64 = defaultGracePeriod) throws -> ContainerCheckReport {
        // Repairs take the exclusive lock: no import is between publishing a file and committing
        // its row while orphans are removed.
        if repair { return try container.withExclusiveLock { try check(container: container, repair: true, gracePeriod: gracePeriod) } }
        return try check(container: container, repair: false, gracePeriod: gracePeriod)
    }

    static func check(container: Container, repair: Bool, gracePeriod: Int64) throws -> ContainerCheckReport {
        var report = ContainerCheckReport()
        let store = container.store
        let files = try AttachmentFiles(container: container)
        let cutoff = Timestamp.now().secondsSinceEpoch - gracePeriod
        report.storeProblems = try store.integrityProblems()

        let rows = try store.allAttachments()
        for row in rows {
            if row.state == "deleting" {
                if repair {
                    try AttachmentDeletion.finish(row, files: files, store: store)
                    report.repairs.append("finished deleting attachment \(row.id)")
                } else {
                    report.unfinishedDeletions.append(row.id)
                }
                continue
            }
            guard row.state == "present" else { continue }
            switch try files.check(relativePath: row.relativePath, byteCount: row.byteCount, contentHash: row.contentHash) {
            case .ok: break
            case .missing:
                if repair {
                    try store.markAttachmentMissing(id: row.id)
                    report.repairs.append("marked attachment \(row.id) missing (its file \(row.relativePath) is gone)")
                } else {
                    report.missingFiles.append("\(row.id) \(row.relativePath)")
                }
            case let state:
                // Never removed or replaced: the bytes may still be the user's only copy.
                report.damagedFiles.append("\(row.id) \(row.relativePath) \(state.rawValue)")
            }
        }

        let named = Set(rows.map(\.relativePath))
        for file in try files.allFiles() where !named.contains(file.relativePath) && file.modificationTime <= cutoff {
            if repair {
                try files.remove(relativePath: file.relativePath)
                report.repairs.append("removed orphan file \(file.relativePath)")
            } else {
                report.orphanFiles.append(file.relativePath)
            }
        }
        for leftover in try files.stagedLeftovers() where leftover.modificationTime <= cutoff {
            if repair {
                try files.removeStaged(name: leftover.name)
                report.repairs.append("removed staging leftover tmp/\(leftover.name)")
            } else {
                report.stagingLeftovers.append("tmp/" + leftover.name)
            }
        }
        return report
    }
}

/// Deleting an attachment, resumable at every step (architecture §4.4): mark the row
/// `deleting` (committed), unlink the file and fsync its directory, then drop the row (or keep a
/// tombstone for the sync server). A crash anywhere leaves a row that `container check --repair`
/// finishes.
public enum AttachmentDeletion {
    public static func delete(id: String, container: Container) throws {
        try container.store.queueAttachmentDeletion(id: id)
        let rows = try container.store.allAttachments().filter { $0.id == id }
        guard let row = rows.first else { return }
        try finish(row, files: try AttachmentFiles(container: container), store: container.store)
    }

    static func finish(_ row: Attachment, files: AttachmentFiles, store: Store) throws {
        do {
            try files.remove(relativePath: row.relativePath)
        } catch let error as FileSystemError where error.code == .notFound {
            // Already gone (a previous attempt got this far).
        }
        try store.finishAttachmentDeletion(id: row.id)
    }
}
