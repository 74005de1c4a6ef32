import TripBoardSyncProtocol
import TripBoardSodium

/// Blobs (attachment files, sealed by `app` with secretstream before they get here): uploaded in
/// one transaction with the blob's row locked, so a blob is on the server whole or not at all
/// and two devices uploading the same one take turns; read chunk by chunk once complete.
extension AgentService {
    func blob(_ request: AgentRequest, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        switch request.operation {
        case .blobBegin:
            return try blobBegin(request, connection)
        case .blobChunk:
            guard let current = upload, request.chunkIndex == current.next, current.next < current.chunkCount,
                  let data = request.data, let bytes = Base64.decodeUnpadded(Array(data.utf8)) else {
                return .failed(.badRequest, "blobChunk needs the next chunk of an upload, in base64")
            }
            try connection.query("INSERT INTO tripboard.blob_chunks (zone, name, chunk_index, bytes) VALUES ($1, $2, $3, $4::bytea)",
                                 [current.zone, current.name, String(current.next), "\\x" + Sodium.hexString(bytes)])
            upload?.next += 1
            return AgentResponse()
        case .blobEnd:
            guard let current = upload, current.next == current.chunkCount else {
                return .failed(.badRequest, "blobEnd before every chunk of the upload")
            }
            try connection.query("UPDATE tripboard.blobs SET complete = true WHERE zone = $1 AND name = $2", [current.zone, current.name])
            try connection.execute("COMMIT")
            upload = nil
            return AgentResponse()
        default:
            return try blobRead(request, connection)
        }
    }

    /// `blobBegin`: opens the upload's transaction with the blob's row locked; the blob exists
    /// already when another device completed it.
    private func blobBegin(_ request: AgentRequest, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        guard upload == nil, let zone = request.zone, let name = request.blob, Self.isBlobName(name),
              let chunkCount = request.chunkCount, (1...AgentLimits.blobChunksMaximum).contains(chunkCount),
              let byteCount = request.byteCount, byteCount >= 0 else {
            return .failed(.badRequest, "blobBegin needs a zone, a blob name, a chunk count and a size, outside an upload")
        }
        try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        upload = (zone, name, chunkCount, 0)
        // Waits for another device uploading the same blob (its row lock), up to lock_timeout.
        try connection.query("""
            INSERT INTO tripboard.blobs (zone, name, chunk_count, byte_count) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING
            """, [zone, name, String(chunkCount), String(byteCount)])
        let complete = try connection.query("SELECT complete FROM tripboard.blobs WHERE zone = $1 AND name = $2 FOR UPDATE",
                                            [zone, name]).first?.first ?? nil
        var response = AgentResponse()
        if complete == "t" {
            try connection.execute("COMMIT")
            upload = nil
            response.blobExists = true
            return response
        }
        try connection.query("DELETE FROM tripboard.blob_chunks WHERE zone = $1 AND name = $2", [zone, name])
        try connection.query("UPDATE tripboard.blobs SET chunk_count = $3, byte_count = $4 WHERE zone = $1 AND name = $2",
                             [zone, name, String(chunkCount), String(byteCount)])
        response.blobExists = false
        return response
    }

    /// `blobRead`: chunk `chunkIndex` of a complete blob, with the blob's chunk count.
    private func blobRead(_ request: AgentRequest, _ connection: PostgresConnection) throws(PostgresError) -> AgentResponse {
        guard upload == nil, let zone = request.zone, let name = request.blob, Self.isBlobName(name),
              let index = request.chunkIndex, index >= 0 else {
            return .failed(.badRequest, "blobRead needs a zone, a blob name and a chunk index, outside an upload")
        }
        let rows = try connection.query("""
            SELECT b.chunk_count, encode(c.bytes, 'hex') FROM tripboard.blobs b
            LEFT JOIN tripboard.blob_chunks c ON c.zone = b.zone AND c.name = b.name AND c.chunk_index = $3
            WHERE b.zone = $1 AND b.name = $2 AND b.complete
            """, [zone, name, String(index)])
        var response = AgentResponse()
        guard let row = rows.first, let count = row[0].flatMap({ Int($0) }) else {
            response.blobExists = false
            return response
        }
        response.blobExists = true
        response.chunkCount = count
        if let hex = row[1] {
            guard let bytes = Sodium.bytes(hex: hex) else { return .failed(.server, "blob \\(name) on the server has an unreadable chunk") }
            response.data = String(decoding: Base64.encodeUnpadded(bytes), as: UTF8.self)
        }
        return response
    }

    /// A blob's name: the keyed BLAKE2b-256 of its plaintext, 64 lowercase hex digits.
    static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
