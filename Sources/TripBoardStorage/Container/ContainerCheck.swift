import TripBoardSQLite
import TripBoardSystem
import TripBoardModel
import TripBoardDevice

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
    /// What stands where a regular file belongs — a FIFO, socket, device, link or directory in an
    /// attachment shard, in `tmp/` or in the thumbnail cache, or an attachment shard that is not a
    /// directory: `<path> (<what it is>)`.
    public var misplacedEntries: [String] = []
    /// Files in tmp/ older than the grace period (interrupted imports and writes).
    public var stagingLeftovers: [String] = []
    /// Thumbnails of no attachment (older than the grace period), and names the cache never makes.
    public var staleCacheEntries: [String] = []
    /// Rows marked `missing` whose file is back — at its place, or found in
    /// `attachments/recovered/` by size and hash: `<id> <path> (<where>)`; `--repair` puts it in
    /// place and marks the row `present`.
    public var returnedFiles: [String] = []
    /// Deletions that were queued but not finished: attachment ids.
    public var unfinishedDeletions: [String] = []
    /// The store carries a damage mark (a command met a damaged page) but passes
    /// `integrity_check` now: `--repair` removes the mark. `null` otherwise.
    public var staleDamageMark: String?
    /// What `attachments/recovered/` holds after this run: quarantined entries, kept until the
    /// user re-attaches or deletes them (`--repair --purge-recovered`): `<path> (<kind>[, N bytes])`.
    /// Informational: kept files need no repair.
    public var recovered: [String] = []
    /// What --repair changed, one line each.
    public var repairs: [String] = []
    /// Attachment rows whose hash this run recorded: the container migration's hashing pass was
    /// due (killed, or not run yet) and this check ran it, or a row not hashed yet was hashed on
    /// the spot (`AttachmentHashing`). Informational: recording a hash is no repair.
    public var hashesRecorded = 0
    /// Attachment files sealed under a class that is closed now (the device locked): their size
    /// was checked, their hash could not be; unlock and check again to verify them.
    public var checkedBySizeOnly = 0

    /// True when nothing needs attention (after repairs, if any were made).
    public var isClean: Bool {
        storeProblems.isEmpty && missingFiles.isEmpty && damagedFiles.isEmpty && orphanFiles.isEmpty && misplacedEntries.isEmpty
            && stagingLeftovers.isEmpty && staleCacheEntries.isEmpty && returnedFiles.isEmpty && unfinishedDeletions.isEmpty
            && staleDamageMark == nil
    }
}

/// Verifies that every attachment row has its file with the right size and hash, finds orphans,
/// misplaced entries and unfinished work, and with `repair` finishes or tidies what can be safely
/// tidied. Nothing that may be user data is ever deleted: a file no row names, and anything that
/// stands where an attachment belongs, is moved into `attachments/recovered/` (quarantined);
/// only `tmp/` leftovers and cache entries are removed.
public enum ContainerCheck {
    /// Files younger than this may belong to an import in flight (file published, row not yet
    /// committed) and are left alone.
    public static let defaultGracePeriod: Int64 = 3600

    /// `purgeRecovered` (only with `repair`) deletes for good what `attachments/recovered/` held
    /// when the run began — after the run has moved back every file a `missing` row recognises —
    /// and nothing this run quarantined itself: a file is purged only after a report has shown it.
    public static func run(container: Container, repair: Bool, gracePeriod: Int64 = defaultGracePeriod,
                           purgeRecovered: Bool = false) throws -> ContainerCheckReport {
        precondition(repair || !purgeRecovered, "purging recovered files is a repair")
        // Repairs take the exclusive lock: no import is between publishing a file and committing
        // its row while orphans are moved.
        if repair {
            return try container.withExclusiveLock {
                try check(container: container, repair: true, gracePeriod: gracePeriod, purgeRecovered: purgeRecovered)
            }
        }
        return try check(container: container, repair: false, gracePeriod: gracePeriod, purgeRecovered: false)
    }

    /// One pass of the check; `cutoff` is the newest modification time that counts as old.
    struct Pass {
        let container: Container
        let files: AttachmentFiles
        let repair: Bool
        let cutoff: Int64
        var report = ContainerCheckReport()
    }

