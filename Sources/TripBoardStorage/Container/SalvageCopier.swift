import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// The copying part of a salvage: every table of the damaged store (`main`) into the new one
/// (attached as `salvage`), keeping each row's rowid, in batches while the pages read, row by row
/// around a damaged page, and past it by probing for the next rowid that reads.
struct SalvageCopier {
    let connection: Connection
    let clock: @Sendable () -> Timestamp
    static let batch = 1000
    /// Parents first, so that the report's order is the schema's; the foreign keys are checked
    /// once everything is in (they are off on this connection meanwhile).
    static let order = ["trips", "places", "bookings", "attachments"]

    init(connection: Connection, clock: @escaping @Sendable () -> Timestamp) {
        self.connection = connection
        self.clock = clock
    }

    mutating func copyEverything() throws -> SalvageReport {
        try connection.execute("PRAGMA foreign_keys = OFF")
        let tables = try connection.statement("SELECT name FROM salvage.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND NOT \(Schema.isSearchTable)")
            .rows { $0.text(0) }
            .sorted { (Self.order.firstIndex(of: $0) ?? Self.order.count, $0) < (Self.order.firstIndex(of: $1) ?? Self.order.count, $1) }
        var report = SalvageReport(outcome: .salvaged)
        for table in tables { report.tables.append(try copy(table)) }
        report.placeholders = try SalvagePlaceholders(connection: connection, stamp: clock().utcStamp).recreateLostParents()
        // The next sync compares the server's list of records with this store's, so that what the
        // damage took and the server has comes back (docs/sync.md, When the server forgets).
        try connection.execute("UPDATE salvage.sync_account SET last_compared_at = NULL")
        let problems = try connection.statement("PRAGMA salvage.integrity_check").rows { $0.text(0) }.filter { $0 != "ok" }
        let dangling = try connection.statement("PRAGMA salvage.foreign_key_check").rows { "\($0.text(0)) row \($0.integer(1))" }
        guard problems.isEmpty, dangling.isEmpty else {
            throw StoreError.invalidData("the salvaged store did not verify (\((problems + dangling).prefix(3).joined(separator: "; "))); nothing was changed")
        }
        return report
    }

    /// Copies one table; what cannot be read is skipped and counted.
    func copy(_ table: String) throws -> SalvageReport.Table {
        let columns = try connection.statement("SELECT name FROM pragma_table_info(?1, 'salvage')").rows([.text(table)]) { "\"\($0.text(0))\"" }
            .joined(separator: ", ")
        let insert = "INSERT INTO salvage.\"\(table)\" (rowid, \(columns)) SELECT rowid, \(columns) FROM main.\"\(table)\" WHERE rowid > ?1 ORDER BY rowid LIMIT ?2"
        var result = SalvageReport.Table(table: table, copied: 0, unreadableRanges: [], lostAtMost: 0, lost: nil, refused: 0)
        var last: Int64 = 0
        while true {
            if let copied = try attempt(insert, after: last, limit: Self.batch) {
                if copied == 0 { break }
                result.copied += copied
                last = try connection.integer("SELECT max(rowid) FROM salvage.\"\(table)\"")
                continue
            }
            // The batch met a page that does not read (or a row that breaks a rule): row by row.
            if let copied = try attempt(insert, after: last, limit: 1) {
                if copied == 0 { break }
                result.copied += 1
                last = try connection.integer("SELECT max(rowid) FROM salvage.\"\(table)\"")
                continue
            }
            // Seek the next row directly (a descent from the root, unlike stepping on from `last`):
            // either it reads — then copy exactly that row — or the search steps over damage.
            var next = try firstReadable(table, from: last + 1)
            if next == nil { next = try nextReadableRowid(in: table, after: last) }
            guard let row = next, row != Int64.max else {
                result.unreadableRanges.append("after \(last)")
                break
            }
            if row > last + 1 {
                result.unreadableRanges.append("\(last + 1)–\(row - 1)")
                result.lostAtMost += Int(clamping: row - 1 - last)
            }
            if try attempt(exactly: row, of: table, columns: columns) { result.copied += 1 } else { result.refused += 1 }
            last = row
        }
        // The widths of the ranges bound what they held, except a range after the last row read:
        // the primary key's index, which lists every row, counts them when it still reads.
        if !result.unreadableRanges.isEmpty, let indexed = try rowsListedByPrimaryKey(table) {
            result.lost = max(0, indexed - result.copied - result.refused)
            result.lostAtMost = max(result.lostAtMost, result.lost ?? 0)
        }
        return result
    }

