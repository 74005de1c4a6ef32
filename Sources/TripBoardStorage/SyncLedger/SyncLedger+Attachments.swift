import TripBoardSQLite
import TripBoardSystem
import TripBoardModel
package import TripBoardDevice

/// Attachments as sync carries them: the row's metadata as fields (`bookingId`, `originalFilename`,
/// `contentType`, `byteCount`, `contentHash`, `pageCount`, `protection` — the class its file is
/// sealed under on every device, sealed like any field) plus `blob`, the name of its sealed
/// file on the server, which only the shadow and the server hold. The bytes travel as a blob
/// (`SyncEngine+Blobs.swift`); a pulled attachment is inserted `missing` and becomes `present`
/// once its blob is downloaded and verified.
extension SyncLedger {
    func attachmentSyncRecord(id: String) throws -> SyncRecord? {
        try attachmentSyncRecords("WHERE id = ?1", [.text(id)]).first
    }

    /// The attachments `suffix` (a WHERE clause and an order) selects, as sync records.
    func attachmentSyncRecords(_ suffix: String, _ values: [SQLValue]) throws -> [SyncRecord] {
        try connection.statement("""
            SELECT booking_id, original_filename, content_type, byte_count, content_hash, page_count, sync_state, remote_version,
                   updated_at, trashed_at, trashed_with, state, relative_path, protection, id FROM attachments \(suffix)
            """).rows(values) { row -> SyncRecord in
            let hash = ContentHash(stored: row.optionalText(4) ?? "")
            let fields: [String: JSONValue] = [
                "bookingId": .optionalString(row.optionalText(0)), "originalFilename": .string(row.text(1)),
                "contentType": .string(row.text(2)), "byteCount": .number(String(row.integer(3))),
                // An attachment whose hash is not known (a lost or not yet verified file) has none.
                "contentHash": hash.hex.map(JSONValue.string) ?? .null,
                "pageCount": row.optionalInteger(5).map { .number(String($0)) } ?? .null,
                "protection": .string(row.text(13)),
            ]
            return SyncRecord(kind: .attachment, id: row.text(14), fields: fields, syncState: SyncState(rawValue: row.text(6)) ?? .failed,
                              remoteVersion: row.optionalInteger(7), updatedAt: row.text(8), trashedAt: row.optionalText(9),
                              trashedWith: row.optionalText(10), fileState: Attachment.State(column: row.text(11)), relativePath: row.text(12))
        }
    }

    /// The attachments whose server copy names blob `name` (by their shadow).
    package func attachmentIDs(namingBlob name: String) throws -> [String] {
        try connection.statement("SELECT id FROM sync_shadow WHERE kind = 'attachment' AND field = 'blob' AND value = ? ORDER BY id")
            .rows([.text(JSONValue.string(name).canonicalText)]) { $0.text(0) }
    }

    /// A pulled attachment: inserted `missing` at the path its file will have, or its metadata
    /// updated (the file of an id never changes: its size and hash are left as they are).
    func writeAttachmentSyncRecord(_ record: SyncRecord, inserting: Bool) throws {
        func text(_ name: String) throws -> String { try record.requiredText(name) }
        func integer(_ name: String) throws -> Int64? {
            guard let value = record.fields[name], value != .null else { return nil }
            guard case .number(let digits) = value, let number = Int64(digits) else {
                throw StoreError.invalidField(field: name, rule: "must be a whole number")
            }
            return number
        }
        let bookingId = record.fields["bookingId"]?.stringValue
        let filename = try FieldRules.filename(try text("originalFilename"))
        let contentType = try FieldRules.contentType(try text("contentType"))
        let pageCount = try integer("pageCount")
        // A device of an earlier build sends none: the row keeps its class (a new one, the default).
        let protection = try record.fields["protection"].flatMap { value -> ProtectionClass? in
            guard value != .null else { return nil }
            guard let name = value.stringValue, let protection = ProtectionClass(fileClassName: name) else {
                throw StoreError.invalidField(field: "protection", rule: "must be one of \(ProtectionClass.fileClassNames.joined(separator: ", "))")
            }
            return protection
        }
        if inserting {
            guard let bookingId, try syncRecord(.booking, id: bookingId) != nil else {
                throw StoreError.notFound(kind: .booking, id: bookingId ?? "-")
            }
            guard let byteCount = try integer("byteCount") else {
                throw StoreError.invalidField(field: "byteCount", rule: "missing in the synchronised record")
            }
            let relativePath = ContainerLayout.attachmentsDirectory + "/" + String(record.id.prefix(2)) + "/" + record.id + "."
                + Self.fileExtension(contentType: contentType, filename: filename)
            try store.insert(Attachment(id: RecordID(record.id), bookingId: RecordID(bookingId), originalFilename: filename, contentType: contentType,
                                  byteCount: byteCount, contentHash: ContentHash(stored: record.fields["contentHash"]?.stringValue ?? ""), pageCount: pageCount,
                                  relativePath: relativePath, state: .missing, createdAt: try FieldRules.stampTime(record.updatedAt), syncState: record.syncState,
                                  remoteVersion: record.remoteVersion, updatedAt: try FieldRules.stampTime(record.updatedAt), protection: protection ?? .completeUnlessOpen))
            return
        }
        if let pageCount, pageCount < 1 { throw StoreError.invalidField(field: "pageCount", rule: "must be at least 1") }
        let metadata = try FieldRules.syncMetadata(record.syncState, record.remoteVersion, record.updatedAt)
        try connection.statement("""
            UPDATE attachments SET booking_id = coalesce(?, booking_id), original_filename = ?, content_type = ?, page_count = ?,
                sync_state = ?, remote_version = ?, updated_at = ?, protection = coalesce(?, protection) WHERE id = ?
            """).run([.optional(bookingId), .text(filename), .text(contentType), .optional(pageCount), .text(record.syncState.rawValue),
                      .optional(metadata.0), .text(metadata.1), .optional(protection?.fileClassName), .text(record.id)])
    }

    /// The extension of a pulled attachment's file: `pdf` for a PDF (what the share extension
    /// writes), else the original name's if it is 1–8 letters and digits, else `bin`.
    static func fileExtension(contentType: String, filename: String) -> String {
        if contentType.lowercased() == "application/pdf" { return "pdf" }
        let parts = filename.lowercased().split(separator: ".")
        if parts.count > 1, let last = parts.last, (1...8).contains(last.utf8.count),
           last.utf8.allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) }) {
            return String(last)
        }
        return "bin"
    }

    /// Pulled attachments still without their file: id, path, size, hash (pending when the record
    /// carried none) and the name of their blob on the server.
    package func attachmentsAwaitingBlob() throws
        -> [(id: String, relativePath: String, byteCount: Int64, contentHash: ContentHash, blob: String, protection: ProtectionClass)] {
        try connection.statement("""
            SELECT a.id, a.relative_path, a.byte_count, a.content_hash, s.value, a.protection FROM attachments a
            JOIN sync_shadow s ON s.kind = 'attachment' AND s.id = a.id AND s.field = 'blob'
            WHERE a.state = 'missing' AND a.trashed_at IS NULL ORDER BY a.rowid
            """).rows { row in
            (row.text(0), row.text(1), row.integer(2), ContentHash(stored: row.optionalText(3) ?? ""),
             (try? JSONValue.parse(Array(row.text(4).utf8)))?.stringValue ?? "",
             ProtectionClass(fileClassName: row.text(5)) ?? .completeUnlessOpen)
        }
    }
}
