internal import CSQLite
internal import SealedPages

/// One SQLite connection, closed when released. Not thread-safe: one connection per thread.
///
/// Configured for many processes sharing one store (docs/storage.md §1.2): extended result codes,
/// `SQLITE_OPEN_NOFOLLOW`, a busy timeout, and every write inside `BEGIN IMMEDIATE`.
public final class Connection {
    /// How to open the database file.
    public enum Mode: Sendable {
        /// Read and write an existing database.
        case readWrite
        /// Read and write, creating the file if missing: only under the exclusive container lock.
        case readWriteCreate
        /// `SQLITE_OPEN_READONLY`: the widget's mode; never writes or creates anything.
        case readOnly
    }

    /// Process-wide settings, made once before the first connection (Swift runs a global's
    /// initialiser once, thread-safely): no memory statistics (`SQLITE_CONFIG_MEMSTATUS`) —
    /// nothing here reads them, and keeping them takes a mutex around every one of SQLite's
    /// allocations (3,000 lock/unlock pairs and 5% of the widget's instructions for one answer).
    private static let configured: Void = {
        _ = tripboard_sqlite_config_int(SQLITE_CONFIG_MEMSTATUS, 0)
    }()

    package let handle: OpaquePointer
    public let path: String
    public let mode: Mode
    private var statementCache = [String: Statement](minimumCapacity: 8)  // no growth on the usual paths
    /// Set by `setCheckpointOnClose(true)`: a writer's connection to a verified store.
    private var checkpointsOnClose = false

    /// The sealed-page VFS, registered once per process.
    private static let sealedPagesRegistered: Int32 = tripboard_sealed_register()

