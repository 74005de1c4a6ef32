import TripBoardSQLite
public import TripBoardModel
package import TripBoardSystem
package import TripBoardDevice

/// Putting right what was filed in the wrong place: an attachment moved to another booking, and
/// one booking merged into another (docs/cli.md, `attachment move` and `booking merge`). Each is
/// one transaction of ordinary edits — the fields that change become pendingUpload with their
/// edit times noted, so that sync merges them field by field as any edit — and what goes, goes
/// to the trash, restorable there.
extension Store {
    /// Moves the live attachment `id` to the live booking `bookingId`, of any trip. Returns the
    /// attachment as it is now (unchanged when it is there already). Refused (`.invalidData`)
    /// when that booking already holds the same bytes: it would hold them twice.
    @discardableResult
    public func moveAttachment(id: Attachment.ID, toBooking bookingId: Booking.ID) throws -> Attachment {
        try connection.writeTransaction {
            let attachment = try attachment(id: id)
            let target = try booking(id: bookingId)
            guard attachment.bookingId != target.id else { return attachment }
            if !attachment.contentHash.isPending, let copy = try self.attachment(bookingId: target.id, contentHash: attachment.contentHash.stored) {
                throw StoreError.invalidData("booking \(target.id.short) already has this file, as attachment \(copy.id.short)")
            }
            try moveAttachments([(attachment.id, attachment.updatedAt)], to: target.id, at: stamp())
            return try self.attachment(id: id)
        }
    }

    /// Points the attachments `moved` (each with its `updatedAt` before the move) at `bookingId`,
    /// inside the caller's transaction: an edit of their `bookingId` (pendingUpload; a deletion
    /// waiting keeps its state), its time noted for the merge.
    package func moveAttachments(_ moved: [(id: Attachment.ID, updatedAt: Timestamp)], to bookingId: Booking.ID, at now: String) throws {
        for (id, before) in moved {
            try connection.statement("""
                UPDATE attachments SET booking_id = ?1, updated_at = ?3,
                    sync_state = CASE WHEN sync_state = 'synchronized' THEN 'pendingUpload' ELSE sync_state END
                WHERE id = ?2
                """).run([.text(bookingId.text), .text(id.text), .text(now)])
            try syncLedger.noteFieldEdits(.attachment, id: id.text, changed: ["bookingId"], before: before.utcStamp, at: now)
        }
    }
}

/// What `Store.mergeBookings` did.
public struct BookingMerge: Sendable, Equatable {
    /// The booking kept, as it is now.
    public var kept: Booking
    /// The fields it took from the other because it had none (JSON names, in declaration order).
    public var fieldsTaken: [String]
    /// Fields of the other's that it lacked but could not take (an end before its start, or one
    /// of another start than its own).
    public var fieldsLeft: [String]
    /// The attachments that moved to it.
    public var attachmentsMoved: [Attachment.ID]
    /// The other's attachments left with it (copies of bytes the kept one has), gone to the trash with it.
    public var copiesLeft: [Attachment.ID]
    /// The other booking's entry in the trash.
    public var trashed: TrashEntry
}

