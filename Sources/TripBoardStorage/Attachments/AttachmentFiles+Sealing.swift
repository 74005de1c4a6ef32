public import TripBoardSystem
public import TripBoardDevice
import TripBoardKeys

/// An attachment's file opened for its plaintext: a sealed file (`SealedFile`) opened with the
/// key of its class, or a file written before attachments were sealed, read as it is. Either
/// way the bytes handed out are the ticket's; a sealed file's are authenticated message by
/// message before they are.
public final class AttachmentReader: ByteSource {
    /// The file's path, for messages.
    public let path: String
    /// The file as it is on disk (its size is the sealed size for a sealed file).
    public let status: FileStatus
    /// The class it is sealed under; nil for a file in the clear.
    public let protection: ProtectionClass?
    /// The plaintext's length, known from the file's size without reading it; nil when the
    /// size is not one a sealed file can have.
    public let plaintextLength: Int64?
    private let file: FileDescriptor
    private let sealed: SealedFileReader?

    /// Opens `name` in `directory` (never through a link, never anything but a regular file).
    /// A sealed file's key is asked of `keys` now: `DeviceError.locked` and its kin, or
    /// `.sealedElsewhere`, come from here.
    init(_ name: String, in directory: Directory, keys: any FileKeys) throws {
        file = try directory.openFileForReading(name)
        path = directory.childPath(name)
        status = try file.status()
        let head = try file.read(upTo: SealedFile.magic.count)
        if SealedFile.isSealed(head) {
            try file.seek(to: 0)
            let reader = try SealedFileReader(input: file, path: path, keys: keys)
            sealed = reader
            protection = reader.header.protection
            plaintextLength = SealedFile.plaintextLength(sealedLength: status.size, protection: reader.header.protection)
        } else {
            try file.seek(to: 0)
            sealed = nil
            protection = nil
            plaintextLength = status.size
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let sealed { return try sealed.read(into: buffer) }
        return try file.read(into: buffer)
    }

    /// Every plaintext byte, refusing more than `limit`.
    public func readToEnd(limit: Int) throws -> [UInt8] {
        if let sealed { return try sealed.readToEnd(limit: limit) }
        return try file.readToEnd(limit: limit)
    }

    /// The class a file is sealed under, from its first bytes alone (no key): nil for a file in
    /// the clear or one too short to be sealed.
    static func sealedClass(of file: FileDescriptor) throws -> ProtectionClass? {
        try sealedHeader(of: file)?.protection
    }

    /// A sealed file's header from its first bytes alone (no key): nil for a file in the clear.
    static func sealedHeader(of file: FileDescriptor) throws -> SealedFile.Header? {
        SealedFile.Header.parse(try file.read(upTo: SealedFile.prefixBytesToParse))
    }
}

/// Plaintext on its way into `tmp/`, sealed as it comes: `write` the bytes, then `finish` with
/// their hash. Nothing in the clear reaches the disk.
public final class SealingStage {
    public let stagingName: String
    public let protection: ProtectionClass
    private let staging: Directory
    private let file: WritingBackSink
    private let writer: SealedFileWriter
    private var head: [UInt8] = []
    private var done = false
    /// Plaintext bytes taken so far.
    public var plaintextLength: Int64 { writer.plaintextLength }

    /// A new file in `staging`, its header written: the key of `protection` is asked of `keys`
    /// now (a closed class refuses before anything is read).
    init(in staging: Directory, protection: ProtectionClass, keys: any FileKeys, prefix: String = "import") throws {
        let key = try keys.sealingKey(protection)
        let name = Directory.uniqueTemporaryName(for: prefix)
        let file = WritingBackSink(file: try staging.openFile(name, .writeOnly, creating: .newFile, mode: 0o600),
                                   interval: AttachmentFiles.writeBackBytes)
        do {
            writer = try SealedFileWriter(output: file, key: key)
        } catch {
            try? staging.removeFile(name)
            throw error
        }
        self.stagingName = name
        self.protection = protection
        self.staging = staging
        self.file = file
    }

    deinit { if !done { try? staging.removeFile(stagingName) } }

    /// Seals `bytes`. Every 8 MiB written, writeback of them is started (`WritingBackSink`), so
    /// that the final fsync of a large file finds little left to write.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if head.count < 1024 { head += bytes.prefix(1024 - head.count) }
        try writer.write(bytes)
    }

    /// Seals the last message and returns the staged file; fsynced first when `synchronize`,
    /// else writeback is started and the caller calls `AttachmentFiles.synchronize(_:)`.
    public func finish(contentHash: String, synchronize: Bool) throws -> StagedFile {
        try writer.finish()
        if synchronize {
            try file.file.synchronize()
        } else {
            file.startWriteBack()
        }
        done = true
        return StagedFile(stagingName: stagingName, byteCount: writer.plaintextLength, contentHash: contentHash, head: head, protection: protection)
    }

    /// Removes the staged file (nothing is published).
    public func discard() {
        guard !done else { return }
        done = true
        try? staging.removeFile(stagingName)
    }
}

@available(*, unavailable)
extension SealingStage: Sendable {}

@available(*, unavailable)
extension AttachmentReader: Sendable {}