    /// Opens `path`. Opening is lazy in SQLite: a file of garbage opens fine and fails on first read.
    /// `uri`: `path` is a `file:` URI (e.g. with `immutable=1`).
    /// `sealing`: the database's pages are sealed under this key (`PageKey`): the connection
    /// reads and writes through the sealed-page VFS, keeps temporary files in memory, and, when
    /// it creates the file, reserves the bytes each page's seal takes.
    public init(path: String, mode: Mode, busyTimeoutMilliseconds: Int32 = 5000, uri: Bool = false, sealing: PageKey? = nil) throws {
        _ = Self.configured
        if sealing != nil, Self.sealedPagesRegistered != SQLITE_OK {
            throw SQLiteError(extendedCode: Self.sealedPagesRegistered, message: "the sealed-page VFS could not be registered", sql: nil)
        }
        var flags = SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX | (uri ? SQLITE_OPEN_URI : 0)
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        var handle: OpaquePointer?
        var code = sqlite3_open_v2(path, &handle, flags, sealing == nil ? nil : TRIPBOARD_SEALED_VFS)
        if code == SQLITE_OK, let handle, let sealing {
            code = sealing.apply(to: handle)
            if code == SQLITE_OK {
                // Before the first page exists: room for the nonce and the tag on every page (a
                // no-op for a file that has pages already; the VFS refuses a page 1 without it).
                var reserve = Int32(PageKey.reservedBytes)
                code = sqlite3_file_control(handle, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
            }
            if code == SQLITE_OK {
                code = sqlite3_exec(handle, "PRAGMA temp_store = MEMORY", nil, nil, nil)
            }
        }
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(connection: handle, code: code)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        self.path = path
        self.mode = mode
        self.sealing = sealing
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    /// Whether this connection reads and writes sealed pages.
    public var isSealed: Bool { sealing != nil }

    /// Attaches the database at `path` as `schema`. A sealed connection attaches through the
    /// sealed-page VFS, so `sealing` is the attached database's key (required then); an unsealed
    /// one attaches in the clear (`sealing` must be nil).
    public func attach(_ path: String, as schema: String, sealing: PageKey?) throws {
        precondition((sealing != nil) == isSealed, "an attached database is sealed as its connection is")
        guard let sealing else { return try statement("ATTACH DATABASE ? AS \(schema)").run([.text(path)]) }
        // ATTACH reads the schema at once: the VFS is given the key when SQLite opens the file.
        try sealing.whileExpected(at: path) { try statement("ATTACH DATABASE ? AS \(schema)").run([.text(path)]) }
        var reserve = Int32(PageKey.reservedBytes)
        let code = sqlite3_file_control(handle, schema, SQLITE_FCNTL_RESERVE_BYTES, &reserve)
        if code != SQLITE_OK {
            // Best effort: the error that matters is the one thrown.
            try? execute("DETACH DATABASE \(schema)")
            throw SQLiteError(connection: handle, code: code)
        }
    }

    /// Attaches the database at `path` as `schema`, in the clear (through SQLite's `unix` VFS)
    /// whatever this connection's VFS: a sealed store's builder reading the migration's file plan. The
    /// connection must have been opened with `uri: true`.
    public func attachInTheClear(_ path: String, as schema: String) throws {
        try statement("ATTACH DATABASE ? AS \(schema)").run([.text("file:" + SQLiteURI.escapedPath(path) + "?vfs=unix")])
    }

    /// The page key this connection's main database was opened with (nil: in the clear).
    public let sealing: PageKey?

    deinit {
        statementCache.removeAll()
        // The last connection to close checkpoints under SQLite's exclusive lock on the file, and
        // a reader opening the store meanwhile waits on it (past its busy timeout under a loaded
        // disk: the widget then answers "updating"). When no other process has the store open,
        // a passive checkpoint first copies the frames and makes the fsyncs with readers going
        // on, so the close has only the WAL to truncate. With another process there, the close
        // does not checkpoint, and neither does this (no fsyncs added to a command).
        if checkpointsOnClose, sqlite3_get_autocommit(handle) != 0, tripboard_another_process_has_open(handle) == 0 {
            _ = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        if code != SQLITE_OK { throw SQLiteError(connection: handle, code: code, sql: sql) }
    }

    /// Runs `body` with SQLite's page cache set to `kibibytes`, then puts the default (2 MB) back:
    /// raised for a large transaction (it touches more index pages than the default holds, and
    /// spilling them to the WAL mid-transaction costs more than the memory) or a whole-store check
    /// (which reads index pages out of order many times over), lowered for a sort
    /// whose memory must not grow with the rows (the sorter spills to a temporary file past it).
    public func withPageCache<T>(kibibytes: Int, _ body: () throws -> T) throws -> T {
        try execute("PRAGMA cache_size = -\(kibibytes)")
        // Best effort: failing to shrink the cache again costs memory, not correctness.
        defer { try? execute("PRAGMA cache_size = -2000") }
        return try body()
    }

    /// Prepares `sql`; the statement is kept for reuse by later calls with the same text.
    public func statement(_ sql: String) throws -> Statement {
        if let cached = statementCache[sql] { return cached }
        let statement = try Statement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// The first column of the first row of `sql`, as an integer (0 when there is no row).
    public func integer(_ sql: String, _ values: [SQLValue] = []) throws -> Int64 {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { statement.reset() }
        return try statement.step() ? statement.integer(0) : 0
    }

    /// The first column of the first row of `sql`, as text.
    public func text(_ sql: String) throws -> String? {
        let statement = try statement(sql)
        try statement.bind([])
        defer { statement.reset() }
        return try statement.step() ? statement.optionalText(0) : nil
    }

    /// `PRAGMA user_version`: the schema version.
    public func userVersion() throws -> Int64 { try integer("PRAGMA user_version") }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Rows this connection has inserted, updated or deleted since it was opened
    /// (`sqlite3_total_changes64`): non-zero once it has written.
    public var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// True when SQLite opened the file read-only (asked to, or because it is write-protected).
    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    public var isInsideTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in `BEGIN IMMEDIATE … COMMIT`, retrying the whole transaction when SQLite
    /// reports `SQLITE_BUSY_SNAPSHOT` (517): busy_timeout is not consulted for it, and only a fresh
    /// transaction can see the newer snapshot. `body` must be safe to run more than once.
    public func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        precondition(mode != .readOnly, "write transaction on a read-only connection")
        var attempt = 0
        while true {
            attempt += 1
            do {
                try execute("BEGIN IMMEDIATE")
                let result: T
                do {
                    result = try body()
                    try execute("COMMIT")
                } catch {
                    if isInsideTransaction { try? execute("ROLLBACK") }
                    throw error
                }
                return result
            } catch let error as SQLiteError where error.isBusySnapshot && attempt < 50 {
                continue
            }
        }
    }

    /// Runs `body` in one read transaction, so every query sees the same snapshot. Inside an
    /// enclosing transaction, `body` simply joins it.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        if isInsideTransaction { return try body() }
        try execute("BEGIN")
        let result: T
        do {
            result = try body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            // Never left open: a later read would join this snapshot and see old data for good.
            if isInsideTransaction { try? execute("ROLLBACK") }
            throw error
        }
        return result
    }

    /// Switches to WAL and checks that SQLite really did: the pragma returns the mode in force,
    /// which stays "delete" on filesystems that cannot share memory.
    public func enableWriteAheadLog() throws {
        let mode = try text("PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(extendedCode: SQLITE_ERROR, message: "journal_mode is \(mode ?? "unknown"), expected wal",
                              sql: "PRAGMA journal_mode=WAL")
        }
    }

    /// Keeps `-wal` and `-shm` on disk when the last connection closes, so a read-only process
    /// never needs to create them (it cannot, in a directory it may not write).
    public func persistWriteAheadLog() throws {
        var enabled: Int32 = 1
        let code = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &enabled)
        if code != SQLITE_OK { throw SQLiteError(connection: handle, code: code) }
    }

