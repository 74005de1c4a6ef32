internal import CSQLite

/// A prepared statement, finalized when released. Bind by 1-based index; read columns by 0-based
/// index. Misusing an index is a programmer error and traps.
public final class Statement {
    package let handle: OpaquePointer
    /// The database handle, for error details. Not the `Connection`: the connection caches its
    /// statements, and a strong reference back would keep both alive forever, so the database
    /// would never be closed (and never checkpointed on close). `sqlite3_close_v2` keeps the handle
    /// valid until its last statement is finalized.
    package let database: OpaquePointer
    public let sql: String

    package init(connection: Connection, sql: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw SQLiteError(connection: connection.handle, code: code, sql: sql)
        }
        self.handle = handle
        self.database = connection.handle
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `values` to parameters 1…n, replacing earlier bindings, after resetting the statement.
    @discardableResult
    public func bind(_ values: [SQLValue]) throws -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        precondition(values.count == Int(sqlite3_bind_parameter_count(handle)), "wrong number of bindings for: \(sql)")
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
        return self
    }

    private func bind(_ value: SQLValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
        case .real(let number): code = sqlite3_bind_double(handle, index, number)
        case .text(let text):
            // The byte count, not -1: a NUL inside the text must not cut it short.
            var text = text
            if text.isEmpty {
                code = sqlite3_bind_text(handle, index, "", 0, tripboard_sqlite_transient())
            } else {
                code = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { characters in
                        sqlite3_bind_text(handle, index, characters.baseAddress, Int32(bytes.count), tripboard_sqlite_transient())
                    }
                }
            }
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), tripboard_sqlite_transient())
            }
        }
        if code != SQLITE_OK { throw SQLiteError(connection: database, code: code, sql: sql) }
    }

    /// Advances to the next row; `false` when done. A finished statement is reset so that it
    /// releases its read snapshot at once.
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return false
        default:
            sqlite3_reset(handle)
            throw SQLiteError(connection: database, code: code, sql: sql)
        }
    }

    /// Runs a statement that returns no rows.
    public func run(_ values: [SQLValue] = []) throws {
        try bind(values)
        while try step() {}
    }

    /// Runs the query and maps every row.
    public func rows<T>(_ values: [SQLValue] = [], _ transform: (Statement) throws -> T) throws -> [T] {
        try bind(values)
        var result: [T] = []
        while try step() { result.append(try transform(self)) }
        return result
    }

    /// Runs the query and hands each row to `body` as it is stepped to: memory stays flat
    /// whatever the number of rows (a backup walks every attachment row this way).
    public func forEachRow(_ values: [SQLValue] = [], _ body: (Statement) throws -> Void) throws {
        try bind(values)
        do {
            while try step() { try body(self) }
        } catch {
            reset()
            throw error
        }
    }

    /// Runs the parameterless query and maps every row.
    public func rows<T>(_ transform: (Statement) throws -> T) throws -> [T] { try rows([], transform) }

    /// Resets the statement so it holds no read snapshot.
    public func reset() { sqlite3_reset(handle) }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// How many columns a row of this statement has.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    public func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    public func real(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    public func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    public func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    public func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }

    public func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// A value bound to a statement parameter.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public static func optional(_ text: String?) -> SQLValue { text.map { .text($0) } ?? .null }
    public static func optional(_ number: Int64?) -> SQLValue { number.map { .integer($0) } ?? .null }
}
