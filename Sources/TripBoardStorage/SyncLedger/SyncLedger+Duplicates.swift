import TripBoardSystem
import TripBoardModel

/// The same ticket filed on two devices before either synced: one booking and one attachment
/// in the end, not two. The device that syncs second finds, among what it pulls, the booking its
/// own import made — never uploaded, the same trip, kind, title, start and confirmation number —
/// and the attachment — never uploaded, the same booking and the same bytes (content hash) — and
/// keeps the server's: its own booking's attachments move to the server's booking, its own
/// booking goes (it was never anywhere else), its own attachment joins the deletion queue (its
/// file removed by the next writer; the server's copy is downloaded and verified as any other).
/// Bookings with no reference are never merged: two hand-typed "Museum pass" are two.
extension SyncLedger {
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
                    """).run([.text(store.stamp()), .text(duplicate)])
            }
            return duplicates.count
        case .trip, .place:
            return 0
        }
    }
}

/// The same ticket filed on two devices that both pushed their copy before pulling the other's:
/// both bookings are on the server. Every device that holds both settles them the same way, so
/// they converge whatever the order: of bookings with the same trip, kind, title, start and
/// confirmation number that each hold an attachment with the same bytes, the one with the
/// smallest id stays. The other's attachments that the survivor has no copy of move to it (an
/// edit, pushed); the other booking goes to the trash with what is left under it (the copies),
/// restorable there for 30 days, its tombstone pushed. A device that pulls that tombstone before
/// settling the pair itself does the same through the deletion rule.
extension SyncLedger {
    /// Settles every such pair, in the caller's write transaction. Returns how many bookings went
    /// to the trash.
    package func mergePushedDuplicates(at now: String) throws -> Int {
        let pairs = try connection.statement("""
            SELECT b.id, min(s.id) FROM bookings b JOIN bookings s
              ON s.trip_id = b.trip_id AND s.kind = b.kind AND s.title = b.title AND s.starts_at IS b.starts_at
             AND s.reference = b.reference AND s.id < b.id
            WHERE b.reference IS NOT NULL AND b.remote_version IS NOT NULL AND s.remote_version IS NOT NULL
              AND b.sync_state <> 'pendingDeletion' AND b.trashed_at IS NULL
              AND s.sync_state <> 'pendingDeletion' AND s.trashed_at IS NULL
              AND EXISTS (SELECT 1 FROM attachments x JOIN attachments y ON y.content_hash = x.content_hash
                          WHERE x.booking_id = b.id AND y.booking_id = s.id AND x.content_hash <> ''
                            AND x.state <> 'deleting' AND x.sync_state <> 'pendingDeletion' AND x.trashed_at IS NULL
                            AND y.state <> 'deleting' AND y.sync_state <> 'pendingDeletion' AND y.trashed_at IS NULL)
            GROUP BY b.id ORDER BY b.id
            """).rows { ($0.text(0), $0.text(1)) }
        guard !pairs.isEmpty else { return 0 }
        let survivorOf = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        func root(_ id: String) -> String {
            var id = id
            while let next = survivorOf[id] { id = next }
            return id
        }
        for (loser, _) in pairs {
            let moving = """
                WHERE booking_id = ?2 AND \(Store.liveAttachment)
                  AND content_hash NOT IN (SELECT content_hash FROM attachments
                                           WHERE booking_id = ?1 AND content_hash <> '' AND \(Store.liveAttachment))
                """
            let moved = try connection.statement("SELECT id, updated_at FROM attachments \(moving)")
                .rows([.text(root(loser)), .text(loser)]) { (id: Attachment.ID($0.text(0)), updatedAt: Timestamp(stored: $0.text(1))) }
            try store.moveAttachments(moved, to: RecordID(root(loser)), at: now)
            _ = try store.trash.moveToTrashInTransaction(.booking, id: loser, at: now)
        }
        return pairs.count
    }
}
