public import TripBoardSyncProtocol
import TripBoardSystem

/// What `sync-agent` does with each request (`AgentRequest`): the only code that speaks SQL to
/// the sync server. It keeps one connection and, between `pullBegin` and `pullEnd`, one open
/// REPEATABLE READ transaction, so a pull's pages are one consistent read.
public final class AgentService {
    private var connection: PostgresConnection?
    /// What `connect` was given, for connecting again after an answer that broke the protocol
    /// (`reconnect`); the password stays in this process, as the connection's does.
    private var credentials: (conninfo: String, password: String?)?
    private var reconnect = false
    private var pull: (zone: String, cursor: Int64, high: Int64, liveOnly: Bool)?
    /// The blob being uploaded in the open transaction, and the next chunk it expects.
    var upload: (zone: String, name: String, chunkCount: Int, next: Int)?

    public init() {}

    /// The answer to `request`; never throws (a failure is an answer).
    public func handle(_ request: AgentRequest) -> AgentResponse {
        do {
            return try perform(request)
        } catch {
            return failed(error)
        }
    }

    /// The answer to `request` as the JSON frame to send. A page of a pull is written straight
    /// into bytes, each record's fields as the server's text of them (jsonb, so valid JSON; `app`
    /// checks what they hold): no decoding and encoding again of every sealed field here.
    public func answer(_ request: AgentRequest) throws -> [UInt8] {
        if connection == nil, reconnect, request.operation != .connect, let credentials {
            reconnect = false
            do {
                connection = try PostgresConnection(conninfo: credentials.conninfo, password: credentials.password)
            } catch {
                return try JSON.encode(failed(error), pretty: false)
            }
        }
        guard let connection else { return try JSON.encode(handle(request), pretty: false) }
        switch request {
        case .pullPage(let limit):
            guard let current = pull else { break }
            return try frameOrFailure { () throws(PostgresError) in try page(limit: limit, current, connection) }
        case .fetch(let zone, let records):
            guard records.count <= AgentLimits.batchRecords, pull == nil, upload == nil else {
                return try JSON.encode(AgentResponse.failed(.badRequest,
                    "fetch needs a zone and at most \(AgentLimits.batchRecords) records, outside a pull or upload"), pretty: false)
            }
            return try frameOrFailure { () throws(PostgresError) in try fetch(records, zone: zone, connection) }
        case .push(let zone, let mutationID, let records):
            guard records.count <= AgentLimits.batchRecords, records.allSatisfy({ $0.blob.map(Self.isBlobName) ?? true }) else {
                return try JSON.encode(AgentResponse.failed(.badRequest,
                    "push needs a zone, a mutation id and at most \(AgentLimits.batchRecords) records, each naming a blob by its hash if any"),
                    pretty: false)
            }
            return try frameOrFailure { () throws(PostgresError) in try push(records, zone: zone, mutationID: mutationID, connection) }
        default:
            break
        }
        return try JSON.encode(handle(request), pretty: false)
    }

    /// The frame `body` writes, or the failure it met as one.
    private func frameOrFailure(_ body: () throws(PostgresError) -> [UInt8]) throws -> [UInt8] {
        do {
            return try body()
        } catch {
            return try JSON.encode(failed(error), pretty: false)
        }
    }

    private func failed(_ error: PostgresError) -> AgentResponse {
        if connection?.broken == true {
            // An answer broke the protocol and was left unread: the next request connects
            // afresh, so that what follows (this device's push) is still tried.
            connection = nil
            pull = nil
            upload = nil
            reconnect = true
        } else if error.kind == .unavailable {
            connection = nil
            pull = nil
            upload = nil
        } else if upload != nil {
            // The upload's transaction is aborted: nothing of the blob stays.
            do {
                try connection?.execute("ROLLBACK")
            } catch {
                // The connection went with it: the next request connects again.
                if error.kind == .unavailable { connection = nil; pull = nil }
            }
            upload = nil
        }
        return .failed(error.kind, error.message)
    }

