import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardDevice

extension MigrationRun {
    /// The attachments step: each planned file goes to its destination sealed — never renamed,
    /// since a file in the clear must not enter the container: a copy sealed to
    /// `complete-unless-open` (`SealedFile`: its public key needs nothing unlocked) into
    /// `migration/staged/0/` (most were made while the store step ran: `copyingFilesAlongside`),
    /// the source checked against the plan by its identity and the plaintext copied by its size,
    /// made durable, its inode recorded in the file list, then renamed into place; the old file
    /// stays until the commit marker (it is removed once the sealed one is durable). A file
    /// already at its destination counts as done only if it is the planned file (its identity:
    /// renamed there by an earlier build's attempt, sealed later by `app container protect`) or
    /// the recorded copy (its inode and sealed size). After a failure the unpublished copies are
    /// deleted rather than left to take space until the next attempt.
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
        // Where copies wait: beside those made ahead, or in a staged directory emptied of what an
        // interrupted attempt left.
        var staging: Directory?
        var directories: [String: Directory] = [:]
        var touched = Set<String>()
        var copies: [PendingCopy] = []
        let keys = container.options.fileKeys
        var done: Int64 = 0
        var index = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: AttachmentFiles.chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        try files.forEach { file in
            if index == plan.fileCount / 2 { CrashPoint.reach("migration.attachments-partial") }
            index += 1
            let components = file.destination.split(separator: "/").map(String.init)  // attachments/<shard>/<name>
            let directory = try directories[components[1]] ?? attachments.openDirectory(components[1], create: true)
            directories[components[1]] = directory
            let name = components[2]
            defer {
                done += file.byteCount
                report("attachments", done: done, total: plan.fileBytes)
            }
            if try isInPlace(file, directory: directory, name: name) {
                if try madePrivate(name, in: directory) { touched.insert(components[1]) }
                return
            }
            touched.insert(components[1])
            // Sealed into migration/staged/0/ (its size checked); made durable, recorded and
            // renamed into place in batches below (one syncfs instead of an fsync per file).
            let stagingDirectory = try staging ?? (copiedAheadThrough > 0
                ? Self.workerDirectory(0, in: migrationDirectory.openDirectory(Self.stagedDirectory)) : ownStagingDirectory())
            staging = stagingDirectory
            let copyInode = try stagedCopy(of: file, from: source, in: stagingDirectory, keys: keys, buffer: buffer)
            copies.append(PendingCopy(file: file, directory: directory, name: name, inode: copyInode))
            if copies.count >= Self.copyBatch { try publishCopies(&copies, from: stagingDirectory) }
        }
        if let staging { try publishCopies(&copies, from: staging) }
        copiedAheadThrough = 0
        try removeStagedDirectory()
        // fsync(2) of a file does not persist its name: every directory that gained or lost a name
        // is made durable before the journal records the step — with one syncfs(2) per filesystem
        // rather than an fsync per directory (up to 256 shards, each fsync a journal commit).
        // Until the commit marker a copied file still has its original in the old location, and a
        // renamed one is the same inode.
        if !touched.isEmpty { try attachments.synchronizeFileSystem() }
    }

    /// Killed between a rename and its chmod, an earlier attempt left version 1's mode on a file
    /// already in place: made 0600 now. True when it had to be.
    private func madePrivate(_ name: String, in directory: Directory) throws -> Bool {
        guard try directory.status(of: name)?.permissions != 0o600 else { return false }
        try directory.setPermissions(of: name, to: 0o600)
        return true
    }

    /// The inode of `file`'s copy in `staging`: the one copied ahead (`copiedAheadThrough`) when
    /// it is whole, else a new copy (its size checked).
    private func stagedCopy(of file: PlannedFile, from source: Directory, in staging: Directory, keys: any FileKeys,
                            buffer: UnsafeMutableRawBufferPointer) throws -> UInt64 {
        if file.number <= copiedAheadThrough, let status = try staging.status(of: Self.stagedName(file)), status.size == file.sealedByteCount {
            return status.inode
        }
        return try Self.copy(file, from: source, into: staging, keys: keys, buffer: buffer)
    }

    /// A copy checked and waiting in `migration/staged/0/` to be made durable and renamed.
    struct PendingCopy {
        let file: PlannedFile
        let directory: Directory
        let name: String
        let inode: UInt64
    }

    /// Where copies across filesystems wait, in `migration/`, until they are renamed into place.
    static let stagedDirectory = "staged"

    /// A planned file's name in `migration/staged/0/`: its number in the plan.
    static func stagedName(_ file: PlannedFile) -> String { String(file.number) }

    /// Seals `file` from the legacy `Attachments/` into `staging` under `stagedName(file)`, to
    /// `complete-unless-open` (read through `buffer`), after checking the source's identity
    /// against the plan, and checking the size copied; starts its writeback (the batch's syncfs
    /// makes it durable). Returns the copy's inode. A source that is not the planned file is
    /// `sourceChanged`; the partial copy is removed.
    static func copy(_ file: PlannedFile, from source: Directory, into staging: Directory, keys: any FileKeys,
                     buffer: UnsafeMutableRawBufferPointer) throws -> UInt64 {
        let input: FileDescriptor
        do {
            input = try source.openFileForReading(file.source)
        } catch {
            if error.code == .notFound || error.code == .notRegularFile || error.code == .symbolicLink {
                throw MigrationError.sourceChanged(path: source.childPath(file.source))
            }
            throw error
        }
        guard file.isPlannedFile(try input.status()) else { throw MigrationError.sourceChanged(path: source.childPath(file.source)) }
        let name = stagedName(file)
        try staging.removeFile(name)
        var kept = false
        defer { if !kept { try? staging.removeFile(name) } }
        let output = try staging.openFile(name, .writeOnly, creating: .newFile, mode: 0o600)
        let writer = try SealedFileWriter(output: output, key: try keys.sealingKey(.completeUnlessOpen))
        var copied: Int64 = 0
        while true {
            let count = try input.read(into: buffer)
            if count == 0 { break }
            copied += Int64(count)
            guard copied <= file.byteCount else { throw MigrationError.sourceChanged(path: source.childPath(file.source)) }
            try writer.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        guard copied == file.byteCount else { throw MigrationError.sourceChanged(path: source.childPath(file.source)) }
        try writer.finish()
        output.startWriteBack(offset: 0, count: writer.sealedLength)
        kept = true
        return try output.status().inode
    }

    /// Runs `body` (the store step) on this thread while, when the old location is on another
    /// filesystem, a second thread copies the planned files in order into `migration/staged/0/`,
    /// sizes checked, writeback started: the store step is CPU work, the copy mostly the kernel's
    /// and the disk's, and the attachments step then only publishes. A copy that fails stops the
    /// copying ahead; the attachments step copies what is left itself, and reports what fails then.
    func copyingFilesAlongside<Result>(_ body: () throws -> Result) throws -> Result {
        guard copiedAheadThrough == 0, plan.fileCount > 0, let legacyRoot,
              try legacyRoot.status(of: LegacyLayout.attachmentsDirectory)?.kind == .directory
        else { return try body() }
        let source = try legacyRoot.openDirectory(LegacyLayout.attachmentsDirectory)
        let staging = try ownStagingDirectory()
        let keys = try container().options.fileKeys
        let list = try files.openAnother()  // this connection is the other thread's
        var result: Result?
        var copiedThrough: Int64 = 0
        // Worker 0 (this thread) runs index 0, worker 1 index 1; errors are rethrown after both end.
        do {
            try ParallelLoop.run(count: 2, threads: 2) { _, index in
                if index == 0 {
                    result = try body()
                } else {
                    copiedThrough = Self.copyAhead(list, from: source, into: staging, keys: keys)
                }
            }
        } catch {
            discardStagedCopies()
            throw error
        }
        copiedAheadThrough = copiedThrough
        return result!
    }

    /// Copies the listed files in order until one fails; returns the number of the last copied.
    private static func copyAhead(_ list: MigrationFileList, from source: Directory, into staging: Directory, keys: any FileKeys) -> Int64 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: AttachmentFiles.chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var last: Int64 = 0
        do {
            try list.forEach { file in
                _ = try copy(file, from: source, into: staging, keys: keys, buffer: buffer)
                last = file.number
            }
        } catch {
            // Left to the attachments step, which copies the rest and reports this.
        }
        return last
    }

    private func discardStagedCopies() {
        copiedAheadThrough = 0
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
            try MigrationFileList.removeFiles(in: migration)
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

    /// `migration/staged/<worker>/`: the copies of one thread (only `0/` now; earlier versions
    /// copied on two).
    static func workerDirectory(_ worker: Int, in staging: Directory) throws -> Directory {
        try staging.openDirectory(String(worker), create: true)
    }

    /// Where a step copies on its own thread: `migration/staged/0/`, in a staged directory
    /// emptied of earlier attempts' copies.
    private func ownStagingDirectory() throws -> Directory { try Self.workerDirectory(0, in: emptyStagedDirectory()) }

    /// Copies (across filesystems) are published in batches of this many files.
    static let copyBatch = 500

    /// Makes a batch of copies durable with one `syncfs(2)` of the container's filesystem — the
    /// data of every file before any of them gets its final name — records their inodes in the
    /// file list (a committed, fsynced transaction: from then on each is known as the planned
    /// file's copy), then renames them into place. Until then they are only in
    /// `migration/staged/`: a crash leaves leftovers, never a name on a partial file. The renames
    /// are made durable with the step's closing syncfs.
    private func publishCopies(_ copies: inout [PendingCopy], from staging: Directory) throws {
        guard !copies.isEmpty else { return }
        try migrationDirectory.synchronizeFileSystem()
        try files.recordCopies(copies.map { ($0.file.number, $0.inode) })
        for copy in copies {
            try staging.rename(Self.stagedName(copy.file), to: copy.directory, as: copy.name)
        }
        copies.removeAll()
    }

    /// True when `name` in `directory` is already the planned file — the same identity (renamed
    /// there) or the copy the file list recorded; throws when something else is there.
    func isInPlace(_ file: PlannedFile, directory: Directory, name: String) throws -> Bool {
        guard let status = try directory.status(of: name) else { return false }
        guard file.isPlannedFile(status) || file.isRecordedCopy(status) else {
            throw MigrationError.destinationConflict(path: directory.childPath(name))
        }
        return true
    }

    /// The last step, after the commit marker: every file version 1 wrote is deleted, then its
    /// directories, then the location itself. Entries version 1 did not write are left where
    /// they are; returns their paths (the location stays when it holds any).
    func deleteOldLocation() throws -> [String] {
        legacy = nil  // the legacy store is closed before its files go
        guard let legacyRoot, try FirstLaunchMigration.legacyDirectoryExists(at: plan.legacyPath) else { return [] }
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
