extension MigrationRun {
    /// The attachments step: each planned file goes to its destination — `rename(2)` when the old
    /// location is on the same filesystem (the same inode, nothing copied), else a copy into
    /// `migration/staged/`, hashed on the way and checked against the plan (most were made while
    /// the store step ran: `copyingFilesAlongside`), made durable, then renamed into place; the old
    /// file stays until the commit marker. A file already at its destination counts as done only
    /// if it is the planned file (same inode) or has the planned hash. After a failure the
    /// unpublished copies are deleted rather than left to take space until the next attempt.
    func moveFiles() throws {
        do {
            try placeFiles()
        } catch {
            discardStagedCopies()
            throw error
        }
    }

    private func placeFiles() throws {
        guard plan.fileCount > 0 else { return try removeStagedDirectory() }
        let (_, legacyRoot) = try legacySource()
        let container = try container()
        let source = try legacyRoot.openDirectory(LegacyLayout.attachmentsDirectory)
        let attachments = try container.directory(ContainerLayout.attachmentsDirectory)
        // Where this step's own copies go, made with the first: beside the copies made ahead
        // (copiedAhead, the plan's or the store step's), or else in a staged directory emptied
        // of what an interrupted attempt left.
        var staging: Directory?
        let besideCopiesAhead = !copiedAhead.isEmpty
        var directories: [String: Directory] = [:]
        var touched: [String: Directory] = [:]
        var crossDevice = false
        var copies: [(StagedCopy, Directory, String, String)] = []
        var done: Int64 = 0
        let total = plan.fileBytes
        for (index, file) in plan.files.enumerated() {
            if index == plan.fileCount / 2 { CrashPoint.reach("migration.attachments-partial") }
            let components = file.destination.split(separator: "/").map(String.init)  // attachments/<shard>/<name>
            let directory = try directories[components[1]] ?? attachments.openDirectory(components[1], create: true)
            directories[components[1]] = directory
            let name = components[2]
            defer {
                done += file.byteCount
                report("attachments", done: done, total: total)
            }
            if try isInPlace(file, directory: directory, name: name) {
                // Killed between a rename and its chmod, an earlier attempt left version 1's mode.
                if try directory.status(of: name)?.permissions != 0o600 {
                    try directory.setPermissions(of: name, to: 0o600)
                    touched[directory.path] = directory
                }
                continue
            }
            guard let status = try source.status(of: file.source), status.kind == .regular, status.size == file.byteCount else {
                throw MigrationError.sourceChanged(path: source.childPath(file.source))
            }
            touched[directory.path] = directory
            if !crossDevice {
                do {
                    try source.rename(file.source, to: directory, as: name)
                    // The same inode keeps version 1's mode: make it private like every container file.
                    try directory.setPermissions(of: name, to: 0o600)
                    continue
                } catch {
                    guard error.code == .crossDevice else { throw error }
                    crossDevice = true  // rename(2): EXDEV — every later file is copied
                }
            }
            // Copied into migration/staged/ and checked against the plan's hash; made durable and
            // renamed into place in batches below (one syncfs instead of an fsync per file).
            let staged: StagedCopy
            if let copy = copiedAhead.removeValue(forKey: file.destination) {
                staged = copy
            } else {
                let stagingDirectory = try staging ?? (besideCopiesAhead
                    ? Self.workerDirectory(0, in: migrationDirectory.openDirectory(Self.stagedDirectory)) : ownStagingDirectory())
                staging = stagingDirectory
                let copy: StagedFile
                do {
                    copy = try AttachmentFiles.stage(from: try source.openFileForReading(file.source), into: stagingDirectory,
                                                     maximumBytes: file.byteCount, synchronize: false)
                } catch is AttachmentError {
                    throw MigrationError.sourceChanged(path: source.childPath(file.source))
                }
                guard copy.byteCount == file.byteCount, copy.contentHash == file.contentHash else {
                    AttachmentFiles.discard(stagedName: copy.stagingName, in: stagingDirectory)
                    throw MigrationError.sourceChanged(path: source.childPath(file.source))
                }
                staged = StagedCopy(copy, in: stagingDirectory)
            }
            copies.append((staged, directory, name, file.destination))
            if copies.count >= Self.copyBatch { try publishCopies(&copies) }
        }
        try publishCopies(&copies)
        for copy in copiedAhead.values { AttachmentFiles.discard(stagedName: copy.name, in: copy.directory) }
        copiedAhead = [:]
        try removeStagedDirectory()
        // fsync(2) of a file does not persist its name: every directory that gained or lost a name
        // is made durable before the journal records the step — with one syncfs(2) per filesystem
        // rather than an fsync per directory (up to 256 shards, each fsync a journal commit).
        // Until the commit marker a copied file still has its original in the old location, and a
        // renamed one is the same inode.
        if !touched.isEmpty {
            try attachments.synchronizeFileSystem()
            if crossDevice { try source.synchronizeFileSystem() }
        }
    }