    /// The next page of the open read: at most `limit` records, and fewer once their fields
    /// reach `AgentLimits.batchBytes` (after the first), so that a frame stays far below the limit.
    private func page(limit: Int?, _ current: (zone: String, cursor: Int64, high: Int64, liveOnly: Bool),
                      _ connection: PostgresConnection) throws(PostgresError) -> [UInt8] {
        let limit = min(max(limit ?? AgentLimits.batchRecords, 1), AgentLimits.batchRecords)
        // The page ends in the query itself once the fields reach `batchBytes` (after its first
        // record), and a record whose fields exceed `recordBytes` comes without them: however
        // large the server's rows, no more than that leaves it.
        let rows = try connection.query(Self.boundedRecords(from: """
            SELECT kind, id, version, change_sequence, deleted, fields, change_sequence AS position, \(Self.written) FROM tripboard.records
            WHERE zone = $1 AND change_sequence > $2 AND change_sequence <= $3\(current.liveOnly ? " AND NOT deleted" : "")
            ORDER BY change_sequence LIMIT $4
            """), [current.zone, String(current.cursor), String(current.high), String(limit), String(AgentLimits.batchBytes),
                   String(AgentLimits.recordBytes)], prepared: true)
        var (writer, last) = try Self.recordsFrame(rows)
        if let last { pull?.cursor = last }
        let total = rows.first.flatMap { $0[7] }.flatMap { Int($0) } ?? 0
        writer.key("more")
        writer.bool(rows.count < total || total == limit)
        writer.key("highSequence")
        writer.integer(current.high)
        writer.endObject()
        return writer.bytes
    }

    /// When the server wrote a row, as `WireRecord.written` says it (its `updated_at`, in
    /// microseconds since 1970).
    static let writtenValue = "(extract(epoch FROM updated_at) * 1000000)::bigint"
    static let written = writtenValue + " AS written"

    /// `inner` (rows of kind, id, version, change_sequence, deleted, fields, a position to
    /// order by and `written`) bounded: its rows up to the one whose fields bring the total past
    /// `bytes` (a parameter; the first row always), each row's fields as text unless they exceed
    /// `recordBytes` bytes (then NULL, and their size says why), with the size and the count of
    /// `inner`'s rows: kind, id, version, change_sequence, deleted, fields text, size, count,
    /// position, written.
    static func boundedRecords(from inner: String, bytes: String = "$5", recordBytes: String = "$6") -> String {
        """
        SELECT kind, id, version, change_sequence, deleted, CASE WHEN size > \(recordBytes)::bigint THEN NULL ELSE text END, size, total, position,
               written
        FROM (SELECT left(s.kind, 64) AS kind, left(s.id, 128) AS id, s.version, s.change_sequence, s.deleted, t.text,
                     octet_length(t.text) AS size, s.position, s.written,
                     sum(octet_length(t.text)) OVER (ORDER BY s.position ROWS UNBOUNDED PRECEDING) AS running,
                     row_number() OVER (ORDER BY s.position) AS n, count(*) OVER () AS total
              FROM (\(inner)) s CROSS JOIN LATERAL (SELECT s.fields::text AS text) t) b
        WHERE n = 1 OR running <= \(bytes)::bigint ORDER BY position
        """
    }

    /// `fetch`: the server's current copies of `records` (those it has), as a page's frame, in
    /// the order asked, bounded as a page is; `covered` says how many of the records asked this
    /// answer settles (the client asks again for the rest).
    private func fetch(_ records: [WireRecord], zone: String, _ connection: PostgresConnection) throws(PostgresError) -> [UInt8] {
        let rows = try connection.query(Self.boundedRecords(from: """
            SELECT r.kind, r.id, r.version, r.change_sequence, r.deleted, r.fields, b.position, \(Self.written) FROM tripboard.records r
            JOIN ROWS FROM (json_to_recordset($2::json) AS (kind text, id text)) WITH ORDINALITY AS b (kind, id, position)
              ON r.kind = b.kind AND r.id = b.id
            WHERE r.zone = $1
            """, bytes: "$3", recordBytes: "$4"), [zone, Self.keys(of: records), String(AgentLimits.batchBytes), String(AgentLimits.recordBytes)])
        var (writer, _) = try Self.recordsFrame(rows)
        let total = rows.first.flatMap { $0[7] }.flatMap { Int($0) } ?? 0
        // All of them when the answer holds every row the server has of them; else those up to the last one it holds.
        let covered = rows.count == total ? records.count : rows.last.flatMap { $0[8] }.flatMap { Int($0) } ?? records.count
        writer.key("more")
        writer.bool(covered < records.count)
        writer.key("covered")
        writer.integer(covered)
        writer.endObject()
        return writer.bytes
    }

