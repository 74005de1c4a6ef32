/// The rows of one query, handed out one at a time as its statement steps: a list of a million
/// trips goes from SQLite to the output without ever being whole in memory.
///
/// `prepare` runs inside the read transaction that `forEach` opens (when none is open yet), so
/// a check it makes first — that a trip exists before its places are listed — sees the same
/// snapshot as the rows. A list whose order no one index gives (dated bookings, then undated
/// ones) reads several statements in turn (`parts`), each prepared when the one before it is done.
public struct RowCursor<Element> {
    /// Prepares one statement of the cursor and gives the values to bind to it.
    package typealias Part = () throws -> (statement: Statement, values: [SQLValue])

    package let connection: Connection
    /// The statements whose rows the cursor hands out, one after the other, in one snapshot.
    package let parts: [Part]
    package let transform: (Statement) throws -> Element
    /// Rows this refuses are skipped (a filter SQL cannot say: `booking list --trip --upcoming`).
    package var isIncluded: ((Statement) -> Bool)?
    /// At most this many rows, over every part; the walk stops there, leaving the rest unread.
    package var limit: Int?

    package init(connection: Connection, parts: [Part], transform: @escaping (Statement) throws -> Element) {
        self.connection = connection
        self.parts = parts
        self.transform = transform
    }

    package init(connection: Connection, prepare: @escaping Part, transform: @escaping (Statement) throws -> Element) {
        self.init(connection: connection, parts: [prepare], transform: transform)
    }

    /// The rows of `sql` with `values` bound, each made into an `Element` by `transform`.
    package init(connection: Connection, sql: String, _ values: [SQLValue] = [], transform: @escaping (Statement) throws -> Element) {
        self.init(connection: connection, prepare: { (try connection.statement(sql), values) }, transform: transform)
    }

    /// Hands every row to `body` in order, as it is read. The statement is reset afterwards
    /// (and when `body` throws), so it holds no read snapshot.
    public func forEach(_ body: (Element) throws -> Void) throws {
        try walk { row in try body(try transform(row)) }
    }

    /// Every row, in one array (for callers that need them all at once, and tests).
    public func collect() throws -> [Element] {
        var elements: [Element] = []
        try forEach { elements.append($0) }
        return elements
    }

    /// Steps through the parts in one read transaction, handing `body` each row `isIncluded`
    /// keeps, up to `limit`; every statement is reset when it is left, done or not.
    package func walk(_ body: (Statement) throws -> Void) throws {
        try connection.readTransaction {
            var remaining = limit ?? .max
            for part in parts where remaining > 0 {
                let (statement, values) = try part()
                defer { statement.reset() }
                try statement.bind(values)
                while remaining > 0, try statement.step() {
                    if let isIncluded, !isIncluded(statement) { continue }
                    remaining -= 1
                    try body(statement)
                }
            }
        }
    }
}
