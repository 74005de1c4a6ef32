@testable import TripBoardBackup
import Testing
@testable import TripBoardStorage
import TripBoardSystem

/// What ``TarReader`` refuses, each with the ``TarError`` that names it, on archives crafted block
/// by block — and the leniencies it keeps on purpose (GNU headers and long names, unknown pax
/// keywords, zero padding after the end).
struct TarReaderTests {
    /// Builds header blocks field by field; the checksum is recomputed after every change.
    struct Block {
        var bytes: [UInt8]

        init(_ name: String, type: Character = "0", size: Int = 0, gnu: Bool = false) {
            bytes = TarHeader(name: Array(name.utf8), mode: 0o600, size: Int64(size), modificationTime: 1_700_000_000,
                              typeFlag: type.asciiValue!).encode()
            if gnu { set(257, "ustar  \u{0}") }
        }

        init(prefix: String, name: String) {
            bytes = TarHeader(name: Array(name.utf8), prefix: Array(prefix.utf8), mode: 0o600, size: 0, modificationTime: 0,
                              typeFlag: TarHeader.TypeFlag.file).encode()
        }

        mutating func set(_ offset: Int, _ text: String) { set(offset, Array(text.utf8)) }

        mutating func set(_ offset: Int, _ raw: [UInt8]) {
            bytes.replaceSubrange(offset..<(offset + raw.count), with: raw)
            bytes.replaceSubrange(148..<156, with: Array(String(format6(TarHeader.checksum(of: bytes))).utf8) + [0, 0x20])
        }

        private func format6(_ value: Int) -> String {
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: 6 - digits.count) + digits
        }

