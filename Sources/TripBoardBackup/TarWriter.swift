import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
public import TripBoardSystem

/// Writes a POSIX tar archive (pax/ustar) of regular files and directories, streaming: what
/// `tar x`, `bsdtar` and Python's `tarfile` extract byte for byte.
///
///     let tar = TarWriter(output: ageWriter)
///     try tar.addDirectory("store", modificationTime: now)
///     try tar.addFile("store/TripBoard.sqlite", size: status.size, modificationTime: status.modificationTime,
///                     contents: descriptor) { chunk in hasher.update(chunk) }
///     try tar.finish()
///
/// The profile (docs/backup-format.md): ustar headers, names relative with no leading `/`,
/// directories named with a trailing `/`, mode 0600 for files and 0700 for directories, uid and
/// gid 0 with empty user and group names — an archive never hands its files to whoever owns that
/// number on the machine that restores it — and a pax extended header (`path`, `size`, `mtime`)
/// only for what ustar cannot hold. Every path is checked as the reader checks it, so the writer
/// never makes an archive TripBoard would refuse to restore.
///
/// Add each directory just before what it holds, as `tar c` does: GNU tar sets an extracted
/// directory's time as soon as the entries after it leave it, so files added to it later would
/// give it the time of the extraction instead.
public final class TarWriter {
    /// The permission bits written for every file.
    public static let fileMode: UInt32 = 0o600
    /// The permission bits written for every directory.
    public static let directoryMode: UInt32 = 0o700

    private let output: any ByteSink
    /// Sizes above this go in a pax `size` record (ustar's 11 octal digits: 8 GiB - 1). Lowered
    /// by tests, which cannot write 8 GiB to exercise that record.
    private let ustarSizeLimit: Int64
    private var paths = TarPathSet()
    /// File content on its way from the source to the output, 64 KiB at a time.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
    private var isFinished = false

    /// A writer that appends the archive to `output`.
    public convenience init(output: any ByteSink) {
        self.init(output: output, ustarSizeLimit: TarHeader.largestOctal11)
    }

    init(output: any ByteSink, ustarSizeLimit: Int64) {
        self.output = output
        self.ustarSizeLimit = ustarSizeLimit
    }

    deinit { buffer.deallocate() }

    /// Adds a directory entry (mode 0700). Throws ``TarError/invalidPath(_:reason:)`` or
    /// ``TarError/duplicatePath(_:)``, or what the output throws.
    public func addDirectory(_ path: String, modificationTime: Int64) throws {
        try writeHeader(path: path, kind: .directory, size: 0, modificationTime: modificationTime)
    }

    /// Adds a regular file (mode 0600) of exactly `size` bytes read from `contents`, 64 KiB at a
    /// time; `onChunk` sees every chunk exactly as it goes into the archive (to hash it while it
    /// is read). Throws ``TarError/sizeMismatch(path:declared:actual:)`` when `contents` ends
    /// early or has more than `size` bytes — the archive is then unusable and must be discarded.
    public func addFile(_ path: String, size: Int64, modificationTime: Int64, contents: any ByteSource,
                        onChunk: (UnsafeRawBufferPointer) throws -> Void = { _ in }) throws {
        precondition(size >= 0, "negative file size")
        try writeHeader(path: path, kind: .file, size: size, modificationTime: modificationTime)
        var remaining = size
        while remaining > 0 {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(remaining, Int64(buffer.count)))])
            let count = try contents.read(into: piece)
            guard count > 0 else { throw TarError.sizeMismatch(path: path, declared: size, actual: size - remaining) }
            let chunk = UnsafeRawBufferPointer(rebasing: piece[0..<count])
            try onChunk(chunk)
            try output.write(all: chunk)
            remaining -= Int64(count)
        }
        // One byte more would mean the file grew while it was read: its entry would not be the
        // file as it is now, and a hash of the bytes read would not match the file's.
        guard try contents.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<1])) == 0 else {
            throw TarError.sizeMismatch(path: path, declared: size, actual: size + 1)
        }
        try writePadding(after: size)
    }

    /// Adds a regular file whose bytes are in memory (a manifest, re-wrapped keychain items).
    public func addFile(_ path: String, contents: [UInt8], modificationTime: Int64) throws {
        try addFile(path, size: Int64(contents.count), modificationTime: modificationTime, contents: MemorySource(contents))
    }

    /// Ends the archive with two zero blocks (POSIX: "two consecutive 512-byte blocks of binary
    /// zeros"). No padding to a 10 KiB record: readers accept the archive's end where it is.
    public func finish() throws {
        precondition(!isFinished, "TarWriter.finish called twice")
        isFinished = true
        try output.write([UInt8](repeating: 0, count: 2 * TarHeader.blockSize))
    }

    // MARK: - Headers

    private func writeHeader(path: String, kind: TarEntry.Kind, size: Int64, modificationTime: Int64) throws {
        precondition(!isFinished, "TarWriter used after finish")
        try TarPath.validate(path)
        try paths.insert(path, kind: kind)
        let name = Array(path.utf8) + (kind == .directory ? [0x2F] : [])
        var header = TarHeader(name: name, mode: kind == .file ? Self.fileMode : Self.directoryMode, size: size,
                               modificationTime: modificationTime,
                               typeFlag: kind == .file ? TarHeader.TypeFlag.file : TarHeader.TypeFlag.directory)
        var records: [UInt8] = []
        if let split = TarHeader.split(name) {
            (header.prefix, header.name) = split
        } else {
            records += PaxRecords.record("path", name)
            header.name = Array(name.prefix(100))
        }
        if size > ustarSizeLimit {
            records += PaxRecords.record("size", Array(String(size).utf8))
            header.size = 0
        }
        if !(0...TarHeader.largestOctal11).contains(modificationTime) {
            records += PaxRecords.record("mtime", Array(String(modificationTime).utf8))
            header.modificationTime = 0
        }
        if !records.isEmpty { try writeExtendedHeader(records, for: path, modificationTime: header.modificationTime) }
        try output.write(header.encode())
    }

    /// A pax `x` entry holding `records`, named `PaxHeaders/<last component>` as GNU tar names
    /// its own (a reader without pax support extracts it as a small text file, harmlessly).
    private func writeExtendedHeader(_ records: [UInt8], for path: String, modificationTime: Int64) throws {
        var baseName = path.split(separator: "/").last ?? Substring(path)
        while baseName.utf8.count > 100 - "PaxHeaders/".utf8.count { baseName = baseName.dropLast() }
        let header = TarHeader(name: Array("PaxHeaders/\(baseName)".utf8), mode: Self.fileMode, size: Int64(records.count),
                               modificationTime: modificationTime, typeFlag: TarHeader.TypeFlag.paxExtended)
        try output.write(header.encode() + records)
        try writePadding(after: Int64(records.count))
    }

    /// Zeros up to the next 512-byte boundary after `count` bytes of content.
    private func writePadding(after count: Int64) throws {
        let padding = Int((Int64(TarHeader.blockSize) - count % Int64(TarHeader.blockSize)) % Int64(TarHeader.blockSize))
        if padding > 0 { try output.write([UInt8](repeating: 0, count: padding)) }
    }
}

// Mutable state (the paths seen, the buffer): one writer belongs to one task.
@available(*, unavailable)
extension TarWriter: Sendable {}