    static func check(container: Container, repair: Bool, gracePeriod: Int64, purgeRecovered: Bool) throws -> ContainerCheckReport {
        var pass = Pass(container: container, files: try AttachmentFiles(container: container), repair: repair,
                        cutoff: Timestamp.now().secondsSinceEpoch - gracePeriod)
        let shown = purgeRecovered ? try pass.files.recoveredEntries() : []
        // Without readable rows, nothing can be said of which file is whose: those checks (and
        // their repairs) wait for a sound store; tmp/ and the cache never depend on rows.
        if var rows = try pass.checkStore() {
            // A hashing pass the migration left due runs first (on two threads); rows it could not
            // hash (no file, another size) are what the row check reports.
            if let outcome = try AttachmentHashing.finishPending(container: container) {
                pass.report.hashesRecorded += outcome.hashed
                rows = try container.store.allAttachments()
            }
            try pass.checkRows(rows)
            try pass.checkReturnedFiles(rows.filter { $0.state == .missing })
            try pass.checkAttachmentTree(named: Set(rows.map(\.relativePath)))
            try pass.checkCache(liveIDs: Set(rows.filter { $0.state != .deleting && $0.trashedAt == nil }.map(\.id.text)))
            for line in try pass.files.purgeRecovered(shown) { pass.report.repairs.append("deleted \(line), as --purge-recovered asked") }
        } else if purgeRecovered {
            // A file there may be the bytes of a `missing` row, which cannot be read to tell.
            pass.report.storeProblems.append("attachments/recovered/ was not purged: with the rows unreadable, a file there may be a missing attachment's only copy")
        }
        try pass.checkStaging()
        pass.report.recovered = try pass.files.recoveredEntries().map(\.description)
        return pass.report
    }
}

extension ContainerCheck.Pass {
    /// The store: opened at all, `integrity_check` (a bounded list), the damage mark. Returns the
    /// attachment rows, or `nil` when they cannot be read. Damage never stops the check: it is
    /// the report.
    mutating func checkStore() throws -> [Attachment]? {
        let store: Store
        do {
            store = try container.store
        } catch {
            report.storeProblems.append(errorMessage(for: error))
            report.storeProblems.append("the attachments were not checked: their rows cannot be read")
            return nil
        }
        let damage = try container.manifest()?.storeDamage
        do {
            let problems = try store.integrityProblems()
            report.storeProblems += problems
            if problems.isEmpty, let damage { try clearDamageMark(damage) }
            // A foreign-key violation is a wrong row, not a damaged page: only the latter is marked.
            if let page = problems.first(where: { !$0.hasPrefix("foreign key violation") }), damage == nil, repair {
                container.recordStoreDamage(detail: "integrity_check: " + page)
                report.repairs.append("marked the store damaged: commands that need it refuse it until `app container salvage` replaces it")
            }
        } catch let error as SQLiteError where error.isCorruption {
            report.storeProblems.append("integrity_check could not finish: \(error.message)")
            if damage == nil, repair { container.recordStoreDamage(detail: error.message) }
        }
        // Rows that break a rule no write of TripBoard's breaks (put there by hand, or by a build
        // that checked less): reported, never repaired by guessing.
        do {
            report.storeProblems += try store.rowsBreakingRules().map { "a row breaks a rule: " + $0 }
        } catch let error as SQLiteError where error.isCorruption {
            report.storeProblems.append("the rows could not all be read: \(error.message)")
        }
        do {
            return try store.allAttachments()
        } catch let error as SQLiteError where error.isCorruption {
            report.storeProblems.append("the attachment rows cannot be read (\(error.message)): the attachments were not checked")
            return nil
        }
    }

    /// A damage mark on a store that `integrity_check` now finds sound (a page put right, a
    /// store restored by hand): reported, and removed by `--repair`.
    private mutating func clearDamageMark(_ damage: StoreDamage) throws {
        let what = "the store was marked damaged at \(damage.foundAt) (\(damage.detail)), and integrity_check now finds no problem"
        guard repair else { return report.staleDamageMark = what + ": --repair removes the mark" }
        try container.clearStoreDamage()
        report.repairs.append("removed the damage mark: " + what)
    }
}

