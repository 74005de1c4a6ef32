public import TripBoardSQLite
package import TripBoardSystem

/// Rows of the store, read as they are asked for, in one read snapshot: what the store's list
/// methods hand out (`Store.tripRows`, `bookingRows`, `pendingChangeRows`, …) and the console
/// prints. The face of SQLite's cursor above the store: the modules above it (the command line,
/// the commands) see rows and models, never a statement or a connection.
public struct StoreCursor<Element> {
    @usableFromInline package let rows: RowCursor<Element>

    package init(_ rows: RowCursor<Element>) { self.rows = rows }

    /// Hands every row to `body` as its model, in order, as it is read.
    public func forEach(_ body: (Element) throws -> Void) throws { try rows.forEach(body) }

    /// Every row's model, in order (for the short lists; a printer walks them with `forEach`).
    public func collect() throws -> [Element] { try rows.collect() }

    /// Hands every row to `body` as it is (`StoreRow`), without making its model: the printer reads
    /// the columns in place, in the same snapshot, order, filter and limit as `forEach`.
    public func forEachRow(_ body: (borrowing StoreRow) throws -> Void) throws {
        try rows.walk { statement in try body(StoreRow(statement)) }
    }

    /// The rows as a pretty JSON array written by `writer` (the whole document, or a member of
    /// a larger one), each element written from its row's bytes by `element`. `emit` lends the
    /// output (a console's buffer, or an export's next piece) once per element and once for the
    /// closing bracket: the writer writes straight into it, after what it held itself.
    package func writeJSONArray(_ writer: inout JSONWriter, _ element: (borrowing StoreRow, inout JSONWriter) -> Void,
                                through emit: ((inout [UInt8]) -> Void) throws -> Void) throws {
        writer.beginArray()
        // Neither closure is kept: `emit` runs the one it is lent at once, and returns.
        try withoutActuallyEscaping(element) { element in
            try forEachRow { row in
                try emit { output in
                    writer.writingInto(&output) { element(row, &$0) }
                }
            }
        }
        writer.endArray()
        try emit { writer.moveBytes(into: &$0) }
    }
}

/// The current row of a `StoreCursor` as the store holds it, for a printer that copies column
/// bytes straight to its output: no `String` and no model per row (a list of a million trips
/// spent as long making them as SQLite spent reading the rows; docs/performance.md). Columns are
/// numbered as the list's SELECT names them (`RecordColumn.selectList`).
///
/// Lent to a closure (`StoreCursor.forEachRow`) and not copyable, so it cannot outlive the step
/// it describes: the next step invalidates what the columns point to.
public struct StoreRow: ~Copyable {
    @usableFromInline package let statement: Statement

    @usableFromInline package init(_ statement: Statement) { self.statement = statement }

    @inlinable public func isNull(_ column: Int32) -> Bool { statement.isNull(column) }

    @inlinable public func integer(_ column: Int32) -> Int64 { statement.integer(column) }

    /// The column as text, for a value the printer must read as a `String` (a booking's time,
    /// which `BookingTime` parses); `nil` for NULL.
    @inlinable public func optionalText(_ column: Int32) -> String? { statement.optionalText(column) }

    /// Lends the column's text, as UTF-8 bytes exactly as stored (no repair of invalid UTF-8, which
    /// making a `String` would do), to `body`. NULL lends no bytes. The bytes stay valid only
    /// inside `body`: they must not escape it.
    @inlinable
    public func withText<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(statement.borrowedText(column))
    }

    /// Lends the column's bytes as a blob, without a copy, to `body`, under the same rule as
    /// `withText`.
    @inlinable
    public func withBlob<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(statement.borrowedBlob(column))
    }
}
