extension MigrationRun {
    /// The attachments step: each planned file goes to its destination — `rename(2)` when the old
    /// location is on the same filesystem (the same inode, nothing copied), else a copy into the
    /// container's `tmp/`, hashed on the way and fsynced, then renamed into place; the old file
    /// stays until the commit marker. A file already at its destination counts as done only if it
    /// is the planned file (same inode) or has the planned hash.
    func moveFiles() throws {
        let files = plan.attachments + plan.recovered
        guard !files.isEmpty else { return }
        let (_, legacyRoot) = try legacySource()
        let container = try container()
        let source = try legacyRoot.openDirectory(LegacyLayout.attachmentsDirectory)
        let attachments = try container.directory(ContainerLayout.attachmentsDirectory)
        let staging = try container.stagingDirectory()
        let attachmentFiles = try AttachmentFiles(container: container)
        var directories: [String: Directory] = [:]
        var touched: [String: Directory] = [:]
        var crossDevice = false
        var copies: [(StagedFile, Directory, String, String)] = []
        var done: Int64 = 0
        let total = plan.fileBytes
        for (index, file) in files.enumerated() {
            if index == files.count / 2 { CrashPoint.reach("migration.attachments-partial") }
            let components = file.destination.split(separator: "/").map(String.init)  // attachments/<shard>/<name>
            let directory = try directories[components[1]] ?? attachments.openDirectory(components[1], create: true)
            directories[components[1]] = directory
            let name = components[2]
            defer {
                done += file.byteCount
                report("attachments", done: done, total: total)
            }
            if try isInPlace(file, directory: directory, name: name) { continue }
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
            // Copied into tmp/ and checked against the plan's hash now; made durable and renamed
            // into place in one batch below (one syncfs instead of an fsync per file).
            let staged: StagedFile
            do {
                staged = try attachmentFiles.stage(from: try source.openFileForReading(file.source), maximumBytes: file.byteCount,
                                                   synchronize: false)
            } catch is AttachmentError {
                throw MigrationError.sourceChanged(path: source.childPath(file.source))
            }
            guard staged.byteCount == file.byteCount, staged.contentHash == file.contentHash else {
                attachmentFiles.discard(staged)
                throw MigrationError.sourceChanged(path: source.childPath(file.source))
            }
            copies.append((staged, directory, name, file.destination))
            if copies.count >= Self.copyBatch { try publishCopies(&copies, staging: staging) }
        }
        try publishCopies(&copies, staging: staging)
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

    /// Copies (across filesystems) are published in batches of this many files.
    static let copyBatch = 500

    /// Makes a batch of copies durable with one `syncfs(2)` of the container's filesystem — the
    /// data of every file before any of them gets its final name — then renames them into place.
    /// Until then they are only in `tmp/`: a crash leaves leftovers, never a name on a partial
    /// file. The renames are made durable with the step's closing syncfs.
    private func publishCopies(_ copies: inout [(StagedFile, Directory, String, String)], staging: Directory) throws {
        guard !copies.isEmpty else { return }
        try staging.synchronizeFileSystem()
        for (staged, directory, name, destination) in copies {
            try staging.rename(staged.stagingName, to: directory, as: name)
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
