import TripBoardModel
public import TripBoardStorage
public import TripBoardKeychain
import TripBoardSodium
public import TripBoardKeys
public import TripBoardSystem

/// What `app backup` wrote.
public struct BackupSummary: Sendable, Codable {
    public var file: String
    /// Bytes of the backup file.
    public var bytes: Int64
    public var createdAt: String
    public var counts: StoreCounts
    /// Attachment files in the backup, and their bytes.
    public var attachmentFiles: Int
    public var attachmentBytes: Int64
    /// Attachment rows whose file was already lost (`missing`): their rows are in the backup.
    public var missingAttachments: Int
    /// Files of `attachments/recovered/` in the backup.
    public var recoveredFiles: Int
    public var preferences: Bool
    /// `null` when the container has no keychain yet.
    public var keychain: KeychainBackupState?
    public var durationSeconds: Double
    /// Said once on stderr (`warning:`): a preferences file over 1 MiB, moved aside and not in
    /// the backup.
    public var warnings: [String] = []
}

/// Why a backup was not written. Nothing is left at the destination in any case.
public enum BackupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An attachment's file does not match its row: the backup would hand out wrong bytes.
    case attachmentMismatch(id: String, path: String, detail: String)
    /// A passphrase too short to protect a whole container.
    case weakPassphrase

    public var description: String {
        switch self {
        case .attachmentMismatch(let id, let path, let detail):
            "attachment \(id) (\(path)) \(detail); no backup was written. Run `app container check`, which reports and repairs what it can, then back up again"
        case .weakPassphrase:
            "a backup passphrase must be at least 8 bytes long; no backup was written"
        }
    }
}

/// `app backup`: one consistent snapshot of the container, as an age v1 file around a POSIX tar
/// (docs/backup.md, docs/backup-format.md), written streaming to `<name>.<pid>.<random>.tmp`
/// beside the destination, fsynced, and renamed into place — never half a file at the name.
///
/// The store is copied through SQLite's backup API under the shared container lock (writers go
/// on meanwhile; the copy is one transaction's view); the attachment files are those the copy's
/// rows name, each hashed while it is archived and compared with its row; deletions of files are
/// held back for the whole run (`holdingDeletionsBack`), so none of them vanishes under it. Never
/// in a backup: `caches/`, `tmp/`, `container.lock`, `-wal`/`-shm`, `migration/`, the device key.
public struct ContainerBackup {
    let container: Container
    let keychain: Keychain?
    let passphrase: SecureBytes
    public var workFactor = AgeWriter.defaultWorkFactor
    /// Told (bytes done, bytes in all) as the archive is written.
    public var progress: (Int64, Int64) -> Void = { _, _ in }

    public init(container: Container, keychain: Keychain?, passphrase: SecureBytes) throws {
        guard passphrase.count >= 8 else { throw BackupError.weakPassphrase }
        self.container = container
        self.keychain = keychain
        self.passphrase = passphrase
    }

    /// Writes the backup to `name` in `destination`.
    public func write(to destination: Directory, as name: String) throws -> BackupSummary {
        let started = MonotonicClock.now()
        let files = try AttachmentFiles(container: container)
        // The archive holds the tickets' plaintext, which needs their classes open: a locked
        // device is refused whole, before anything is written (a cron job gets a clear error,
        // not half a backup).
        for protection in try container.store.protectionClassesInUse() {
            if let refusal = try files.keys.refusal(protection) { throw refusal }
        }
        let staging = try container.stagingDirectory()
        let snapshot = try BackupSnapshot(container: container, keychain: keychain, passphrase: passphrase, staging: staging)
        defer { snapshot.remove() }
        return try files.holdingDeletionsBack(timeout: container.options.lockTimeout) {
            let temporaryName = Directory.uniqueTemporaryName(for: name)
            var summary: BackupSummary
            do {
                let output = try destination.openFile(temporaryName, .writeOnly, creating: .newFile, mode: 0o600)
                // Writeback starts as the archive grows: the closing fsync has little left.
                let sink = WritingBackSink(file: output)
                // The header's scrypt (about a second at 2^18) runs on a second thread beside the
                // snapshot's copy and the keychain's Argon2id wrap.
                let (passphrase, workFactor) = (passphrase, workFactor)
                let header = BackgroundResult { try AgeWriter(passphrase: passphrase, output: sink, workFactor: workFactor) }
                try snapshot.take()
                CrashPoint.reach("backup.snapshot")
                let age = try header.value()
                // Two stages on two cores, as `tar c | age -p`: this thread reads and hashes the
                // files and frames the tar, the relay's thread encrypts and writes.
                let encrypting = WriteBehindSink(downstream: age)
                var archive = BackupArchive(tar: TarWriter(output: encrypting), files: files, snapshot: snapshot,
                                            total: try snapshot.archivedBytes(), progress: progress)
                summary = try archive.writeEverything()
                try encrypting.finish()
                try age.finish()
                try output.synchronize()
                CrashPoint.reach("backup.archived")
                summary.bytes = try output.status().size
                try destination.rename(temporaryName, to: destination, as: name)
                try destination.synchronize()
            } catch {
                try? destination.removeFile(temporaryName)
                throw error
            }
            summary.file = destination.childPath(name)
            summary.warnings = snapshot.warnings
            summary.durationSeconds = ((MonotonicClock.now() - started) * 1000).rounded() / 1000
            return summary
        }
    }
}
