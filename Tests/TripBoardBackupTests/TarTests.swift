@testable import TripBoardBackup
import Testing
@testable import TripBoardStorage
import TripBoardSystem

/// ``TarWriter`` and ``TarReader`` together: the exact header bytes written, round trips of
/// names and sizes at every boundary of the format, and what the writer refuses.
/// (`TarReaderTests` holds the archives the reader refuses, `TarInteropTests` the real tools.)
struct TarTests {
    static let mtime: Int64 = 1_700_000_000

    /// One entry to write: a directory (`content` nil) or a file.
    struct Item {
        let path: String
        let content: [UInt8]?
    }

    /// Adds `items` to `writer`, each with modification time `mtime`, then finishes the archive.
    static func write(_ items: [Item], to writer: TarWriter, mtime: Int64 = mtime) throws {
        for item in items {
            if let content = item.content {
                try writer.addFile(item.path, size: Int64(content.count), modificationTime: mtime, contents: MemorySource(content))
            } else {
                try writer.addDirectory(item.path, modificationTime: mtime)
            }
        }
        try writer.finish()
    }

    /// The archive of `items`, written through a ``TarWriter``.
    static func archive(_ items: [Item], ustarSizeLimit: Int64 = TarHeader.largestOctal11, mtime: Int64 = mtime) throws -> [UInt8] {
        let sink = MemorySink()
        try write(items, to: TarWriter(output: sink, ustarSizeLimit: ustarSizeLimit), mtime: mtime)
        return sink.bytes
    }

    /// Every entry of `archive` with its content, read through a ``TarReader``.
    static func read(_ archive: [UInt8], from source: (any ByteSource)? = nil,
                     isAllowed: @escaping (TarEntry) -> Bool = { _ in true }) throws -> [(entry: TarEntry, content: [UInt8])] {
        let reader = TarReader(input: source ?? MemorySource(archive), isAllowed: isAllowed)
        var result: [(TarEntry, [UInt8])] = []
        var buffer = [UInt8](repeating: 0, count: 7_000)
        while let entry = try reader.nextEntry() {
            var content: [UInt8] = []
            while case let count = try buffer.withUnsafeMutableBytes({ try reader.readContent(into: $0) }), count > 0 {
                content += buffer[0..<count]
            }
            result.append((entry, content))
        }
        return result
    }

    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: - The bytes written

    @Test func aFileHeaderHasTheProfilesFieldsAndAValidChecksum() throws {
        let archive = try Self.archive([Item(path: "store/TripBoard.sqlite", content: Array(repeating: 7, count: 1000))])
        let block = Array(archive[0..<512])
        #expect(Self.text(block[0..<22]) == "store/TripBoard.sqlite" && block[22..<100].allSatisfy { $0 == 0 })
        #expect(Self.text(block[100..<108]) == "0000600\u{0}", "mode 0600")
        #expect(Self.text(block[108..<116]) == "0000000\u{0}" && Self.text(block[116..<124]) == "0000000\u{0}", "uid and gid 0")
        #expect(Self.text(block[124..<136]) == "00000001750\u{0}", "1000 bytes")
        #expect(Self.text(block[136..<148]) == "14524770400\u{0}", "mtime 1 700 000 000")
        #expect(block[156] == UInt8(ascii: "0"))
        #expect(Self.text(block[257..<265]) == "ustar\u{0}00", "POSIX magic and version")
        #expect(block[265..<329].allSatisfy { $0 == 0 }, "empty user and group names")
        #expect(block[345..<512].allSatisfy { $0 == 0 }, "no prefix")
        #expect(block[154] == 0 && block[155] == 0x20, "checksum as six digits, NUL, space")
        #expect(TarHeader.octal(block[148..<156]) == Int64(TarHeader.checksum(of: block)))
        // Content, padded to 1024, then the two zero blocks.
        #expect(archive.count == 512 + 1024 + 1024)
        #expect(archive[(512 + 1000)...].allSatisfy { $0 == 0 })
    }

