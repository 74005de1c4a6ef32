import Foundation
import Testing
import TripBoardKeys
import TripBoardSQLite
import TripBoardTestSupport

/// The sealed-page VFS (docs/security.md, "Sealed stores"): what reaches the disk, and what it
/// refuses to believe.
struct SealedPagesTests {
    static let canary = "CANARY-7f3a9c"

    /// A sealed WAL-mode database at `name` with `rows` rows that each carry the canary, left with
    /// its last transactions in the WAL (no checkpoint on close) when `checkpoint` is false.
    private func makeSealed(_ temporary: TemporaryDirectory, key: PageKey, name: String = "sealed.sqlite", rows: Int = 400,
                            checkpoint: Bool = true) throws {
        let connection = try Connection(path: temporary.child(name), mode: .readWriteCreate, sealing: key)
        try connection.enableWriteAheadLog()
        try connection.persistWriteAheadLog()
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
        try connection.execute("CREATE INDEX t_note ON t (note)")
        try connection.writeTransaction {
            for index in 0..<rows {
                try connection.statement("INSERT INTO t (note) VALUES (?)").run([.text("\(Self.canary) \(index) " + String(repeating: "x", count: 200))])
            }
        }
        try connection.execute("INSERT INTO t (note) VALUES ('\(Self.canary) last')")
        // Every page in the main file, or the last transactions still in the WAL.
        if checkpoint { try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") } else { try connection.setCheckpointOnClose(false) }
    }

    private func count(_ temporary: TemporaryDirectory, key: PageKey, name: String = "sealed.sqlite") throws -> Int64 {
        try Connection(path: temporary.child(name), mode: .readOnly, sealing: key).integer("SELECT count(*) FROM t WHERE note LIKE 'CANARY%'")
    }

    /// Reads every page of `path`: SQLite's integrity check walked to its end, and every row.
    private func readEverything(_ path: String, key: PageKey) throws {
        let connection = try Connection(path: path, mode: .readOnly, sealing: key)
        _ = try connection.integer("SELECT count(*) FROM pragma_integrity_check")
        _ = try connection.integer("SELECT count(*) FROM t WHERE note LIKE 'CANARY%'")
        _ = try connection.integer("SELECT count(*) FROM t INDEXED BY t_note WHERE note > ''")
    }

    private func files(_ temporary: TemporaryDirectory) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: temporary.path) {
            files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: temporary.child(name))))
        }
        return files
    }

    private func expectSealedPageFailure(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("the damaged page was believed", sourceLocation: sourceLocation)
        } catch let error as SQLiteError {
            #expect(error.isSealedPageFailure && error.isCorruption, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aSealedDatabaseReadsBackAndNoFileHoldsItsText() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key, checkpoint: false)
        #expect(try count(temporary, key: key) == 401)
        let files = try files(temporary)
        #expect(Set(files.keys) == ["sealed.sqlite", "sealed.sqlite-wal", "sealed.sqlite-shm"])
        for (name, bytes) in files {
            #expect(bytes.count > 0, "\(name)")
            #expect(!Data(bytes).contains(Data(Self.canary.utf8)), "\(name) holds the canary")
            #expect(!Data(bytes).contains(Data("CREATE TABLE".utf8)), "\(name) holds the schema")
            #expect(!Data(bytes).contains(Data("SQLite format 3".utf8)), "\(name) has a plaintext header")
        }
        // The WAL's pages are sealed; only its frame headers are in the clear.
        #expect(try Connection(path: temporary.child("sealed.sqlite"), mode: .readOnly, sealing: key).integer("PRAGMA page_size") == 4096)
    }

    @Test func theForeignSqlite3OpensNothingAndWritesNothing() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key, checkpoint: false)
        let before = try files(temporary)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [temporary.child("sealed.sqlite"), "SELECT count(*) FROM sqlite_master; INSERT INTO t VALUES (1, 'x');"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(said.contains("file is not a database"), "\(said)")
        // It finds the -wal and rebuilds the -shm index (which holds no page), as any first
        // connection does; the database and its log are not written.
        let after = try files(temporary)
        for name in ["sealed.sqlite", "sealed.sqlite-wal"] { #expect(after[name] == before[name], "sqlite3 changed \(name)") }
        #expect(Set(after.keys) == Set(before.keys))
        #expect(try count(temporary, key: key) == 401)
    }

    @Test func anotherKeyOrAnotherFileIDOpensNothing() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key)
        expectSealedPageFailure { _ = try count(temporary, key: try PageKey.random()) }
        expectSealedPageFailure { _ = try count(temporary, key: PageKey(key: key.key, fileID: Array(repeating: 7, count: 16))) }
        #expect(try count(temporary, key: key) == 401)
    }

    /// Swaps `a` and `b` (page numbers from 1) of `path`'s main file.
    private func swapPages(_ path: String, _ a: Int, _ b: Int) throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let size = PageKey.defaultPageSize
        let first = Array(bytes[(a - 1) * size..<a * size])
        bytes.replaceSubrange((a - 1) * size..<a * size, with: bytes[(b - 1) * size..<b * size])
        bytes.replaceSubrange((b - 1) * size..<b * size, with: first)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func aPageSwappedWithinTheFileIsRefused() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key)
        try swapPages(temporary.child("sealed.sqlite"), 3, 5)
        expectSealedPageFailure { try readEverything(temporary.child("sealed.sqlite"), key: key) }
    }

    @Test func aPageFromAnotherDatabaseIsRefusedEvenUnderTheSameKey() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key, name: "a.sqlite")
        // The same key, another file id: a page moved across does not open.
        try makeSealed(temporary, key: PageKey(key: key.key, fileID: Array(repeating: 9, count: 16)), name: "b.sqlite")
        var a = Array(try Data(contentsOf: URL(fileURLWithPath: temporary.child("a.sqlite"))))
        let b = Array(try Data(contentsOf: URL(fileURLWithPath: temporary.child("b.sqlite"))))
        let size = PageKey.defaultPageSize
        a.replaceSubrange(2 * size..<3 * size, with: b[2 * size..<3 * size])
        try Data(a).write(to: URL(fileURLWithPath: temporary.child("a.sqlite")))
        expectSealedPageFailure { try readEverything(temporary.child("a.sqlite"), key: key) }
    }

    @Test(arguments: ["zeros", "one bit", "cut short"])
    func aTornOrAlteredPageIsRefused(damage: String) throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key)
        let path = temporary.child("sealed.sqlite")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let size = PageKey.defaultPageSize
        let page = bytes.count / size - 1  // the last page
        switch damage {
        case "zeros": bytes.replaceSubrange(page * size..<(page * size + size / 2), with: [UInt8](repeating: 0, count: size / 2))
        case "one bit": bytes[page * size + 100] ^= 0x10
        default: bytes.removeLast(size / 2)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        expectSealedPageFailure { try readEverything(path, key: key) }
    }

    /// What per-page seals cannot see: an earlier, authentic copy of the same page of the same
    /// file. It reads as that earlier version (docs/security.md says so); SQLite's own checks
    /// catch it only when the page no longer fits the pages around it.
    @Test func anOldCopyOfAPageIsAuthenticByConstruction() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        let path = temporary.child("sealed.sqlite")
        let connection = try Connection(path: path, mode: .readWriteCreate, sealing: key)
        try connection.enableWriteAheadLog()
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT NOT NULL); INSERT INTO t VALUES (1, 'old');")
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let old = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        try connection.execute("UPDATE t SET note = 'new' WHERE id = 1; PRAGMA wal_checkpoint(TRUNCATE);")
        #expect(try connection.text("SELECT note FROM t") == "new")
        var now = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let size = PageKey.defaultPageSize
        now.replaceSubrange(size..<2 * size, with: old[size..<2 * size])  // page 2: the table's leaf
        try Data(now).write(to: URL(fileURLWithPath: path))
        let reader = try Connection(path: path, mode: .readOnly, sealing: key)
        #expect(try reader.text("SELECT note FROM t") == "old")
    }

    /// A crash in the middle of writing a frame leaves a torn WAL: SQLite's recovery ends the log
    /// before it and the committed transactions before it stay.
    @Test func aTornWALTailIsACrashNotDamage() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key, rows: 50, checkpoint: false)
        let wal = temporary.child("sealed.sqlite-wal")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: wal)))
        let frame = 24 + PageKey.defaultPageSize
        bytes.removeLast(frame / 2)  // the last frame, half written
        try Data(bytes).write(to: URL(fileURLWithPath: wal))
        try FileManager.default.removeItem(atPath: temporary.child("sealed.sqlite-shm"))
        let reader = try Connection(path: temporary.child("sealed.sqlite"), mode: .readWrite, sealing: key)
        #expect(try reader.integer("SELECT count(*) FROM t") == 50)
        #expect(try reader.text("PRAGMA integrity_check") == "ok")
    }

    /// A checkpoint writes each page as its last committed WAL frame holds it, sealed bytes and
    /// all, without opening or sealing it again; the store then reads back whole. A frame damaged
    /// in the WAL is copied as it is, and the page fails when it is next read, from the main file.
    @Test(arguments: [false, true])
    func aCheckpointCopiesSealedFramesAsTheyAre(damaged: Bool) throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key, rows: 600, checkpoint: false)
        let path = temporary.child("sealed.sqlite")
        let size = PageKey.defaultPageSize
        var wal = Array(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        var last: [Int: Range<Int>] = [:]  // page number → its last frame's sealed bytes
        var pending: [Int: Range<Int>] = [:]
        var offset = 32
        while offset + 24 + size <= wal.count {
            let number = wal[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let commit = wal[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
            pending[number] = offset + 24..<offset + 24 + size
            if commit != 0 {
                last.merge(pending) { _, new in new }
                pending = [:]
            }
            offset += 24 + size
        }
        #expect(last.count > 10, "the WAL holds the transactions: \(last.count) pages")
        // Opened (and the WAL recovered into its index) before any damage: a frame damaged then
        // is not a torn tail that recovery would end the log before.
        let connection = try Connection(path: path, mode: .readWrite, sealing: key)
        #expect(try connection.integer("SELECT count(*) FROM t") == 601)
        if damaged {
            let page = try #require(last.keys.max())
            wal[last[page]!.lowerBound + 100] ^= 0x01
            try Data(wal).write(to: URL(fileURLWithPath: path + "-wal"))
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            let main = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(main[(page - 1) * size..<page * size].elementsEqual(wal[last[page]!]), "copied as it is, damage and all")
            expectSealedPageFailure { try readEverything(path, key: key) }
            return
        }
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let main = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        for (number, frame) in last.sorted(by: { $0.key < $1.key }) {
            let same = main[(number - 1) * size..<number * size].elementsEqual(wal[frame])
            #expect(same, "page \(number) as its frame sealed it")
        }
        try readEverything(path, key: key)
        #expect(try count(temporary, key: key) == 601)
    }

    /// Sorts and temporary tables stay in memory: SQLite would otherwise spill them to
    /// `/var/tmp` in the clear.
    @Test func temporaryFilesStayInMemory() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        try makeSealed(temporary, key: key, rows: 3000)
        let connection = try Connection(path: temporary.child("sealed.sqlite"), mode: .readWrite, sealing: key)
        #expect(try connection.integer("PRAGMA temp_store") == 2)
        try connection.execute("PRAGMA cache_size = -64")
        try connection.execute("CREATE TEMP TABLE copy AS SELECT * FROM t ORDER BY random()")
        #expect(try connection.integer("SELECT count(*) FROM (SELECT note FROM copy ORDER BY note DESC)") == 3001)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: temporary.path)) == ["sealed.sqlite", "sealed.sqlite-wal", "sealed.sqlite-shm"])
    }

    @Test func pagesOpenAndSealOutsideSQLite() throws {
        let key = try PageKey.random()
        var page = [UInt8](repeating: 0, count: PageKey.defaultPageSize)
        page[0..<5] = [1, 2, 3, 4, 5]
        let plain = page
        try page.withUnsafeMutableBytes { try key.seal(page: $0, number: 7) }
        #expect(page != plain)
        var moved = page
        #expect(!moved.withUnsafeMutableBytes { key.open(page: $0, number: 8) })
        #expect(page.withUnsafeMutableBytes { key.open(page: $0, number: 7) })
        #expect(page == plain, "the page did not open to its plaintext")
    }
}

