internal import CSQLite

/// A failed SQLite call: the extended result code, SQLite's message and the SQL that failed.
///
/// Like GRDB's `DatabaseError`, it never carries bound values, so it is safe to print and log.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (e.g. 517 `SQLITE_BUSY_SNAPSHOT`); `primaryCode` is its low byte.
    public let extendedCode: Int32
    public let message: String
    public let sql: String?

    public var primaryCode: Int32 { extendedCode & 0xff }

    public static let busy: Int32 = SQLITE_BUSY
    public static let busySnapshot: Int32 = 517  // SQLITE_BUSY_SNAPSHOT: (SQLITE_BUSY | (2<<8))
    public static let locked: Int32 = SQLITE_LOCKED
    public static let notADatabase: Int32 = SQLITE_NOTADB
    public static let corrupt: Int32 = SQLITE_CORRUPT
    public static let cannotOpen: Int32 = SQLITE_CANTOPEN
    public static let readOnly: Int32 = SQLITE_READONLY
    public static let full: Int32 = SQLITE_FULL
    public static let ioError: Int32 = SQLITE_IOERR
    public static let constraint: Int32 = SQLITE_CONSTRAINT
    public static let permission: Int32 = SQLITE_PERM

    package init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// Reads the error state of `connection` after a failed call.
    package init(connection: OpaquePointer?, code: Int32, sql: String? = nil) {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        // The connection's error may be stale when the failing call did not set it; prefer `code`
        // when it is more specific.
        self.init(extendedCode: (extended & 0xff) == (code & 0xff) ? extended : code, message: message, sql: sql)
    }

    /// True for contention that a later attempt may not hit: busy, snapshot conflict, locked.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    /// True when the file is not a usable database: garbage bytes, a damaged page, a bad header.
    public var isCorruption: Bool { primaryCode == SQLITE_NOTADB || primaryCode == SQLITE_CORRUPT }

    public var description: String {
        var text = "SQLite error \(extendedCode): \(message)"
        if let sql { text += " (while running: \(sql.prefix(120)))" }
        return text
    }
}
