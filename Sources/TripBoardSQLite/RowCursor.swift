/// The rows of one query, handed out one at a time as its statement steps: a list of a million
/// trips goes from SQLite to the output without ever being whole in memory.
///
/// `prepare` runs inside the read transaction that `forEach` opens (when none is open yet), so
/// a check it makes first — that a trip exists before its places are listed — sees the same
/// snapshot as the rows.
public struct RowCursor<Element> {
    package let connection: Connection
    package let prepare: () throws -> (statement: Statement, values: [SQLValue])
    package let transform: (Statement) throws -> Element

    package init(connection: Connection, prepare: @escaping () throws -> (statement: Statement, values: [SQLValue]),
         transform: @escaping (Statement) throws -> Element) {
        self.connection = connection
        self.prepare = prepare
        self.transform = transform
    }

    /// The rows of `sql` with `values` bound, each made into an `Element` by `transform`.
    package init(connection: Connection, sql: String, _ values: [SQLValue] = [], transform: @escaping (Statement) throws -> Element) {
        self.init(connection: connection, prepare: { (try connection.statement(sql), values) }, transform: transform)
    }

    /// Hands every row to `body` in order, as it is read. The statement is reset afterwards
    /// (and when `body` throws), so it holds no read snapshot.
    public func forEach(_ body: (Element) throws -> Void) throws {
        try connection.readTransaction {
            let (statement, values) = try prepare()
            try statement.forEachRow(values) { row in try body(try transform(row)) }
        }
    }

    /// Every row, in one array (for callers that need them all at once, and tests).
    public func collect() throws -> [Element] {
        var elements: [Element] = []
        try forEach { elements.append($0) }
        return elements
    }
}
