import Foundation
import Testing
import TripBoardSQLite
import TripBoardTestSupport

struct SQLiteTests {
    /// A fresh database file in WAL mode with a table `t`.
    private func makeDatabase(_ temporary: TemporaryDirectory, name: String = "test.sqlite") throws -> Connection {
        let connection = try Connection(path: temporary.child(name), mode: .readWriteCreate)
        try connection.enableWriteAheadLog()
        try connection.execute("""
            CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, amount REAL, data BLOB, note TEXT NOT NULL DEFAULT '',
                            CHECK (amount IS NULL OR amount >= 0))
            """)
        return connection
    }

    // MARK: - Binding and reading

    @Test(arguments: [
        SQLValue.null,
        .integer(0),
        .integer(-1),
        .integer(Int64.max),
        .integer(Int64.min),
        .real(3.25),
        .real(-0.5),
        .real(1e300),
        .text(""),
        .text("Lisboa — pastéis de nata 🥐"),
        .text("it's \"quoted\"; DROP TABLE t; --"),
        .blob([0x00, 0xff, 0x10, 0x00]),
        .blob(Array(0...255)),
    ])
    func boundValueReadsBackWithItsType(value: SQLValue) throws {
        let temporary = try TemporaryDirectory()
        let connection = try Connection(path: temporary.child("test.sqlite"), mode: .readWriteCreate)
        try connection.execute("CREATE TABLE v (value)")
        try connection.statement("INSERT INTO v (value) VALUES (?)").run([value])

        let read = try connection.statement("SELECT value, typeof(value) FROM v").rows { row -> SQLValue in
            switch row.text(1) {
            case "null": .null
            case "integer": .integer(row.integer(0))
            case "real": .real(row.real(0))
            case "text": .text(row.text(0))
            case "blob": .blob(row.blob(0))
            default: .text("unexpected type \(row.text(1))")
            }
        }
        #expect(read == [value])
    }

    @Test func optionalAccessorsReadNullAsNil() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        try connection.statement("INSERT INTO t (id, name, amount) VALUES (?, ?, ?)").run([.integer(1), .optional(nil as String?), .null])
        try connection.statement("INSERT INTO t (id, name, amount) VALUES (?, ?, ?)").run([.optional(2 as Int64?), .optional("b"), .real(2.5)])