        func with(_ change: (inout Block) -> Void) -> Block {
            var copy = self
            change(&copy)
            return copy
        }
    }

    static func content(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (512 - bytes.count % 512) % 512) }
    static func pax(_ records: String, name: String = "PaxHeaders/x") -> [UInt8] {
        Block(name, type: "x", size: records.utf8.count).bytes + content(Array(records.utf8))
    }
    static let end = [UInt8](repeating: 0, count: 1024)
    static func record(_ key: String, _ value: String) -> String { String(decoding: PaxRecords.record(key, Array(value.utf8)), as: UTF8.self) }
    static let file = Block("a", size: 3).bytes + content([1, 2, 3])

    /// One archive that must be refused, and how.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let archive: [UInt8]
        let error: TarError
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "a flipped name byte", archive: Block("a").with { $0.bytes[0] = UInt8(ascii: "b") }.bytes + end,
                error: .badChecksum(offset: 0)),
        Refusal(name: "no ustar magic (v7 tar)", archive: Block("a").with { $0.set(257, [UInt8](repeating: 0, count: 8)) }.bytes + end,
                error: .notUstar(offset: 0)),
        Refusal(name: "a size that is not octal", archive: Block("a").with { $0.set(124, "0000000009a\u{0}") }.bytes + end,
                error: .invalidNumber(field: "size", offset: 0)),
        Refusal(name: "a base-256 size", archive: Block("a").with { $0.set(124, [0x80] + [UInt8](repeating: 0, count: 11)) }.bytes + end,
                error: .invalidNumber(field: "size", offset: 0)),
        Refusal(name: "a mode that is not octal", archive: Block("a").with { $0.set(100, "rw-----\u{0}") }.bytes + end,
                error: .invalidNumber(field: "mode", offset: 0)),
        Refusal(name: "a hard link", archive: Block("a", type: "1").bytes + end, error: .unsupportedEntryType(type: "'1'", offset: 0)),
        Refusal(name: "a symbolic link", archive: Block("a", type: "2").bytes + end, error: .unsupportedEntryType(type: "'2'", offset: 0)),
        Refusal(name: "a character device", archive: Block("a", type: "3").bytes + end, error: .unsupportedEntryType(type: "'3'", offset: 0)),
        Refusal(name: "a block device", archive: Block("a", type: "4").bytes + end, error: .unsupportedEntryType(type: "'4'", offset: 0)),
        Refusal(name: "a FIFO", archive: Block("a", type: "6").bytes + end, error: .unsupportedEntryType(type: "'6'", offset: 0)),
        Refusal(name: "a contiguous file", archive: Block("a", type: "7").bytes + end, error: .unsupportedEntryType(type: "'7'", offset: 0)),
        Refusal(name: "a global pax header", archive: pax(record("comment", "made by git archive"), name: "g").with(typeFlag: "g") + file + end,
                error: .unsupportedEntryType(type: "'g'", offset: 0)),
        Refusal(name: "a GNU sparse file", archive: Block("a", type: "S", gnu: true).bytes + end, error: .unsupportedEntryType(type: "'S'", offset: 0)),
        Refusal(name: "a pax sparse file", archive: pax(record("GNU.sparse.major", "1")) + file + end,
                error: .unsupportedEntryType(type: "sparse file (pax GNU.sparse.major)", offset: 0)),
        Refusal(name: "an absolute path", archive: Block("/etc/passwd").bytes + end, error: .invalidPath("/etc/passwd", reason: "absolute")),
        Refusal(name: "a .. component", archive: Block("store/../../x").bytes + end, error: .invalidPath("store/../../x", reason: "a .. component")),
        Refusal(name: "a . component", archive: Block("./store").bytes + end, error: .invalidPath("./store", reason: "a . component")),
        Refusal(name: "an empty name", archive: Block("").bytes + end, error: .invalidPath("", reason: "empty")),
        Refusal(name: "an empty component", archive: Block("a//b").bytes + end,
                error: .invalidPath("a//b", reason: "an empty component (// or a trailing /)")),
        Refusal(name: "a NUL inside the name field", archive: Block("ab").with { $0.set(3, "cd") }.bytes + end,
                error: .invalidPath("ab\u{0}cd", reason: "holds a NUL byte")),
        Refusal(name: "a NUL inside a pax path", archive: pax(record("path", "a\u{0}b")) + file + end, error: .invalidPath("a\u{0}b", reason: "holds a NUL byte")),
        Refusal(name: "a name that is not UTF-8", archive: Block("a").with { $0.set(0, [0xC3, 0x28]) }.bytes + end,
                error: .invalidPath("\u{FFFD}(", reason: "not UTF-8")),
        Refusal(name: "a file named with a trailing slash", archive: Block("a/").bytes + end,
                error: .invalidPath("a/", reason: "a file whose name ends with /")),
        Refusal(name: "a directory with content", archive: Block("d/", type: "5", size: 3).bytes + content([1, 2, 3]) + end,
                error: .directoryWithContent("d")),
        Refusal(name: "the same file twice", archive: file + file + end, error: .duplicatePath("a")),
        Refusal(name: "an entry under a file", archive: file + Block("a/b").bytes + end, error: .duplicatePath("a/b")),
        Refusal(name: "a file over a directory's contents", archive: Block("a/b").bytes + file + end, error: .duplicatePath("a")),
        Refusal(name: "content that ends early", archive: Block("a", size: 1000).bytes + [UInt8](repeating: 1, count: 600),
                error: .truncated(path: "a")),
        Refusal(name: "a partial header block", archive: file + [UInt8](repeating: 1, count: 100), error: .truncated(path: nil)),
        Refusal(name: "no end-of-archive blocks", archive: file, error: .truncated(path: nil)),
        Refusal(name: "one zero block and the end", archive: file + [UInt8](repeating: 0, count: 512), error: .truncated(path: nil)),
        Refusal(name: "a lone zero block before an entry", archive: file + [UInt8](repeating: 0, count: 512) + Block("b").bytes + end,
                error: .dataAfterEnd(offset: 1536)),
        Refusal(name: "data after the end blocks", archive: file + end + [0, 0, 0, 7], error: .dataAfterEnd(offset: 2051)),
        Refusal(name: "an archive after the end blocks", archive: file + end + Block("b").bytes + end, error: .dataAfterEnd(offset: 2048)),
        Refusal(name: "a pax record with a wrong length", archive: pax("99 path=b\n") + file + end,
                error: .invalidExtendedHeader(reason: "a record whose length does not match", offset: 0)),
        Refusal(name: "a pax size that is not decimal", archive: pax(record("size", "0x1")) + file + end,
                error: .invalidExtendedHeader(reason: "a size that is not a decimal number", offset: 0)),
        Refusal(name: "an extended header with no entry", archive: pax(record("path", "b")) + end,
                error: .invalidExtendedHeader(reason: "an extended header with no entry after it", offset: 0)),
    ]

    @Test(arguments: refusals)
    func refuses(_ refusal: Refusal) throws {
        #expect(throws: refusal.error) { _ = try TarTests.read(refusal.archive) }
    }

    @Test func theCallersAllowListDecides() throws {
        let archive = try TarTests.archive([TarTests.Item(path: "store", content: nil), TarTests.Item(path: "tmp/x", content: [1])])
        #expect(throws: TarError.pathNotAllowed("tmp/x")) {
            _ = try TarTests.read(archive) { $0.path == "store" || $0.path.hasPrefix("store/") }
        }
        #expect(try TarTests.read(archive) { $0.kind == .directory || $0.size < 10 }.count == 2, "it sees the whole entry")
    }

    @Test func zeroPaddingAfterTheEndIsAccepted() throws {
        // GNU tar pads archives to 10 KiB records; a copy may add zeros that do not fill a block.
        for padding in [0, 512, 10_240 - 2048, 100] {
            #expect(try TarTests.read(Self.file + Self.end + [UInt8](repeating: 0, count: padding)).map(\.content) == [[1, 2, 3]])
        }
    }

    @Test func gnuHeadersAndLongNamesAreRead() throws {
        let long = String(repeating: "d", count: 120) + "/f"
        var gnu = Block("ignored", size: 2, gnu: true)
        gnu.set(345, "atime and ctime live here in GNU headers")  // not a prefix: ignored
        let archive = Block("././@LongLink", type: "L", size: long.utf8.count + 1, gnu: true).bytes
            + Self.content(Array(long.utf8) + [0]) + gnu.bytes + Self.content([4, 5]) + Self.end
        let entries = try TarTests.read(archive)
        #expect(entries.map(\.entry.path) == [long])
        #expect(entries.map(\.content) == [[4, 5]])
    }

    @Test func paxTimesAndUnknownKeywordsAreHandled() throws {
        // As GNU tar --format=posix writes them, plus keywords TripBoard has no use for.
        let records = "30 mtime=1796142332.613712453\n30 atime=1796142332.613712453\n20 SCHILY.xattr.x=y\n18 uname=somebody\n"
        let entries = try TarTests.read(Self.pax(records) + Self.file + Self.end)
        #expect(entries.map(\.entry.modificationTime) == [1_796_142_332])
        #expect(try TarTests.read(Self.pax(Self.record("mtime", "-10.5")) + Self.file + Self.end).map(\.entry.modificationTime) == [-11])
        // An empty value removes a keyword: the header's own path is used again.
        #expect(try TarTests.read(Self.pax(Self.record("path", "b") + Self.record("path", "")) + Self.file + Self.end).map(\.entry.path) == ["a"])
    }

    @Test func ustarPrefixesAreJoinedWithASlash() throws {
        let entries = try TarTests.read(Block(prefix: "store", name: "TripBoard.sqlite").bytes + Self.end)
        #expect(entries.map(\.entry.path) == ["store/TripBoard.sqlite"])
    }

    @Test func unreadContentIsSkipped() throws {
        let archive = try TarTests.archive([TarTests.Item(path: "a", content: AgeTests.pattern(100_000)), TarTests.Item(path: "b", content: [9])])
        let reader = TarReader(input: MemorySource(archive))
        #expect(try reader.nextEntry()?.path == "a")
        var byte: UInt8 = 0
        #expect(try withUnsafeMutableBytes(of: &byte) { try reader.readContent(into: $0) } == 1, "read one byte of a, skip the rest")
        #expect(try reader.nextEntry()?.path == "b")
        #expect(try reader.nextEntry() == nil)
        #expect(try reader.nextEntry() == nil, "the end stays the end")
    }

    @Test func errorDescriptionsEscapeWhatTheArchiveSays() {
        let error = TarError.invalidPath("evil\u{1B}[2K\nname\u{0}é", reason: "a . component")
        #expect(error.description == #"tar entry "evil\u{1B}[2K\nname\0\u{00E9}" has an unacceptable path: a . component"#)
    }
}

extension Array where Element == UInt8 {
    /// This header block (and what follows) with its typeflag set to `typeFlag`, checksum redone.
    fileprivate func with(typeFlag: Character) -> [UInt8] {
        var block = TarReaderTests.Block("")
        block.bytes = Array(self[0..<512])
        block.set(156, String(typeFlag))
        return block.bytes + self[512...]
    }
}
