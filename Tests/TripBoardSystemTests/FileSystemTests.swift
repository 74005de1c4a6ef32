import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

struct FileSystemTests {
    // MARK: - writeAtomically

    /// No space is said as a full disk, whichever file met it (the store's are `SQLiteError`s:
    /// `RoughEdgesTests.aFullDiskIsSaidAsOne`).
    @Test func noSpaceIsSaidAsAFullDisk() {
        let error = FileSystemError(systemCall: "write", path: "/c/preferences/preferences.json.tmp", errorNumber: ENOSPC)
        #expect(error.code == .noSpace)
        #expect(error.description == "the disk is full (/c/preferences/preferences.json.tmp: No space left on device [write]); free some space and try again")
    }

    /// A sink that starts writeback as it goes writes every byte in order from where the caller
    /// left the file (it starts writeback from there), whatever the sizes of the writes against its interval, and counts them.
    @Test func aWritingBackSinkWritesEveryByteFromItsOffset() throws {
        let temporary = try TemporaryDirectory()
        let directory = try Directory.open(path: temporary.path)
        let file = try directory.openFile("archive", .writeOnly, creating: .newFile, mode: 0o600)
        let head = Array("header\n".utf8)
        try file.write(head)
        let sink = WritingBackSink(file: file, interval: 1000)
        var expected = head
        for size in [1, 999, 1, 1000, 4096, 0, 3, 65_536, 7] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: expected.count &+ $0 &* 13) }
            try sink.write(bytes)
            expected += bytes
        }
        sink.startWriteBack()
        try file.synchronize()
        #expect(sink.written == Int64(expected.count - head.count))
        #expect(try temporary.bytes("archive") == expected)
    }

    @Test func writeAtomicallyCreatesAPrivateFileAndLeavesNoTempFile() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("tmp")
        let directory = try Directory.open(path: temporary.path)
        let staging = try directory.openDirectory("tmp")

        try directory.writeAtomically(Array("first version\n".utf8), to: "notes.txt", staging: staging)

        #expect(try temporary.bytes("notes.txt") == Array("first version\n".utf8))
        #expect(try temporary.permissions("notes.txt") == 0o600, "umask is \(String(currentUmask() ?? 0, radix: 8))")
        #expect(try staging.entries() == [])
        #expect(try directory.entries() == ["notes.txt", "tmp"])
    }

    @Test func writeAtomicallyReplacesTheWholeFile() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("tmp")
        try temporary.write("an old and much longer content that must disappear entirely", to: "notes.txt")
        let directory = try Directory.open(path: temporary.path)
        let staging = try directory.openDirectory("tmp")
        let oldInode = try #require(try directory.status(of: "notes.txt")).inode

        try directory.writeAtomically(Array("new".utf8), to: "notes.txt", staging: staging)

        #expect(try temporary.bytes("notes.txt") == Array("new".utf8))
        let replaced = try #require(try directory.status(of: "notes.txt"))
        #expect(replaced.inode != oldInode, "a new file renamed over the old one, never rewritten in place")
        #expect(replaced.size == 3)
        #expect(try staging.entries() == [])
    }

    @Test func writeAtomicallyReplacesASymbolicLinkInsteadOfWritingThroughIt() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("inside/tmp")
        try temporary.write("outside the container", to: "outside.txt")
        try temporary.makeSymbolicLink("inside/notes.txt", to: temporary.child("outside.txt"))
        let directory = try Directory.open(path: temporary.child("inside"))

        try directory.writeAtomically(Array("new".utf8), to: "notes.txt", staging: try directory.openDirectory("tmp"))

        #expect(try temporary.bytes("outside.txt") == Array("outside the container".utf8))
        #expect(try directory.status(of: "notes.txt")?.kind == .regular)
    }

    @Test func writeAtomicallyAcrossFilesystemsFailsAndCleansUp() throws {
        // /dev/shm is tmpfs; the temp directory is usually not. rename(2) then fails with EXDEV.
        let onDisk = try TemporaryDirectory()
        let sharedMemory = "/dev/shm/tripboard-unit-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        guard mkdir(sharedMemory, 0o700) == 0 else { try Test.cancel("no writable /dev/shm") }
        defer { try? FileManager.default.removeItem(atPath: sharedMemory) }
        let directory = try Directory.open(path: onDisk.path)
        let staging = try Directory.open(path: sharedMemory)
        guard try directory.status().device != staging.status().device else {
            try Test.cancel("/dev/shm is on the same filesystem as the temp directory")
        }

        let error = try #require(throws: FileSystemError.self) {
            try directory.writeAtomically(Array("x".utf8), to: "notes.txt", staging: staging)
        }
        #expect(error.code == .crossDevice)
        #expect(error.systemCall == "renameat")
        #expect(try staging.entries() == [], "the temp file is removed after a failure")
        #expect(try directory.entries() == [])
    }

    // MARK: - Symbolic links

    @Test func openFileRefusesASymbolicLink() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("secret", to: "target.txt")
        try temporary.makeSymbolicLink("link.txt", to: temporary.child("target.txt"))
        let directory = try Directory.open(path: temporary.path)

        let error = try #require(throws: FileSystemError.self) { try directory.openFileForReading("link.txt") }
        #expect(error.code == .symbolicLink)
        #expect(error.errorNumber == ELOOP)
        #expect(error.systemCall == "openat")
        #expect(error.path == temporary.child("link.txt"))
        #expect(error.description.contains("symbolic links are not followed"))
    }

    @Test func creatingThroughADanglingSymbolicLinkIsRefusedAndCreatesNothing() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeSymbolicLink("link.txt", to: temporary.child("planted.txt"))
        let directory = try Directory.open(path: temporary.path)

        let error = try #require(throws: FileSystemError.self) {
            try directory.openFile("link.txt", .writeOnly, creating: .ifAbsent, mode: 0o600)
        }
        #expect(error.code == .symbolicLink)
        #expect(!temporary.exists("planted.txt"))
    }

    @Test func openDirectoryRefusesASymbolicLinkToADirectory() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("elsewhere")
        try temporary.write("private", to: "elsewhere/file")
        try temporary.makeSymbolicLink("store", to: temporary.child("elsewhere"))
        let directory = try Directory.open(path: temporary.path)

        let error = try #require(throws: FileSystemError.self) { try directory.openDirectory("store") }
        // Linux reports O_DIRECTORY | O_NOFOLLOW on a link as ENOTDIR; ELOOP would be as good.
        #expect([FileSystemError.Code.notADirectory, .symbolicLink].contains(error.code), "\(error)")
        #expect(error.path == temporary.child("store"))
        #expect(throws: FileSystemError.self) { try directory.openDirectory("store", create: true) }
    }

    @Test func openingTheContainerPathItselfMayFollowALink() throws {
        // The user chooses where the container lives; only names inside it are refused.
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("real")
        try temporary.makeSymbolicLink("chosen", to: temporary.child("real"))
        let directory = try Directory.open(path: temporary.child("chosen"))
        #expect(try directory.status().kind == .directory)
    }

    // MARK: - Directories and entries

    @Test func createMakesMissingParentsWithMode0700() throws {
        let temporary = try TemporaryDirectory()
        let directory = try Directory.create(path: temporary.child("a/b/c"))
        #expect(directory.path == temporary.child("a/b/c"))
        for relative in ["a", "a/b", "a/b/c"] {
            #expect(try temporary.permissions(relative) == 0o700, "\(relative)")
        }
        _ = try Directory.create(path: temporary.child("a/b/c"))  // existing: fine
    }

    @Test func createOverARegularFileFails() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("x", to: "file")
        let error = try #require(throws: FileSystemError.self) { try Directory.create(path: temporary.child("file")) }
        #expect(error.code == .notADirectory)
    }

    @Test func entriesListsEveryNameSortedWithoutDotEntries() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("", to: "b.txt")
        try temporary.write("", to: "a.txt")
        try temporary.makeDirectory("sub")
        try temporary.makeSymbolicLink("link", to: "/nonexistent")
        try temporary.write("", to: ".hidden")
        let directory = try Directory.open(path: temporary.path)
        #expect(try directory.entries() == [".hidden", "a.txt", "b.txt", "link", "sub"])
        #expect(try directory.openDirectory("sub").entries() == [])
    }

    @Test func statusDescribesWithoutFollowingLinks() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("12345", to: "file")
        try temporary.makeDirectory("sub")
        try temporary.makeSymbolicLink("link", to: temporary.child("file"))
        let directory = try Directory.open(path: temporary.path)

        let file = try #require(try directory.status(of: "file"))
        #expect(file.kind == .regular)
        #expect(file.size == 5)
        #expect(file.ownerUserID == geteuid())
        #expect(try directory.status(of: "sub")?.kind == .directory)
        #expect(try directory.status(of: "link")?.kind == .symbolicLink)
        #expect(try directory.status(of: "missing") == nil)
    }

    @Test func renameMovesBetweenDirectoriesAndReplaces() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("from")
        try temporary.makeDirectory("to")
        try temporary.write("new", to: "from/file")
        try temporary.write("old", to: "to/file")
        let from = try Directory.open(path: temporary.child("from"))
        let to = try Directory.open(path: temporary.child("to"))

        try from.rename("file", to: to, as: "file")

        #expect(try from.entries() == [])
        #expect(try temporary.bytes("to/file") == Array("new".utf8))
    }

    @Test func removeFileIgnoresAMissingFileOnlyWhenAsked() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("x", to: "file")
        let directory = try Directory.open(path: temporary.path)
        try directory.removeFile("file")
        #expect(!temporary.exists("file"))
        try directory.removeFile("file")
        let error = try #require(throws: FileSystemError.self) { try directory.removeFile("file", missingIsFine: false) }
        #expect(error.code == .notFound)
        #expect(error.systemCall == "unlinkat")
    }

    @Test func removeDirectoryRefusesANonEmptyDirectory() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("full")
        try temporary.write("x", to: "full/file")
        try temporary.makeDirectory("empty")
        let directory = try Directory.open(path: temporary.path)
        let error = try #require(throws: FileSystemError.self) { try directory.removeDirectory("full") }
        #expect(error.code == .alreadyExists)  // ENOTEMPTY
        try directory.removeDirectory("empty")
        try directory.removeDirectory("empty")
        #expect(try directory.entries() == ["full"])
    }

    // MARK: - File descriptors

    @Test func descriptorsAreCloseOnExec() throws {
        let temporary = try TemporaryDirectory()
        let directory = try Directory.open(path: temporary.path)
        let file = try directory.openFile("file", .readWrite, creating: .ifAbsent)
        for descriptor in [file.rawValue, directory.descriptor.rawValue] {
            let info = try String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)
            let flagsLine = try #require(info.split(separator: "\n").first { $0.hasPrefix("flags:") })
            let flags = try #require(Int32(flagsLine.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8))
            #expect(flags & O_CLOEXEC != 0)
        }
    }

    @Test func descriptorWritesReadsAndTruncates() throws {
        let temporary = try TemporaryDirectory()
        let directory = try Directory.open(path: temporary.path)
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let writer = try directory.openFile("data", .writeOnly, creating: .newFile)
        try writer.write(all: bytes)
        try writer.synchronize()
        #expect(try writer.status().size == 200_000)

        #expect(try directory.openFileForReading("data").readToEnd() == bytes)
        let reader = try directory.openFileForReading("data")
        #expect(try reader.read(upTo: 3) == Array(bytes.prefix(3)))

        try writer.truncate(to: 10)
        #expect(try directory.openFileForReading("data").readToEnd() == Array(bytes.prefix(10)))
    }

    @Test func readToEndRefusesAFileOverTheLimit() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write(Array(repeating: 0x41, count: 100), to: "big")
        let directory = try Directory.open(path: temporary.path)
        let error = try #require(throws: FileSystemError.self) {
            try directory.openFileForReading("big").readToEnd(limit: 99)
        }
        #expect(error.code == .tooLarge)
        #expect(try directory.openFileForReading("big").readToEnd(limit: 100).count == 100)
    }

    /// A regular file is refused by its size, before anything is read (a sparse file of 1 GiB
    /// reads as zeros); a stream is refused once its running count passes the limit.
    @Test func readToEndRefusesByTheSizeOrTheRunningCount() throws {
        let temporary = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: temporary.child("sparse"), contents: nil))
        let sparse = try #require(FileHandle(forWritingAtPath: temporary.child("sparse")))
        try sparse.truncate(atOffset: 1 << 30)
        try sparse.close()
        let started = ContinuousClock.now
        let file = try FileDescriptor.openForReading(path: temporary.child("sparse"))
        #expect(throws: FileSystemError.self) { try file.readToEnd(limit: (1 << 30) - 1) }
        #expect(ContinuousClock.now - started < .milliseconds(500), "1 GiB of zeros was not read first")

        let zeros = try FileDescriptor.openForReading(path: "/dev/zero")
        let error = try #require(throws: FileSystemError.self) { try zeros.readToEnd(limit: 1 << 20) }
        #expect(error.code == .tooLarge)
        #expect(error.description == "/dev/zero: too large (larger than 1048576 bytes) [read]")
    }

    @Test func createExclusiveOnAnExistingFileReportsAlreadyExists() throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("x", to: "file")
        let directory = try Directory.open(path: temporary.path)
        let error = try #require(throws: FileSystemError.self) {
            try directory.openFile("file", .writeOnly, creating: .newFile)
        }
        #expect(error.code == .alreadyExists)
    }

    // MARK: - FileSystemError

    @Test(arguments: [
        (ENOENT, FileSystemError.Code.notFound),
        (EACCES, .permissionDenied),
        (EPERM, .permissionDenied),
        (EEXIST, .alreadyExists),
        (ENOTEMPTY, .alreadyExists),
        (ENOTDIR, .notADirectory),
        (EISDIR, .isADirectory),
        (ELOOP, .symbolicLink),
        (ENOSPC, .noSpace),
        (EDQUOT, .noSpace),
        (EXDEV, .crossDevice),
        (EWOULDBLOCK, .wouldBlock),
        (EROFS, .readOnlyFileSystem),
        (EINVAL, .invalid),
        (EIO, .io),
        (EBADF, .io),
    ])
    func errnoMapsToACode(errorNumber: Int32, code: FileSystemError.Code) {
        let error = FileSystemError(systemCall: "openat", path: "/some/where", errorNumber: errorNumber)
        #expect(error.code == code)
        #expect(error.errorNumber == errorNumber)
    }

    @Test func descriptionNamesPathCallAndCauseButNoContents() throws {
        let temporary = try TemporaryDirectory()
        let secret = "refresh-token-5f2b9c"
        try temporary.write(secret + String(repeating: "!", count: 100), to: "token")
        let directory = try Directory.open(path: temporary.path)

        let tooBig = try #require(throws: FileSystemError.self) {
            try directory.openFileForReading("token").readToEnd(limit: 10)
        }
        #expect(tooBig.description.contains(temporary.child("token")))
        #expect(tooBig.description.contains("[read]"))
        #expect(!tooBig.description.contains(secret))

        let missing = try #require(throws: FileSystemError.self) { try directory.openFileForReading("absent") }
        #expect(missing.description == "\(temporary.child("absent")): No such file or directory [openat]")

        let withDetail = FileSystemError(code: .permissionDenied, systemCall: "fstat", path: "/c", detail: "owned by another user")
        #expect(withDetail.description == "/c: permission denied (owned by another user) [fstat]")
    }
}
