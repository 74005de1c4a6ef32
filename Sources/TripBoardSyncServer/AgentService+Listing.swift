import TripBoardSyncProtocol

extension AgentService {
    /// `listRecords`: one page of the zone's records in (kind, id) order after `after`
    /// (`kind/id`), at most `AgentLimits.listRecords`: kind, id, version and whether it is a
    /// tombstone, no fields. The primary key's index gives them in that order.
    func listRecords(zone: String, after: String?, limit: Int?, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        let limit = min(max(limit ?? AgentLimits.listRecords, 1), AgentLimits.listRecords)
        let parts = after.map { $0.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init) } ?? ["", ""]
        guard parts.count == 2 else { return .failed(.badRequest, "listRecords needs afterKey as kind/id") }
        let rows = try connection.query("""
            SELECT left(kind, 65), left(id, 129), version, deleted FROM tripboard.records
            WHERE zone = $1 AND (kind, id) > ($2, $3) ORDER BY kind, id LIMIT $4
            """, [zone, parts[0], parts[1], String(limit)], prepared: true)
        var records: [WireRecord] = []
        records.reserveCapacity(rows.count)
        for row in rows {
            guard (row[0] ?? "").utf8.count <= 64, (row[1] ?? "").utf8.count <= 128 else {
                throw PostgresError(kind: .damaged, sqlState: nil, message: "a record on the server has a kind or id longer than any TripBoard makes")
            }
            let version = try Self.counter(row[2], "the version of record \(row[0] ?? "") \(row[1] ?? "")")
            records.append(WireRecord(kind: row[0] ?? "", id: row[1] ?? "", version: version, deleted: row[3] == "t", fields: [:]))
        }
        return .recordList(records, more: rows.count == limit)
    }
}
