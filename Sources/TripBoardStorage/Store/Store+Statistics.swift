/// Numbers about the store that say nothing of what it holds: for `container diagnose`.
public struct StoreStatistics: Sendable, Equatable, Codable {
    public var schemaVersion: Int64
    public var pageSize: Int64
    public var pageCount: Int64
    public var freelistCount: Int64
    public var journalMode: String
    public var counts: StoreCounts
    /// Attachment rows by `state` (`present`, `missing`, `deleting`).
    public var attachmentStates: [String: Int]
    /// Records of every kind by `sync_state`.
    public var syncStates: [String: Int]
}

extension Store {
    /// Page and record counts, in one read transaction. Nothing that names or describes a record.
    public func statistics() throws -> StoreStatistics {
        try connection.readTransaction {
            func grouped(_ sql: String) throws -> [String: Int] {
                var result: [String: Int] = [:]
                for (key, count) in try connection.statement(sql).rows({ ($0.text(0), Int($0.integer(1))) }) { result[key, default: 0] += count }
                return result
            }
            var syncStates: [String: Int] = [:]
            for table in ["trips", "places", "bookings", "attachments"] {
                syncStates.merge(try grouped("SELECT sync_state, count(*) FROM \(table) GROUP BY sync_state")) { $0 + $1 }
            }
            return StoreStatistics(
                schemaVersion: try connection.userVersion(),
                pageSize: try connection.integer("PRAGMA page_size"),
                pageCount: try connection.integer("PRAGMA page_count"),
                freelistCount: try connection.integer("PRAGMA freelist_count"),
                journalMode: try connection.text("PRAGMA journal_mode") ?? "",
                counts: try counts(),
                attachmentStates: try grouped("SELECT state, count(*) FROM attachments GROUP BY state"),
                syncStates: syncStates)
        }
    }
}