    @Test func aDirectoryIsNamedWithATrailingSlashAndMode0700() throws {
        let block = Array(try Self.archive([Item(path: "attachments/ab", content: nil)])[0..<512])
        #expect(Self.text(block[0..<16]) == "attachments/ab/\u{0}")
        #expect(Self.text(block[100..<108]) == "0000700\u{0}")
        #expect(Self.text(block[124..<136]) == "00000000000\u{0}")
        #expect(block[156] == UInt8(ascii: "5"))
    }

    // MARK: - Round trips

    @Test func filesAndDirectoriesRoundTripWithTheirSizesModesAndTimes() throws {
        let sizes = [0, 1, 511, 512, 513, 65_536 + 3]
        var items = [Item(path: "store", content: nil), Item(path: "attachments", content: nil), Item(path: "attachments/ab", content: nil)]
        items += sizes.map { Item(path: "attachments/ab/file-\($0).pdf", content: AgeTests.pattern($0)) }
        let entries = try Self.read(try Self.archive(items))
        #expect(entries.map(\.entry.path) == items.map(\.path))
        for (item, (entry, content)) in zip(items, entries) {
            #expect(entry.kind == (item.content == nil ? .directory : .file))
            #expect(entry.mode == (item.content == nil ? 0o700 : 0o600))
            #expect(entry.size == Int64(item.content?.count ?? 0))
            #expect(entry.modificationTime == Self.mtime)
            #expect(content == (item.content ?? []), "\(item.path)")
        }
    }

    @Test func longNamesUseTheUstarPrefixThenAPaxPathRecord() throws {
        let fitsName = String(repeating: "n", count: 100)
        let needsPrefix = String(repeating: "d", count: 150) + "/" + String(repeating: "f", count: 99)
        let needsPax = String(repeating: "d", count: 60) + "/" + String(repeating: "e", count: 150) + "/" + String(repeating: "f", count: 120)
        let unicode = "attachments/é/" + String(repeating: "ü", count: 60)
        let items = [fitsName, needsPrefix, needsPax, unicode].map { Item(path: $0, content: Array($0.utf8)) }
            + [Item(path: String(repeating: "g", count: 101), content: nil)]
        let archive = try Self.archive(items)
        let entries = try Self.read(archive)
        #expect(entries.map(\.entry.path) == items.map(\.path))
        #expect(entries.map(\.content) == items.map { $0.content ?? [] })
        // needsPrefix: one header, its name split at the slash.
        let second = Array(archive[1024..<1536])
        #expect(second[0..<99].allSatisfy { $0 == UInt8(ascii: "f") } && Self.text(second[345..<495]) == String(repeating: "d", count: 150))
        // needsPax and the 101-byte directory name: an `x` header with a path record before it.
        #expect(archive.count == 512 * (2 + 2 + 4 + 2 + 2 + 2 + 1) + 1024)
        #expect(Self.text(archive[...]).contains("path=\(needsPax)\n"))
        #expect(Self.text(archive[...]).contains("path=\(String(repeating: "g", count: 101))/\n"))
    }

    @Test func aSizeAboveUstarsLimitGoesInAPaxSizeRecord() throws {
        // The limit is 8 GiB - 1; lowered here to 1000 so the record is exercised in memory.
        let content = AgeTests.pattern(1500)
        let archive = try Self.archive([Item(path: "big", content: content), Item(path: "small", content: [1])], ustarSizeLimit: 1000)
        #expect(archive[156] == UInt8(ascii: "x"))
        #expect(Self.text(archive[512..<1024]).hasPrefix("13 size=1500\n"))
        #expect(Self.text(archive[(1024 + 124)..<(1024 + 136)]) == "00000000000\u{0}", "the ustar size field is left at 0")
        let entries = try Self.read(archive)
        #expect(entries.map(\.entry.size) == [1500, 1])
        #expect(entries.map(\.content) == [content, [1]])
    }

