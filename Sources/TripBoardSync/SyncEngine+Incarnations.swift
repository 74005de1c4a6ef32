import TripBoardStorage
import TripBoardSyncProtocol
import TripBoardModel

/// Deletions sealed to an incarnation (docs/sync.md, Deletions sealed to an incarnation): what a
/// pulled record's `incarnation` and a pulled tombstone's `deletion` say, checked against what
/// this device holds and the incarnations it knows are over (`sync_dead`), before anything is
/// applied. The server cannot make a sealed deletion, so what it can do is replay one, or
/// replay a live copy of an incarnation that is over; both are refused.
extension SyncEngine {
    /// The sealed field naming a record's incarnation, and the one a tombstone carries: the
    /// incarnation it deletes.
    static let incarnationField = "incarnation"
    static let deletionField = "deletion"
    /// The sealed field of a deletion that went with another record's (a trip's places, bookings
    /// and tickets; a booking's tickets): that record's id, the trash entry it went in, and the
    /// stamp of the field that put the record under it (`parentFieldStamp`).
    static let deletedWithField = "deletedWith"

    /// What a pulled deletion may do here.
    enum DeletionVerdict {
        /// Believed: it deletes `incarnation` (nil: an earlier build's unsealed tombstone,
        /// believed below `unsealed_before`).
        case believe(incarnation: String?)
        /// Not believed: counted, this device's record sent again.
        case refuse(RefusalCause)
        /// A deletion of an incarnation since replaced, which this device never saw: not applied,
        /// the record sent again, but not counted — a genuine deletion of the old life that had
        /// not reached this device before the restore (the restore, being later, wins). One it
        /// saw before is a replay: `.refuse(.replayedDeletion)`.
        case superseded
    }

    /// A pulled tombstone judged: a sealed deletion of this device's incarnation, or of one it
    /// never saw (a later incarnation another device deleted: delete beats edit), is believed; a
    /// deletion of an incarnation this device knows replaced is a replay, and a tombstone without
    /// a sealed deletion, past the sequence this device had reached when it first ran this build,
    /// is no device's: both are refused while this device holds the record live. Deleted here
    /// too, the server's deletion stands for this device's only if a device holding the record
    /// live would believe it; else this device's own sealed deletion goes again.
    func judgeDeletion(_ remote: WireRecord, fields: OpenedFields, local: SyncRecord?, kind: RecordKind) throws -> DeletionVerdict {
        guard let local else {
            // Nothing here to take: believed.
            return .believe(incarnation: fields[Self.deletionField]?.value.stringValue)
        }
        guard let sealed = fields[Self.deletionField] else {
            if let sequence = remote.sequence, sequence <= unsealedBefore { return .believe(incarnation: nil) }
            // Deleted here as well, the deletion no device sealed would otherwise acknowledge
            // this device's: its sealed deletion never reaches the server, and a device holding
            // the record live refuses the server's and sends the record again, for good.
            return .refuse(.unsealedDeletion)
        }
        if local.isTombstone || local.isInTrash {
            // Deleted here too: acknowledged, unless it deletes an incarnation this device knows
            // replaced (a replay, which a device holding this one live refuses).
            guard let deleted = sealed.value.stringValue, deleted != (try currentIncarnation(of: local)),
                  try ledger.isDead(kind, id: remote.id, incarnation: deleted) else {
                return .believe(incarnation: sealed.value.stringValue)
            }
            return .superseded
        }
        guard let deleted = sealed.value.stringValue else {
            throw SyncError.damagedServerData("\(kind.rawValue) \(remote.id): its deletion names no incarnation")
        }
        let current = try currentIncarnation(of: local)
        if deleted == current { return .believe(incarnation: deleted) }
        // A replay: this device saw that deletion before *and* has since seen the server hold a
        // later state of the record (a field stamped after it). Its own deletion, sent late (after
        // a restore made here) and pulled back, is the server's latest state, not a replay.
        let shadow = try ledger.shadow(kind, id: remote.id)
        let laterSeen = shadow.values.contains { HybridStamp($0.stamp).map { $0 > sealed.stamp } ?? false }
        let late: DeletionVerdict = try laterSeen && ledger.sawDeletion(kind, id: remote.id, stamp: sealed.stamp.description)
            ? .refuse(.replayedDeletion) : .superseded
        if try ledger.isDead(kind, id: remote.id, incarnation: deleted) { return late }
        // An incarnation this device never saw: a later one, restored and deleted elsewhere (delete
        // beats edit) — unless the deletion was made before this device's incarnation was born
        // (its sealed stamp is older): then it is an old deletion, reaching a device that joined
        // after the restore.
        if let born = shadow[Self.incarnationField].flatMap({ HybridStamp($0.stamp) }), sealed.stamp < born {
            return late
        }
        return .believe(incarnation: deleted)
    }

