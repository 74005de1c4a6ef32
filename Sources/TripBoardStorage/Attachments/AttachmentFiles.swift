import TripBoardKeys
public import TripBoardSystem
import TripBoardModel
public import TripBoardDevice

/// A file copied into the container's staging directory, hashed on the way, not yet published.
public struct StagedFile: Sendable, Equatable {
    /// The name in `tmp/`.
    public let stagingName: String
    public let byteCount: Int64
    /// BLAKE2b-256 of the bytes, lowercase hex.
    public let contentHash: String
    /// The first bytes (up to 1024), for format checks such as `%PDF-` (in memory only: the
    /// staged file is sealed).
    public let head: [UInt8]
    /// The class the staged file is sealed under.
    public let protection: ProtectionClass

    package init(stagingName: String, byteCount: Int64, contentHash: String, head: [UInt8], protection: ProtectionClass) {
        self.stagingName = stagingName
        self.byteCount = byteCount
        self.contentHash = contentHash
        self.head = head
        self.protection = protection
    }
}

/// A shared file being staged (`AttachmentFiles.stageShared`): every byte is in the caller's
/// memory file, while its hash and its sealed copy in `tmp/` may still be under way on threads
/// of their own. `finish()` waits for both, fsyncs the copy and returns it; one dropped
/// unfinished (or whose finishing fails) leaves nothing in `tmp/`.
public final class SharedFileStaging {
    public let byteCount: Int64
    private let hasher: BackgroundHasher
    private var sealing: WriteBehindSink?
    private let stage: SealingStage
    private var finished = false

    init(byteCount: Int64, hasher: BackgroundHasher, sealing: WriteBehindSink?, stage: SealingStage) {
        self.byteCount = byteCount
        self.hasher = hasher
        self.sealing = sealing
        self.stage = stage
    }

    deinit {
        guard !finished else { return }
        hasher.finish()
        sealing = nil
        stage.discard()
    }

    /// Waits for the hash and the seal, then fsyncs the sealed copy.
    public func finish() throws -> StagedFile {
        precondition(!finished, "SharedFileStaging.finish called twice")
        finished = true
        let digest = hasher.finish()
        do {
            try sealing?.finish()
            sealing = nil
            return try stage.finish(contentHash: Sodium.hexString(digest), synchronize: true)
        } catch {
            stage.discard()
            throw error
        }
    }
}

@available(*, unavailable)
extension SharedFileStaging: Sendable {}

/// A sealing stage as the sink of a `WriteBehindSink`, whose thread alone writes to it until
/// the sink is finished.
private final class StageSink: ByteSink {
    let stage: SealingStage
    init(_ stage: SealingStage) { self.stage = stage }
    func write(all buffer: UnsafeRawBufferPointer) throws { try stage.write(buffer) }
}

/// What `AttachmentFiles.check` found for one attachment's file.
public enum AttachmentFileState: String, Sendable, Codable {
    case ok, missing, wrongSize, wrongHash, notAFile
}

/// The file side of attachments: `attachments/<xx>/<id>.<ext>`, sealed under the attachment's
/// protection class (`SealedFile`: no ticket byte in the clear), written durably before the row
/// that references it is committed (docs/storage.md §4.3 and §4.4), and never followed through a
/// symlink. Files written before attachments were sealed are read as they are until
/// `app container protect` seals them.
public struct AttachmentFiles {
    package let staging: Directory
    let attachments: Directory
    /// Where the keys of sealed files come from (the container's `ContainerOptions.fileKeys`).
    public let keys: any FileKeys
    /// `attachments/recovered/`: files the container migration found with no row naming them.
    public static let recoveredDirectory = "recovered"

    public init(container: Container) throws {
        staging = try container.stagingDirectory()
        attachments = try container.directory(ContainerLayout.attachmentsDirectory)
        keys = container.options.fileKeys
    }

    /// The copy's buffer: large enough that system calls cost little, small enough that memory
    /// stays flat whatever the file's size.
    package static let chunkBytes = 256 << 10
    /// How much is written before writeback of it is started (see `FileDescriptor.startWriteBack`).
    static let writeBackBytes: Int64 = 8 << 20

