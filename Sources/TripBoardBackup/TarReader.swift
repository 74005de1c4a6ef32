import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
public import TripBoardSystem

/// Reads a tar archive strictly, streaming: the entries one by one, each file's content in
/// chunks, and nothing that the profile of docs/backup-format.md does not allow.
///
///     let tar = TarReader(input: ageReader) { entry in isContainerPath(entry.path) }
///     while let entry = try tar.nextEntry() {
///         while case let count = try tar.readContent(into: buffer), count > 0 { … }
///     }
///     // nil: the end-of-archive blocks were found, and only zeros follow them to the end
///
/// Accepted: POSIX ustar headers (and GNU tar's, so an archive made by a default `tar -c` can
/// be restored), regular files (`0`, NUL) and directories (`5`), pax extended headers (`x`: its
/// `path`, `size` and `mtime` records apply to the next entry, other keywords are ignored) and
/// GNU long names (`L`). Refused: every other type (links, devices, FIFOs, sparse files, global
/// pax headers `g`), a bad checksum, a non-octal number, an unsafe or duplicate path, a path the
/// caller's `isAllowed` refuses, content that ends early, the archive ending without its two
/// zero blocks, and anything but zero bytes after them (GNU tar pads to 10 KiB with zeros).
///
/// `nextEntry()` returns nil only once the input itself has ended, so an ``AgeReader`` below has
/// verified its final chunk by then.
public final class TarReader {
    private let input: any ByteSource
    private let isAllowed: (TarEntry) -> Bool
    private var paths = TarPathSet()
    /// Bytes consumed from the input, for the offsets in error messages.
    private var offset: Int64 = 0
    /// The entry whose content is being read, and how much of it is left.
    private var current: TarEntry?
    private var remainingContent: Int64 = 0
    private var isAtEnd = false

    /// A reader of the archive in `input`; `isAllowed` decides which entries may be in it (e.g.
    /// only the paths a container has) and is asked about each before it is returned.
    public init(input: any ByteSource, isAllowed: @escaping (TarEntry) -> Bool = { _ in true }) {
        self.input = input
        self.isAllowed = isAllowed
    }

    /// The next entry, after skipping what is left of the current one's content; nil at the
    /// verified end of the archive. Throws ``TarError`` for anything the profile refuses, or what
    /// the input throws.
    public func nextEntry() throws -> TarEntry? {
        guard !isAtEnd else { return nil }
        try skipRestOfCurrentEntry()
        var overrides = PaxRecords.Overrides()
        var extendedHeaderOffset: Int64?
        while true {
            let headerOffset = offset
            guard let block = try readBlock() else { throw TarError.truncated(path: nil) }
            if block.allSatisfy({ $0 == 0 }) {
                if let extendedHeaderOffset {
                    throw TarError.invalidExtendedHeader(reason: "an extended header with no entry after it", offset: extendedHeaderOffset)
                }
                try readEndOfArchive()
                return nil
            }
            if let entry = try entry(from: block, at: headerOffset, overrides: &overrides) {
                current = entry
                remainingContent = entry.size
                return entry
            }
            extendedHeaderOffset = extendedHeaderOffset ?? headerOffset
        }
    }

    /// Reads up to `buffer.count` bytes of the current entry's content; 0 at its end (and for a
    /// directory, or before the first entry). Throws ``TarError/truncated(path:)`` when the
    /// archive ends first.
    public func readContent(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let current, remainingContent > 0, buffer.count > 0 else { return 0 }
        let wanted = Int(min(Int64(buffer.count), remainingContent))
        let count = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
        guard count > 0 else { throw TarError.truncated(path: current.path) }
        remainingContent -= Int64(count)
        offset += Int64(count)
        return count
    }

    // MARK: - Headers

    /// The entry a header block describes, or nil when it was an extended header (folded into
    /// `overrides` for the entry that follows).
    private func entry(from block: [UInt8], at headerOffset: Int64, overrides: inout PaxRecords.Overrides) throws -> TarEntry? {
        guard let storedChecksum = TarHeader.octal(block[148..<156]) else {
            throw TarError.invalidNumber(field: "checksum", offset: headerOffset)
        }
        guard storedChecksum == Int64(TarHeader.checksum(of: block)) else { throw TarError.badChecksum(offset: headerOffset) }
        guard let magic = TarHeader.magic(of: block) else { throw TarError.notUstar(offset: headerOffset) }
        let typeFlag = block[156]
        switch typeFlag {
        case TarHeader.TypeFlag.paxExtended:
            try PaxRecords.parse(try readSmallContent(of: block, at: headerOffset), into: &overrides, offset: headerOffset)
            return nil
        case TarHeader.TypeFlag.gnuLongName:
            let name = try readSmallContent(of: block, at: headerOffset)
            // GNU tar writes the name and a NUL; the NUL is not part of it.
            overrides.path = Array(name.last == 0 ? name.dropLast() : name[...])
            return nil
        case TarHeader.TypeFlag.file, TarHeader.TypeFlag.oldFile, TarHeader.TypeFlag.directory:
            return try fileOrDirectory(block, kind: typeFlag == TarHeader.TypeFlag.directory ? .directory : .file,
                                       magic: magic, at: headerOffset, overrides: overrides)
        default:
            let shown = (0x21..<0x7F).contains(typeFlag) ? "'\(Character(Unicode.Scalar(typeFlag)))'" : "\(typeFlag)"
            throw TarError.unsupportedEntryType(type: shown, offset: headerOffset)
        }
    }

