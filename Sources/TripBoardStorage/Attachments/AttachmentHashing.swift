package import TripBoardSystem
import TripBoardModel
import TripBoardDevice

/// Content hashes filled in after the container is usable. The container migration seals every
/// file on its way in (a copy, fsynced and size-checked) without hashing it, so its attachment
/// rows start unverified
/// (`Attachment.hashIsUnverified`). Before it publishes, it leaves `migration/hashing.json`
/// (`markPending`); once the container is published, this pass hashes those files under the
/// shared lock — while the app, the widget and the extensions use the container — records the
/// hashes, and removes the marker. Killed, it is resumable: the rows it recorded keep their
/// hashes, and the next `container-migration`, `app` write or `app container check` runs it again
/// from the first row still unverified.
///
/// Until then nothing trusts a missing hash: a deduplication, `container check` and `app backup`
/// hash such a row's file on the spot (`hash(_:files:)`), and an empty hash equals nothing.
public enum AttachmentHashing {
    /// In `migration/`: present from before the migration publishes until the pass ends.
    static let markerFile = "hashing.json"
    /// Rows read, hashed (on two threads) and recorded (one write transaction) at a time.
    static let batchSize = 256

    /// What one pass did.
    public struct Outcome: Sendable, Equatable, Codable {
        /// Rows that took their hash.
        public var hashed = 0
        /// Rows left unverified: their file is missing or not the size the row says
        /// (`container check` reports them).
        public var unverifiable = 0
        public var bytes: Int64 = 0
        public var seconds = 0.0
    }

    /// True when a pass is due: one `fstatat` when the container has no `migration/` directory.
    public static func isPending(in container: Container) throws -> Bool { try isPending(in: container.root) }

    package static func isPending(in root: Directory) throws -> Bool {
        guard let migration = try ContainerLayout.openMigrationDirectory(in: root) else { return false }
        return try migration.status(of: markerFile) != nil
    }

    /// Written (durably) before the migration publishes unverified rows.
    package static func markPending(in migrationDirectory: Directory) throws {
        try migrationDirectory.writeAtomically(Array(#"{"pending": true}"#.utf8) + [0x0a], to: markerFile, staging: migrationDirectory)
    }

    /// Runs the pass if one is due (see the type's summary); `nil` when none was. The caller holds
    /// the container with its shared lock (or the exclusive one). `progress(done, total)` in bytes.
    @discardableResult
    public static func finishPending(container: Container,
                                     progress: (Int64, Int64) -> Void = { _, _ in }) throws -> Outcome? {
        guard try isPending(in: container.root) else { return nil }
        let started = MonotonicClock.now()
        let store = try container.store
        let files = try AttachmentFiles(container: container)
        let total = try store.unverifiedAttachmentBytes()
        var outcome = Outcome()
        var after: Int64 = 0
        var batches = 0
        while true {
            let batch = try store.unverifiedAttachments(afterRowID: after, limit: batchSize)
            guard let last = batch.last else { break }
            after = last.rowID
            var hashes = [String?](repeating: nil, count: batch.count)
            do {
                try hashes.withUnsafeMutableBufferPointer { hashes in
                    try ParallelLoop.run(count: batch.count, threads: 2) { _, index in
                        hashes[index] = try hash(batch[index].attachment, files: files)
                    }
                }
            } catch let error as DeviceError where error.isLockRefusal {
                // Sealed files whose class is closed: the pass stays due (its marker stays) and the
                // next write or check after an unlock finishes it; what is recorded stays recorded.
                return nil
            }
            var recorded: [(id: String, byteCount: Int64, contentHash: String)] = []
            for (row, hash) in zip(batch, hashes) {
                guard let hash else { outcome.unverifiable += 1; continue }
                recorded.append((row.attachment.id.text, row.attachment.byteCount, hash))
                outcome.bytes += row.attachment.byteCount
            }
            outcome.hashed += try store.recordContentHashes(recorded)
            progress(outcome.bytes, total)
            batches += 1
            if batches == 1 { CrashPoint.reach("hashing.partial") }
        }
        CrashPoint.reach("hashing.recorded")
        // Every row is hashed or unverifiable; the marker goes (another pass may have removed it).
        if let migration = try ContainerLayout.openMigrationDirectory(in: container.root) {
            try migration.removeFile(markerFile)
            try migration.synchronize()
        }
        outcome.seconds = ((MonotonicClock.now() - started) * 1000).rounded() / 1000
        return outcome
    }

    /// BLAKE2b-256 of the file of `attachment`, read in full; `nil` when it has no file or the
    /// file is not the size its row records (then nothing can be recorded for it).
    /// A sealed file is read with its class key: a closed class throws (`DeviceError.locked`
    /// and its kin), and the pass stays due.
    static func hash(_ attachment: Attachment, files: AttachmentFiles) throws -> String? {
        let file: AttachmentReader
        do {
            file = try files.open(relativePath: attachment.relativePath)
        } catch let error as FileSystemError where [.notFound, .notRegularFile, .symbolicLink, .notADirectory, .isADirectory].contains(error.code) {
            return nil
        } catch is AttachmentError {
            return nil
        } catch DeviceError.damagedSealedFile {
            return nil
        }
        guard file.plaintextLength == attachment.byteCount else { return nil }
        do {
            let (count, hash) = try AttachmentFiles.contentHash(of: file)
            return count == attachment.byteCount ? hash : nil
        } catch DeviceError.damagedSealedFile {
            return nil
        }
    }

    /// The one entry for whoever needs an attachment's hash: the verified hash, or, while it is
    /// pending, the file's hash computed now — and recorded in `store` when one is given (a
    /// deduplication, `container check`), so that it is computed once. `nil` when it is pending
    /// and the file is missing or not the size its row records.
    public static func verifiedHash(of attachment: Attachment, files: AttachmentFiles, recordingIn store: Store?) throws -> String? {
        if let hex = attachment.contentHash.hex { return hex }
        guard let hash = try hash(attachment, files: files) else { return nil }
        try store?.recordContentHashes([(attachment.id.text, attachment.byteCount, hash)])
        return hash
    }
}
