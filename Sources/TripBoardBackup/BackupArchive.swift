import TripBoardSQLite
import TripBoardStorage
import TripBoardDevice
import TripBoardKeychain
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardModel

/// The tar inside a backup, in the order a restore needs to check as it reads: the manifest,
/// the store (whose rows every attachment is checked against), the preferences, the keychain,
/// then `attachments/<xx>/…` in path order and `attachments/recovered/…`. Paths are the
/// container's own, relative to its root with no leading directory (`age -d | tar x` in an
/// empty directory makes a container).
struct BackupArchive {
    let tar: TarWriter
    let files: AttachmentFiles
    let snapshot: BackupSnapshot
    let total: Int64
    let progress: (Int64, Int64) -> Void
    private var done: Int64 = 0
    /// Every attachment's bytes are hashed on one thread for the whole archive (the archive's
    /// encryption runs on another, `WriteBehindSink`): reading and writing do not wait on BLAKE2b.
    private let hashing = HashingQueue()
    /// The attachments archived whose digest has not been compared with their row yet, in order.
    private var unchecked: [(id: String, path: String, hash: String)] = []

    init(tar: TarWriter, files: AttachmentFiles, snapshot: BackupSnapshot, total: Int64, progress: @escaping (Int64, Int64) -> Void) {
        self.tar = tar
        self.files = files
        self.snapshot = snapshot
        self.total = total
        self.progress = progress
    }

    mutating func writeEverything() throws -> BackupSummary {
        // The hashing thread is joined however this ends (it holds the queue until then).
        defer { hashing.finish() }
        let now = Timestamp.now().secondsSinceEpoch
        try tar.addFile(ContainerLayout.manifestFile, contents: snapshot.manifest, modificationTime: now)
        try tar.addDirectory(ContainerLayout.storeDirectory, modificationTime: now)
        try recordUnverifiedHashes()
        try addCopy(snapshot.staging, snapshot.storeName, as: ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile,
                    sealing: snapshot.storeSealing)
        if let preferences = snapshot.preferences {
            try tar.addDirectory(ContainerLayout.preferencesDirectory, modificationTime: now)
            try tar.addFile(ContainerLayout.preferencesDirectory + "/" + ContainerLayout.preferencesFile, contents: preferences,
                            modificationTime: now)
        }
        if snapshot.keychain != nil {
            try tar.addDirectory(ContainerLayout.keychainDirectory, modificationTime: now)
            try addCopy(snapshot.staging, snapshot.keychainName, as: ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile,
                        sealing: snapshot.keychainSealing)
        }
        try tar.addDirectory(ContainerLayout.attachmentsDirectory, modificationTime: now)
        var summary = BackupSummary(file: "", bytes: 0, createdAt: Timestamp.now().utcStamp, counts: snapshot.counts, attachmentFiles: 0,
                                    attachmentBytes: 0, missingAttachments: 0, recoveredFiles: 0, preferences: snapshot.preferences != nil,
                                    keychain: snapshot.keychainState, durationSeconds: 0)
        do {
            try addAttachments(into: &summary, modificationTime: now)
        } catch {
            // The first attachment that is not its row's is the one named, as when each was
            // compared before the next was read: an earlier file's hash comes before this error.
            try compareDigests(hashing.finish())
            throw error
        }
        try compareDigests(hashing.finish())
        try addRecoveredFiles(into: &summary, modificationTime: now)
        try tar.finish()
        return summary
    }

    /// Rows not hashed yet (`Attachment.hashIsUnverified`: the container migration's hashing pass
    /// has not reached them) get their file's hash in the snapshot — the archived store — before
    /// it is archived: a restore then checks those files as it checks every other (the live
    /// store is left to the pass). Each file is read again as it is archived and compared with
    /// the hash recorded here. A file missing or of another size fails the backup, as it would
    /// for any row.
    private func recordUnverifiedHashes() throws {
        guard let store = snapshot.store else { return }
        let rows = try store.statement("SELECT \(Store.attachmentColumns) FROM attachments WHERE \(Store.unverifiedAttachment)")
            .rows(Store.attachment(from:))
        guard !rows.isEmpty else { return }
        try store.writeTransaction {
            let update = try store.statement("UPDATE attachments SET content_hash = ?2 WHERE id = ?1")
            for row in rows {
                guard let hash = try AttachmentHashing.verifiedHash(of: row, files: files, recordingIn: nil) else {
                    throw BackupError.attachmentMismatch(id: row.id.text, path: row.relativePath, detail: "has no file of the size its row says")
                }
                try update.run([.text(row.id.text), .text(hash)])
            }
        }
    }

