import Glibc

/// A file copied into the container's staging directory, hashed on the way, not yet published.
public struct StagedFile: Sendable, Equatable {
    /// The name in `tmp/`.
    public let stagingName: String
    public let byteCount: Int64
    /// BLAKE2b-256 of the bytes, lowercase hex.
    public let contentHash: String
    /// The first bytes (up to 1024), for format checks such as `%PDF-`.
    public let head: [UInt8]
}

/// What `AttachmentFiles.check` found for one attachment's file.
public enum AttachmentFileState: String, Sendable, Codable {
    case ok, missing, wrongSize, wrongHash, notAFile
}

/// The file side of attachments: `attachments/<xx>/<id>.<ext>`, written durably before the row
/// that references it is committed (architecture §4.4), and never followed through a symlink.
public struct AttachmentFiles {
    let staging: Directory
    let attachments: Directory
    /// `attachments/recovered/`: files the container migration found with no row naming them.
    public static let recoveredDirectory = "recovered"

    public init(container: Container) throws {
        staging = try container.stagingDirectory()
        attachments = try container.directory(ContainerLayout.attachmentsDirectory)
    }

    /// Copies `source` into `tmp/`, streaming in 1 MiB chunks through one buffer (never the whole file in memory),
    /// hashing as it goes, and refusing more than `maximumBytes`. The copy is fsynced before this
    /// returns. On any failure nothing is left in `tmp/`.
    public func stage(from source: FileDescriptor, maximumBytes: Int64) throws -> StagedFile {
        let name = Directory.uniqueTemporaryName(for: "import")
        var staged = false
        defer { if !staged { try? staging.removeFile(name) } }
        let file = try staging.openFile(name, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        let hasher = Blake2bHasher()
        var total: Int64 = 0
        var head: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try source.read(into: buffer)
            if count == 0 { break }
            total += Int64(count)
            guard total <= maximumBytes else {
                throw AttachmentError.tooLarge(path: source.path, limit: maximumBytes)
            }
            let chunk = UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
            if head.count < 1024 { head += chunk.prefix(1024 - head.count) }
            hasher.update(chunk)
            try file.write(all: UnsafeRawBufferPointer(chunk))
        }
        try file.synchronize()
        staged = true
        return StagedFile(stagingName: name, byteCount: total, contentHash: Sodium.hexString(hasher.finalize()), head: head)
    }

    /// The staged file's path, for a reader such as the PDF worker.
    public func stagedPath(_ file: StagedFile) -> String { staging.childPath(file.stagingName) }

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

    /// Removes a staged file that will not be published.
    public func discard(_ file: StagedFile) {
        try? staging.removeFile(file.stagingName)
    }

    /// Removes a published file (deletion, or a publish whose row was never committed).
    public func remove(relativePath: String) throws {
        let (directory, name) = try parent(of: relativePath)
        try directory.removeFile(name)
        try directory.synchronize()
    }

    /// Compares the file at `relativePath` with its recorded size and hash.
    public func check(relativePath: String, byteCount: Int64, contentHash: String) throws -> AttachmentFileState {
        let directory: Directory
        let name: String
        do {
            (directory, name) = try parent(of: relativePath)
        } catch let error as FileSystemError where error.code == .notFound {
            return .missing
        }
        guard let status = try directory.status(of: name) else { return .missing }
        guard status.kind == .regular else { return .notAFile }
        guard status.size == byteCount else { return .wrongSize }
        return try Self.contentHash(of: directory.openFileForReading(name)).hash == contentHash ? .ok : .wrongHash
    }

    /// The size and BLAKE2b-256 (lowercase hex) of what `file` holds from its current offset,
    /// read in 1 MiB chunks (memory stays flat whatever the size); `progress` is told each chunk's size.
    public static func contentHash(of file: FileDescriptor, progress: (Int) -> Void = { _ in }) throws -> (byteCount: Int64, hash: String) {
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

    /// The whole file at `relativePath`, refused unless its size and hash match the record: an
    /// export never hands out damaged bytes as if they were the ticket.
    public func read(relativePath: String, byteCount: Int64, contentHash: String) throws -> [UInt8] {
        let (directory, name) = try parent(of: relativePath)
        let file = try directory.openFileForReading(name)
        var bytes: [UInt8] = []
        while Int64(bytes.count) <= byteCount {  // one byte past the record is enough to know
            let chunk = try file.read(upTo: 64 << 10)
            if chunk.isEmpty { break }
            bytes += chunk
        }
        guard Int64(bytes.count) == byteCount, Sodium.hexString(blake2b(bytes)) == contentHash else {
            throw StoreError.corrupt(path: directory.childPath(name), detail: "the file does not match its recorded size and hash")
        }
        return bytes
    }

    /// Every regular file under `attachments/` (relative paths) with its modification time;
    /// `attachments/recovered/` (files a migration found without a row, kept for the user) excepted.
    public func allFiles() throws -> [(relativePath: String, modificationTime: Int64)] {
        var files: [(String, Int64)] = []
        for shard in try attachments.entries() where shard != Self.recoveredDirectory {
            guard try attachments.status(of: shard)?.kind == .directory else { continue }
            let directory = try attachments.openDirectory(shard)
            for name in try directory.entries() {
                guard let status = try directory.status(of: name), status.kind == .regular else { continue }
                files.append((ContainerLayout.attachmentsDirectory + "/" + shard + "/" + name, status.modificationTime))
            }
        }
        return files
    }

    /// Staged files left by interrupted imports, with their modification times.
    public func stagedLeftovers() throws -> [(name: String, modificationTime: Int64)] {
        try staging.entries().compactMap { name in
            guard let status = try staging.status(of: name), status.kind == .regular else { return nil }
            return (name, status.modificationTime)
        }
    }

    public func removeStaged(name: String) throws { try staging.removeFile(name) }

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
            "\(path) is larger than \(limit / (1 << 20)) MiB; nothing was stored (raise the limit with --max-size)"
        case .invalidPath(let path):
            "\(path.prefix(80)) is not an attachment path"
        }
    }
}
