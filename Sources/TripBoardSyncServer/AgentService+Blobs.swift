import TripBoardSyncProtocol
import TripBoardSystem
import TripBoardSodium
import TripBoardKeys

/// Blobs (attachment files, sealed by `app` with secretstream before they get here): uploaded in
/// one transaction with the blob's row locked, so a blob is on the server whole or not at all
/// and two devices uploading the same one take turns; read chunk by chunk once complete.
extension AgentService {
    func blob(_ request: AgentRequest, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        switch request {
        case .blobBegin(let zone, let name, let chunkCount, let byteCount):
            return try blobBegin(zone: zone, name: name, chunkCount: chunkCount, byteCount: byteCount, connection)
        case .blobChunk(let index, let data):
            guard let current = upload, index == current.next, current.next < current.chunkCount,
                  let bytes = Base64.decodePublicUnpadded(Array(data.utf8)) else {
                return .failed(.badRequest, "blobChunk needs the next chunk of an upload, in base64")
            }
            try connection.query("INSERT INTO tripboard.blob_chunks (zone, name, chunk_index, bytes) VALUES ($1, $2, $3, $4::bytea)",
                                 [current.zone, current.name, String(current.next), "\\x" + Sodium.hexString(bytes)])
            upload?.next += 1
            return .done
        case .blobEnd:
            guard let current = upload, current.next == current.chunkCount else {
                return .failed(.badRequest, "blobEnd before every chunk of the upload")
            }
            try connection.query("UPDATE tripboard.blobs SET complete = true, last_used = now() WHERE zone = $1 AND name = $2",
                                 [current.zone, current.name])
            try connection.execute("COMMIT")
            upload = nil
            return .done
        case .blobRead(let zone, let name, let index):
            return try blobRead(zone: zone, name: name, index: index, connection)
        default:
            return .failed(.badRequest, "\(request.operation.rawValue) is not a blob operation")
        }
    }

    /// `blobBegin`: opens the upload's transaction with the blob's row locked; the blob exists
    /// already when another device completed it.
    private func blobBegin(zone: String, name: String, chunkCount: Int, byteCount: Int64,
                           _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        guard upload == nil, Self.isBlobName(name), (1...AgentLimits.blobChunksMaximum).contains(chunkCount), byteCount >= 0 else {
            return .failed(.badRequest, "blobBegin needs a zone, a blob name, a chunk count and a size, outside an upload")
        }
        try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        upload = (zone, name, chunkCount, 0)
        // One statement that inserts the row or locks and touches the existing one: it waits for
        // another device uploading the same blob (its row lock), up to lock_timeout, and for a
        // collection removing it (then it inserts). Touched, a blob is kept another grace period.
        let complete = try connection.query("""
            INSERT INTO tripboard.blobs AS b (zone, name, chunk_count, byte_count) VALUES ($1, $2, $3, $4)
            ON CONFLICT (zone, name) DO UPDATE SET last_used = now() RETURNING b.complete
            """, [zone, name, String(chunkCount), String(byteCount)]).first?.first ?? nil
        if complete == "t" {
            try connection.execute("COMMIT")
            upload = nil
            return .blobBegun(exists: true)
        }
        try connection.query("DELETE FROM tripboard.blob_chunks WHERE zone = $1 AND name = $2", [zone, name])
        try connection.query("UPDATE tripboard.blobs SET chunk_count = $3, byte_count = $4 WHERE zone = $1 AND name = $2",
                             [zone, name, String(chunkCount), String(byteCount)])
        return .blobBegun(exists: false)
    }

    /// `blobRead`: chunk `index` of a complete blob, with the blob's chunk count.
    private func blobRead(zone: String, name: String, index: Int, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        guard upload == nil, Self.isBlobName(name), index >= 0 else {
            return .failed(.badRequest, "blobRead needs a zone, a blob name and a chunk index, outside an upload")
        }
        let rows = try connection.query("""
            SELECT b.chunk_count, CASE WHEN octet_length(c.bytes) <= $4::int THEN encode(c.bytes, 'hex') END, c.bytes IS NULL
            FROM tripboard.blobs b
            LEFT JOIN tripboard.blob_chunks c ON c.zone = b.zone AND c.name = b.name AND c.chunk_index = $3
            WHERE b.zone = $1 AND b.name = $2 AND b.complete
            """, [zone, name, String(index), String(AgentLimits.blobChunkBytes + 64)])
        guard let row = rows.first, let count = row[0].flatMap({ Int($0) }) else { return .blobChunk(nil) }
        if row[1] == nil && row[2] == "f" {
            // Larger than any chunk a device uploads: left on the server, never read into memory.
            return .failed(.damaged, "blob \(name)'s chunk \(index) on the server is larger than any chunk TripBoard writes")
        }
        guard let hex = row[1] else { return .blobChunk(BlobChunk(chunkCount: count, data: nil)) }
        guard let bytes = Sodium.bytes(hex: hex) else { return .failed(.server, "blob \(name) on the server has an unreadable chunk") }
        return .blobChunk(BlobChunk(chunkCount: count, data: Base64.encodePublicUnpadded(bytes)))
    }