    private func fileOrDirectory(_ block: [UInt8], kind: TarEntry.Kind, magic: TarHeader.Magic, at headerOffset: Int64,
                                 overrides: PaxRecords.Overrides) throws -> TarEntry {
        let path = try Self.path(of: block, kind: kind, magic: magic, override: overrides.path)
        let size = try overrides.size ?? Self.number(block[124..<136], "size", at: headerOffset)
        guard kind == .file || size == 0 else { throw TarError.directoryWithContent(path) }
        let mode = try Self.number(block[100..<108], "mode", at: headerOffset)
        let modificationTime = try overrides.modificationTime ?? Self.number(block[136..<148], "mtime", at: headerOffset)
        let entry = TarEntry(path: path, kind: kind, mode: UInt32(truncatingIfNeeded: mode) & 0o7777, size: size,
                             modificationTime: modificationTime)
        try paths.insert(path, kind: kind)
        guard isAllowed(entry) else { throw TarError.pathNotAllowed(path) }
        return entry
    }

    private static func number(_ field: ArraySlice<UInt8>, _ name: String, at headerOffset: Int64) throws -> Int64 {
        guard let value = TarHeader.octal(field) else { throw TarError.invalidNumber(field: name, offset: headerOffset) }
        return value
    }

    /// The entry's path: the extended header's or GNU long name if any, else ustar's
    /// `prefix/name` (GNU headers have no prefix); checked against ``TarPath`` with a directory's
    /// one trailing slash removed, and refused when a file's name ends in a slash.
    private static func path(of block: [UInt8], kind: TarEntry.Kind, magic: TarHeader.Magic,
                             override: [UInt8]?) throws -> String {
        var bytes: [UInt8]
        if let override {
            bytes = override
        } else {
            guard let name = TarHeader.string(block[0..<100]), let prefix = TarHeader.string(block[345..<500]) else {
                let shown = block[0..<100].prefix(through: block[0..<100].lastIndex { $0 != 0 } ?? 0)
                throw TarError.invalidPath(String(decoding: shown, as: UTF8.self), reason: "holds a NUL byte")
            }
            bytes = magic == .posix && !prefix.isEmpty ? Array(prefix) + [0x2F] + Array(name) : Array(name)
        }
        guard var path = String(validating: bytes, as: UTF8.self) else {
            throw TarError.invalidPath(String(decoding: bytes, as: UTF8.self), reason: "not UTF-8")
        }
        if path.hasSuffix("/") {
            guard kind == .directory else { throw TarError.invalidPath(path, reason: "a file whose name ends with /") }
            path.removeLast()
        }
        try TarPath.validate(path)
        return path
    }

    /// The content of an extended header or long-name entry, which must be small.
    private func readSmallContent(of block: [UInt8], at headerOffset: Int64) throws -> [UInt8] {
        guard let size = TarHeader.octal(block[124..<136]) else { throw TarError.invalidNumber(field: "size", offset: headerOffset) }
        guard size <= PaxRecords.maximumLength else {
            throw TarError.invalidExtendedHeader(reason: "longer than 1 MiB", offset: headerOffset)
        }
        var content = [UInt8](repeating: 0, count: Int(size))
        let count = try content.withUnsafeMutableBytes { try input.readFully(into: $0) }
        offset += Int64(count)
        guard count == content.count else { throw TarError.truncated(path: nil) }
        try skipPadding(after: size)
        return content
    }

    // MARK: - Blocks

    /// The next 512-byte block; nil when the input ends exactly before it. Throws
    /// ``TarError/truncated(path:)`` for a partial block.
    private func readBlock() throws -> [UInt8]? {
        var block = [UInt8](repeating: 0, count: TarHeader.blockSize)
        let count = try block.withUnsafeMutableBytes { try input.readFully(into: $0) }
        offset += Int64(count)
        if count == 0 { return nil }
        guard count == TarHeader.blockSize else { throw TarError.truncated(path: nil) }
        return block
    }

    private func skipRestOfCurrentEntry() throws {
        guard let entry = current else { return }
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while remainingContent > 0 {
            _ = try scratch.withUnsafeMutableBytes { try readContent(into: $0) }
        }
        try skipPadding(after: entry.size)
        current = nil
    }

    /// Reads the padding after `size` bytes of content. Its bytes are not checked: POSIX does not
    /// say they are zero, and tar writers have left garbage there.
    private func skipPadding(after size: Int64) throws {
        let padding = Int((Int64(TarHeader.blockSize) - size % Int64(TarHeader.blockSize)) % Int64(TarHeader.blockSize))
        guard padding > 0 else { return }
        var scratch = [UInt8](repeating: 0, count: padding)
        let count = try scratch.withUnsafeMutableBytes { try input.readFully(into: $0) }
        offset += Int64(count)
        guard count == padding else { throw TarError.truncated(path: current?.path) }
    }

    /// After a first zero block: the second one, then zeros to the end of the input.
    private func readEndOfArchive() throws {
        let secondOffset = offset
        guard let second = try readBlock() else { throw TarError.truncated(path: nil) }
        guard second.allSatisfy({ $0 == 0 }) else { throw TarError.dataAfterEnd(offset: secondOffset) }
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = try scratch.withUnsafeMutableBytes { try input.read(into: $0) }
            if count == 0 { break }
            if let nonZero = scratch[0..<count].firstIndex(where: { $0 != 0 }) {
                throw TarError.dataAfterEnd(offset: offset + Int64(nonZero))
            }
            offset += Int64(count)
        }
        isAtEnd = true
    }
}

// Mutable state (the position, the paths seen): one reader belongs to one task.
@available(*, unavailable)
extension TarReader: Sendable {}