    /// Whether a believed deletion that went with another record's (`deletedWith`) no longer
    /// reaches `local` here: it was moved out from under that record (a ticket moved to a booking
    /// of another trip) later than the place the deleting device had it in — that device had not
    /// seen the move. Its deletion was of what that record held there; here the record is
    /// elsewhere, and stays. A device that has only not seen a move *into* the deleted record
    /// holds an older place, and believes the deletion. One seen before is not weighed again.
    func isMovedOutOfDeletion(_ remote: WireRecord, fields: OpenedFields, local: SyncRecord) throws -> Bool {
        guard !local.isTombstone, !local.isInTrash, case .array(let told)? = fields[Self.deletedWithField]?.value, told.count == 2,
              let with = told[0].stringValue, with != remote.id, let theirs = told[1].stringValue.flatMap(HybridStamp.init),
              let sealed = fields[Self.deletionField], try !ledger.sawDeletion(local.kind, id: remote.id, stamp: sealed.stamp.description)
        else { return false }
        guard let parent = local.parent, parent.id != with else { return false }
        if parent.kind == .booking {
            // A ticket: under the deleted trip if its booking is.
            guard let booking = try ledger.syncRecord(.booking, id: parent.id), booking.tripId != with else { return false }
        }
        guard let mine = try parentFieldStamp(of: local) else { return false }
        return mine > theirs
    }

    /// The stamp of the field naming `record`'s parent (`tripId`; an attachment's `bookingId`) as
    /// this device has it: its own edit's when it changed the field, else the server's.
    func parentFieldStamp(of record: SyncRecord) throws -> HybridStamp? {
        guard let field = SyncRecord.parentField(of: record.kind)?.field else { return nil }
        let known = try ledger.shadow(record.kind, id: record.id)[field]
        if let edited = try ledger.fieldEdits(record.kind, id: record.id)[field], let value = record.fields[field],
           value.canonicalText != known?.value {
            return localStamp(updatedAt: edited, after: known?.stamp)
        }
        return known.flatMap { HybridStamp($0.stamp) }
    }

    /// `local`, moved out from under a record deleted elsewhere (`isMovedOutOfDeletion`), stays:
    /// the deletion is seen, the life it ended is over and this record's next one goes to the
    /// server whole, against the deletion's version, so that the devices that applied the
    /// deletion take it back out of their trash under its new place.
    func keepMovedOut(_ remote: WireRecord, fields: OpenedFields, local: SyncRecord, kind: RecordKind, version: Int64) throws {
        if let sealed = fields[Self.deletionField] { try ledger.noteDeletionSeen(kind, id: remote.id, stamp: sealed.stamp.description) }
        try ledger.endIncarnation(kind, id: remote.id)
        try ledger.markSentWhole(kind, id: remote.id)
        try ledger.setSyncMetadata(kind, id: remote.id, state: .pendingUpload, remoteVersion: version)
        report.keptMovedOut += 1
    }

    /// What `admitIncarnation` made of a pulled live record.
    enum IncarnationAdmission {
        /// A copy of an incarnation that is over: refused (and counted).
        case refused
        /// This device's incarnation, or a record new here.
        case same
        /// A later incarnation than this device's: news whatever its version.
        case later
    }