    /// How many rows the primary-key index of `table` in the damaged store lists, or nil when
    /// the table has none or it does not read whole.
    func rowsListedByPrimaryKey(_ table: String) throws -> Int? {
        let indexes = try connection.statement("""
            SELECT name FROM main.sqlite_master WHERE type = 'index' AND tbl_name = ?1 AND name LIKE 'sqlite_autoindex_%' ORDER BY name LIMIT 1
            """).rows([.text(table)]) { $0.text(0) }
        guard let index = indexes.first else { return nil }
        let statement = try connection.statement("SELECT count(*) FROM main.\"\(table)\" INDEXED BY \"\(index)\"")
        do {
            return try statement.rows { Int($0.integer(0)) }.first
        } catch let error as SQLiteError where error.isCorruption {
            statement.reset()
            return nil
        }
    }

    /// Copies the one row `rowid`, which reads; false when the schema refuses it (a damaged value).
    func attempt(exactly rowid: Int64, of table: String, columns: String) throws -> Bool {
        let insert = "INSERT INTO salvage.\"\(table)\" (rowid, \(columns)) SELECT rowid, \(columns) FROM main.\"\(table)\" WHERE rowid = ?1"
        let statement = try connection.statement(insert)
        do {
            try statement.run([.integer(rowid)])
            return connection.changes == 1
        } catch let error as SQLiteError where error.isCorruption || error.code == .constraint {
            statement.reset()
            return false
        }
    }

    /// Runs the batch insert; the number of rows copied, or `nil` when it met damage (SQLite
    /// rolls the failed statement back, so nothing of it stays).
    func attempt(_ insert: String, after last: Int64, limit: Int) throws -> Int? {
        let statement = try connection.statement(insert)
        do {
            try statement.run([.integer(last), .integer(Int64(limit))])
            return connection.changes
        } catch let error as SQLiteError where error.isCorruption || error.code == .constraint {
            statement.reset()
            return nil
        }
    }

    /// The smallest rowid after `last` whose row reads whole, when reading from `last + 1` meets
    /// damage: probes `last + 2, + 3, + 5, + 9, …` (each probe descends the table's b-tree from
    /// its root, so it steps around a damaged leaf), then halves the gap between the last probe
    /// that met damage and the first that did not. `nil` when nothing after `last` reads.
    func nextReadableRowid(in table: String, after last: Int64) throws -> Int64? {
        var bad = last + 1
        var step: Int64 = 1
        var good: Int64
        while true {
            let (probe, overflow) = bad.addingReportingOverflow(step)
            if overflow { return nil }
            if try firstReadable(table, from: probe) != nil {
                good = probe
                break
            }
            bad = probe
            step = step < Int64.max / 2 ? step * 2 : Int64.max
        }
        var low = bad + 1
        while low < good {
            let middle = low + (good - low) / 2
            if try firstReadable(table, from: middle) != nil { good = middle } else { low = middle + 1 }
        }
        guard let row = try firstReadable(table, from: good), row != Int64.max else { return nil }
        return row
    }

    /// The first rowid at or after `rowid` whose row reads whole; `Int64.max` when no row
    /// follows; `nil` when reading it meets damage.
    func firstReadable(_ table: String, from rowid: Int64) throws -> Int64? {
        let statement = try connection.statement("SELECT rowid, * FROM main.\"\(table)\" WHERE rowid >= ?1 ORDER BY rowid LIMIT 1")
        do {
            // Every column is read (an overflow page may be what is damaged), not only the rowid.
            let rows = try statement.rows([.integer(rowid)]) { row in (row.integer(0), (0..<row.columnCount).map { row.blob($0).count }) }
            return rows.first?.0 ?? Int64.max
        } catch let error as SQLiteError where error.isCorruption {
            statement.reset()
            return nil
        }
    }
}