    /// A database copy from `tmp/`, under its container name.
    /// A database copy into the archive: in the clear, each page opened as it is read when the
    /// copy is sealed (the archive's store opens with `sqlite3` after `age -d | tar x`).
    private mutating func addCopy(_ directory: Directory, _ name: String, as path: String, sealing: PageKey?) throws {
        let file = try directory.openFileForReading(name)
        let status = try file.status()
        let contents: any ByteSource = sealing.map { OpenedPages(input: file, key: $0) } ?? file
        try tar.addFile(path, size: status.size, modificationTime: status.modificationTime, contents: contents) { chunk in advance(chunk.count) }
    }

    /// Every attachment file the snapshot's rows name, hashed while it is archived: a file that
    /// is not the one its row describes fails the backup, naming the attachment.
    private mutating func addAttachments(into summary: inout BackupSummary, modificationTime now: Int64) throws {
        guard let store = snapshot.store else { return }
        var shard = ""
        try store.statement("""
            SELECT id, relative_path, byte_count, content_hash, state FROM attachments WHERE state <> 'deleting' ORDER BY relative_path
            """).forEachRow { row in
            let (id, path, byteCount, hash) = (row.text(0), row.text(1), row.integer(2), row.text(3))
            guard Attachment.State(column: row.text(4)) == .present else {
                summary.missingAttachments += 1
                return
            }
            let rowShard = String(path.split(separator: "/").dropLast().joined(separator: "/"))
            if rowShard != shard {
                try tar.addDirectory(rowShard, modificationTime: now)
                shard = rowShard
            }
            try addAttachment(id: id, path: path, byteCount: byteCount, hash: hash)
            summary.attachmentFiles += 1
            summary.attachmentBytes += byteCount
        }
    }

    private mutating func addAttachment(id: String, path: String, byteCount: Int64, hash: String) throws {
        let file: AttachmentReader
        do {
            // A sealed file's plaintext goes into the archive (age protects it): a backup
            // restores on any device, whose own class keys seal it again.
            file = try files.open(relativePath: path)
        } catch let error as FileSystemError where error.code == .notFound {
            throw BackupError.attachmentMismatch(id: id, path: path, detail: "has no file")
        } catch let error as DeviceError {
            if case .damagedSealedFile(_, let reason) = error { throw BackupError.attachmentMismatch(id: id, path: path, detail: "cannot be opened: \(reason)") }
            throw error
        }
        let status = file.status
        guard file.plaintextLength == byteCount else {
            throw BackupError.attachmentMismatch(id: id, path: path, detail: "holds \(file.plaintextLength.map(String.init) ?? "an impossible number of") bytes, its row says \(byteCount)")
        }
        try tar.addFile(path, size: byteCount, modificationTime: status.modificationTime, contents: file) { chunk in
            hashing.submit(chunk)
            advance(chunk.count)
        }
        hashing.endFile()
        unchecked.append((id, path, hash))
        // The digests done meanwhile: a file that is not its row's fails the backup soon after
        // it is archived, not at the end of a long run.
        try compareDigests(hashing.takeDigests())
    }

    /// Compares `digests`, the next ones in archive order, with the rows of their files.
    private mutating func compareDigests(_ digests: [[UInt8]]) throws {
        for (digest, file) in zip(digests, unchecked) where Sodium.hexString(digest) != file.hash {
            throw BackupError.attachmentMismatch(id: file.id, path: file.path, detail: "does not match its recorded hash")
        }
        unchecked.removeFirst(digests.count)
    }

    /// `attachments/recovered/`: files no row names, kept for the user, so backed up as they are.
    private mutating func addRecoveredFiles(into summary: inout BackupSummary, modificationTime now: Int64) throws {
        let recovered = try files.recoveredFiles()
        guard !recovered.isEmpty else { return }
        let directory = try files.recoveredDirectory()
        try tar.addDirectory(ContainerLayout.attachmentsDirectory + "/" + AttachmentFiles.recoveredDirectory, modificationTime: now)
        for (name, _) in recovered {
            // Their plaintext when they are sealed here; one this device cannot open (sealed
            // elsewhere, or damaged) goes in as it is: never left out, it may be the only copy.
            let entry = ContainerLayout.attachmentsDirectory + "/" + AttachmentFiles.recoveredDirectory + "/" + name
            let source: any ByteSource
            let size: Int64
            let modificationTime: Int64
            do {
                let file = try files.openRecovered(name)
                guard let length = file.plaintextLength else { throw DeviceError.damagedSealedFile(path: file.path, reason: "its size is not a sealed file's") }
                (source, size, modificationTime) = (file, length, file.status.modificationTime)
            } catch let error as DeviceError where !error.isLockRefusal {
                let file = try directory.openFileForReading(name)
                let status = try file.status()
                (source, size, modificationTime) = (file, status.size, status.modificationTime)
            }
            try tar.addFile(entry, size: size, modificationTime: modificationTime, contents: source) { chunk in advance(chunk.count) }
            summary.recoveredFiles += 1
        }
    }

    private mutating func advance(_ count: Int) {
        done += Int64(count)
        progress(done, total)
    }
}