    /// Where copies across filesystems wait, in `migration/`, until they are renamed into place.
    static let stagedDirectory = "staged"

    /// Runs `body` (the store step) on this thread while, when the old location is on another
    /// filesystem, a second thread copies every planned file into `migration/staged/`, hashed
    /// and checked against the plan, its writeback started: the store step is CPU work, the copy
    /// mostly the kernel's and the disk's, and the attachments step then only publishes. A copy
    /// that fails or differs stops the copying ahead; the attachments step copies what is left
    /// itself, and reports what fails then.
    func copyingFilesAlongside<Result>(_ body: () throws -> Result) throws -> Result {
        guard copiedAhead.isEmpty, !plan.sameFilesystem, plan.fileCount > 0, let legacyRoot,
              try legacyRoot.status(of: LegacyLayout.attachmentsDirectory)?.kind == .directory
        else { return try body() }
        let source = try legacyRoot.openDirectory(LegacyLayout.attachmentsDirectory)
        let staging = try ownStagingDirectory()
        var result: Result?
        var copies: [String: StagedCopy] = [:]
        // Worker 0 (this thread) runs index 0, worker 1 index 1; errors are rethrown after both end.
        do {
            try ParallelLoop.run(count: 2, threads: 2) { _, index in
                if index == 0 {
                    result = try body()
                } else {
                    copies = Self.copyAhead(plan.files, from: source, into: staging)
                }
            }
        } catch {
            discardStagedCopies()
            throw error
        }
        copiedAhead = copies
        return result!
    }

    private static func copyAhead(_ files: some Sequence<PlannedFile>, from source: Directory, into staging: Directory) -> [String: StagedCopy] {
        var copies: [String: StagedCopy] = [:]
        for file in files {
            let copy: StagedFile
            do {
                copy = try AttachmentFiles.stage(from: source.openFileForReading(file.source), into: staging,
                                                 maximumBytes: file.byteCount, synchronize: false)
            } catch {
                break  // left to the attachments step, which copies the rest and reports this
            }
            guard copy.byteCount == file.byteCount, copy.contentHash == file.contentHash else {
                AttachmentFiles.discard(stagedName: copy.stagingName, in: staging)
                break
            }
            copies[file.destination] = StagedCopy(copy, in: staging)
        }
        return copies
    }

    private func discardStagedCopies() {
        copiedAhead = [:]
        Self.discardStagedCopies(in: root)
    }

    /// Best effort, after a failure: empties `migration/staged/` if it exists (what stays is
    /// emptied by the next attempt anyway).
    static func discardStagedCopies(in root: Directory) {
        do {
            guard let migration = try MigrationJournal.openDirectory(in: root),
                  try migration.status(of: stagedDirectory) != nil else { return }
            _ = try emptyStagedDirectory(in: migration)
        } catch {
            // Left for the next attempt, which empties the directory before it copies.
        }
    }

    /// Best effort, after a plan that failed: the staged copies and the store being built go (the
    /// next attempt would delete them anyway).
    static func discardStaging(in root: Directory) {
        discardStagedCopies(in: root)
        do {
            guard let migration = try MigrationJournal.openDirectory(in: root) else { return }
            try MigrationStoreBuilder.removeFiles(in: migration)
            try migration.removeDirectory(stagedDirectory)
            try root.removeDirectory(MigrationJournal.directory)  // fails, and stays, if it holds anything else
        } catch {
            // Left for the next attempt, which deletes them before it builds.
        }
    }

    private func emptyStagedDirectory() throws -> Directory { try Self.emptyStagedDirectory(in: migrationDirectory) }

    /// Removes `migration/staged/` with what an interrupted attempt may have left there.
    private func removeStagedDirectory() throws {
        guard try migrationDirectory.status(of: Self.stagedDirectory) != nil else { return }
        _ = try emptyStagedDirectory()
        try migrationDirectory.removeDirectory(Self.stagedDirectory)
    }

    /// `migration/staged/`, emptied of what an interrupted attempt left there: its per-thread
    /// directories with their files (and files directly in it, where earlier versions staged).
    static func emptyStagedDirectory(in migrationDirectory: Directory) throws -> Directory {
        let staging = try migrationDirectory.openDirectory(stagedDirectory, create: true)
        for name in try staging.entries() {
            guard try staging.status(of: name)?.kind == .directory else {
                try staging.removeFile(name)
                continue
            }
            let worker = try staging.openDirectory(name)
            for file in try worker.entries() { try worker.removeFile(file) }
            try staging.removeDirectory(name)
        }
        return staging
    }

    /// `migration/staged/<worker>/`: the copies of one thread (see `MigrationPlanner.hash`).
    static func workerDirectory(_ worker: Int, in staging: Directory) throws -> Directory {
        try staging.openDirectory(String(worker), create: true)
    }

    /// Where a step copies on its own thread: `migration/staged/0/`, in a staged directory
    /// emptied of earlier attempts' copies.
    private func ownStagingDirectory() throws -> Directory { try Self.workerDirectory(0, in: emptyStagedDirectory()) }

