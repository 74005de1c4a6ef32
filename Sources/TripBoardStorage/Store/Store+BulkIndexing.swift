import TripBoardSQLite
import TripBoardModel

/// Bulk writes pay for the search index once. FTS5 writes its pending terms out at the end of
/// every statement's savepoint, so an insert trigger that indexes one row at a time costs a
/// flush per row (25 `pwrite64` calls per imported trip, most of an import's time). Inside a bulk
/// write the insert triggers are suspended and the new rows indexed at the end with one
/// statement per table — the same rows, text and detail the triggers would have written.
extension Store {
    /// The rows the search index takes per statement at the end of a bulk write.
    package static let indexBatchRows: Int64 = 10_000

    /// Runs `body` — which may insert, update and delete rows — inside the caller's write
    /// transaction with the search index's insert triggers dropped, then indexes every live row
    /// inserted meanwhile that is not indexed already (an update trigger indexes a row it
    /// changes): those past each table's largest rowid before it, `batchRows` rows a statement,
    /// and those that took the rowid of a row deleted meanwhile (SQLite gives a new row the
    /// largest rowid + 1, which a deletion can lower): a temporary trigger records the rowids
    /// deletions free at or below that largest one (a bulk write that deletes nothing never fires
    /// it, so an import's memory stays flat). Then the triggers are created again from their own
    /// text, as they were. A failure rolls all of it back with the transaction.
    ///
    /// The trigger is on deletions, not on inserts: an insert trigger, even one whose `WHEN`
    /// never holds, makes SQLite keep a statement journal of every page each `INSERT` touches,
    /// which was an eighth of an import's instructions (callgrind, 10,000 trips).
    package func indexingInsertsOnce<T>(batchRows: Int64, when enabled: Bool = true, _ body: () throws -> T) throws -> T {
        guard enabled else { return try body() }
        let triggers = try connection.statement("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name IN (?1, ?2, ?3)")
            .rows(Schema.searchedOnInsert.map { .text($0.trigger) }) { ($0.text(0), $0.text(1)) }
        guard triggers.count == Schema.searchedOnInsert.count else { return try body() }
        var before: [String: Int64] = [:]
        try connection.execute("CREATE TEMP TABLE bulk_reused_rows (bulk_offset INTEGER NOT NULL, bulk_row INTEGER NOT NULL, PRIMARY KEY (bulk_offset, bulk_row))")
        for searched in Schema.searchedOnInsert {
            let largest = try connection.integer("SELECT coalesce(max(rowid), 0) FROM \(searched.table)")
            before[searched.table] = largest
            try connection.execute("DROP TRIGGER \(searched.trigger)")
            try connection.execute("""
                CREATE TEMP TRIGGER bulk_reused_\(searched.table) AFTER DELETE ON \(searched.table) WHEN old.rowid <= \(largest)
                BEGIN INSERT OR IGNORE INTO bulk_reused_rows (bulk_offset, bulk_row) VALUES (\(searched.offset), old.rowid); END
                """)
        }
        let result = try body()
        for searched in Schema.searchedOnInsert {
            let table = searched.table
            let unindexed = "\(RecordRows.live) AND NOT EXISTS (SELECT 1 FROM search_index WHERE search_index.rowid = \(table).rowid * 4 + \(searched.offset))"
            let last = try connection.integer("SELECT coalesce(max(rowid), 0) FROM \(table)")
            let statement = try connection.statement("""
                INSERT INTO search_index (rowid, title, detail)
                SELECT rowid * 4 + \(searched.offset), \(searched.title), \(searched.detail) FROM \(table)
                WHERE rowid > ?1 AND rowid <= ?2 AND \(unindexed)
                """)
            // A statement per `batchRows` rows: FTS5 writes its pending terms once per
            // statement (cheap at this size), and what a statement keeps to undo itself — its
            // journal, in memory in a sealed store — stays bounded instead of growing with the
            // import (34 MB at 1,000,000 trips in one statement).
            var from = before[table] ?? 0
            while from < last {
                let to = min(from + batchRows, last)
                try statement.run([.integer(from), .integer(to)])
                from = to
            }
            try connection.execute("""
                INSERT INTO search_index (rowid, title, detail)
                SELECT rowid * 4 + \(searched.offset), \(searched.title), \(searched.detail) FROM \(table)
                WHERE rowid IN (SELECT bulk_row FROM bulk_reused_rows WHERE bulk_offset = \(searched.offset)) AND \(unindexed)
                """)
            try connection.execute("DROP TRIGGER temp.bulk_reused_\(table)")
        }
        try connection.execute("DROP TABLE temp.bulk_reused_rows")
        for (_, sql) in triggers { try connection.execute(sql) }
        return result
    }
}