/// The page format as docs/security.md states it, read by a second implementation
/// (`tools/lib/sealed_store.py`: PyNaCl and a page and WAL reader of its own).
struct SealedPagesFormatTests {
    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("tools/lib").path

    @Test(arguments: [true, false])
    func theSecondImplementationOpensTheStoreAndItsWAL(checkpointed: Bool) throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        let connection = try Connection(path: temporary.child("sealed.sqlite"), mode: .readWriteCreate, sealing: key)
        try connection.enableWriteAheadLog()
        try connection.persistWriteAheadLog()
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
        try connection.writeTransaction {
            for index in 0..<300 { try connection.statement("INSERT INTO t (note) VALUES (?)").run([.text("row \(index) " + String(repeating: "y", count: 100))]) }
        }
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // Later transactions stay in the WAL (one of them uncommitted is never written at all).
        try connection.execute("UPDATE t SET note = 'changed in the WAL' WHERE id = 7; INSERT INTO t (note) VALUES ('only in the WAL');")
        if checkpointed { try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        let hex = key.key.withUnsafeBytes { Array($0) }.map { String(format: "%02x", $0) }.joined() + key.fileID.map { String(format: "%02x", $0) }.joined()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.tools + "/sealed_store.py", temporary.child("sealed.sqlite"), temporary.child("plain.sqlite")]
        let input = Pipe()
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data(hex.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let plain = try Connection(path: temporary.child("plain.sqlite"), mode: .readOnly)
        #expect(try plain.integer("SELECT count(*) FROM t") == 301)
        #expect(try plain.text("SELECT note FROM t WHERE id = 7") == "changed in the WAL")
        #expect(try plain.text("PRAGMA integrity_check") == "ok")
        // Pages the VFS opens and pages the second implementation opens are the same bytes.
        #expect(try plain.integer("PRAGMA page_size") == 4096)
    }
}

extension SealedPagesTests {
    /// A page changed again in the transaction that wrote its WAL frame is rewritten in place
    /// (the page alone, then the checksums of the frames after it): the VFS finds its number in
    /// the frame header on disk.
    @Test func aFrameRewrittenInItsOwnTransactionStaysSealed() throws {
        let temporary = try TemporaryDirectory()
        let key = try PageKey.random()
        let connection = try Connection(path: temporary.child("sealed.sqlite"), mode: .readWriteCreate, sealing: key)
        try connection.enableWriteAheadLog()
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
        try connection.execute("PRAGMA cache_size = 2")  // spill pages to the WAL mid-transaction
        try connection.writeTransaction {
            for index in 0..<2000 {
                try connection.statement("INSERT INTO t (note) VALUES (?)").run([.text("row \(index) " + String(repeating: "z", count: 300))])
            }
            try connection.execute("UPDATE t SET note = 'again ' || id")
        }
        let reader = try Connection(path: temporary.child("sealed.sqlite"), mode: .readOnly, sealing: key)
        #expect(try reader.integer("SELECT count(*) FROM t WHERE note LIKE 'again %'") == 2000)
        #expect(try reader.text("PRAGMA integrity_check") == "ok")
    }
}
