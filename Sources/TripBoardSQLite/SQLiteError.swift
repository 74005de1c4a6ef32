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

    /// The primary result code (`primaryCode`) by name.
    public var code: Code { Code(rawValue: primaryCode) }

    /// A primary result code by name, so that no caller spells SQLite's numbers, matched against
    /// an error with `~=` as swift-system's `Errno` is:
    ///
    ///     do { … } catch SQLiteError.Code.constraint { … }
    ///     if case SQLiteError.Code.cannotOpen = error { … }
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let busy = Code(rawValue: SQLITE_BUSY)
        public static let locked = Code(rawValue: SQLITE_LOCKED)
        public static let notADatabase = Code(rawValue: SQLITE_NOTADB)
        public static let corrupt = Code(rawValue: SQLITE_CORRUPT)
        public static let cannotOpen = Code(rawValue: SQLITE_CANTOPEN)
        public static let readOnly = Code(rawValue: SQLITE_READONLY)
        public static let full = Code(rawValue: SQLITE_FULL)
        public static let ioError = Code(rawValue: SQLITE_IOERR)
        public static let constraint = Code(rawValue: SQLITE_CONSTRAINT)
        public static let permission = Code(rawValue: SQLITE_PERM)

        /// True when `error` is an `SQLiteError` with this primary code.
        public static func ~= (code: Code, error: any Error) -> Bool { (error as? SQLiteError)?.code == code }
    }

    /// `SQLITE_BUSY_SNAPSHOT`, the extended code of a read snapshot too old to upgrade to a write
    /// (`SQLITE_BUSY | 2 << 8`): the one extended code callers tell apart.
    public var isBusySnapshot: Bool { extendedCode == 517 }

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
    public var isBusy: Bool { code == .busy || code == .locked }

    /// True when a write found no space: the database or its log could not grow (`SQLITE_FULL`),
    /// or the `-shm` index could not (`SQLITE_IOERR_SHMSIZE`, which SQLite reports for ENOSPC there).
    public var isDiskFull: Bool { code == .full || extendedCode == SQLITE_IOERR | (19 << 8) }

    /// True when the file is not a usable database: garbage bytes, a damaged page, a bad header,
    /// or a sealed page that does not open (`SQLITE_IOERR_DATA`, the sealed-page VFS's answer).
    public var isCorruption: Bool { code == .notADatabase || code == .corrupt || isSealedPageFailure }

    /// True when a sealed page did not authenticate (`SQLITE_IOERR_DATA`): altered, torn, moved
    /// from another place or another file, or sealed under another key.
    public var isSealedPageFailure: Bool { extendedCode == Self.sealedPageFailureCode }

    /// `SQLITE_IOERR_DATA`.
    static let sealedPageFailureCode: Int32 = SQLITE_IOERR | (32 << 8)

    public var description: String {
        var text = "SQLite error \(extendedCode): \(message)"
        if let sql { text += " (while running: \(sql.prefix(120)))" }
        // Said as what it is, on every path that writes: the transaction was rolled back.
        if isDiskFull { return "the disk is full: nothing was written (\(text)); free some space and try again" }
        return text
    }
}
