import TripBoardDevice
import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardModel
import TripBoardSQLite

/// Why a restore was refused. Nothing was written anywhere: the target is as it was, and the
/// staging directory the restore built is gone.
public enum RestoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The target holds a container and `--replace` was not given.
    case targetHoldsAContainer(path: String)
    /// The archive holds no store.
    case noStore
    /// An attachment file in the archive does not match its row.
    case attachmentMismatch(path: String, detail: String)
    /// The archived store does not pass `integrity_check` or `foreign_key_check`.
    case damagedStore(detail: String)
    /// The archived `preferences/preferences.json` is over 1 MiB or not a JSON object.
    case badPreferences(detail: String)
    /// The archived store was written by a newer TripBoard.
    case newerSchema(found: Int64, supported: Int64)
    /// The target's filesystem has less room than the backup needs.
    case insufficientSpace(path: String, needed: Int64, available: Int64)
    /// Another restore into the same target held it for longer than the lock timeout.
    case anotherRestoreRunning(target: String, waited: Double, holders: String)
    /// The restored container took the old one's place, and what came after failed (the
    /// directory's fsync, moving the old one to its `.replaced-…` name): both are kept.
    case replacedButUnsettled(restoredAt: String, oldKeptAt: String, detail: String)

    public var description: String {
        switch self {
        case .targetHoldsAContainer(let path):
            "\(path) holds a TripBoard container; pass --replace to restore over it (it is moved aside, never deleted), or choose another --container"
        case .noStore:
            "the backup holds no store (store/TripBoard.sqlite); nothing was restored"
        case .attachmentMismatch(let path, let detail):
            "the backup's \(path) \(detail); nothing was restored"
        case .badPreferences(let detail):
            "the backup's preferences/preferences.json \(detail); nothing was restored"
        case .damagedStore(let detail):
            "the backup's store is damaged (\(detail)); nothing was restored"
        case .newerSchema(let found, let supported):
            "the backup's store has schema version \(found), newer than this build understands (\(supported)); update TripBoard. Nothing was restored"
        case .insufficientSpace(let path, let needed, let available):
            "not enough space at \(path): the restore needs about \(needed) bytes, \(available) are free; nothing was restored"
        case .anotherRestoreRunning(let target, let waited, let holders):
            "another restore into \(target) is running\(holders.isEmpty ? "" : " (" + holders + ")"); waited \(Int(waited.rounded())) s for it to end. "
                + "Nothing was restored; try again once it has"
        case .replacedButUnsettled(let restoredAt, let oldKeptAt, let detail):
            "the backup was restored at \(restoredAt) and the replaced container is kept at \(oldKeptAt), but then \(detail); "
                + "check the filesystem (both are as they were when it failed)"
        }
    }
}

/// The paths a backup may hold: a container's own files and nothing else (docs/backup.md).
/// `-wal` files are accepted from a hand-made archive of a live container (committed data may be
/// only there); `-shm` files are accepted and skipped (derived, rebuilt by SQLite).
enum RestoreLayout {
    static let files: Set<String> = [
        ContainerLayout.manifestFile,
        ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile,
        ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile + "-wal",
        ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile + "-shm",
        ContainerLayout.preferencesDirectory + "/" + ContainerLayout.preferencesFile,
        ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile,
        ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile + "-wal",
        ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile + "-shm",
    ]
    static let directories: Set<String> = [ContainerLayout.storeDirectory, ContainerLayout.preferencesDirectory,
                                           ContainerLayout.keychainDirectory, ContainerLayout.attachmentsDirectory]

    static func isAllowed(_ entry: TarEntry) -> Bool {
        let components = entry.path.split(separator: "/").map(String.init)
        if entry.kind == .directory {
            return directories.contains(entry.path) || (components.count == 2 && components[0] == ContainerLayout.attachmentsDirectory
                && isShard(components[1]))
        }
        if files.contains(entry.path) { return true }
        // A name a filesystem keeps (at most 255 bytes): refused here, a dry run (which makes no
        // attachment file) and a restore refuse the same archives.
        return components.count == 3 && components[0] == ContainerLayout.attachmentsDirectory && isShard(components[1])
            && components[2].utf8.count <= maximumNameBytes
    }

    /// `NAME_MAX`: a container's own file names (a UUID and an extension) are far shorter.
    static let maximumNameBytes = 255