        let rows = try connection.statement("SELECT name, id, amount FROM t ORDER BY id").rows { row in
            (row.optionalText(0), row.optionalInteger(1), row.isNull(2), row.text(0), row.blob(2))
        }
        try #require(rows.count == 2)
        #expect(rows[0].0 == nil)
        #expect(rows[0].1 == 1)
        #expect(rows[0].2)
        #expect(rows[0].3 == "", "text of NULL is empty")
        #expect(rows[1].0 == "b")
        #expect(rows[1].1 == 2)
        #expect(!rows[1].2)
        #expect(rows[0].4 == [], "blob of NULL is empty")
    }

    @Test func rebindingReplacesEarlierValues() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        let insert = try connection.statement("INSERT INTO t (name, amount) VALUES (?, ?)")
        try insert.run([.text("a"), .real(1)])
        try insert.run([.text("b"), .null])
        #expect(try connection.statement("SELECT name, amount FROM t ORDER BY id").rows { "\($0.text(0)) \($0.isNull(1))" }
            == ["a false", "b true"])
    }

    @Test func statementsAreCachedBySQLText() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        let first = try connection.statement("SELECT count(*) FROM t")
        #expect(try connection.statement("SELECT count(*) FROM t") === first)
        #expect(try connection.statement("SELECT count(*) FROM t ") !== first)
        #expect(first.sql == "SELECT count(*) FROM t")
    }

    @Test func integerAndTextHelpersReadTheFirstColumnOfTheFirstRow() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        #expect(try connection.integer("SELECT count(*) FROM t") == 0)
        #expect(try connection.integer("SELECT id FROM t") == 0, "no row reads as 0")
        #expect(try connection.text("SELECT name FROM t") == nil)
        try connection.execute("INSERT INTO t (id, name) VALUES (7, 'x'); INSERT INTO t (id, name) VALUES (8, NULL)")
        #expect(try connection.integer("SELECT id FROM t WHERE name = ?", [.text("x")]) == 7)
        #expect(try connection.text("SELECT name FROM t ORDER BY id") == "x")
        #expect(try connection.text("SELECT name FROM t WHERE id = 8") == nil)
        #expect(connection.changes == 1)
    }

    @Test func wrongNumberOfBindingsIsAProgrammerErrorAndTraps() async {
        await #expect(processExitsWith: .failure) {
            // In memory: the child dies at the trap, so nothing it creates on disk would be removed.
            let connection = try Connection(path: ":memory:", mode: .readWriteCreate)
            try connection.statement("SELECT ?, ?").run([.integer(1)])
        }
    }

    // MARK: - Errors

    @Test(arguments: [
        ("INSERT INTO t (id, name) VALUES (1, 'dup')", 1_555, "t.id"),
        ("INSERT INTO t (id, name) VALUES (2, 'taken')", 2_067, "UNIQUE"),
        ("INSERT INTO t (id, name, note) VALUES (3, 'n', NULL)", 1_299, "NOT NULL"),
        ("INSERT INTO t (id, name, amount) VALUES (4, 'c', -1)", 275, "CHECK"),
    ] as [(String, Int32, String)])
    func constraintViolationsCarryTheExtendedCode(sql: String, extendedCode: Int32, kind: String) throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        try connection.execute("INSERT INTO t (id, name) VALUES (1, 'taken')")

        let error = try #require(throws: SQLiteError.self) { try connection.execute(sql) }
        #expect(error.extendedCode == extendedCode)
        #expect(error.code == .constraint)
        #expect(error.message.contains(kind), "\(error.message)")
        #expect(error.sql == sql)
        #expect(!error.isBusy)
        #expect(!error.isCorruption)
    }

    @Test func foreignKeyViolationIs787() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        try connection.execute("PRAGMA foreign_keys = ON; CREATE TABLE child (t_id INTEGER REFERENCES t (id))")
        let error = try #require(throws: SQLiteError.self) {
            try connection.statement("INSERT INTO child VALUES (?)").run([.integer(42)])
        }
        #expect(error.extendedCode == 787)
    }

    @Test func errorNamesTheSQLButNeverTheBoundValues() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        let secret = "access-token-8d1f0c"
        let insert = try connection.statement("INSERT INTO t (name) VALUES (?)")
        try insert.run([.text(secret)])
        let error = try #require(throws: SQLiteError.self) { try insert.run([.text(secret)]) }
        #expect(error.extendedCode == 2_067)
        #expect(error.description.contains("INSERT INTO t (name) VALUES (?)"))
        #expect(error.description.hasPrefix("SQLite error 2067: "))
        #expect(!error.description.contains(secret))
    }

    @Test func syntaxErrorIsReportedWhenPreparing() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        let error = try #require(throws: SQLiteError.self) { try connection.statement("SELEKT 1") }
        #expect(error.extendedCode == 1)
        #expect(error.sql == "SELEKT 1")
    }

    @Test func openingASymbolicLinkIsRefused() throws {
        let temporary = try TemporaryDirectory()
        _ = try makeDatabase(temporary, name: "real.sqlite")
        try temporary.makeSymbolicLink("link.sqlite", to: temporary.child("real.sqlite"))
        let error = try #require(throws: SQLiteError.self) {
            _ = try Connection(path: temporary.child("link.sqlite"), mode: .readWrite)
        }
        #expect(error.extendedCode == 1_550)  // SQLITE_CANTOPEN_SYMLINK
        #expect(error.code == .cannotOpen)
    }

    @Test func openingAMissingFileWithoutCreateFails() throws {
        let temporary = try TemporaryDirectory()
        let error = try #require(throws: SQLiteError.self) {
            _ = try Connection(path: temporary.child("absent.sqlite"), mode: .readWrite)
        }
        #expect(error.code == .cannotOpen)
        #expect(try temporary.entries() == [])
    }

    @Test func garbageOpensLazilyAndFailsAsNotADatabase() throws {
        let temporary = try TemporaryDirectory()
        let garbage = Array(repeating: UInt8(ascii: "x"), count: 8_192)
        try temporary.write(garbage, to: "garbage.sqlite")
        let connection = try Connection(path: temporary.child("garbage.sqlite"), mode: .readWrite)
        let error = try #require(throws: SQLiteError.self) { try connection.userVersion() }
        #expect(error.extendedCode == SQLiteError.Code.notADatabase.rawValue)
        #expect(error.isCorruption)
        #expect(try temporary.bytes("garbage.sqlite") == garbage)
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        let temporary = try TemporaryDirectory()
        let writer = try makeDatabase(temporary)
        try writer.persistWriteAheadLog()
        let reader = try Connection(path: temporary.child("test.sqlite"), mode: .readOnly)
        #expect(reader.isReadOnly)
        #expect(!writer.isReadOnly)
        let error = try #require(throws: SQLiteError.self) { try reader.execute("INSERT INTO t (name) VALUES ('x')") }
        #expect(error.code == .readOnly)
    }

    // MARK: - Transactions

    private struct Abort: Error {}

    @Test func writeTransactionCommitsAndReturnsTheResult() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        let id = try connection.writeTransaction { () throws -> Int64 in
            #expect(connection.isInsideTransaction)
            try connection.execute("INSERT INTO t (id, name) VALUES (5, 'a')")
            return 5
        }
        #expect(id == 5)
        #expect(!connection.isInsideTransaction)
        let other = try Connection(path: temporary.child("test.sqlite"), mode: .readOnly)
        #expect(try other.integer("SELECT count(*) FROM t") == 1)
    }

    @Test func writeTransactionRollsBackWhenTheBodyThrows() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        try connection.execute("INSERT INTO t (id, name) VALUES (1, 'kept')")
        #expect(throws: Abort.self) {
            try connection.writeTransaction {
                try connection.execute("INSERT INTO t (id, name) VALUES (2, 'lost')")
                try connection.execute("UPDATE t SET name = 'changed' WHERE id = 1")
                throw Abort()
            }
        }
        #expect(!connection.isInsideTransaction)
        #expect(try connection.statement("SELECT name FROM t ORDER BY id").rows { $0.text(0) } == ["kept"])
    }

    @Test func writeTransactionRollsBackWhenAStatementFails() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        let error = try #require(throws: SQLiteError.self) {
            try connection.writeTransaction {
                try connection.execute("INSERT INTO t (id, name) VALUES (1, 'a')")
                try connection.execute("INSERT INTO t (id, name) VALUES (2, 'a')")
            }
        }
        #expect(error.extendedCode == 2_067)
        #expect(!connection.isInsideTransaction)
        #expect(try connection.integer("SELECT count(*) FROM t") == 0)
    }

    @Test func writeTransactionTakesTheWriteLockAtBegin() throws {
        // BEGIN IMMEDIATE: a second writer waits (busy_timeout) and then fails with SQLITE_BUSY at
        // BEGIN, before its body runs, instead of failing halfway through.
        let temporary = try TemporaryDirectory()
        let first = try makeDatabase(temporary)
        let second = try Connection(path: temporary.child("test.sqlite"), mode: .readWrite, busyTimeoutMilliseconds: 50)
        var secondBodyRan = false
        try first.writeTransaction {
            let error = try #require(throws: SQLiteError.self) {
                try second.writeTransaction { secondBodyRan = true }
            }
            #expect(error.code == .busy)
            #expect(error.isBusy)
        }
        #expect(!secondBodyRan)
        #expect(!second.isInsideTransaction)
        try second.writeTransaction { secondBodyRan = true }
        #expect(secondBodyRan)
    }

    @Test func readTransactionSeesOneSnapshot() throws {
        let temporary = try TemporaryDirectory()
        let reader = try makeDatabase(temporary)
        let writer = try Connection(path: temporary.child("test.sqlite"), mode: .readWrite)
        let counts = try reader.readTransaction { () throws -> [Int64] in
            let before = try reader.integer("SELECT count(*) FROM t")
            try writer.writeTransaction { try writer.execute("INSERT INTO t (name) VALUES ('new')") }
            return [before, try reader.integer("SELECT count(*) FROM t")]
        }
        #expect(counts == [0, 0])
        #expect(!reader.isInsideTransaction)
        #expect(try reader.integer("SELECT count(*) FROM t") == 1)
    }

    @Test func readTransactionNestedInAnotherTransactionJoinsIt() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        try connection.readTransaction {
            try connection.readTransaction {
                #expect(connection.isInsideTransaction)
            }
            #expect(connection.isInsideTransaction, "the inner one must not end the outer transaction")
        }
        #expect(!connection.isInsideTransaction)

        #expect(throws: Abort.self) {
            try connection.writeTransaction {
                try connection.execute("INSERT INTO t (name) VALUES ('inside')")
                let seen = try connection.readTransaction { try connection.integer("SELECT count(*) FROM t") }
                #expect(seen == 1, "the nested read sees the enclosing transaction's own write")
                #expect(connection.isInsideTransaction)
                throw Abort()
            }
        }
        #expect(try connection.integer("SELECT count(*) FROM t") == 0, "and the rollback still covers it")
    }

    @Test func readTransactionEndsWhenTheBodyThrows() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        #expect(throws: Abort.self) {
            try connection.readTransaction {
                _ = try connection.integer("SELECT count(*) FROM t")
                throw Abort()
            }
        }
        #expect(!connection.isInsideTransaction)
    }

    // MARK: - WAL, data_version, backup

    @Test func enableWriteAheadLogSwitchesToWAL() throws {
        let temporary = try TemporaryDirectory()
        let connection = try Connection(path: temporary.child("test.sqlite"), mode: .readWriteCreate)
        try connection.enableWriteAheadLog()
        #expect(try connection.text("PRAGMA journal_mode") == "wal")
        let later = try Connection(path: temporary.child("test.sqlite"), mode: .readWrite)
        #expect(try later.text("PRAGMA journal_mode") == "wal", "WAL is persistent in the file")
    }

    @Test func enableWriteAheadLogFailsWhenSQLiteKeepsAnotherMode() throws {
        // An in-memory database cannot use WAL: the pragma answers "memory", and that must be an error.
        let connection = try Connection(path: ":memory:", mode: .readWriteCreate)
        let error = try #require(throws: SQLiteError.self) { try connection.enableWriteAheadLog() }
        #expect(error.message.contains("memory"))
    }

    @Test(arguments: [true, false])
    func persistWriteAheadLogKeepsTheWALFilesAfterClose(persist: Bool) throws {
        let temporary = try TemporaryDirectory()
        weak var released: Connection?
        do {
            let connection = try makeDatabase(temporary)
            if persist { try connection.persistWriteAheadLog() }
            try connection.statement("INSERT INTO t (name) VALUES (?)").run([.text("x")])
            #expect(temporary.exists("test.sqlite-wal"))
            #expect(temporary.exists("test.sqlite-shm"))
            released = connection
        }
        #expect(released == nil, "the last reference is gone, so the connection is closed")
        #expect(temporary.exists("test.sqlite-wal") == persist)
        #expect(temporary.exists("test.sqlite-shm") == persist)
        let reopened = try Connection(path: temporary.child("test.sqlite"), mode: .readOnly)
        #expect(try reopened.integer("SELECT count(*) FROM t") == 1)
    }

    @Test func releasingAConnectionClosesItsFile() throws {
        let temporary = try TemporaryDirectory()
        do {
            let connection = try makeDatabase(temporary)
            _ = try connection.statement("SELECT count(*) FROM t").rows { $0.integer(0) }
            #expect(try openDescriptors(under: temporary.path) > 0)
        }
        #expect(try openDescriptors(under: temporary.path) == 0)
    }

    private func openDescriptors(under path: String) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
            .compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(path + "/") }
            .count
    }

    @Test func dataVersionChangesOnlyForOtherConnectionsCommits() throws {
        let temporary = try TemporaryDirectory()
        let watcher = try makeDatabase(temporary)
        let other = try Connection(path: temporary.child("test.sqlite"), mode: .readWrite)
        let initial = try watcher.dataVersion()
        try watcher.execute("INSERT INTO t (name) VALUES ('own')")
        #expect(try watcher.dataVersion() == initial)
        try other.execute("INSERT INTO t (name) VALUES ('theirs')")
        #expect(try watcher.dataVersion() != initial)
    }

    @Test func backupCopiesEverythingIncludingWhatIsOnlyInTheWAL() throws {
        let temporary = try TemporaryDirectory()
        let source = try makeDatabase(temporary)
        try source.persistWriteAheadLog()
        try source.execute("PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = 3")
        try source.writeTransaction {
            for index in 0..<500 {
                try source.statement("INSERT INTO t (name, data) VALUES (?, ?)")
                    .run([.text("row \(index)"), .blob(Array(repeating: UInt8(index % 256), count: 100))])
            }
        }
        #expect(try #require(try FileManager.default.attributesOfItem(atPath: temporary.child("test.sqlite-wal"))[.size] as? Int) > 0)

        try source.scratchCopy(to: temporary.child("copy.sqlite"))

        let copy = try Connection(path: temporary.child("copy.sqlite"), mode: .readOnly)
        #expect(try copy.integer("SELECT count(*) FROM t") == 500)
        #expect(try copy.userVersion() == 3)
        #expect(try copy.text("PRAGMA integrity_check") == "ok")
        #expect(try copy.text("SELECT name FROM t ORDER BY id DESC") == "row 499")
    }

    @Test func userVersionReadsThePragma() throws {
        let temporary = try TemporaryDirectory()
        let connection = try makeDatabase(temporary)
        #expect(try connection.userVersion() == 0)
        try connection.execute("PRAGMA user_version = 42")
        #expect(try connection.userVersion() == 42)
        #expect(!sqliteLibraryVersion.isEmpty)
    }
}
