internal import CSQLite
package import TripBoardSystem

/// The current row of a statement as SQLite holds it, for a printer that copies column bytes
/// straight to its output: no `String` and no model per row (a list of a million trips spent as
/// long making them as SQLite spent reading the rows; docs/performance.md).
///
/// Lent to a closure (`RowCursor.forEachRawRow`) and not copyable, so it cannot outlive the step
/// it describes: the next `sqlite3_step` invalidates what the columns point to.
public struct RawRow: ~Copyable {
    @usableFromInline package let statement: Statement

    package init(_ statement: Statement) { self.statement = statement }

    public func isNull(_ column: Int32) -> Bool { statement.isNull(column) }

    public func integer(_ column: Int32) -> Int64 { statement.integer(column) }

    /// The column as `Statement.optionalText(_:)` reads it, for a value the printer must read
    /// as a `String` (a booking's time, which `BookingTime` parses).
    public func optionalText(_ column: Int32) -> String? { statement.optionalText(column) }

    /// Lends the column's text, as UTF-8 bytes exactly as `Statement.text(_:)` reads them before
    /// it makes a `String` (which would repair invalid UTF-8), to `body`. NULL lends no bytes.
    /// The bytes belong to SQLite and stay valid only inside `body`: they must not escape it.
    @inlinable
    public func withText<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(statement.borrowedText(column))
    }

    /// Lends the column's bytes as a blob (`Statement.blob(_:)` without the copy) to `body`, under
    /// the same rule as `withText`.
    @inlinable
    public func withBlob<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(statement.borrowedBlob(column))
    }
}

extension Statement {
    /// The column's text bytes, valid until the statement steps, resets or reads the column as
    /// another type. Only `RawRow` hands them out, inside a closure.
    @usableFromInline
    package func borrowedText(_ column: Int32) -> UnsafeRawBufferPointer {
        // sqlite3_column_bytes after sqlite3_column_text: "the safest policy is to invoke
        // sqlite3_column_text() … followed by sqlite3_column_bytes()" (sqlite.org/c3ref/column_blob.html).
        guard let pointer = sqlite3_column_text(handle, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
    }

    @usableFromInline
    package func borrowedBlob(_ column: Int32) -> UnsafeRawBufferPointer {
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer, count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }
}

extension RowCursor {
    /// Hands every row to `body` as it is, without `transform`: the printer reads the columns
    /// in place (`RawRow`), in the same snapshot, order, statements, filter and limit as `forEach`.
    public func forEachRawRow(_ body: (borrowing RawRow) throws -> Void) throws {
        try walk { row in try body(RawRow(row)) }
    }

    /// The rows as one pretty JSON array (`JSONArrayWriter` at `indentLevel`), each element
    /// written from its row's bytes by `element`. `emit` lends the output to append to, once per
    /// element and once for the closing bracket: a console's buffer, or an export's next piece.
    package func writeJSONArray(indentLevel: Int = 0, _ element: (borrowing RawRow, inout JSONArrayWriter, inout [UInt8]) -> Void,
                                through emit: ((inout [UInt8]) -> Void) throws -> Void) throws {
        var array = JSONArrayWriter(indentLevel: indentLevel)
        // Neither closure is kept: `emit` runs the one it is lent at once, and returns.
        try withoutActuallyEscaping(element) { element in
            try forEachRawRow { row in try emit { element(row, &array, &$0) } }
        }
        try emit { $0 += array.end() }
    }
}