    /// `ab` (an attachment shard: two lowercase hex digits) or `recovered`.
    static func isShard(_ name: String) -> Bool {
        if name == AttachmentFiles.recoveredDirectory { return true }
        return name.utf8.count == 2 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func isSharedMemory(_ path: String) -> Bool { path.hasSuffix("-shm") }
}

/// A restore's staging directory being filled from the archive: every entry written under its
/// container path (files 0600, directories 0700, created `O_EXCL`: the archive's duplicate
/// checks and these agree), each attachment file hashed on the way for the check against its
/// row once the store is in (a dry run's attachments are hashed only: `keepsAttachments`).
///
/// No ticket byte reaches the disk in the clear: every file under `attachments/` is sealed as it
/// is written, to `complete-unless-open` under `attachmentKeys`: the device's when it has a
/// keybag (that class seals to its public key, which needs nothing unlocked and writes nothing),
/// else keys of this process's memory (`EphemeralFileKeys`: nothing is written in the device
/// directory before the restore is accepted). Once it is, the restore seals again under the
/// device's keys each file whose row asks another class, or that the transient keys sealed
/// (`AttachmentProtection.resealEverything`). No page of the store or the keychain's database
/// does either: each is sealed as it is written (`SealingPagesWriter`) under a new page key
/// per database, whose key file (`DatabaseKeyFile`) is sealed under the same transient keys and,
/// once the restore is accepted, again under the device's.
final class RestoreStaging {
    let root: Directory
    /// What seals the databases' key files while staging: keys of this process's memory.
    let keys: any FileKeys
    /// What seals the attachments' files while staging.
    let attachmentKeys: any FileKeys
    /// False for a dry run (`restore --dry-run`, `backup verify`): each attachment's bytes are
    /// hashed and counted for the checks against its row, and no file is made for them. Nothing
    /// after the staging reads a ticket's file (the checks read its size and hash; the staged
    /// store opens and migrates without them), and the archive's paths were checked by
    /// `TarReader` and `RestoreLayout` as a restore's are, so the dry run's answer is the
    /// restore's, without sealing, writing and then removing every ticket.
    let keepsAttachments: Bool
    /// Attachment path → (bytes, BLAKE2b) of what the archive held.
    private(set) var attachments: [String: (Int64, String)] = [:]
    private(set) var recoveredFiles = 0
    /// Attachment paths whose bytes in the archive are a container's sealed file (copied from a
    /// container by hand): no row's plaintext, said as such by the verification.
    private(set) var sealedInArchive: Set<String> = []
    private(set) var bytesWritten: Int64 = 0
    /// The page keys of the staged databases, by their path in the container.
    private(set) var pageKeys: [String: PageKey] = [:]

    /// The container paths of the databases staged sealed (a `-wal` goes with its database).
    static let databases = [ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile,
                            ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile]
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    /// The attachments' bytes are hashed on a thread of their own, one for the whole archive (it
    /// is read and decrypted on a second, `ReadAheadSource`; this one unpacks, seals and writes).
    private let hashing = HashingQueue()
    /// The attachments staged, in the order `hashing` gives their digests: path, bytes.
    private var hashed: [(String, Int64)] = []
    /// The store's checks (`RestoreVerification.checkStore`), begun on a thread of their own at
    /// the first attachment when the store came before it whole, as `app backup` orders an
    /// archive: they read the store alone, so they run while the tickets are staged, on the core
    /// the staging leaves idle. `nil`: the verification runs them itself (an archive in another
    /// order, a store in WAL mode, a store entry after the checks began).
    private(set) var storeChecks: BackgroundResult<RestoreVerification.StoreChecked>?
    /// The store is staged whole, not in WAL mode and without a `-wal`: its checks may begin.
    private var storeReadyForChecks = false
    /// A store entry came after the checks began: what they found is not the staged store's.
    private var storeChangedAfterChecks = false
    private static let storePath = ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile

    init(root: Directory, keys: any FileKeys, attachmentKeys: any FileKeys, keepsAttachments: Bool) {
        self.root = root
        self.keys = keys
        self.attachmentKeys = attachmentKeys
        self.keepsAttachments = keepsAttachments
    }

    deinit {
        Sodium.wipe(buffer)
        buffer.deallocate()
    }

    /// Reads every entry of `tar` into the staging directory; `progress` is told the bytes so far.
    /// Then each staged database's key file, under the transient keys.
    func fill(from tar: TarReader, progress: (Int64) -> Void) throws {
        defer { hashing.finish() }
        while let entry = try tar.nextEntry() {
            beginStoreChecksIfReady(before: entry)
            if entry.kind == .directory {
                try directory(for: entry.path.split(separator: "/").map(String.init))
                continue
            }
            if RestoreLayout.isSharedMemory(entry.path) { continue }  // rebuilt by SQLite
            try write(entry, from: tar, progress: progress)
        }
        // Dropped, the checks' `BackgroundResult` waits for its thread: none outlives the staging
        // (on an error too, the staging goes, and its checks with it, before its directory does).
        if storeChangedAfterChecks { storeChecks = nil }
        for ((path, count), digest) in zip(hashed, hashing.finish()) { attachments[path] = (count, Sodium.hexString(digest)) }
        hashed = []
        try writeKeyFiles(under: keys)
    }