    /// In a push's transaction, before its records are written: touches every blob its applied
    /// attachment records name, and those its deletions stop naming (each is kept another grace
    /// period, so a restore from the trash on any device finds it), skipping a blob another
    /// device holds locked (it is touching it too). Answers the names a live record of the batch
    /// gives that the server has no complete blob of: removed while the batch waited on the device.
    static func touchBlobs(of records: [WireRecord], _ results: [PushResult], zone: String,
                           _ connection: PostgresConnection) throws(PostgresError) -> [String] {
        var named = Set<String>()
        var batch = JSONWriter(pretty: false)
        batch.beginArray()
        var count = 0
        for (record, result) in zip(records, results) where result.status == .applied && (record.kind == "attachment" || record.blob != nil) {
            WireJSON.head(kind: record.kind, id: record.id, &batch)
            batch.key("deleted")
            batch.bool(record.deleted)
            if let blob = record.blob { batch.key("blob"); batch.string(blob) }
            batch.endObject()
            count += 1
            if let blob = record.blob, !record.deleted { named.insert(blob) }
        }
        guard count > 0 else { return [] }
        batch.endArray()
        let touched = try connection.query("""
            WITH batch AS (SELECT * FROM json_to_recordset($2::json) AS b (kind text, id text, deleted boolean, blob text)),
            named AS (SELECT blob AS name FROM batch WHERE NOT deleted AND blob IS NOT NULL
                      UNION SELECT r.blob FROM tripboard.records r JOIN batch b ON r.kind = b.kind AND r.id = b.id AND b.deleted
                      WHERE r.zone = $1 AND r.blob IS NOT NULL AND NOT r.deleted)
            UPDATE tripboard.blobs SET last_used = now() WHERE zone = $1 AND name IN (
                SELECT name FROM tripboard.blobs WHERE zone = $1 AND complete AND name IN (SELECT name FROM named) FOR UPDATE SKIP LOCKED)
            RETURNING name
            """, [zone, String(decoding: batch.bytes, as: UTF8.self)], prepared: true)
        for row in touched { if let name = row.first ?? nil { named.remove(name) } }
        return named.sorted()
    }

    /// `collectBlobs`, in one transaction with the zone's counter row locked (as a push, so no
    /// record naming a blob can be written meanwhile). Nothing is removed while a live attachment
    /// record does not say which blob it names. Otherwise blobs past the grace period that a
    /// live record names are touched (not looked at again for another grace period), and those
    /// no live record names are removed, chunks first — skipping any another device holds
    /// locked (an upload or a push touching it), and at most `AgentLimits.blobsCollectedMaximum`.
    func collectBlobs(zone: String, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        try connection.transaction { () throws(PostgresError) -> AgentResponse in
            guard try !connection.query("SELECT 1 FROM tripboard.zones WHERE name = $1 FOR UPDATE", [zone]).isEmpty else {
                return .failed(.badRequest, "zone \(zone) does not exist on the server")
            }
            let limit = String(AgentLimits.blobsCollectedMaximum)
            let unnamed = try connection.query("""
                SELECT id, version FROM tripboard.records WHERE zone = $1 AND kind = 'attachment' AND blob IS NULL AND NOT deleted
                ORDER BY id LIMIT $2::int
                """, [zone, limit])
            guard unnamed.isEmpty else {
                return .blobsCollected(0, unnamed: unnamed.map {
                    WireRecord(kind: "attachment", id: $0[0] ?? "", version: Int64($0[1] ?? ""), deleted: false, fields: [:])
                })
            }
            let grace = String(AgentLimits.blobGraceDays)
            let stale = "b.zone = $1 AND b.last_used < now() - make_interval(days => $2::int)"
            let named = "EXISTS (SELECT 1 FROM tripboard.records r WHERE r.zone = b.zone AND r.blob = b.name AND NOT r.deleted)"
            try connection.query("""
                UPDATE tripboard.blobs SET last_used = now() WHERE zone = $1 AND name IN (
                    SELECT b.name FROM tripboard.blobs b WHERE \(stale) AND \(named) FOR UPDATE SKIP LOCKED)
                """, [zone, grace])
            let doomed = try connection.query("""
                SELECT b.name FROM tripboard.blobs b WHERE \(stale) AND NOT \(named) ORDER BY b.name LIMIT $3::int FOR UPDATE SKIP LOCKED
                """, [zone, grace, limit]).compactMap { $0.first ?? nil }.filter(Self.isBlobName)
            if !doomed.isEmpty {
                let names = "{" + doomed.joined(separator: ",") + "}"
                try connection.query("DELETE FROM tripboard.blob_chunks WHERE zone = $1 AND name = ANY($2::text[])", [zone, names])
                try connection.query("DELETE FROM tripboard.blobs WHERE zone = $1 AND name = ANY($2::text[])", [zone, names])
            }
            return .blobsCollected(doomed.count, unnamed: nil)
        }
    }

    /// `nameBlobs`: each record says which blob it names, where the server's copy is a live
    /// attachment still at the version the device has and did not say.
    func nameBlobs(_ records: [WireRecord], zone: String, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        var batch = JSONWriter(pretty: false)
        batch.beginArray()
        for record in records {
            guard let version = record.version, let blob = record.blob else { continue }
            batch.beginObject()
            batch.key("id")
            batch.string(record.id)
            batch.key("version")
            batch.integer(version)
            batch.key("blob")
            batch.string(blob)
            batch.endObject()
        }
        batch.endArray()
        let rows = try connection.query("""
            WITH named AS (
                UPDATE tripboard.records r SET blob = b.blob FROM json_to_recordset($2::json) AS b (id text, version bigint, blob text)
                WHERE r.zone = $1 AND r.kind = 'attachment' AND r.id = b.id AND r.version = b.version AND r.blob IS NULL AND NOT r.deleted
                RETURNING 1)
            SELECT count(*) FROM named
            """, [zone, String(decoding: batch.bytes, as: UTF8.self)])
        return .blobsNamed(Int((rows.first?.first ?? nil) ?? "0") ?? 0)
    }

    /// A blob's name: the keyed BLAKE2b-256 of its plaintext, 64 lowercase hex digits.
    static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
