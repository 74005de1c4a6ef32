import TripBoardSystem
import TripBoardReadPath

/// The same ticket filed on two devices before either synced: one booking and one attachment
/// in the end, not two. The device that syncs second finds, among what it pulls, the booking its
/// own import made — never uploaded, the same trip, kind, title, start and confirmation number —
/// and the attachment — never uploaded, the same booking and the same bytes (content hash) — and
/// keeps the server's: its own booking's attachments move to the server's booking, its own
/// booking goes (it was never anywhere else), its own attachment joins the deletion queue (its
/// file removed by the next writer; the server's copy is downloaded and verified as any other).
/// Bookings with no reference are never merged: two hand-typed "Museum pass" are two.
extension Store {
    /// Call after the pulled record `record` is inserted, in the page's transaction. Returns how
    /// many records of this device's were merged into it.
    package func absorbLocalDuplicate(of record: SyncRecord) throws -> Int {
        switch record.kind {
        case .booking:
            guard let reference = record.fields["reference"]?.stringValue, let tripId = record.tripId else { return 0 }
            let title = record.fields["title"]?.stringValue ?? ""
            let kind = record.fields["kind"]?.stringValue ?? ""
            let startsAt = record.fields["startsAt"]?.stringValue
            let duplicates = try connection.statement("""
                SELECT id FROM bookings
                WHERE trip_id = ? AND kind = ? AND title = ? AND starts_at IS ? AND reference = ? AND id <> ?
                  AND remote_version IS NULL AND sync_state = 'pendingUpload' AND trashed_at IS NULL
                """).rows([.text(tripId), .text(kind), .text(title), .optional(startsAt), .text(reference), .text(record.id)]) { $0.text(0) }
            guard duplicates.count == 1, let duplicate = duplicates.first else { return 0 }
            try connection.statement("UPDATE attachments SET booking_id = ? WHERE booking_id = ?").run([.text(record.id), .text(duplicate)])
            try connection.statement("DELETE FROM bookings WHERE id = ?").run([.text(duplicate)])
            return 1
        case .attachment:
            guard let bookingId = record.fields["bookingId"]?.stringValue, let hash = record.fields["contentHash"]?.stringValue,
                  !hash.isEmpty else { return 0 }
            let duplicates = try connection.statement("""
                SELECT id FROM attachments
                WHERE booking_id = ? AND content_hash = ? AND id <> ? AND state = 'present'
                  AND remote_version IS NULL AND sync_state = 'pendingUpload' AND trashed_at IS NULL
                """).rows([.text(bookingId), .text(hash), .text(record.id)]) { $0.text(0) }
            for duplicate in duplicates {
                try connection.statement("""
                    UPDATE attachments SET state = 'deleting', trashed_at = ?, trashed_with = NULL WHERE id = ?
                    """).run([.text(stamp()), .text(duplicate)])
            }
            return duplicates.count
        case .trip, .place:
            return 0
        }
    }
}