    /// Seals the bytes of `source` into `tmp/` under `protection`, streaming in 256 KiB chunks
    /// (never the whole file in memory), hashing the plaintext on a second thread, and refusing
    /// more than `maximumBytes`. The staged file is fsynced before this returns, unless
    /// `synchronize` is false: then the caller must call `synchronize(_:)` before publishing (to
    /// overlap the fsync with other work). On any failure nothing is left in `tmp/`.
    public func stage(from source: any ByteSource, sourceName: String, maximumBytes: Int64, protection: ProtectionClass,
                      prefix: String = "import", synchronize: Bool = true) throws -> StagedFile {
        try refuseFirstKeysOverSealedFiles()
        let stage = try SealingStage(in: staging, protection: protection, keys: keys, prefix: prefix)
        defer { stage.discard() }
        let (_, contentHash, _) = try Self.copy(from: source, sourceName: sourceName, maximumBytes: maximumBytes) { try stage.write($0) }
        return try stage.finish(contentHash: contentHash, synchronize: synchronize)
    }

    /// Reads `source` to its end in 256 KiB chunks, handing each to `sink` while a second thread
    /// hashes it, refusing more than `maximumBytes`: the size, the BLAKE2b-256 and the first 1024
    /// bytes. The hasher lends the buffers the bytes are read into and hashes them where they are:
    /// no copy, no allocation or zeroing per chunk (five 256 KiB buffers for the whole file).
    static func copy(from source: any ByteSource, sourceName: String, maximumBytes: Int64,
                     to sink: (UnsafeRawBufferPointer) throws -> Void) throws -> (byteCount: Int64, contentHash: String, head: [UInt8]) {
        let hasher = BackgroundHasher(bufferBytes: chunkBytes)
        defer { hasher.finish() }
        let (total, head) = try readAll(source, sourceName: sourceName, maximumBytes: maximumBytes, into: hasher.nextBuffer) { chunk in
            hasher.submitFilled(chunk.count)
            try sink(chunk)
        }
        return (total, Sodium.hexString(hasher.finish()), head)
    }