    /// Copies (across filesystems) are published in batches of this many files.
    static let copyBatch = 500

    /// Makes a batch of copies durable with one `syncfs(2)` of the container's filesystem — the
    /// data of every file before any of them gets its final name — then renames them into place.
    /// Until then they are only in `migration/staged/`: a crash leaves leftovers, never a name on
    /// a partial file. The renames are made durable with the step's closing syncfs.
    private func publishCopies(_ copies: inout [(StagedCopy, Directory, String, String)]) throws {
        guard !copies.isEmpty else { return }
        try migrationDirectory.synchronizeFileSystem()
        for (staged, directory, name, destination) in copies {
            try staged.directory.rename(staged.name, to: directory, as: name)
            verifiedFiles.insert(destination)
        }
        copies.removeAll()
    }

    /// True when `name` in `directory` is already the planned file; throws when something else
    /// is there.
    func isInPlace(_ file: PlannedFile, directory: Directory, name: String) throws -> Bool {
        guard let status = try directory.status(of: name) else { return false }
        if status.device == file.device && status.inode == file.inode && status.size == file.byteCount { return true }
        if verifiedFiles.contains(file.destination) { return true }
        guard status.kind == .regular, status.size == file.byteCount,
              try AttachmentFiles.contentHash(of: directory.openFileForReading(name)).hash == file.contentHash
        else { throw MigrationError.destinationConflict(path: directory.childPath(name)) }
        verifiedFiles.insert(file.destination)
        return true
    }

    /// The last step, after the commit marker: every file version 1 wrote is deleted, then its
    /// directories, then the location itself. Entries version 1 did not write are left where
    /// they are; returns their paths (the location stays when it holds any).
    func deleteOldLocation() throws -> [String] {
        legacy = nil  // the legacy store is closed before its files go
        guard let legacyRoot, try ContainerMigration.legacyDirectoryExists(at: plan.legacyPath) else { return [] }
        report("finishing", done: 0, total: 1)
        try removeTree(LegacyLayout.thumbnailsDirectory, in: legacyRoot)
        if try legacyRoot.status(of: LegacyLayout.attachmentsDirectory)?.kind == .directory {
            let attachments = try legacyRoot.openDirectory(LegacyLayout.attachmentsDirectory)
            for name in try attachments.entries() where try attachments.status(of: name)?.kind != .directory {
                try attachments.removeFile(name)
            }
            try attachments.synchronize()
        }
        CrashPoint.reach("migration.delete-partial")
        for name in try legacyRoot.entries() where LegacyLayout.ownNames.contains(name) || Self.isPreferencesLeftover(name) {
            if try legacyRoot.status(of: name)?.kind != .directory { try legacyRoot.removeFile(name) }
        }
        try removeEmptyDirectory(LegacyLayout.attachmentsDirectory, in: legacyRoot)
        try legacyRoot.synchronize()

        var trimmed = Substring(plan.legacyPath)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let slash = trimmed.lastIndex(of: "/")
        let parentPath = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        let name = slash.map { String(trimmed[trimmed.index(after: $0)...]) } ?? String(trimmed)
        let parent = try Directory.open(path: parentPath)
        let remaining = try legacyRoot.entries()
        guard remaining.isEmpty else { return remaining.map { legacyRoot.childPath($0) } }
        try parent.removeDirectory(name)
        try parent.synchronize()
        report("finishing", done: 1, total: 1)
        return []
    }

    /// A temporary file of the atomic rewrite of `preferences.json`, left by a crash.
    static func isPreferencesLeftover(_ name: String) -> Bool {
        name.hasPrefix(LegacyLayout.preferencesFile + ".") && name.hasSuffix(".tmp")
    }

    /// Removes `name` and, if it is a directory, everything in it (files first); symbolic links
    /// are removed, never followed.
    private func removeTree(_ name: String, in directory: Directory) throws {
        guard let status = try directory.status(of: name) else { return }
        guard status.kind == .directory else { return try directory.removeFile(name) }
        let child = try directory.openDirectory(name)
        for entry in try child.entries() { try removeTree(entry, in: child) }
        try directory.removeDirectory(name)
    }

    /// Removes the directory `name` if it is empty; one that still holds something stays.
    private func removeEmptyDirectory(_ name: String, in directory: Directory) throws {
        do {
            try directory.removeDirectory(name)
        } catch {
            // ENOTEMPTY: it holds entries version 1 did not write, which the caller reports.
            guard error.code == .alreadyExists else { throw error }
        }
    }
}

/// A copy waiting in one of `migration/staged/`'s directories to be renamed into place, already
/// checked against the plan. Only its name and size are kept: 10,000 of them are held at once,
/// and a `StagedFile` also carries the file's first kilobyte (for the import's format check).
struct StagedCopy {
    let name: String
    let byteCount: Int64
    let directory: Directory

    init(_ file: StagedFile, in directory: Directory) {
        name = file.stagingName
        byteCount = file.byteCount
        self.directory = directory
    }
}