    /// Begins the store's checks at the first attachment entry, if the store is ready for them;
    /// notes a store entry that comes after they began.
    private func beginStoreChecksIfReady(before entry: TarEntry) {
        let components = entry.path.split(separator: "/")
        if components.first == Substring(ContainerLayout.storeDirectory) && !RestoreLayout.isSharedMemory(entry.path) {
            if storeChecks != nil { storeChangedAfterChecks = true }
            storeReadyForChecks = false
            return
        }
        guard components.first == Substring(ContainerLayout.attachmentsDirectory), storeChecks == nil, storeReadyForChecks,
              let key = pageKeys[Self.storePath] else { return }
        let path = root.childPath(Self.storePath)
        storeChecks = BackgroundResult { try RestoreVerification.checkStore(at: path, key: key) }
    }

    /// Seals each staged database's key file under `keys` — the transient ones while staging,
    /// the device's once the restore is accepted — replacing the one there: a new staging
    /// directory has nothing to keep (and a plain rename is no renameat2).
    func writeKeyFiles(under keys: any FileKeys) throws {
        for (path, key) in pageKeys.sorted(by: { $0.key < $1.key }) {
            let components = path.split(separator: "/").map(String.init)
            try DatabaseKeyFile.write(key, in: try directory(for: Array(components.dropLast())), database: components.last!, keys: keys, replacing: true)
        }
    }

    /// The writer that seals `path`'s pages, when it is a database or its WAL.
    private func pageSealing(_ path: String, output: FileDescriptor) throws -> SealingPagesWriter? {
        let database = path.hasSuffix("-wal") ? String(path.dropLast(4)) : path
        guard Self.databases.contains(database) else { return nil }
        if path != database, pageKeys[database] == nil, sealedPlainly.contains(database) {
            throw RestoreError.damagedStore(detail: "\(path) stands beside a database from a build before sealed stores; make the backup again with `app backup`")
        }
        return SealingPagesWriter(output: output, kind: path == database ? .database : .writeAheadLog) { [unowned self] pageSize in
            if let key = pageKeys[database] {
                guard key.pageSize == pageSize else {
                    throw RestoreError.damagedStore(detail: "\(path)'s page size is not its database's")
                }
                return key
            }
            let key = try PageKey.random(pageSize: pageSize)
            pageKeys[database] = key
            return key
        }
    }

    /// Why `path` could not be staged, in words: a container's sealed database copied into an
    /// archive by hand is said as such.
    static func notADatabase(_ path: String, _ error: SQLiteError) -> String {
        guard error.code == .notADatabase else { return "\(path): \(error.message)" }
        return "\(path) is not a database in the clear (a container's sealed file, copied by hand?); make backups with `app backup`"
    }

    /// Databases whose pages had to be rebuilt (no room for the seal): no `-wal` may join them.
    private var sealedPlainly: Set<String> = []

    /// Opens (creating, 0700) the directories along `components`.
    @discardableResult
    func directory(for components: [String]) throws -> Directory {
        var directory = root
        for component in components { directory = try directory.openDirectory(component, create: true) }
        return directory
    }

    private func write(_ entry: TarEntry, from tar: TarReader, progress: (Int64) -> Void) throws {
        let components = entry.path.split(separator: "/").map(String.init)
        let isAttachment = components.first == ContainerLayout.attachmentsDirectory
        // A dry run reads, hashes and checks each ticket as a restore does, and keeps none: no
        // file made, sealed, written or removed (`keepsAttachments`).
        let output = isAttachment && !keepsAttachments ? nil
            : try directory(for: Array(components.dropLast())).openFile(components.last!, .writeOnly, creating: .newFile, mode: 0o600)
        let sealing = try output.flatMap { isAttachment ? try SealedFileWriter(output: $0, key: try attachmentKeys.sealingKey(.completeUnlessOpen)) : nil }
        let pages = try output.flatMap { try pageSealing(entry.path, output: $0) }
        let isRecovered = isAttachment && components.count == 3 && components[1] == AttachmentFiles.recoveredDirectory
        let isHashed = isAttachment && !isRecovered
        var total: Int64 = 0
        while case let count = try tar.readContent(into: buffer), count > 0 {
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if isAttachment && total == 0 && SealedFile.isSealed(chunk) { sealedInArchive.insert(entry.path) }
            if isHashed { hashing.submit(chunk) }
            if let sealing {
                try sealing.write(chunk)
            } else if let pages {
                do { try pages.write(chunk) } catch let error as SQLiteError { throw RestoreError.damagedStore(detail: Self.notADatabase(entry.path, error)) }
            } else {
                try output?.write(all: chunk)
            }
            total += Int64(count)
            bytesWritten += Int64(count)
            progress(bytesWritten)
        }
        try sealing?.finish()
        do {
            try pages?.finish()
        } catch let error as SQLiteError {
            throw RestoreError.damagedStore(detail: Self.notADatabase(entry.path, error))
        }
        if pages?.rebuilt == true { sealedPlainly.insert(entry.path) }
        if entry.path == Self.storePath, let pages { storeReadyForChecks = !pages.headerSaysWAL }
        if isRecovered {
            recoveredFiles += 1
        } else if isHashed {
            hashing.endFile()
            hashed.append((entry.path, total))
        }
    }
}
