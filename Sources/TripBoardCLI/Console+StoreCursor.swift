package import TripBoardSystem
package import TripBoardModel
package import TripBoardCommandLine

/// The lists: a store cursor's rows printed as they are read, as a table or as JSON.
extension Console {
    /// Prints the rows of `cursor` as a table as they are read: `row` makes each one's cells.
    /// With no row at all, prints `emptyMessage` instead, or the header alone when it is nil.
    package func printTable<Element>(header: [String], emptyMessage: String? = nil, _ cursor: StoreCursor<Element>,
                             row: (Element) -> [String]) throws {
        let table = TableWriter(console: self, header: header)
        try cursor.forEach { table.add(row($0)) }
        if table.rowCount == 0, let emptyMessage { return print(emptyMessage) }
        table.finish()
    }

    /// Prints the rows of `cursor` as a table straight from their bytes (`StoreRow`): `row` fills
    /// each one's cells into a `TableRow` reused from row to row. The same lines as the other
    /// `printTable` for the same cells.
    package func printTable<Element>(header: [String], emptyMessage: String? = nil, rowsOf cursor: StoreCursor<Element>,
                                     row: (borrowing StoreRow, inout TableRow) -> Void) throws {
        let table = TableWriter(console: self, header: header)
        var cells = TableRow()
        try cursor.forEachRow { raw in
            cells.removeAll()
            row(raw, &cells)
            table.add(cells)
        }
        if table.rowCount == 0, let emptyMessage { return print(emptyMessage) }
        table.finish()
    }

    /// Prints the rows of `cursor` as one pretty JSON array written straight from their bytes:
    /// `element` writes each one.
    package func printJSONArray<Element>(rowsOf cursor: StoreCursor<Element>,
                                         _ element: (borrowing StoreRow, inout JSONWriter) -> Void) throws {
        var writer = JSONWriter(pretty: true)
        try cursor.writeJSONArray(&writer, element) { write($0) }
        write([0x0a])
    }

    /// Prints the rows of `cursor` as one pretty JSON array, one element at a time: the same
    /// bytes `printJSON` gives for the array of them all.
    package func printJSONArray<Element: Encodable>(_ cursor: StoreCursor<Element>) throws {
        var writer = JSONWriter(pretty: true)
        writer.beginArray()
        try cursor.forEach { element in
            try JSON.makeValue(element).write(to: &writer)
            write(writer.bytes)
            writer.bytes.removeAll(keepingCapacity: true)
        }
        writer.endArray()
        write(writer.bytes + [0x0a])
    }
}
