internal import CSQLite

extension Statement {
    /// The column's text bytes, valid until the statement steps, resets or reads the column as
    /// another type. Only `StoreRow` (TripBoardModel) hands them out, inside a closure.
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
