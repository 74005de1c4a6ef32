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
            SELECT kind, id, version, deleted FROM tripboard.records
            WHERE zone = $1 AND (kind, id) > ($2, $3) ORDER BY kind, id LIMIT $4
            """, [zone, parts[0], parts[1], String(limit)], prepared: true)
        var response = AgentResponse()
        response.records = rows.map { row in
            WireRecord(kind: row[0] ?? "", id: row[1] ?? "", version: row[2].flatMap { Int64($0) }, deleted: row[3] == "t", fields: [:])
        }
        response.more = rows.count == limit
        return response
    }
}
