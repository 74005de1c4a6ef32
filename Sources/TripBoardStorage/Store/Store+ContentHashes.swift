import TripBoardSQLite
public import TripBoardModel

/// Attachment rows whose bytes are not hashed yet (`Attachment.hashIsUnverified`: `content_hash`
/// is `''` on a row that is not `missing`). The container migration leaves its rows so — it
/// moves files without reading them — and the hashing pass (`AttachmentHashing`) fills the hashes
/// in after the container is published. Recording a hash is not an edit: neither `updated_at` nor
/// the sync state changes.
extension Store {
    /// The condition, in SQL, of a row that still needs hashing (its file should be there).
    package static let unverifiedAttachment = "content_hash = '' AND state = 'present'"

    /// Up to `limit` unverified rows after `rowID` (in rowid order), with their rowids: the
    /// hashing pass walks the table with these, never holding all of it.
    func unverifiedAttachments(afterRowID rowID: Int64, limit: Int) throws -> [(rowID: Int64, attachment: Attachment)] {
        try connection.statement("""
            SELECT \(Self.attachmentColumns), rowid FROM attachments
            WHERE rowid > ?1 AND \(Self.unverifiedAttachment) ORDER BY rowid LIMIT ?2
            """).rows([.integer(rowID), .integer(Int64(limit))]) { row in
            (row.integer(Self.attachmentColumnCount), Self.attachment(from: row))  // rowid after the attachment columns
        }
    }

    /// Whether any row still needs hashing.
    public func hasUnverifiedAttachments() throws -> Bool {
        try connection.integer("SELECT EXISTS (SELECT 1 FROM attachments WHERE \(Self.unverifiedAttachment))") != 0
    }

    /// The bytes of the rows that still need hashing, for a progress bar.
    func unverifiedAttachmentBytes() throws -> Int64 {
        try connection.integer("SELECT coalesce(sum(byte_count), 0) FROM attachments WHERE \(Self.unverifiedAttachment)")
    }

    /// Live unverified rows of `bookingId` (or, without one, of any booking of `tripId`) with
    /// exactly `byteCount` bytes: the candidates a deduplication must hash on the spot, since an
    /// empty hash can equal nothing.
    public func unverifiedAttachments(bookingId: Booking.ID?, tripId: Trip.ID?, byteCount: Int64) throws -> [Attachment] {
        let columns = Self.attachmentColumns.split(separator: ",").map { "a." + String($0).trimmingWhitespace() }.joined(separator: ", ")
        return try connection.statement("""
            SELECT \(columns) FROM attachments a JOIN bookings b ON b.id = a.booking_id
            WHERE a.content_hash = '' AND a.state = 'present' AND a.byte_count = ?3 AND a.sync_state <> 'pendingDeletion'
              AND a.trashed_at IS NULL AND b.trashed_at IS NULL AND b.sync_state <> 'pendingDeletion'
              AND (a.booking_id = ?1 OR (?1 IS NULL AND b.trip_id = ?2))
            ORDER BY a.created_at, a.id
            """).rows([bookingId.map { SQLValue.text($0.text) } ?? .null, tripId.map { SQLValue.text($0.text) } ?? .null, .integer(byteCount)], Self.attachment(from:))
    }

    /// Records the hashes of files read in full, in one write transaction (or in the caller's:
    /// a pulled page's); a row whose size or state changed meanwhile, or that has its hash
    /// already, is left as it is. Returns how many rows took a hash.
    @discardableResult
    public func recordContentHashes(_ hashes: [(id: String, byteCount: Int64, contentHash: String)]) throws -> Int {
        guard !hashes.isEmpty else { return 0 }
        let record = { () throws -> Int in
            let update = try self.connection.statement("""
                UPDATE attachments SET content_hash = ?3 WHERE id = ?1 AND byte_count = ?2 AND content_hash = '' AND state <> 'missing'
                """)
            var recorded = 0
            for hash in hashes {
                try update.run([.text(hash.id), .integer(hash.byteCount), .text(hash.contentHash)])
                recorded += self.connection.changes
            }
            return recorded
        }
        return try connection.isInsideTransaction ? record() : connection.writeTransaction(record)
    }
}