    /// A pulled live record judged by its incarnation: a copy of an incarnation this device knows
    /// is over (deleted or replaced) is refused; a new one (a restore on another device) becomes
    /// this device's, the one it replaces noted over.
    func admitIncarnation(_ remote: WireRecord, fields: OpenedFields, local: SyncRecord?, kind: RecordKind,
                          version: Int64) throws -> IncarnationAdmission {
        guard let theirs = fields[Self.incarnationField].map({ $0.value.stringValue }) ?? SyncLedger.legacyIncarnation else {
            throw SyncError.damagedServerData("\(kind.rawValue) \(remote.id): its incarnation is not a text")
        }
        if try ledger.isDead(kind, id: remote.id, incarnation: theirs) {
            try refuseResurrection(remote, incarnation: theirs, local: local, kind: kind, version: version)
            return .refused
        }
        // A record new here keeps its incarnation in its shadow (written with it).
        guard let local else { return .same }
        let current = try currentIncarnation(of: local)
        if theirs == SyncLedger.legacyIncarnation && current != SyncLedger.legacyIncarnation {
            // Only a record's first life is unnamed, and a named one never goes back to it: the
            // server took the incarnation out of the row (to let an old deletion of the first
            // life take it). Refused; this device's record goes again.
            try refuseResurrection(remote, incarnation: theirs, local: local, kind: kind, version: version)
            return .refused
        }
        if theirs != current {
            // A later incarnation (brought back from the trash on another device): this device's
            // one is over, and what it knew of that one's fields decides nothing about the new
            // one's (a restore brings back its device's copy, whatever was stamped since).
            try ledger.noteDead(kind, id: remote.id, incarnation: current)
            try ledger.clearShadow(kind, id: remote.id, pinningIncarnation: false)
            try ledger.setIncarnation(kind, id: remote.id, theirs)
            return .later
        }
        return .same
    }

    /// This device's incarnation of `local`: the one on record, the legacy one for a record an
    /// earlier build synced.
    func currentIncarnation(of local: SyncRecord) throws -> String {
        try ledger.incarnation(local.kind, id: local.id) ?? SyncLedger.legacyIncarnation
    }

    /// A deletion not applied: counted when refused (`cause`); this device's state goes again
    /// against the server's version — the record, whole (the server's values forgotten, the
    /// stamps known kept: `Store.markSentWhole`), or, deleted here, its sealed deletion.
    func declineDeletion(_ remote: WireRecord, local: SyncRecord?, kind: RecordKind, version: Int64, refusing cause: RefusalCause?) throws {
        if let cause { report.refuse(cause) }
        guard let local else { return }
        if local.isTombstone || local.isInTrash {
            // Deleted here: this device's sealed deletion goes, against the server's version.
            try ledger.setSyncMetadata(kind, id: remote.id, state: .pendingDeletion, remoteVersion: version)
            return
        }
        try ledger.markSentWhole(kind, id: remote.id)
        try ledger.setSyncMetadata(kind, id: remote.id, state: .pendingUpload, remoteVersion: version)
    }

    /// A live copy of an incarnation that is over, served again: counted and not applied. This
    /// device's own state goes back to the server: its live record (whole), or its deletion of
    /// that incarnation — from its trash, or, once purged, from the ledger alone.
    private func refuseResurrection(_ remote: WireRecord, incarnation: String, local: SyncRecord?, kind: RecordKind, version: Int64) throws {
        // Counted when the server had that life's end: this device saw a deletion of the record
        // (its own acknowledged, or one it pulled). A life this device ended by a restore of its
        // own, never sent, is no lie of the server's: still not applied, and the restore goes.
        if try ledger.sawAnyDeletion(kind, id: remote.id) || local == nil { report.refuse(.deletedIncarnation) }
        guard let local else {
            purgedWhileInFlight.append(WireRecord(kind: kind.rawValue, id: remote.id, expectedVersion: version, deleted: true,
                                                  fields: try sealedDeletion(kind, id: remote.id, updatedAt: store.stamp(),
                                                                             incarnation: incarnation)))
            return
        }
        try ledger.markSentWhole(kind, id: remote.id)
        if local.isTombstone || local.isInTrash {
            try ledger.setIncarnation(kind, id: remote.id, incarnation)
            try ledger.setSyncMetadata(kind, id: remote.id, state: .pendingDeletion, remoteVersion: version)
        } else {
            try ledger.setSyncMetadata(kind, id: remote.id, state: .pendingUpload, remoteVersion: version)
        }
    }
}