    /// Reads `source` to its end, each chunk into a buffer `nextBuffer` gives, refusing more than
    /// `maximumBytes`, and hands each chunk to `body`: the size and the first 1024 bytes.
    static func readAll(_ source: any ByteSource, sourceName: String, maximumBytes: Int64, into nextBuffer: () -> UnsafeMutableRawBufferPointer,
                        _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> (byteCount: Int64, head: [UInt8]) {
        var total: Int64 = 0
        var head: [UInt8] = []
        while true {
            let buffer = nextBuffer()
            let count = try source.read(into: buffer)
            if count == 0 { break }
            total += Int64(count)
            guard total <= maximumBytes else { throw AttachmentError.tooLarge(path: sourceName, limit: maximumBytes) }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            if head.count < 1024 { head += chunk.prefix(1024 - head.count) }
            try body(chunk)
        }
        return (total, head)
    }

    /// A shared ticket in one pass over its bytes: each chunk read from `source` is written to
    /// `memory` (an in-memory file, `FileDescriptor.memoryFile`: the PDF worker's copy) on this
    /// thread, hashed on a second and sealed into `tmp/` on a third — so a 100 MB file costs
    /// about the largest of the three, not their sum. More than `maximumBytes` is refused.
    ///
    /// `stageFor` is asked for the sealing stage once the first 1024 bytes are read (or every
    /// byte, when there are fewer), with those bytes and the count so far, and may refuse the
    /// file (empty, not a PDF) before any key is asked for. Returns once `memory` holds every
    /// byte, while the hash and the seal may still run: the worker starts on the copy meanwhile,
    /// and `SharedFileStaging.finish()` waits for both. Nothing reaches a disk in the clear; on
    /// any failure nothing is left in `tmp/`.
    public func stageShared(from source: any ByteSource, sourceName: String, maximumBytes: Int64, memory: FileDescriptor,
                            stageFor: ([UInt8], Int64) throws -> SealingStage) throws -> SharedFileStaging {
        let hasher = BackgroundHasher(bufferBytes: Self.chunkBytes)
        var head: [UInt8] = []
        var stage: SealingStage?
        var sealing: WriteBehindSink?
        do {
            let (total, _) = try Self.readAll(source, sourceName: sourceName, maximumBytes: maximumBytes, into: hasher.nextBuffer) { chunk in
                try memory.write(all: chunk)
                hasher.submitFilled(chunk.count)
                if let sealing { return try sealing.write(all: chunk) }
                if let stage {
                    // The second chunk starts the sealing thread: a file of one chunk (most
                    // tickets) is sealed on this thread and never pays for one.
                    let sink = WriteBehindSink(downstream: StageSink(stage), bufferSize: Self.chunkBytes)
                    sealing = sink
                    return try sink.write(all: chunk)
                }
                // Every byte before this chunk is in `head` (fewer than 1024 of them).
                let before = head.count
                head += chunk.prefix(1024 - before)
                guard head.count == 1024 else { return }
                let opened = try stageFor(head, Int64(before + chunk.count))
                stage = opened
                try head.prefix(before).withUnsafeBytes { try opened.write($0) }
                try opened.write(chunk)
            }
            if stage == nil {
                let opened = try stageFor(head, total)
                stage = opened
                try head.withUnsafeBytes { try opened.write($0) }
            }
            return SharedFileStaging(byteCount: total, hasher: hasher, sealing: sealing, stage: stage!)
        } catch {
            hasher.finish()
            sealing = nil  // abandons its thread and waits for it
            stage?.discard()
            throw error
        }
    }

    /// A sealing stage in `tmp/` under `protection` for bytes that come in pieces, hashed by the
    /// caller; the class's key is asked for now (a closed class refuses before anything is read).
    public func sealingStage(protection: ProtectionClass, prefix: String) throws -> SealingStage {
        try refuseFirstKeysOverSealedFiles()
        return try SealingStage(in: staging, protection: protection, keys: keys, prefix: prefix)
    }

    /// Refuses to make this device's first keys over a container whose files another device's
    /// keys sealed (a wrong `TRIPBOARD_DEVICE_DIR` or `HOME`, a cron job's): its new tickets would
    /// be sealed where the real device cannot open them. One look per shard while there are no
    /// keys; nothing once there are.
    func refuseFirstKeysOverSealedFiles() throws {
        guard try !keys.hasKeys() else { return }
        for entry in try inventory().files where try sealedClass(relativePath: entry.path) != nil {
            throw DeviceError.noKeysForSealedFiles(path: try path(of: entry.path))
        }
    }

    /// A sealing stage in `tmp/` for bytes that come in pieces (a sync download), hashed by the
    /// caller: under `protection`, or, while that class is closed (the device locked), under
    /// `complete-unless-open`, which needs nothing unlocked — the file is then sealed as its row
    /// says at the next unlock (`AttachmentProtection.reconcile`).
    public func sealingStageWhileLocked(protection: ProtectionClass, prefix: String) throws -> SealingStage {
        try refuseFirstKeysOverSealedFiles()
        do {
            return try SealingStage(in: staging, protection: protection, keys: keys, prefix: prefix)
        } catch let error as DeviceError where error.isLockRefusal && protection != .completeUnlessOpen {
            return try SealingStage(in: staging, protection: .completeUnlessOpen, keys: keys, prefix: prefix)
        }
    }

    /// Makes a staged file durable (`fsync`); see `stage(from:maximumBytes:synchronize:)`.
    public func synchronize(_ file: StagedFile) throws(FileSystemError) {
        try staging.openFile(file.stagingName, .writeOnly).synchronize()
    }

    /// Moves a staged file to `attachments/<first two hex digits of id>/<id>.<ext>` (same
    /// filesystem: `rename` is atomic) and fsyncs both directories, so the file is durable before
    /// any row names it. Returns the path relative to the container.
    public func publish(_ file: StagedFile, id: String, fileExtension: String) throws -> String {
        let shard = String(id.prefix(2))
        let directory = try attachments.openDirectory(shard, create: true)
        let name = id + "." + fileExtension
        try staging.rename(file.stagingName, to: directory, as: name)
        try directory.synchronize()
        try attachments.synchronize()
        return ContainerLayout.attachmentsDirectory + "/" + shard + "/" + name
    }

    /// Puts a staged file in the place of the published file at `relativePath` (one rename:
    /// the path holds the old file or the new one, never neither), then fsyncs the directory.
    public func replace(relativePath: String, with file: StagedFile) throws {
        let (directory, name) = try parent(of: relativePath)
        try staging.rename(file.stagingName, to: directory, as: name)
        try directory.synchronize()
    }

    /// Removes a staged file that will not be published.
    public func discard(_ file: StagedFile) { discard(stagedName: file.stagingName) }

    /// Removes a file from `tmp/` if it is there. Best effort: what stays is a leftover that
    /// `container check --repair` removes after the grace period.
    public func discard(stagedName: String) { Self.discard(stagedName: stagedName, in: staging) }

    static func discard(stagedName: String, in staging: Directory) {
        try? staging.removeFile(stagedName)
    }

    /// Removes a published file (deletion, or a publish whose row was never committed).
    public func remove(relativePath: String) throws {
        let (directory, name) = try parent(of: relativePath)
        try directory.removeFile(name)
        try directory.synchronize()
    }

    /// The path of an attachment's file, for messages.
    public func path(of relativePath: String) throws -> String {
        let (directory, name) = try parent(of: relativePath)
        return directory.childPath(name)
    }

    /// Compares the file at `relativePath` with its recorded size and hash (a pending hash — a row
    /// not hashed yet, or a missing one — matches no file: `.wrongHash` when the size is right).
    /// A sealed file's size is checked without a key; its hash needs its class open
    /// (`DeviceError.locked` and its kin otherwise), and a file that does not authenticate is
    /// `.wrongHash`.
    public func check(relativePath: String, byteCount: Int64, contentHash: ContentHash) throws -> AttachmentFileState {
        switch try readThrough(relativePath: relativePath, byteCount: byteCount, into: nil) {
        case .state(let state): state
        case .hashed(let hash): hash == contentHash.hex ? .ok : .wrongHash
        }
    }

    /// What reading a file through gave: a state other than `.ok` found on the way, or the
    /// BLAKE2b-256 (hex) of its plaintext, which had the size asked for.
    private enum ReadThrough {
        case state(AttachmentFileState)
        case hashed(String)
    }

    /// Reads the plaintext of the file at `relativePath` (a sealed file's size checked first,
    /// without a key), hashing it and copying it into `output` when given.
    private func readThrough(relativePath: String, byteCount: Int64, into output: FileDescriptor?) throws -> ReadThrough {
        let directory: Directory
        let name: String
        do {
            (directory, name) = try parent(of: relativePath)
        } catch let error as FileSystemError where error.code == .notFound {
            return .state(.missing)
        }
        guard let status = try directory.status(of: name) else { return .state(.missing) }
        guard status.kind == .regular else { return .state(.notAFile) }
        let hasher = Blake2bHasher()
        var total: Int64 = 0
        do {
            let reader = try AttachmentReader(name, in: directory, keys: keys)
            guard reader.plaintextLength == byteCount else { return .state(.wrongSize) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
            defer {
                Sodium.wipe(buffer)
                buffer.deallocate()
            }
            while true {
                let count = try reader.read(into: buffer)
                if count == 0 { break }
                total += Int64(count)
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                hasher.update(chunk.bindMemory(to: UInt8.self))
                try output?.write(all: chunk)
            }
        } catch DeviceError.damagedSealedFile {
            return .state(.wrongHash)
        }
        guard total == byteCount else { return .state(.wrongSize) }
        return .hashed(Sodium.hexString(hasher.finalize()))
    }

    /// Throws the lock's refusal (`DeviceError.locked` and its kin) when the class `protection`
    /// is closed now: what reads an attachment asks it of the row's class too, so that a file of
    /// a `complete` row left in the clear by an earlier build is not read while the device is
    /// locked either.
    public func requireOpen(_ protection: ProtectionClass) throws {
        if let refusal = try keys.refusal(protection) { throw refusal }
    }

    /// The file at `relativePath` opened for its plaintext (see `AttachmentReader`).
    public func open(relativePath: String) throws -> AttachmentReader {
        let (directory, name) = try parent(of: relativePath)
        return try AttachmentReader(name, in: directory, keys: keys)
    }

    /// `attachments/recovered/<name>` opened for its plaintext (see `AttachmentReader`).
    public func openRecovered(_ name: String) throws -> AttachmentReader {
        try AttachmentReader(name, in: try recoveredDirectory(), keys: keys)
    }

    /// The plaintext length of the file at `relativePath`, from its size and header alone (no
    /// key needed); nil when its size is not one a sealed file of its class can have.
    public func plaintextLength(relativePath: String) throws -> Int64? {
        let (directory, name) = try parent(of: relativePath)
        let file = try directory.openFileForReading(name)
        let size = try file.status().size
        guard let protection = try AttachmentReader.sealedClass(of: file) else { return size }
        return SealedFile.plaintextLength(sealedLength: size, protection: protection)
    }

    /// The class the file at `relativePath` is sealed under, read from its header alone (no key
    /// needed); nil for a file in the clear.
    public func sealedClass(relativePath: String) throws -> ProtectionClass? {
        try sealedHeader(relativePath: relativePath)?.protection
    }

    /// The header of the sealed file at `relativePath` (its class and keybag: no key needed);
    /// nil for a file in the clear.
    public func sealedHeader(relativePath: String) throws -> SealedFile.Header? {
        let (directory, name) = try parent(of: relativePath)
        return try AttachmentReader.sealedHeader(of: directory.openFileForReading(name))
    }

    /// The size and BLAKE2b-256 (lowercase hex) of what `file` holds from its current offset,
    /// read in 1 MiB chunks (memory stays flat whatever the size); `progress` is told each chunk's size.
    public static func contentHash(of file: any ByteSource, progress: (Int) -> Void = { _ in }) throws -> (byteCount: Int64, hash: String) {
        let hasher = Blake2bHasher()
        var total: Int64 = 0
        // One uninitialised buffer for the whole file: no allocation or zeroing per chunk.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try file.read(into: buffer)
            if count == 0 { break }
            hasher.update(UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
            total += Int64(count)
            progress(count)
        }
        return (total, Sodium.hexString(hasher.finalize()))
    }

    /// Copies the file at `relativePath` to `destination/name`, streaming (memory stays flat) and
    /// hashing on the way: written to a temporary name beside the destination, and renamed into
    /// place (then fsynced) only if the bytes match the recorded size and hash — an export never
    /// hands out damaged bytes as if they were the ticket, and never leaves half a file.
    public func export(relativePath: String, byteCount: Int64, contentHash: ContentHash,
                       to destination: Directory, as name: String) throws {
        let (directory, sourceName) = try parent(of: relativePath)
        let source = try AttachmentReader(sourceName, in: directory, keys: keys)
        let temporaryName = Directory.uniqueTemporaryName(for: name)
        let output = try destination.openFile(temporaryName, .writeOnly, creating: .newFile, mode: 0o600)
        var exported = false
        defer { if !exported { try? destination.removeFile(temporaryName) } }
        let hasher = BackgroundHasher()
        defer { hasher.finish() }
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
        defer {
            Sodium.wipe(buffer)
            buffer.deallocate()
        }
        do {
            while total <= byteCount {  // one byte past the record is enough to know
                let count = try source.read(into: buffer)
                if count == 0 { break }
                total += Int64(count)
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                hasher.submit(Array(chunk))
                try output.write(all: chunk)
            }
        } catch DeviceError.damagedSealedFile {
            throw Self.damaged(directory.childPath(sourceName))
        }
        // A row not hashed yet (`Attachment.hashIsUnverified`) has only its size to be held to.
        guard total == byteCount, contentHash.admits(Sodium.hexString(hasher.finish())) else {
            throw Self.damaged(directory.childPath(sourceName))
        }
        try output.synchronize()
        try destination.rename(temporaryName, to: destination, as: name)
        try destination.synchronize()
        exported = true
    }

    /// Writes the plaintext of the file at `relativePath` into `output` (an in-memory file, for
    /// the PDF worker) and compares it with the row's size and hash as `check` does: `.ok` only
    /// when every byte matched (a pending hash admits any bytes of the right size).
    public func copyPlaintext(relativePath: String, byteCount: Int64, contentHash: ContentHash, into output: FileDescriptor) throws -> AttachmentFileState {
        switch try readThrough(relativePath: relativePath, byteCount: byteCount, into: output) {
        case .state(let state): state
        case .hashed(let hash): contentHash.admits(hash) ? .ok : .wrongHash
        }
    }

    /// An attachment's bytes, verified against its size and hash before any is handed out (for
    /// `attachment export ID -`, which cannot take back what it wrote to standard output).
    public func contents(relativePath: String, byteCount: Int64, contentHash: ContentHash) throws -> [UInt8] {
        let (directory, sourceName) = try parent(of: relativePath)
        let bytes: [UInt8]
        do {
            bytes = try AttachmentReader(sourceName, in: directory, keys: keys).readToEnd(limit: Int(byteCount))
        } catch let error as FileSystemError where error.code == .tooLarge {
            throw Self.damaged(directory.childPath(sourceName))
        } catch DeviceError.damagedSealedFile {
            throw Self.damaged(directory.childPath(sourceName))
        }
        guard Int64(bytes.count) == byteCount, contentHash.isPending || contentHash.admits(Sodium.hexString(blake2b(bytes))) else {
            throw Self.damaged(directory.childPath(sourceName))
        }
        return bytes
    }

    /// An attachment's file that does not match its row: named as the file it is (not "the
    /// store"), with what does help (an export holds no attachment).
    static func damaged(_ path: String) -> StoreError {
        .invalidData("the attachment file \(path) does not match its recorded size and hash (it is damaged); nothing was exported. "
                     + "`app container check` reports it; a backup (`app restore`) holds a good copy — an export holds no attachment")
    }

    /// An entry found by `inventory()` or `stagedEntries()`.
    public struct Entry: Sendable, Equatable {
        /// Relative to the container (`attachments/ab/<id>.pdf`), or a name in `tmp/`.
        public var path: String
        public var status: FileStatus
    }

    /// Every regular file under `attachments/<xx>/` (relative paths, with status), and every
    /// entry that is not what belongs there: a shard that is not a directory, or anything but a
    /// regular file inside a shard. `attachments/recovered/` (files kept for the user) is left out.
    public func inventory() throws -> (files: [Entry], misplaced: [Entry]) {
        var files: [Entry] = []
        var misplaced: [Entry] = []
        for shard in try attachments.entries() where shard != Self.recoveredDirectory {
            guard let shardStatus = try attachments.status(of: shard) else { continue }
            let shardPath = ContainerLayout.attachmentsDirectory + "/" + shard
            guard shardStatus.kind == .directory else {
                misplaced.append(Entry(path: shardPath, status: shardStatus))
                continue
            }
            let directory = try attachments.openDirectory(shard)
            for name in try directory.entries() {
                guard let status = try directory.status(of: name) else { continue }
                let entry = Entry(path: shardPath + "/" + name, status: status)
                if status.kind == .regular { files.append(entry) } else { misplaced.append(entry) }
            }
        }
        return (files, misplaced)
    }

    /// Every regular file under `attachments/` (relative paths) with its modification time.
    public func allFiles() throws -> [(relativePath: String, modificationTime: Int64)] {
        try inventory().files.map { ($0.path, $0.status.modificationTime) }
    }

    /// What `tmp/` holds: leftovers of interrupted imports and writes, by name, with status.
    public func stagedEntries() throws -> [Entry] {
        try staging.entries().compactMap { name in try staging.status(of: name).map { Entry(path: name, status: $0) } }
    }

    /// Removes `tmp/<name>`: a file, FIFO, socket or link (the link itself), or an empty directory.
    public func removeStaged(name: String, isDirectory: Bool = false) throws {
        if isDirectory { try staging.removeDirectory(name) } else { try staging.removeFile(name) }
    }


    private func parent(of relativePath: String) throws -> (Directory, String) {
        let components = relativePath.split(separator: "/").map(String.init)
        guard components.count == 3, components[0] == ContainerLayout.attachmentsDirectory,
              !components.contains(".."), !components.contains(".") else {
            throw AttachmentError.invalidPath(relativePath)
        }
        return (try attachments.openDirectory(components[1]), components[2])
    }
}

/// Why an attachment could not be stored.
public enum AttachmentError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(path: String, limit: Int64)
    case invalidPath(String)

    public var description: String {
        switch self {
        case .tooLarge(let path, let limit):
            "\(path) is larger than the limit of \(Self.describe(bytes: limit)); nothing was stored (raise it with --max-size)"
        case .invalidPath(let path):
            "\(path.prefix(80)) is not an attachment path"
        }
    }

    /// `50 MiB`, `512 KiB`, `100 bytes`: whole units when the size is a multiple of one.
    static func describe(bytes: Int64) -> String {
        for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] where bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift) \(unit)"
        }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }
}