    /// `records`' kinds and ids as a JSON array of `{"kind", "id"}`, for `json_to_recordset`.
    private static func keys(of records: [WireRecord]) -> String {
        var writer = JSONWriter(pretty: false, capacity: records.count * 64 + 2)
        writer.beginArray()
        for record in records {
            WireJSON.head(kind: record.kind, id: record.id, &writer)
            writer.endObject()
        }
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// A writer holding `{"records":[` and rows of `boundedRecords`, each record's fields as the
    /// server's text, the array closed and the object left open for the caller's members; the
    /// last record's sequence. A record without its fields (beyond `recordBytes`), or whose
    /// version or sequence is out of `counterRange`, is damaged server data.
    static func recordsFrame(_ rows: [[String?]]) throws(PostgresError) -> (writer: JSONWriter, last: Int64?) {
        var writer = JSONWriter(pretty: false, capacity: rows.reduce(0) { $0 + ($1[5]?.utf8.count ?? 2) + 160 })
        writer.beginObject()
        writer.key("records")
        writer.beginArray()
        var last: Int64?
        for row in rows {
            let kind = row[0] ?? "", id = row[1] ?? ""
            guard let fields = row[5] else {
                throw PostgresError(kind: .damaged, sqlState: nil,
                                    message: "record \(kind) \(id.prefix(64)) on the server has \(row[6] ?? "?") bytes of fields, more than the \(AgentLimits.recordBytes >> 20) MiB a record may have")
            }
            let version = try counter(row[2], "the version of record \(kind) \(id.prefix(64))")
            let sequence = try counter(row[3], "the change sequence of record \(kind) \(id.prefix(64))")
            WireJSON.head(kind: kind, id: id, &writer)
            writer.key("version")
            writer.integer(version)
            writer.key("sequence")
            writer.integer(sequence)
            last = sequence
            writer.key("deleted")
            writer.bool(row[4] == "t")
            writer.key("fields")
            writer.json(fields.utf8)
            if row.count > 9, let written = row[9].flatMap({ Int64($0) }) { writer.key("written"); writer.integer(written) }
            writer.endObject()
        }
        writer.endArray()
        return (writer, last)
    }

    /// A version or sequence number the server answered, within `AgentLimits.counterRange`
    /// (`minimum` 0 for a zone's counters, which start there); anything else is damaged server data.
    static func counter(_ text: String?, _ what: String, minimum: Int64 = AgentLimits.counterRange.lowerBound) throws(PostgresError) -> Int64 {
        guard let text, let value = Int64(text), value >= minimum, value <= AgentLimits.counterRange.upperBound else {
            throw PostgresError(kind: .damaged, sqlState: nil,
                                message: "\(what) on the server is \(text.map { String($0.prefix(24)) } ?? "missing"), outside 1…2^53 − 1")
        }
        return value
    }

    private func perform(_ request: AgentRequest) throws(PostgresError) -> AgentResponse {
        if case .connect(let conninfo, let password) = request { return try connect(conninfo: conninfo, password: password) }
        // No connection: never made, or dropped when it broke (`failed`). The client hears
        // "unavailable", as for the failure that dropped it, and connects again next time.
        guard let connection else {
            return .failed(.unavailable, credentials == nil ? "not connected to the server: connect first"
                                                            : "not connected to the server (the connection was lost)")
        }
        let idle = pull == nil && upload == nil
        switch request {
        case .connect:
            return .done
        case .initServer:
            return try initServer(connection)
        case .zone(let zone, let check):
            return try self.zone(zone, creatingWith: nil, check: check, connection)
        case .createZone(let zone, let keyWrap):
            return try self.zone(zone, creatingWith: keyWrap, check: ZoneCheck(), connection)
        case .purgeTombstones(let zone, let days):
            return try purgeTombstones(zone: zone, days: max(days ?? AgentLimits.tombstoneDays, AgentLimits.tombstoneDays), connection)
        case .collectBlobs(let zone):
            guard idle else { return .failed(.badRequest, "collectBlobs needs a zone, outside a pull or upload") }
            return try collectBlobs(zone: zone, connection)
        case .nameBlobs(let zone, let records):
            guard idle, records.count <= AgentLimits.blobsCollectedMaximum,
                  records.allSatisfy({ $0.version != nil && $0.blob.map(Self.isBlobName) == true }) else {
                return .failed(.badRequest, "nameBlobs needs a zone and records with a version and a blob name, outside a pull or upload")
            }
            return try nameBlobs(records, zone: zone, connection)
        case .push:
            // Answered by `answer(_:)`, which writes the results' frame itself.
            return .failed(.badRequest, "push is answered as a frame of its own")
        case .fetch:
            // Answered by `answer(_:)`, which writes the records' frame itself.
            return .failed(.badRequest, "fetch is answered as a frame of its own")
        case .requireClientVersion(let zone, let version):
            guard (1...1_000_000).contains(version), idle else {
                return .failed(.badRequest, "requireClientVersion needs a zone and a client version, outside a pull or upload")
            }
            try connection.query("UPDATE tripboard.zones SET min_client_version = greatest(min_client_version, $2::int) WHERE name = $1",
                                 [zone, String(version)])
            return .done
        case .listRecords(let zone, let afterKey, let limit):
            guard idle else { return .failed(.badRequest, "listRecords needs a zone, outside a pull or upload") }
            return try listRecords(zone: zone, after: afterKey, limit: limit, connection)
        case .pullBegin(let zone, let after, let liveOnly):
            return try pullBegin(zone: zone, after: after, liveOnly: liveOnly, connection)
        case .pullPage:
            // Answered by `answer(_:)`, which writes the page's frame itself.
            guard pull != nil else { return .failed(.badRequest, "pullPage outside a pull") }
            return .failed(.badRequest, "pullPage is answered as a frame of its own")
        case .pullEnd:
            if pull != nil { try connection.execute("COMMIT") }
            pull = nil
            return .done
        case .listen:
            try connection.execute("LISTEN tripboard_changes")
            return .done
        case .awaitChange(let zone, let seconds):
            guard idle else { return .failed(.badRequest, "awaitChange needs a zone, outside a pull or upload") }
            return .changeAwaited(changed: try connection.notifications(waitingUpTo: min(max(seconds, 0), 30)).contains(zone))
        case .blobBegin, .blobChunk, .blobEnd, .blobRead:
            guard pull == nil else { return .failed(.badRequest, "blob operations do not belong inside a pull") }
            return try blob(request, connection)
        }
    }

    /// `connect`: opens the connection the other operations use; answers the server's clock.
    private func connect(conninfo: String, password: String?) throws(PostgresError) -> AgentResponse {
        guard !conninfo.isEmpty else { return .failed(.badRequest, "connect needs a conninfo") }
        let connection = try PostgresConnection(conninfo: conninfo, password: password)
        self.connection = connection
        credentials = (conninfo, password)
        return .connected(serverTime: try connection.query(
            #"SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#).first?.first ?? nil)
    }

    /// `zone` and `createZone` (with the key wrap): the zone as the server has it (made first
    /// for `createZone`), and the answers to the device's `SyncCheck`.
    private func zone(_ zone: String, creatingWith keyWrap: String?, check: ZoneCheck,
                      _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        try requireSchema(connection)
        if let wrap = keyWrap {
            try connection.query("""
                INSERT INTO tripboard.zones (name, epoch, key_wrap) VALUES ($1, gen_random_uuid()::text, $2)
                ON CONFLICT (name) DO NOTHING
                """, [zone, wrap])
        }
        var answer = ZoneAnswer(zone: try zoneInfo(zone, connection))
        if let mutation = check.mutation {
            answer.mutationKnown = try !connection.query(
                "SELECT 1 FROM tripboard.mutations WHERE zone = $1 AND mutation_id = $2", [zone, mutation]).isEmpty
        }
        if let record = check.record, let version = record.version {
            // Still at that version and sequence, or changed since: a later version numbered
            // after the token (one numbered at or below it was written after the server went
            // back, and the feed past the token would never list it). The same version at another
            // sequence was written again after the server went back: a record sent again as new
            // after a restore starts at the version the lost one had. The stamps tell content
            // apart where numbers are handed out again, and the write time a copy sent again
            // whole, with the stamps it had, from the one the device saw.
            answer.recordKnown = try !connection.query("""
                SELECT 1 FROM tripboard.records r WHERE zone = $1 AND kind = $2 AND id = $3
                  AND ((version > $4 AND ($5::bigint IS NULL OR change_sequence > $5::bigint))
                       OR (version = $4 AND ($5::bigint IS NULL OR (change_sequence = $5::bigint
                           AND ($7::bigint IS NULL OR \(Self.writtenValue) = $7::bigint)
                           AND $6::text IS NOT DISTINCT FROM
                      (SELECT coalesce(string_agg(key || '=' || (value->>'stamp'), ',' ORDER BY key COLLATE "C"), '') FROM jsonb_each(r.fields))))))
                """, [zone, record.kind, record.id, String(version), record.sequence.map(String.init), check.recordStamps,
                      record.written.map(String.init)]).isEmpty
        }
        return .zone(answer)
    }

    /// `pullBegin`: opens the pull's one consistent read; answers the zone's sequence in it.
    private func pullBegin(zone: String, after: Int64, liveOnly: Bool, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        guard pull == nil else { return .failed(.badRequest, "pullBegin needs a zone, outside a pull") }
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        guard let high = try connection.query("SELECT change_sequence FROM tripboard.zones WHERE name = $1", [zone]).first?.first ?? nil else {
            try connection.execute("ROLLBACK")  // a failure is the connection's: `failed` resets it
            return .failed(.badRequest, "zone \(zone) does not exist on the server")
        }
        pull = (zone, after, Int64(high) ?? 0, liveOnly)
        return .pullBegun(highSequence: Int64(high) ?? 0)
    }

    /// Compact JSON for a jsonb parameter; a value that cannot be encoded aborts the transaction
    /// (never `{}` in its place, which would store a record without its fields).
    private static func encoded(_ value: some Encodable) throws(PostgresError) -> String {
        do {
            return String(decoding: try JSON.encode(value, pretty: false), as: UTF8.self)
        } catch {
            throw PostgresError(kind: .server, sqlState: nil, message: "could not encode a value for the server: \(error)")
        }
    }

    private static func decoded<T: Decodable>(_ type: T.Type, _ text: String, what: String) throws(PostgresError) -> T {
        do {
            return try JSON.decode(type, from: Array(text.utf8))
        } catch {
            throw PostgresError(kind: .server, sqlState: nil, message: "\(what) cannot be read: \(error)")
        }
    }

    private func initServer(_ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        let (version, upgraded) = try connection.transaction { () throws(PostgresError) -> (Int, Bool) in
            try connection.query("SELECT pg_advisory_xact_lock($1)", [String(ServerSchema.lockKey)])
            try connection.execute("""
                CREATE SCHEMA IF NOT EXISTS tripboard;
                CREATE TABLE IF NOT EXISTS tripboard.schema_version (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL);
                INSERT INTO tripboard.schema_version (version) VALUES (0) ON CONFLICT DO NOTHING
                """)
            let found = try schemaVersion(connection)
            guard found < ServerSchema.currentVersion else { return (found, false) }
            for step in found..<ServerSchema.currentVersion {
                try connection.execute(ServerSchema.migrations[step])
            }
            try connection.query("UPDATE tripboard.schema_version SET version = $1", [String(ServerSchema.currentVersion)])
            return (ServerSchema.currentVersion, true)
        }
        return .schemaInstalled(version: version, upgraded: upgraded)
    }

    private func requireSchema(_ connection: PostgresConnection) throws(PostgresError) {
        let version: Int
        do throws(PostgresError) {
            version = try schemaVersion(connection)
        } catch {
            if error.kind == .schema { version = 0 } else { throw error }
        }
        guard version >= ServerSchema.currentVersion else {
            throw PostgresError(kind: .schema, sqlState: nil, message: version == 0
                ? "the server has no TripBoard schema; run `app sync init-server --server …` first"
                : "the server's TripBoard schema is at version \(version), older than this client's \(ServerSchema.currentVersion); run `app sync init-server`")
        }
    }

    private func schemaVersion(_ connection: PostgresConnection) throws(PostgresError) -> Int {
        let value = try connection.query("SELECT version FROM tripboard.schema_version").first?.first ?? nil
        return value.flatMap { Int($0) } ?? 0
    }

    private func zoneInfo(_ zone: String, _ connection: PostgresConnection) throws(PostgresError) -> ZoneInfo? {
        // Text the server keeps is cut in the query to what an honest row can hold (a longer key
        // wrap then fails to open on the device: the zone's key cannot be trusted).
        guard let row = try connection.query("""
            SELECT left(name, 65), left(epoch, 65), change_sequence, left(key_wrap, 4097), min_client_version, purged_through
            FROM tripboard.zones WHERE name = $1
            """, [zone]).first
        else { return nil }
        let sequence = try Self.counter(row[2], "zone \(zone)'s change sequence", minimum: 0)
        let purged = try Self.counter(row[5], "zone \(zone)'s purged_through", minimum: 0)
        guard purged <= sequence, let minimum = row[4].flatMap({ Int($0) }), (1...1_000_000).contains(minimum) else {
            throw PostgresError(kind: .damaged, sqlState: nil, message: "zone \(zone)'s counters on the server contradict each other")
        }
        return ZoneInfo(name: row[0] ?? zone, epoch: row[1] ?? "", changeSequence: sequence,
                        keyWrap: row[3] ?? "", minClientVersion: minimum, purgedThrough: purged)
    }

    /// Removes the zone's tombstones last written more than `days` ago, in one transaction with
    /// the zone's counter row locked (as a push), and raises `purged_through` to the highest
    /// change sequence removed. Live records are never touched.
    private func purgeTombstones(zone: String, days: Int, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        try connection.transaction { () throws(PostgresError) -> AgentResponse in
            guard try !connection.query("SELECT 1 FROM tripboard.zones WHERE name = $1 FOR UPDATE", [zone]).isEmpty else {
                return .failed(.badRequest, "zone \(zone) does not exist on the server")
            }
            let row = try connection.query("""
                WITH purged AS (
                    DELETE FROM tripboard.records WHERE zone = $1 AND deleted AND updated_at < now() - make_interval(days => $2::int)
                    RETURNING change_sequence)
                SELECT count(*), coalesce(max(change_sequence), 0) FROM purged
                """, [zone, String(days)]).first
            let count = Int(row?[0] ?? "0") ?? 0
            if count > 0 {
                try connection.query("UPDATE tripboard.zones SET purged_through = greatest(purged_through, $2::bigint) WHERE name = $1",
                                     [zone, row?[1] ?? "0"])
            }
            return .tombstonesPurged(count)
        }
    }

    /// One batch in one transaction: the zone's counter row locked first (which also serialises
    /// retries of the same mutation id), the mutation id looked up, then the current versions of
    /// the whole batch read and locked in one statement (`SELECT … FOR UPDATE`), each record
    /// checked against its expected version in batch order and numbered from the counter, and
    /// every record that matched written by one `INSERT … SELECT FROM jsonb_to_recordset(…) ON
    /// CONFLICT … DO UPDATE` (one more per repetition of a record within the batch, in order);
    /// the results stored under the mutation id in the same transaction. The rows go as `jsonb`:
    /// parsed once, each record's `fields` taken out of it as they are, where `json_to_recordset`
    /// lexed the text and then each `fields` object again as `jsonb` — half of PostgreSQL's time
    /// in a push of 100,000 records was parsing JSON.
    private func push(_ records: [WireRecord], zone: String, mutationID: String,
                      _ connection: PostgresConnection) throws(PostgresError) -> [UInt8] {
        try connection.transaction { () throws(PostgresError) -> [UInt8] in
            guard let zoneRow = try connection.query(
                "SELECT change_sequence, purged_through FROM tripboard.zones WHERE name = $1 FOR UPDATE", [zone], prepared: true).first,
                  let counter = zoneRow[0] else {
                return try Self.frame(.failed(.badRequest, "zone \(zone) does not exist on the server"))
            }
            // A record new to the server starts above every version a purged tombstone had (a
            // version never exceeds the sequence it was written at), so a device that still has
            // the old one in its trash takes the new one for newer.
            let firstVersion = (Int64(zoneRow[1] ?? "0") ?? 0) + 1
            if let stored = try connection.query(
                "SELECT left(results::text, $3::int) FROM tripboard.mutations WHERE zone = $1 AND mutation_id = $2",
                [zone, mutationID, String(AgentLimits.resultBytes / 4)], prepared: true).first?.first ?? nil {
                let results = try Self.decoded([PushResult].self, stored, what: "the stored results of mutation \(mutationID)")
                return try Self.frame(.pushed(PushAnswer(results: results, replayed: true)))
            }
            let current = try Self.lockedVersions(of: records, zone: zone, connection)
            let start = try Self.counter(counter, "zone \(zone)'s change sequence", minimum: 0)
            guard start <= AgentLimits.counterRange.upperBound - Int64(records.count), firstVersion <= start + 1 else {
                throw PostgresError(kind: .damaged, sqlState: nil, message: "zone \(zone)'s counters on the server are out of range")
            }
            let (results, layers, sequence) = Self.numbered(records, current: current, counter: start, firstVersion: firstVersion)
            let missingBlobs = try Self.touchBlobs(of: records, results, zone: zone, connection)
            try Self.write(layers, zone: zone, connection)
            try connection.query("UPDATE tripboard.zones SET change_sequence = $2 WHERE name = $1", [zone, String(sequence)], prepared: true)
            let stored = WireJSON.results(results)
            try connection.query("INSERT INTO tripboard.mutations (zone, mutation_id, results) VALUES ($1, $2, $3::jsonb)",
                                 [zone, mutationID, String(decoding: stored, as: UTF8.self)], prepared: true)
            if sequence > (Int64(counter) ?? 0) { try connection.query("SELECT pg_notify('tripboard_changes', $1)", [zone], prepared: true) }
            var frame = JSONWriter(pretty: false, capacity: stored.count + missingBlobs.count * 67 + 64)
            frame.beginObject()
            frame.key("replayed")
            frame.bool(false)
            frame.key("results")
            frame.json(stored)
            if !missingBlobs.isEmpty {
                frame.key("missingBlobs")
                frame.beginArray()
                for name in missingBlobs { frame.string(name) }
                frame.endArray()
            }
            frame.endObject()
            return frame.bytes
        }
    }

    /// The server's versions of the batch's records, their rows locked (`SELECT … FOR UPDATE`)
    /// in one statement, by `kind/id`.
    private static func lockedVersions(of records: [WireRecord], zone: String,
                                       _ connection: PostgresConnection) throws(PostgresError) -> [String: Int64] {
        let keys = Self.keys(of: records)
        var current: [String: Int64] = [:]
        let counterRange = AgentLimits.counterRange
        for row in try connection.query("""
            SELECT r.kind, r.id, r.version FROM tripboard.records r
            JOIN json_to_recordset($2::json) AS b (kind text, id text) ON r.kind = b.kind AND r.id = b.id
            WHERE r.zone = $1 FOR UPDATE OF r
            """, [zone, keys], prepared: true) {
            // A version at the top of the range cannot take one more write.
            let version = try counter(row[2], "the version of record \(row[0] ?? "") \(row[1] ?? "")")
            guard version < counterRange.upperBound else {
                throw PostgresError(kind: .damaged, sqlState: nil, message: "the version of record \(row[0] ?? "") \(row[1] ?? "") on the server is out of range")
            }
            current[(row[0] ?? "") + "/" + (row[1] ?? "")] = version
        }
        return current
    }

    /// Each record of a batch checked against its expected version in batch order (a record
    /// repeated in the batch is checked against its earlier write) and numbered from the counter: the results, the rows to
    /// write as JSON arrays in layers, and the last sequence number.
    private static func numbered(_ records: [WireRecord], current: [String: Int64], counter: Int64,
                                 firstVersion: Int64) -> (results: [PushResult], layers: [String], sequence: Int64) {
        var current = current
        var sequence = counter
        var results: [PushResult] = []
        results.reserveCapacity(records.count)
        // Rows to write, by how many times their record was written before in this batch:
        // one statement may not change the same row twice.
        var layers: [JSONWriter] = []
        var writes: [String: Int] = [:]
        for record in records {
            let key = record.kind + "/" + record.id
            let version = current[key]
            guard version == record.expectedVersion else {
                results.append(PushResult(kind: record.kind, id: record.id, status: .conflict, version: version ?? 0, sequence: nil))
                continue
            }
            sequence += 1
            let next = version.map { $0 + 1 } ?? firstVersion
            current[key] = next
            var fields = JSONWriter(pretty: false)
            WireJSON.fields(record.fields, &fields)
            let layer = writes[key, default: 0]
            writes[key] = layer + 1
            if layer == layers.count {
                var array = JSONWriter(pretty: false, capacity: 1 << 12)
                array.beginArray()
                layers.append(array)
            }
            WireJSON.head(kind: record.kind, id: record.id, &layers[layer])
            layers[layer].key("version")
            layers[layer].integer(next)
            layers[layer].key("sequence")
            layers[layer].integer(sequence)
            layers[layer].key("deleted")
            layers[layer].bool(record.deleted)
            layers[layer].key("byte_count")
            layers[layer].integer(fields.bytes.count)
            layers[layer].key("fields")
            layers[layer].json(fields.bytes)
            if let blob = record.blob { layers[layer].key("blob"); layers[layer].string(blob) }
            layers[layer].endObject()
            results.append(PushResult(kind: record.kind, id: record.id, status: .applied, version: next, sequence: sequence))
        }
        return (results, layers.map { layer in
            var layer = layer
            layer.endArray()
            return String(decoding: layer.bytes, as: UTF8.self)
        }, sequence)
    }

    /// Writes the batch's rows, one statement per layer.
    private static func write(_ layers: [String], zone: String, _ connection: PostgresConnection) throws(PostgresError) {
        for layer in layers {
            // A deletion keeps only what it carries (its sealed `deletion`: no content); a live
            // write keeps the fields it does not name (a newer client's, say) — unless it revives
            // a tombstone, whose fields were the deletion's.
            try connection.query("""
                INSERT INTO tripboard.records AS r (zone, kind, id, version, change_sequence, deleted, fields, byte_count, blob)
                SELECT $1, b.kind, b.id, b.version, b.sequence, b.deleted, b.fields, b.byte_count, b.blob
                FROM jsonb_to_recordset($2::jsonb) AS b (kind text, id text, version bigint, sequence bigint, deleted boolean, fields jsonb,
                                                      byte_count integer, blob text)
                ON CONFLICT (zone, kind, id) DO UPDATE SET version = excluded.version,
                    change_sequence = excluded.change_sequence, deleted = excluded.deleted, blob = coalesce(excluded.blob, r.blob),
                    fields = CASE WHEN excluded.deleted OR r.deleted THEN excluded.fields ELSE r.fields || excluded.fields END,
                    byte_count = octet_length((CASE WHEN excluded.deleted OR r.deleted THEN excluded.fields ELSE r.fields || excluded.fields END)::text),
                    updated_at = now()
                """, [zone, layer], prepared: true)
        }
    }

    private static func frame(_ response: AgentResponse) throws(PostgresError) -> [UInt8] {
        do {
            return try JSON.encode(response, pretty: false)
        } catch {
            throw PostgresError(kind: .server, sqlState: nil, message: "could not encode an answer: \(error)")
        }
    }
}