    /// SQLite's settings for a database that came from outside: `SQLITE_DBCONFIG_DEFENSIVE` (no
    /// writes to the schema, no corrupting pragmas) and `trusted_schema` off (no SQL function or
    /// virtual table with side effects runs from the schema — FTS5's triggers among them, so a
    /// store of TripBoard's is then only read). For a look at a store before it is believed.
    public func refuseUntrustedSchema() throws {
        var current: Int32 = 0
        let code = tripboard_sqlite_db_config_int(handle, SQLITE_DBCONFIG_DEFENSIVE, 1, &current)
        if code != SQLITE_OK { throw SQLiteError(connection: handle, code: code) }
        try execute("PRAGMA trusted_schema = OFF")
    }

    /// Whether the last connection to close checkpoints the WAL into the main file. Off until a
    /// store has been verified, so that refusing a damaged or newer store changes none of its bytes.
    public func setCheckpointOnClose(_ enabled: Bool) throws {
        var current: Int32 = 0
        let code = tripboard_sqlite_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, enabled ? 0 : 1, &current)
        if code != SQLITE_OK { throw SQLiteError(connection: handle, code: code) }
        checkpointsOnClose = enabled
    }

    /// `PRAGMA data_version`: changes when another connection commits. Comparable only on this
    /// connection.
    public func dataVersion() throws -> Int64 { try integer("PRAGMA data_version") }

    /// Makes `body` callable from SQL on this connection as `name`, deterministic, with
    /// `argumentCount` arguments, each given as its text form (every byte kept) or `nil` for NULL.
    /// The function lives as long as the connection (SQLite releases it on close).
    package func defineFunction(_ name: String, argumentCount: Int32,
                                _ body: @escaping ([String?]) -> FunctionResult) throws {
        let box = Unmanaged.passRetained(ScalarFunctionBox(body)).toOpaque()
        let code = sqlite3_create_function_v2(handle, name, argumentCount, SQLITE_UTF8 | SQLITE_DETERMINISTIC, box,
                                              { context, count, values in ScalarFunctionBox.call(context, count, values) },
                                              nil, nil, { box in box.map { Unmanaged<ScalarFunctionBox>.fromOpaque($0).release() } })
        if code != SQLITE_OK { throw SQLiteError(connection: handle, code: code) }
    }

    /// Copies the whole database into `destinationPath` through the online backup API, which
    /// reads a consistent snapshot including what is still only in the `-wal` file.
    /// `sealing`: the copy's pages are sealed under this key (a snapshot in the container's
    /// `tmp/` under an ephemeral key: the copy of a sealed store is never in the clear on disk).
    /// The copy is scratch, read and removed by the work that made it: it is written without
    /// `fsync` (`synchronous = OFF`; a crash leaves a `tmp/` leftover either way). A copy that
    /// must survive a crash is `backup(into:)` a connection of the caller's.
    public func scratchCopy(to destinationPath: String, sealing: PageKey? = nil) throws {
        let destination = try Connection(path: destinationPath, mode: .readWriteCreate, sealing: sealing)
        try destination.execute("PRAGMA synchronous = OFF")
        try backup(into: destination)
    }

    /// Writes a copy of this database — one in the clear, whose pages keep no room for a seal —
    /// to `path` (a new, absolute path), sealed page by page under `key` with the reserve the
    /// seal needs: `VACUUM INTO` through the sealed-page VFS, which holds the key for that path
    /// while SQLite makes the file. The copy is in rollback-journal mode and not yet fsynced
    /// (`VACUUM INTO` does not sync): the caller makes it durable. This connection must be
    /// opened with `uri: true`.
    public func vacuumSealed(into path: String, key: PageKey) throws {
        precondition(!isSealed, "a sealed database is copied with the backup API")
        var reserve = Int32(PageKey.reservedBytes)
        // Sets the reserve VACUUM gives its output (SQLite answers that the file's own page
        // size and reserve are fixed, which is true and beside the point here).
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
        let uri = "file:" + SQLiteURI.escapedPath(path) + "?vfs=" + PageKey.vfsName
        _ = Self.sealedPagesRegistered
        try key.whileExpected(at: path) {
            try statement("VACUUM INTO ?").run([.text(uri)])
        }
    }

    /// Replaces every page of `destination` with this database's, in one write transaction of
    /// `destination` (a reader sees all of it or none; in WAL mode the pages go through its
    /// `-wal` and the file stays in WAL mode). The page sizes must match when it is in WAL mode.
    public func backup(into destination: Connection) throws {
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw SQLiteError(connection: destination.handle, code: sqlite3_errcode(destination.handle))
        }
        let code = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        if code != SQLITE_DONE { throw SQLiteError(connection: destination.handle, code: code) }
        if finish != SQLITE_OK { throw SQLiteError(connection: destination.handle, code: finish) }
    }
}