extension ContainerCheck.Pass {
    /// Each row against its file: deletions finished, lost files marked missing, and something
    /// that is not a regular file at a row's path quarantined (the row is then missing too).
    mutating func checkRows(_ rows: [Attachment]) throws {
        let store = try container.store
        // A row whose path is not an attachment's own is reported with the rows that break a
        // rule (`checkStore`), and its path never touched: it could name the store itself.
        for row in rows where (try? FieldRules.attachmentPath(row.relativePath, id: row.id.text)) != nil {
            switch row.state {
            case .deleting:
                if repair {
                    try AttachmentDeletion.finish(row, files: files, store: store)
                    report.repairs.append("finished deleting attachment \(row.id)")
                } else {
                    report.unfinishedDeletions.append(row.id.text)
                }
                continue
            case .missing:
                continue
            case .present:
                break
            }
            // Not hashed yet: hashed now and recorded; a pending hash is never compared with anything.
            if row.hashIsUnverified, try AttachmentHashing.verifiedHash(of: row, files: files, recordingIn: store) != nil {
                report.hashesRecorded += 1
                continue
            }
            let state: AttachmentFileState
            do {
                state = try files.check(relativePath: row.relativePath, byteCount: row.byteCount, contentHash: row.contentHash)
            } catch let error as DeviceError where error.isLockRefusal {
                // The size is checked without a key; the hash waits for an unlock.
                if try files.plaintextLength(relativePath: row.relativePath) == row.byteCount {
                    report.checkedBySizeOnly += 1
                } else {
                    report.damagedFiles.append("\(row.id) \(row.relativePath) \(AttachmentFileState.wrongSize.rawValue)")
                }
                continue
            } catch DeviceError.sealedElsewhere {
                report.damagedFiles.append("\(row.id) \(row.relativePath) sealed on another device (this device cannot open it)")
                continue
            }
            switch state {
            case .ok: break
            case .missing:
                if repair {
                    try store.markAttachmentMissing(id: row.id)
                    report.repairs.append("marked attachment \(row.id) missing (its file \(row.relativePath) is gone)")
                } else {
                    report.missingFiles.append("\(row.id) \(row.relativePath)")
                }
            case .notAFile where repair:
                let moved = try files.quarantine(relativePath: row.relativePath)
                try store.markAttachmentMissing(id: row.id)
                report.repairs.append("moved \(row.relativePath), which is not a regular file, to \(moved); marked attachment \(row.id) missing")
            case let state:
                // Never removed or replaced: the bytes may still be the user's only copy.
                report.damagedFiles.append("\(row.id) \(row.relativePath) \(state.rawValue)")
            }
        }
    }

    /// Rows marked `missing` whose bytes came back: at the row's place (put back by hand), or in
    /// `attachments/recovered/` (quarantined by an earlier repair, or found by the migration),
    /// recognised by size and BLAKE2b — never by name alone.
    mutating func checkReturnedFiles(_ missing: [Attachment]) throws {
        guard !missing.isEmpty else { return }
        var recovered = try files.recoveredFiles()
        for row in missing {
            let inPlace: AttachmentFileState
            do {
                inPlace = try files.check(relativePath: row.relativePath, byteCount: row.byteCount, contentHash: row.contentHash)
            } catch let error as DeviceError where error.isLockRefusal {
                continue  // not recognisable while its class is closed
            } catch DeviceError.sealedElsewhere {
                continue
            }
            if inPlace == .ok {
                try markReturned(row, how: "in place")
                continue
            }
            // `recoveredFile` compares the plaintext's length (a sealed file's, from its size and
            // header) before it reads a byte: the hash only for files of the right size.
            guard let index = try recovered.firstIndex(where: { candidate in
                try files.recoveredFile(candidate.name, matches: row.byteCount, row.contentHash)
            }) else { continue }
            let name = recovered.remove(at: index).name
            let found = ContainerLayout.attachmentsDirectory + "/" + AttachmentFiles.recoveredDirectory + "/" + name
            guard repair else {
                report.returnedFiles.append("\(row.id) \(row.relativePath) (found as \(found))")
                continue
            }
            if try files.restoreRecovered(name, to: row.relativePath) { try markReturned(row, how: "moved back from \(found)") }
        }
    }

    private mutating func markReturned(_ row: Attachment, how: String) throws {
        guard repair else { return report.returnedFiles.append("\(row.id) \(row.relativePath) (\(how))") }
        try container.store.markAttachmentPresent(id: row.id)
        report.repairs.append("attachment \(row.id) is present again: its file \(row.relativePath) is back (\(how))")
    }

