@testable import TripBoardBackup
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardTestSupport

/// TripBoard's tar against GNU tar 1.34, bsdtar (libarchive; skipped when not installed) and
/// Python's `tarfile`: each extracts what ``TarWriter`` writes byte for byte, with its modes and
/// times, and says nothing on stderr; ``TarReader`` reads what each of them writes in pax (`--format=posix`), ustar and
/// GNU's own format.
struct TarInteropTests {
    /// A container-shaped tree: directories, files at block and chunk boundaries, a path long
    /// enough for the ustar prefix, one too long for it (a pax record), a non-ASCII name. In the
    /// order `tar c` writes, each directory just before what it holds: GNU tar sets a
    /// directory's time once the entries after it leave it (docs/backup-format.md).
    static let items: [TarTests.Item] = {
        let longDirectory = "attachments/" + String(repeating: "p", count: 95)
        let veryLongDirectory = "attachments/" + String(repeating: "r", count: 140)
        func directory(_ path: String) -> TarTests.Item { TarTests.Item(path: path, content: nil) }
        func file(_ path: String, _ content: [UInt8]) -> TarTests.Item { TarTests.Item(path: path, content: content) }
        return [directory("attachments"), directory("attachments/ab")]
            + [0, 1, 511, 512, 65_537].map { file("attachments/ab/0B7C5E2A-\($0).pdf", AgeTests.pattern($0)) }
            + [directory(longDirectory), file(longDirectory + "/" + String(repeating: "q", count: 60) + ".pdf", [1, 2, 3])]
            + [directory(veryLongDirectory), file(veryLongDirectory + "/" + String(repeating: "s", count: 130) + ".pdf", [4, 5])]
            + [file("container.json", Array(#"{"layoutVersion":1}"#.utf8)), directory("keychain")]
            + [directory("preferences"), file("preferences/préférences-ü.json", Array("{}".utf8))]
            + [directory("store"), file("store/TripBoard.sqlite", AgeTests.pattern(3 << 20 | 5))]
    }()

    /// The items that ustar can name (its 155-byte prefix and 100-byte name): what a ustar writer
    /// can hold at all.
    static let ustarItems = items.filter { TarHeader.split(Array(($0.path + ($0.content == nil ? "/" : "")).utf8)) != nil }

    static let mtime: Int64 = 1_700_000_000

    /// Our archive of `items` in `directory`/ours.tar, written through a file descriptor.
    static func writeOurs(in directory: TemporaryDirectory, items: [TarTests.Item] = items, ustarSizeLimit: Int64 = TarHeader.largestOctal11) throws -> String {
        let path = directory.child("ours.tar")
        let file = try Directory.open(path: directory.path).openFile("ours.tar", .writeOnly, creating: .newFile)
        try TarTests.write(items, to: TarWriter(output: file, ustarSizeLimit: ustarSizeLimit), mtime: Self.mtime)
        return path
    }

    /// Checks that `root` holds exactly `items`: bytes, modes 0600/0700, modification times.
    static func expectExtracted(_ items: [TarTests.Item], at root: String, tool: String) throws {
        for item in items {
            let path = root + "/" + item.path
            var info = stat()
            try #require(lstat(path, &info) == 0, "\(tool): \(item.path) is missing")
            #expect(Int64(info.st_mtim.tv_sec) == Self.mtime, "\(tool): \(item.path) mtime")
            if let content = item.content {
                #expect(info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o7777 == 0o600, "\(tool): \(item.path) is a 0600 file")
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == content, "\(tool): \(item.path) bytes")
            } else {
                #expect(info.st_mode & S_IFMT == S_IFDIR && info.st_mode & 0o7777 == 0o700, "\(tool): \(item.path) is a 0700 directory")
            }
        }
    }

    // MARK: - They read ours

    /// The extractors a user may reach for, as a command line to which the archive and the
    /// destination are appended: GNU tar, bsdtar when installed, Python's `tarfile`.
    static let extractors: [(name: String, command: [String])] = {
        var extractors = [("GNU tar", [ExternalTools.gnuTar, "-x", "-C", "{dir}", "-f"]),
                          ("tarfile", [ExternalTools.python, ExternalTools.script("tarfile-tool.py"), "extract", "{dir}"])]
        if ExternalTools.hasBSDTar { extractors.insert(("bsdtar", [ExternalTools.bsdtar, "-x", "-C", "{dir}", "-f"]), at: 1) }
        return extractors
    }()

    /// Extracts `archive` into `directory`/`tool` with each extractor, which must say nothing on
    /// stderr, and checks the result holds exactly `items`.
    static func expectEveryExtractorRestores(_ archive: String, holding items: [TarTests.Item], in directory: TemporaryDirectory) throws {
        for (tool, command) in extractors {
            try directory.makeDirectory(tool)
            let arguments = command.dropFirst().map { $0 == "{dir}" ? directory.child(tool) : $0 } + [archive]
            let result = try ExternalTools.run(command[0], arguments)
            #expect(result.succeeded && result.errorOutput.isEmpty, "\(tool): \(result)")
            try expectExtracted(items, at: directory.child(tool), tool: tool)
        }
    }

    @Test func everyExtractorRestoresOurArchiveExactly() throws {
        let directory = try TemporaryDirectory()
        let archive = try Self.writeOurs(in: directory)
        try Self.expectEveryExtractorRestores(archive, holding: Self.items, in: directory)
        let listing = try ExternalTools.run(ExternalTools.gnuTar, ["-tf", archive])
        #expect(String(decoding: listing.output, as: UTF8.self).split(separator: "\n").map(String.init)
                == Self.items.map { $0.path + ($0.content == nil ? "/" : "") })
        let owners = try ExternalTools.run(ExternalTools.gnuTar, ["-tvf", archive, "--numeric-owner"])
        #expect(String(decoding: owners.output, as: UTF8.self).split(separator: "\n").allSatisfy { $0.contains(" 0/0 ") }, "uid and gid 0")
    }

    @Test func pythonTarfileListsOurOwnersAsRootWithoutNames() throws {
        let directory = try TemporaryDirectory()
        let archive = try Self.writeOurs(in: directory)
        let listing = try ExternalTools.run(ExternalTools.python, [ExternalTools.script("tarfile-tool.py"), "list", archive])
        let members = try String(decoding: listing.output, as: UTF8.self).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(members.map { $0["name"] as? String } == Self.items.map(\.path))
        for member in members {
            #expect(member["uid"] as? Int == 0 && member["gid"] as? Int == 0, "\(member)")
            #expect(member["uname"] as? String == "" && member["gname"] as? String == "", "\(member)")
        }
    }

    @Test func everyExtractorHonoursOurPaxSizeRecord() throws {
        // The 8 GiB limit lowered to 1000 bytes, so the pax `size` record goes to real readers.
        let directory = try TemporaryDirectory()
        let items = [TarTests.Item(path: "big.bin", content: AgeTests.pattern(5000)), TarTests.Item(path: "after", content: [1, 2])]
        let archive = try Self.writeOurs(in: directory, items: items, ustarSizeLimit: 1000)
        try Self.expectEveryExtractorRestores(archive, holding: items, in: directory)
    }

    // MARK: - We read theirs

    /// `items` as real files under `directory`/src.
    static func writeTree(_ items: [TarTests.Item], in directory: TemporaryDirectory) throws {
        for item in items {
            if let content = item.content { try directory.write(content, to: "src/" + item.path) } else { try directory.makeDirectory("src/" + item.path) }
        }
    }

    /// Our reader's view of `archive`: every entry and its content, in order.
    static func expectRead(_ archive: String, holds items: [TarTests.Item], tool: String) throws {
        let entries = try TarTests.read([], from: try FileDescriptor.openForReading(path: archive))
        #expect(Set(entries.map(\.entry.path)) == Set(items.map(\.path)), "\(tool)")
        let contents = Dictionary(uniqueKeysWithValues: entries.map { ($0.entry.path, $0) })
        for item in items {
            let read = try #require(contents[item.path], "\(tool): \(item.path)")
            #expect(read.entry.kind == (item.content == nil ? .directory : .file), "\(tool): \(item.path)")
            #expect(read.content == (item.content ?? []), "\(tool): \(item.path)")
        }
    }

    /// GNU tar in pax (`--format=posix`), ustar and its own format (GNU long names for the long
    /// paths, what a plain `tar -c` writes); ustar cannot name the longest paths at all.
    @Test(arguments: ["posix", "ustar", "gnu"])
    func weReadWhatGNUTarWrites(format: String) throws {
        let directory = try TemporaryDirectory()
        let items = format == "ustar" ? Self.ustarItems : Self.items
        try Self.writeTree(items, in: directory)
        let topLevel = ["attachments", "container.json", "keychain", "preferences", "store"]
        let result = try ExternalTools.run(ExternalTools.gnuTar, ["--format=\(format)", "-cf", directory.child("theirs.tar"), "-C", directory.child("src")] + topLevel)
        try #require(result.succeeded, "\(result)")
        try Self.expectRead(directory.child("theirs.tar"), holds: items, tool: "GNU tar --format=\(format)")
    }

    @Test(.enabled(if: ExternalTools.hasBSDTar, "needs bsdtar (Debian package libarchive-tools)"), arguments: ["pax", "ustar"])
    func weReadWhatBSDTarWrites(format: String) throws {
        let directory = try TemporaryDirectory()
        let items = format == "ustar" ? Self.ustarItems : Self.items
        try Self.writeTree(items, in: directory)
        let result = try ExternalTools.run(ExternalTools.bsdtar, ["--format=\(format)", "-cf", directory.child("theirs.tar"), "-C", directory.child("src")]
                                           + ["attachments", "container.json", "keychain", "preferences", "store"])
        try #require(result.succeeded, "\(result)")
        try Self.expectRead(directory.child("theirs.tar"), holds: items, tool: "bsdtar --format=\(format)")
    }

    @Test(arguments: ["pax", "ustar", "gnu"])
    func weReadWhatPythonTarfileWrites(format: String) throws {
        let directory = try TemporaryDirectory()
        let items = format == "ustar" ? Self.ustarItems : Self.items
        try Self.writeTree(items, in: directory)
        let result = try ExternalTools.run(ExternalTools.python, [ExternalTools.script("tarfile-tool.py"), "create", directory.child("theirs.tar"),
                                                                  format, directory.child("src")] + items.map(\.path))
        try #require(result.succeeded, "\(result)")
        try Self.expectRead(directory.child("theirs.tar"), holds: items, tool: "tarfile \(format)")
    }
}