/// A path as a `file:` URI's path (sqlite.org/uri.html): every byte but letters, digits and
/// `/._-` percent-encoded — so that neither the URI nor a shell's quoting of it (the sqlite3
/// shell's `.open 'URI'`) can misread any path.
public enum SQLiteURI {
    public static func escapedPath(_ path: String) -> String {
        var escaped = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return escaped
    }
}

/// The version of the SQLite library in use.
public var sqliteLibraryVersion: String { String(cString: sqlite3_libversion()) }

/// What a scalar SQL function defined with `Connection.defineFunction` returns for one call.
package enum FunctionResult {
    case null
    case text(String)
    case integer(Int64)
    /// Fails the statement with `message`.
    case error(String)
}

/// The Swift body behind a scalar SQL function, reached from SQLite's C callback through the
/// function's user data.
private final class ScalarFunctionBox {
    let body: ([String?]) -> FunctionResult

    init(_ body: @escaping ([String?]) -> FunctionResult) { self.body = body }

    static func call(_ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let data = sqlite3_user_data(context) else { return sqlite3_result_error(context, "no function body", -1) }
        let function = Unmanaged<ScalarFunctionBox>.fromOpaque(data).takeUnretainedValue()
        let arguments = (0..<Int(count)).map { index -> String? in
            guard let value = values?[index], sqlite3_value_type(value) != SQLITE_NULL,
                  let pointer = sqlite3_value_text(value) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
        }
        switch function.body(arguments) {
        case .null: sqlite3_result_null(context)
        case .integer(let value): sqlite3_result_int64(context, value)
        case .error(let message): sqlite3_result_error(context, message, -1)
        case .text(let text):
            guard !text.isEmpty else { return sqlite3_result_text(context, "", 0, tripboard_sqlite_transient()) }
            var text = text
            text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    sqlite3_result_text(context, $0.baseAddress, Int32($0.count), tripboard_sqlite_transient())
                }
            }
        }
    }
}