    /// Files no row names (old enough not to be an import in flight) and entries that are not
    /// regular files: reported, or with `repair` moved into `attachments/recovered/`.
    mutating func checkAttachmentTree(named: Set<String>) throws {
        let (found, misplaced) = try files.inventory()
        for file in found where !named.contains(file.path) && file.status.modificationTime <= cutoff {
            if repair {
                report.repairs.append("moved orphan file \(file.path) to \(try files.quarantine(relativePath: file.path))")
            } else {
                report.orphanFiles.append(file.path)
            }
        }
        for entry in misplaced where !named.contains(entry.path) {
            if repair {
                let moved = try files.quarantine(relativePath: entry.path)
                report.repairs.append("moved \(entry.path) (\(entry.status.kindDescription)) to \(moved)")
            } else {
                report.misplacedEntries.append("\(entry.path) (\(entry.status.kindDescription))")
            }
        }
    }

    /// `tmp/`: old leftovers, and anything that is not a regular file (whatever its age: TripBoard
    /// stages only regular files) — removed by `repair`, a non-empty directory excepted.
    mutating func checkStaging() throws {
        for entry in try files.stagedEntries() {
            let path = ContainerLayout.stagingDirectory + "/" + entry.path
            if entry.status.kind == .regular {
                guard entry.status.modificationTime <= cutoff else { continue }
                if repair {
                    try files.removeStaged(name: entry.path)
                    report.repairs.append("removed staging leftover \(path)")
                } else {
                    report.stagingLeftovers.append(path)
                }
            } else if repair, try isRemovable(entry.status, at: path) {
                try files.removeStaged(name: entry.path, isDirectory: entry.status.kind == .directory)
                report.repairs.append("removed \(path) (\(entry.status.kindDescription))")
            } else {
                report.misplacedEntries.append("\(path) (\(entry.status.kindDescription))" + (repair ? ": not empty, left in place" : ""))
            }
        }
    }

    /// The thumbnail cache: a thumbnail whose attachment is gone, a name the cache never makes,
    /// or anything but a regular file — all removable (a cache rebuilds itself).
    mutating func checkCache(liveIDs: Set<String>) throws {
        // The cache's directories themselves: something else in their place is removed (the
        // cache makes them again), so that the entries below can be looked at.
        for path in [ContainerLayout.cachesDirectory, ContainerLayout.cachesDirectory + "/" + ContainerLayout.thumbnailsDirectory] {
            guard let status = try container.status(of: path), status.kind != .directory else { continue }
            let what = "\(status.kindDescription) where the cache's directory belongs"
            guard repair else {
                report.staleCacheEntries.append("\(path) (\(what))")
                return
            }
            let (parent, name) = path.splitAtLastSlash
            try (parent.isEmpty ? container.root : container.directory(parent)).removeFile(name)
            report.repairs.append("removed stale cache entry \(path) (\(what))")
        }
        let cache = try ThumbnailCache(container: container)
        for entry in try cache.entries() {
            let path = ContainerLayout.cachesDirectory + "/" + ContainerLayout.thumbnailsDirectory + "/" + entry.name
            let isThumbnail = entry.status.kind == .regular && entry.attachmentID != nil
            if isThumbnail && (liveIDs.contains(entry.attachmentID!) || entry.status.modificationTime > cutoff) { continue }
            let what = isThumbnail ? "the thumbnail of no attachment"
                : entry.status.kind == .regular && entry.name.hasSuffix(ThumbnailCache.clearSuffix) ? "a thumbnail in the clear, from an earlier build"
                : entry.status.kindDescription
            if repair, try isRemovable(entry.status, at: path) {
                try cache.remove(entry.name, isDirectory: entry.status.kind == .directory)
                report.repairs.append("removed stale cache entry \(path) (\(what))")
            } else {
                report.staleCacheEntries.append("\(path) (\(what))" + (repair ? ": not empty, left in place" : ""))
            }
        }
    }

    /// Anything but a directory may be removed (a link is removed itself, never followed); a
    /// directory only when empty: what a full one holds is not known to be TripBoard's.
    func isRemovable(_ status: FileStatus, at relativePath: String) throws -> Bool {
        guard status.kind == .directory else { return true }
        return try isEmptyDirectory(relativePath)
    }

    func isEmptyDirectory(_ relativePath: String) throws -> Bool {
        try container.directory(relativePath).entries().isEmpty
    }
}

private extension String {
    /// `a/b/c` → (`a/b`, `c`); `c` → (``, `c`).
    var splitAtLastSlash: (String, String) {
        guard let slash = lastIndex(of: "/") else { return ("", self) }
        return (String(self[..<slash]), String(self[index(after: slash)...]))
    }
}