extension Store {
    /// Merges the live booking `otherID` into `keepID`, of the same trip, in one transaction:
    /// `keepID` takes every field of the other's that it lacks (a start takes its end along, an
    /// end only from the same start, and times are written in KEEP's zone, keeping their
    /// instants; a field it cannot take is listed in `fieldsLeft`) and one attachment of each
    /// file it does not hold; the other goes to the trash with what is left.
    public func mergeBookings(keep keepID: Booking.ID, other otherID: Booking.ID) throws -> BookingMerge {
        guard keepID != otherID else { throw StoreError.invalidArgument("KEEP and OTHER are the same booking") }
        return try connection.writeTransaction {
            let keep = try booking(id: keepID)
            let other = try booking(id: otherID)
            guard keep.tripId == other.tripId else {
                throw StoreError.invalidData("""
                    bookings \(keep.id.short) and \(other.id.short) are in different trips; `app attachment move` \
                    moves a ticket to a booking of another trip
                    """)
            }
            let now = stamp()
            var (updated, taken, left) = (keep, [String](), [String]())
            for column in BookingColumn.allCases where column.spec.syncField != nil {
                guard column.value(of: updated) == .null, column.value(of: other) != .null else { continue }
                var candidate = BookingColumn.record(updated, setting: [(column, column.value(of: other))])
                // An end is its start's, and its own zone is its end's.
                if column == .startsAt { candidate.endsAt = other.endsAt }
                if column == .startsAt || column == .endsAt { candidate.endZone = other.endZone }
                // An end goes with its own start only: the other's end of another departure is not
                // KEEP's; nor is the zone of another end.
                let endOfAnotherStart = column == .endsAt
                    && updated.startsAt?.startEpoch != other.startsAt?.startEpoch
                let zoneOfAnotherEnd = column == .endZone
                    && updated.endsAt?.endEpoch != other.endsAt?.endEpoch
                if let zone = candidate.zone, let rules = try? TimeZoneRules.named(zone) {
                    // Its times keep their instants, written in its zone's offsets (taken or its own).
                    candidate.startsAt = candidate.startsAt.map { BookingTime.reexpressed($0, in: rules) }
                    candidate.endsAt = candidate.endsAt.map { BookingTime.reexpressed($0, in: rules) }
                }
                if let zone = candidate.endZone, let rules = try? TimeZoneRules.named(zone) {
                    candidate.endsAt = candidate.endsAt.map { BookingTime.reexpressed($0, in: rules) }
                }
                guard !endOfAnotherStart, !zoneOfAnotherEnd, let checked = try? BookingColumn.validated(candidate) else {
                    left.append(column.spec.jsonKey.description)
                    continue
                }
                updated = checked
                taken.append(column.spec.jsonKey.description)
                if column == .startsAt && other.endsAt != nil { taken.append(BookingColumn.endsAt.spec.jsonKey.description) }
                if (column == .startsAt || column == .endsAt) && other.endZone != nil && keep.endZone == nil {
                    taken.append(BookingColumn.endZone.spec.jsonKey.description)
                }
            }
            let kept = try writeEdit(BookingColumn.self, keep, updated)
            let ofTrip = try attachments(tripId: keep.tripId)
            // One of each file KEEP lacks: a second copy of the same bytes stays with OTHER too.
            var seen = Set(ofTrip.filter { $0.bookingId == keep.id && !$0.contentHash.isPending }.map(\.contentHash.stored))
            var (moving, copies) = ([Attachment](), [Attachment.ID]())
            for attachment in ofTrip where attachment.bookingId == other.id {
                if attachment.contentHash.isPending || seen.insert(attachment.contentHash.stored).inserted {
                    moving.append(attachment)
                } else {
                    copies.append(attachment.id)
                }
            }
            try moveAttachments(moving.map { ($0.id, $0.updatedAt) }, to: keep.id, at: now)
            let trashed = try trash.moveToTrashInTransaction(.booking, id: other.id.text, at: now)
            return BookingMerge(kept: kept, fieldsTaken: taken, fieldsLeft: left, attachmentsMoved: moving.map(\.id),
                                copiesLeft: copies, trashed: trashed)
        }
    }
}

extension Store {
    /// Records that the file of attachment `id` is sealed under `protection` now: an edit of its
    /// `protection` field (pendingUpload, its time noted), so that the class travels through
    /// sync as any field does. The caller has sealed the file first.
    package func recordProtection(id: Attachment.ID, _ protection: ProtectionClass) throws {
        try connection.writeTransaction {
            let attachment = try attachment(id: id)
            guard attachment.protection != protection else { return }
            let now = stamp()
            try connection.statement("""
                UPDATE attachments SET protection = ?2, updated_at = ?3,
                    sync_state = CASE WHEN sync_state = 'synchronized' THEN 'pendingUpload' ELSE sync_state END
                WHERE id = ?1
                """).run([.text(id.text), .text(protection.fileClassName), .text(now)])
            try syncLedger.noteFieldEdits(.attachment, id: id.text, changed: ["protection"], before: attachment.updatedAt.utcStamp, at: now)
        }
    }
}