    @Test(arguments: [-1, -31_536_000, 0o77777777777 + 1] as [Int64])
    func aTimeUstarCannotHoldGoesInAPaxMtimeRecord(mtime: Int64) throws {
        let archive = try Self.archive([Item(path: "old", content: [1, 2])], mtime: mtime)
        #expect(archive[156] == UInt8(ascii: "x"))
        #expect(try Self.read(archive).map(\.entry.modificationTime) == [mtime])
    }

    @Test func paxRecordLengthsCountTheirOwnDigits() {
        #expect(PaxRecords.record("size", Array("1500".utf8)) == Array("13 size=1500\n".utf8))
        // 99 bytes of body + 2 digits = 101: three digits, so 102.
        let value = [UInt8](repeating: UInt8(ascii: "a"), count: 92)
        let record = PaxRecords.record("path", value)
        #expect(record.count == 102 && record.starts(with: Array("102 path=".utf8)))
    }

    // MARK: - Content streaming

    @Test func theChunkHookSeesExactlyTheBytesThatGoIntoTheArchive() throws {
        let content = AgeTests.pattern(200_000)
        let sink = MemorySink()
        let writer = TarWriter(output: sink)
        var seen: [UInt8] = []
        var chunkSizes: [Int] = []
        try writer.addFile("a", size: Int64(content.count), modificationTime: 0, contents: MemorySource(content)) { chunk in
            seen += chunk
            chunkSizes.append(chunk.count)
        }
        try writer.finish()
        #expect(seen == content)
        #expect(chunkSizes.allSatisfy { $0 <= 65_536 }, "64 KiB at a time: memory flat in the file's size")
        #expect(Array(sink.bytes[512..<(512 + content.count)]) == content)
    }

    @Test func aFileThatShrankOrGrewWhileReadIsRefused() throws {
        let writer = TarWriter(output: MemorySink())
        #expect(throws: TarError.sizeMismatch(path: "short", declared: 10, actual: 4)) {
            try writer.addFile("short", size: 10, modificationTime: 0, contents: MemorySource([1, 2, 3, 4]))
        }
        #expect(throws: TarError.sizeMismatch(path: "long", declared: 3, actual: 4)) {
            try writer.addFile("long", size: 3, modificationTime: 0, contents: MemorySource([1, 2, 3, 4]))
        }
    }

    // MARK: - What the writer refuses

    @Test(arguments: [
        ("", "empty"), ("/etc/passwd", "absolute"), ("a/../b", "a .. component"), ("..", "a .. component"),
        ("./a", "a . component"), ("a//b", "an empty component (// or a trailing /)"), ("a/", "an empty component (// or a trailing /)"),
        ("a\u{0}b", "holds a NUL byte"), (String(repeating: "x", count: 4097), "longer than 4096 bytes"),
    ])
    func theWriterRefusesPathsTheReaderWouldRefuse(path: String, reason: String) throws {
        let writer = TarWriter(output: MemorySink())
        #expect(throws: TarError.invalidPath(path, reason: reason)) { try writer.addFile(path, contents: [], modificationTime: 0) }
        #expect(throws: TarError.invalidPath(path, reason: reason)) { try writer.addDirectory(path, modificationTime: 0) }
    }

    @Test func theWriterRefusesDuplicatesAndEntriesUnderAFile() throws {
        let writer = TarWriter(output: MemorySink())
        try writer.addDirectory("store", modificationTime: 0)
        try writer.addFile("store/a", contents: [1], modificationTime: 0)
        try writer.addFile("keychain/items", contents: [1], modificationTime: 0)
        #expect(throws: TarError.duplicatePath("store/a")) { try writer.addFile("store/a", contents: [2], modificationTime: 0) }
        #expect(throws: TarError.duplicatePath("store")) { try writer.addDirectory("store", modificationTime: 0) }
        #expect(throws: TarError.duplicatePath("store/a/b")) { try writer.addFile("store/a/b", contents: [2], modificationTime: 0) }
        #expect(throws: TarError.duplicatePath("keychain")) { try writer.addFile("keychain", contents: [2], modificationTime: 0) }
        try writer.addDirectory("keychain", modificationTime: 0)
    }
}
