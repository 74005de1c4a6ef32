import TripBoardKeychain
import TripBoardSystem
import TripBoardStorage
import TripBoardSyncProtocol
import TripBoardModel

/// Pulling: the zone's changes since the change token, in pages of one consistent read, each page
/// applied with the token it reaches in one SQLite transaction; and the merge rules.
extension SyncEngine {
    /// A pulled record's fields, opened: each value with its hybrid-clock stamp.
    typealias OpenedFields = [String: (value: JSONValue, stamp: HybridStamp)]

    func pull() throws {
        // A first sync (or a zone recreated under another epoch) starts from the beginning and
        // copies live records only: old tombstones mean nothing to a device that never had them.
        // A device that already holds records the server has (pushed by a run whose pull broke
        // before its first page) takes the tombstones too: one may be of a record it holds.
        let fresh = account.epoch != zone.epoch
        let liveOnly = try fresh && !ledger.hasShadow()
        let storeAfter = fresh ? 0 : account.changeSequence
        // The keychain keeps a change token of its own (it commits apart from the store): the
        // pull starts from the earlier of the two, and each side applies only what is past its
        // own. `nil` while keychain items cannot be synced here (the token then waits).
        let secrets = try secretPullStart()
        let after = min(storeAfter, secrets?.after ?? storeAfter)
        let high = try beginPull(after: after, liveOnly: liveOnly && (secrets?.fresh ?? true))
        // After a failure the pull's end is sent best-effort (the failure is what is reported);
        // after a pull that went through it is awaited like any request (`endPull`).
        var ended = false
        defer { if !ended { _ = try? agent.send(.pullEnd) } }
        var reached = after
        var storeReached = storeAfter
        var secretsReached = secrets?.after
        try ledger.withSyncCache(kibibytes: Self.syncCacheKibibytes) {
            let pageRequest = AgentRequest.pullPage(limit: AgentLimits.pageRecords)
            try agent.post(pageRequest)
            while true {
                let (records, more, _, _) = try WireJSON.page(try agent.collect(), agent)
                // The next page is read on the server while this one is applied here.
                if more { try agent.post(pageRequest) }
                let end = more ? (records.last?.sequence ?? reached) : high
                // Keychain items first, in the keychain's own transaction with its token: a kill
                // before the store's page commits pulls them again, and they are skipped then.
                if let secretsAfter = secretsReached, let secrets {
                    let mine = records.filter { $0.kind == Self.secretKind && ($0.sequence ?? .max) > secretsAfter }
                    if !mine.isEmpty || end > secretsAfter || secrets.fresh {
                        try applySecrets(mine, token: max(end, secretsAfter))
                        secretsReached = max(end, secretsAfter)
                    }
                }
                let theirs = records.filter { $0.kind != Self.secretKind && ($0.sequence ?? .max) > storeReached }
                // A first sync records its token even when there was nothing: from then on the
                // device follows the feed, tombstones included.
                if !theirs.isEmpty || end > storeReached || fresh {
                    let now = store.stamp()
                    let token = max(end, storeReached)
                    try store.writeTransaction {
                        // A page of many records pays for the search index once, at its end
                        // (`Store.indexingInsertsOnce`): FTS5 would otherwise write its pending
                        // terms at every record's savepoint. A page of a few is not worth
                        // the triggers dropped and made again.
                        try store.indexingInsertsOnce(batchRows: Store.indexBatchRows, when: theirs.count >= Self.bulkIndexingRecords) {
                            try withPageShadows { for record in theirs { try apply(record, at: now) } }
                            try applyHeldWhoseParentArrived(at: now)
                        }
                        try ledger.setChangeToken(epoch: zone.epoch, sequence: token, record: theirs.last?.versioned)
                    }
                    CrashPoint.reach("sync.page-applied")
                    storeReached = token
                    account.epoch = zone.epoch
                    account.changeSequence = token
                }
                reached = end
                if !more { break }
            }
        }
        try endPull(&ended)
    }

    /// Opens the pull of the zone's changes past `after` (live records only for a first sync);
    /// returns the highest sequence the server has now.
    private func beginPull(after: Int64, liveOnly: Bool) throws -> Int64 {
        guard case .pullBegun(let high) = try agent.send(.pullBegin(zone: account.zone, afterSequence: after, liveOnly: liveOnly)) else {
            throw agent.unexpectedAnswer()
        }
        return high
    }

    /// Ends the pull the agent holds open: a lost connection, or a server that cannot commit the
    /// pull's read-only transaction, surfaces here rather than in the requests after it.
    func endPull(_ ended: inout Bool) throws {
        ended = true
        _ = try agent.send(.pullEnd)
    }

    /// Pulls, then settles what the pull may have paired: the same ticket filed and pushed on
    /// two devices (`Store.mergePushedDuplicates`), in a transaction of its own whose changes
    /// the push that follows sends.
    func pullAndSettle() throws {
        let pulledBefore = report.pulled
        try pull()
        // Caught up: an attachment a pulled deletion took with its booking, that no deletion of
        // its own and no move elsewhere settled, has its deletion sent from here.
        try ledger.sendOwedAttachmentDeletions()
        guard report.pulled > pulledBefore else { return }
        report.duplicatesMerged += try store.writeTransaction { try ledger.mergePushedDuplicates(at: store.stamp()) }
    }

    /// Runs `body`, which applies the records of a pulled page, with the shadows of those new
    /// here written at its end, set-based (`PageShadows`), rather than four statements each.
    func withPageShadows(_ body: () throws -> Void) throws {
        pageShadows = PageShadows()
        defer { pageShadows = nil }
        try body()
        try flushPageShadows()
    }

    /// Writes the shadows `withPageShadows` holds: before its end too, when a record of theirs
    /// comes again in the same page (a server that serves one twice), so that it is merged
    /// against its shadow.
    func flushPageShadows() throws {
        guard let pending = pageShadows, !pending.isEmpty else { return }
        pageShadows = PageShadows()
        for (kind, records) in pending.byKind {
            try ledger.clearShadows(kind, ids: records.map(\.id), pinning: records.filter(\.pinning).map(\.id))
            try ledger.setShadows(kind, records.map { ($0.id, $0.fields) })
        }
    }

    /// Applies one server record inside the page's transaction. Nothing the user made is lost:
    /// a deletion from the server moves a live record to the trash; a local deletion keeps the
    /// server's edited version in the trash.
    func apply(_ remote: WireRecord, at now: String) throws {
        guard let kind = RecordKind(rawValue: remote.kind), SyncRecord.kinds.contains(kind),
              (try? FieldRules.id(remote.id)) == remote.id, let version = remote.version, version >= 1 else {
            report.skipped += 1
            return
        }
        if pageShadows?.holds(kind, id: remote.id) == true { try flushPageShadows() }
        var fields: OpenedFields = [:]
        func open(_ field: String) throws {
            guard let sealed = remote.fields[field] else { return }
            guard let stamp = HybridStamp(sealed.stamp) else { throw SyncError.damagedServerData("\(kind.rawValue) \(remote.id): a field's stamp is malformed") }
            fields[field] = (try key.open(sealed, kind: kind.rawValue, id: remote.id, field: field), stamp)
        }
        // The kind's fields, then the losing values another device tells of (no array made per record).
        for field in SyncRecord.fieldNames(kind) { try open(field) }
        try open(Self.lostEditsField)
        try open(Self.incarnationField)
        try open(Self.deletionField)
        try open(Self.deletedWithField)
        let local = try ledger.syncRecord(kind, id: remote.id)
        // Incarnations first: a deletion no device sealed, or one of an incarnation this device
        // knows replaced, and a live copy of an incarnation that is over, are refused.
        if remote.deleted {
            switch try judgeDeletion(remote, fields: fields, local: local, kind: kind) {
            case .believe:
                if let local, try isMovedOutOfDeletion(remote, fields: fields, local: local) {
                    return try keepMovedOut(remote, fields: fields, local: local, kind: kind, version: version)
                }
            case .refuse(let cause): return try declineDeletion(remote, local: local, kind: kind, version: version, refusing: cause)
            case .superseded: return try declineDeletion(remote, local: local, kind: kind, version: version, refusing: nil)
            }
        }
        // A live copy of a later incarnation than this device's (brought back from the trash on
        // another device) is news whatever its version: after a server went back, it may carry
        // the number this device's tombstone of the earlier one holds.
        var laterIncarnation = false
        if !remote.deleted {
            switch try admitIncarnation(remote, fields: fields, local: local, kind: kind, version: version) {
            case .refused: return
            case .same: break
            case .later: laterIncarnation = true
            }
        }
        if let local, let current = local.remoteVersion, current >= version {
            // Version numbers are concurrency tokens, never the proof of "I have this already": a
            // server restored from an older dump numbers new changes with versions devices hold
            // for older content. What decides is the fields' stamps against the shadow's — for a
            // record live here; a deletion carries no stamp, so for one deleted here (or a
            // deletion arriving) the version still decides, except that the same version cannot
            // be live here and deleted there: that deletion was numbered after the server went back.
            let deletedHere = local.isTombstone || local.isInTrash
            // A sealed deletion carries its own stamp: one this device has not seen is news,
            // whatever version the server gave it (a server that lost the record numbers the
            // tombstone sent again from the start, below what this device holds live).
            let unseenDeletion = try remote.deleted && !deletedHere && fields[Self.deletionField].map {
                try !ledger.sawDeletion(kind, id: remote.id, stamp: $0.stamp.description)
            } ?? false
            let renumberedDeletion = remote.deleted && !deletedHere && (version == current || unseenDeletion)
            // A ticket a pulled deletion of its booking took to the trash (still `synchronized`)
            // is weighed as a live one: a copy with new stamps may have moved it elsewhere first,
            // numbered with the version held here by a server that lost the record.
            let trashedWithItsBooking = local.isInTrash && !local.isTombstone && local.syncState == .synchronized
            let newStamps = !remote.deleted && (!deletedHere || trashedWithItsBooking)
                ? try bringsNewStamps(fields, kind: kind, id: remote.id) : false
            // Deleted on both sides, the server's deletion numbered below the version this device's
            // waits against (the server went back): acknowledged (`applyDeletion`), else this
            // device's push would meet the server's version at every run, for good.
            let deletedBothLower = remote.deleted && local.isTombstone && version < current
            guard renumberedDeletion || newStamps || laterIncarnation || deletedBothLower else {
                // Our own push coming back, or the same content at a version the server numbered
                // lower (it went back): the next push goes against the server's version — a
                // deletion waiting here too, which beats the live copy whatever it holds (else it
                // would meet a conflict at every push, for good). A deletion here that was sent
                // keeps its version: the reconcile sends it again against the server's.
                let waitingDeletion = deletedHere && local.syncState == .pendingDeletion
                if version < current && (!deletedHere || waitingDeletion) && !remote.deleted {
                    try ledger.setSyncMetadata(kind, id: remote.id, state: local.syncState, remoteVersion: version)
                }
                return
            }
        }
        if remote.deleted {
            // Whatever waited for this record now waits for its own deletion; a held version of
            // the record itself is superseded.
            try ledger.dropHeld(kind, id: remote.id)
            if local == nil { try ledger.noteHeldParentDeleted(kind, id: remote.id) }
        }
        let toldBefore = fields[Self.lostEditsField] == nil ? nil : try ledger.shadow(kind, id: remote.id)[Self.lostEditsField]?.stamp
        do {
            try merge(remote, version: version, fields: fields, into: local, kind: kind, at: now)
            if !remote.deleted { try keepConflictsTold(in: fields, kind: kind, id: remote.id, previousStamp: toldBefore, at: now) }
        } catch is ParentMissing {
            // Its trip (or booking) has not arrived (the foreign key refused the write, undone
            // with the savepoint): held, sealed as it came, until it does. Asking the store first
            // would cost every pulled record a lookup.
            guard let parent = Self.parent(of: kind, fields: fields, local: local) else { throw SyncError.damagedServerData("\(kind.rawValue) \(remote.id) names no parent") }
            guard try isLaterThanHeld(fields, version: version, kind: kind, id: remote.id) else { return }
            try ledger.hold(kind, id: remote.id, parent: parent, version: version, record: WireJSON.records([remote]), at: now)
        } catch is StoreError {
            // A record that breaks a field rule, or whose trip is not here: not applied, counted.
            // Anything it wrote is undone with the savepoint.
            report.skipped += 1
        }
    }

    /// Whether a copy of a record whose parent is not here is later than the copy held (if any):
    /// by its latest stamp, then by its version. Versions alone cannot tell — a server that lost
    /// the record numbers the copy sent again below the one held — and an older copy served
    /// again (a server gone back) must not replace a later one. The held copy's stamps were
    /// checked when it was opened on arrival.
    private func isLaterThanHeld(_ fields: OpenedFields, version: Int64, kind: RecordKind, id: String) throws -> Bool {
        guard let held = try ledger.heldCopy(kind, id: id),
              let copy = try JSON.decode([WireRecord].self, from: held.record).first else { return true }
        let heldLatest = copy.fields.values.compactMap { HybridStamp($0.stamp) }.max()
        let latest = fields.values.map(\.stamp).max()
        guard let heldLatest, let latest, latest != heldLatest else { return version > held.version }
        return latest > heldLatest
    }

    /// Whether any of `fields` carries a stamp other than the one this device last saw the
    /// server have for it (its shadow).
    private func bringsNewStamps(_ fields: OpenedFields, kind: RecordKind, id: String) throws -> Bool {
        let shadow = try ledger.shadow(kind, id: id)
        return fields.contains { field, opened in shadow[field]?.stamp != opened.stamp.description }
    }

    /// The record a pulled `kind` belongs to once applied: the trip its `tripId` names, the
    /// booking an attachment's `bookingId` names (the server's value, or this device's when the
    /// server sent none).
    static func parent(of kind: RecordKind, fields: OpenedFields, local: SyncRecord?) -> (kind: RecordKind, id: String)? {
        guard let (field, parentKind) = SyncRecord.parentField(of: kind),
              let id = fields[field]?.value.stringValue ?? local?.fields[field]?.stringValue else { return nil }
        return (parentKind, id)
    }

    /// Applies the held records whose trip or booking is here now (this page brought it), inside
    /// the page's transaction; again until none is left, since an applied booking may be what a
    /// held attachment waited for.
    func applyHeldWhoseParentArrived(at now: String) throws {
        while true {
            let ready = try ledger.takeHeldWhoseParentArrived()
            if ready.isEmpty { return }
            for text in ready {
                for record in try JSON.decode([WireRecord].self, from: text) { try apply(record, at: now) }
            }
        }
    }

    private func merge(_ remote: WireRecord, version: Int64, fields: OpenedFields,
                       into local: SyncRecord?, kind: RecordKind, at now: String) throws {
        // A trip, place or booking new here (every record of a first sync) checks everything
        // before its one INSERT, which SQLite undoes whole when it fails; what follows writes the
        // sync tables only. It needs no savepoint of its own (`inRecordWithoutSavepoint`).
        if local == nil && kind != .attachment {
            return try ledger.inRecordWithoutSavepoint {
                try mergeUnguarded(remote, version: version, fields: fields, into: local, kind: kind, at: now)
            }
        }
        try ledger.inRecordSavepoint {
            try mergeUnguarded(remote, version: version, fields: fields, into: local, kind: kind, at: now)
        }
    }

    private func mergeUnguarded(_ remote: WireRecord, version: Int64, fields: OpenedFields,
                                into local: SyncRecord?, kind: RecordKind, at now: String) throws {
        let served = fields.mapValues { ShadowField(value: $0.value.canonicalText, stamp: $0.stamp.description) }
        /// The server's fields become the shadow, but for those in `knownHere`: what this device
        /// knew of them is later than what was served (see `mergeFields`).
        func keepShadow(_ knownHere: [String: ShadowField] = [:]) throws {
            let shadow = served.merging(knownHere) { _, known in known }
            try ledger.clearShadow(kind, id: remote.id, pinningIncarnation: shadow[Self.incarnationField] == nil)
            try ledger.setShadow(kind, id: remote.id, fields: shadow)
        }
        guard var local else {
            guard !remote.deleted else { return }
            try insertNew(remote, version: version, fields: fields, kind: kind, at: now)
            if pageShadows != nil {
                pageShadows?.add(kind, id: remote.id, fields: served, pinning: served[Self.incarnationField] == nil)
            } else {
                try keepShadow()
            }
            report.pulled += 1
            return
        }
        if remote.deleted {
            return try applyDeletion(of: local, version: version, at: now, deleting: fields[Self.deletionField])
        }
        if local.isInTrash && !local.isTombstone && local.syncState != .synchronized {
            // Deleted here while the server had no version of it this device knew (its push
            // unanswered, or the server had lost the record): the server has it now, so the
            // deletion is owed — delete beats edit, as for a tombstone below. (A record in the
            // trash and synchronized went there by the server's deletion: restored elsewhere.)
            local.syncState = .pendingDeletion
        }
        if local.isTombstone {
            // Deleted here, edited there: delete beats edit. The edited version is what the trash
            // keeps; the tombstone now expects the server's version, and is pushed.
            for (field, value) in fields { local.fields[field] = value.value }
            local.remoteVersion = version
            try ledger.writeSyncRecord(local, inserting: false)
            try keepShadow()
            report.pulled += 1
            return
        }
        let parentTrashed = try Self.parent(of: kind, fields: fields, local: local).map { try trashPlace(of: $0) } ?? nil
        if local.isInTrash && !(kind == .attachment && parentTrashed != nil) {
            // In the trash here after the server deleted it (or its booking), live there again:
            // restored on another device, or an attachment moved to another booking first. One
            // whose booking is in the trash here stays there (`sendOwedAttachmentDeletions`).
            try ledger.takeOutOfTrash(kind, id: remote.id)
            local.syncState = .synchronized
        }
        var (merged, kept, knownHere, sendWhole) = try mergeFields(of: local, with: fields, version: version, at: now)
        if kind == .attachment && !local.isInTrash, let parentTrashed = try merged.parent.map({ try trashPlace(of: $0) }) ?? nil {
            // Moved there to a booking deleted here: it joins the booking in the trash, and its
            // deletion is sent — delete beats edit, as for a record added there. The booking is
            // the merged one: moved here later (a merge of bookings), it stays where it went.
            merged.syncState = .pendingDeletion
            if let entry = parentTrashed { try ledger.placeInTrash(kind, id: remote.id, with: entry, at: now) }
        }
        try ledger.writeSyncRecord(merged, inserting: false)
        try keepShadow(knownHere)
        if sendWhole { try ledger.markSentWhole(kind, id: remote.id, forgetting: false) }
        if placeholders.removeValue(forKey: kind.rawValue + "/" + remote.id) != nil {
            try ledger.dropPlaceholder(kind, id: remote.id)
            report.placeholdersReplaced += 1
        }
        report.pulled += 1
        report.conflictsKept += kept  // counted once the record is written (a skipped one keeps none)
    }

    /// The server deleted `local`: acknowledged when it is deleted here too (or already in the
    /// trash), else moved to the trash — delete beats edit.
    private func applyDeletion(of local: SyncRecord, version: Int64, at now: String, deleting sealed: (value: JSONValue, stamp: HybridStamp)?) throws {
        let (kind, id) = (local.kind, local.id)
        try ledger.clearShadow(kind, id: id, keeping: SyncLedger.keptThroughDeletion)
        // The ledger: this incarnation (and the one named, if another) is over, whatever a purge
        // of the trash does later; and this deletion is one seen, should it be served again.
        try ledger.noteDead(kind, id: id, incarnation: try currentIncarnation(of: local))
        if let deleted = sealed?.value.stringValue { try ledger.noteDead(kind, id: id, incarnation: deleted) }
        if let sealed { try ledger.noteDeletionSeen(kind, id: id, stamp: sealed.stamp.description) }
        if local.isTombstone || local.isInTrash {
            // Deleted on both sides (or already in the trash here): the server's deletion is
            // acknowledged — at the server's number, below the one held here when it went back.
            if let current = local.remoteVersion, version < current {
                try ledger.setSyncMetadata(kind, id: id, state: local.syncState, remoteVersion: version)
            }
            if try !ledger.recordAcknowledgement(kind: kind, id: id, remoteVersion: version) {
                try ledger.setSyncMetadata(kind, id: id, state: local.syncState, remoteVersion: version)
            }
            return
        }
        // Delete beats edit: the record (edited here or not) goes to the trash, with its
        // children; the server has it deleted, so it is synchronized there. What it took of
        // this device's own work is named in the report, with the way back.
        let changedHere = try ledger.unsyncedRecordsUnder(kind, id: id)
        let entry = try store.trash.moveToTrashInTransaction(kind, id: id, at: now, pulled: true)
        if changedHere > 0 { report.trashedWithChangesHere.append(TrashedWithChangesHere(entry: entry, changedHere: changedHere)) }
        try ledger.setSyncMetadata(kind, id: id, state: .synchronized, remoteVersion: version)
        report.trashed += 1
    }

    /// `local` merged field by field with the server's `fields` at `version`, and how many losing
    /// values were kept. A field edited here since the server's last version keeps the local
    /// value only if its stamp is later than the server's. When the server's value changed too
    /// (its stamp is not the one this device last saw) and the two differ, the losing value is
    /// kept for `sync conflicts`, whichever side it came from.
    private func mergeFields(of local: SyncRecord, with fields: OpenedFields, version: Int64,
                             at now: String) throws -> (merged: SyncRecord, kept: Int, knownHere: [String: ShadowField], sendWhole: Bool) {
        let (kind, id) = (local.kind, local.id)
        let localShadow = try ledger.shadow(kind, id: id)
        var edited = Set(changedFields(of: local, shadow: localShadow))
        let edits = edited.isEmpty ? [:] : try ledger.fieldEdits(kind, id: id)
        if let madeAt = placeholders[kind.rawValue + "/" + id] {
            // A placeholder a salvage made: what it holds was invented, and the server's copy
            // wins every field but those the user edited since.
            edited = edited.filter { field in edits[field].map { $0 > madeAt } ?? false }
        }
        var localWins = false
        var resent = false
        var refused = false
        var kept = 0
        var merged = local
        // A field served with an older stamp than the one this device knew the server had: the
        // server went back (restored from an older dump, or serving an old sealed value again).
        // Never applied, and what this device knew stays in its shadow, never lowered — else a
        // value older than the one held here but newer than the replayed stamp would be believed
        // next (set A, B, A again; the server serves the first A, then B). A value other than
        // this device's is refused (counted); this device's own goes again with its own stamp
        // (the record sent whole) or, edited here, as the edit it is.
        var knownHere: [String: ShadowField] = [:]
        var sendWhole = false
        for field in SyncRecord.fieldNames(kind) {
            guard let theirs = fields[field] else { continue }
            let seen = localShadow[field].flatMap { HybridStamp($0.stamp) }
            if let seen, theirs.stamp < seen, let known = localShadow[field] {
                knownHere[field] = known
                // A field only the shadow holds (an attachment's blob name, the same for the same
                // bytes): what this device knew stays, its stamp never lowered.
                guard let mine = local.fields[field] else { continue }
                let differs = mine.canonicalText != theirs.value.canonicalText
                if differs { refused = true }
                if edited.contains(field) {
                    localWins = true
                } else if differs {
                    localWins = true
                    resent = true
                    sendWhole = true
                }
                continue
            }
            guard edited.contains(field), let mine = local.fields[field] else {
                merged.fields[field] = theirs.value
                continue
            }
            let myStamp = localStamp(updatedAt: edits[field] ?? local.updatedAt, after: localShadow[field]?.stamp)
            let differs = mine.canonicalText != theirs.value.canonicalText
            // A value newer than the one this device last saw there: an edit made elsewhere
            // meanwhile (an older one is the server going back, not a competing edit).
            let concurrent = differs && (seen.map { theirs.stamp > $0 } ?? true)
            let minePair = ShadowField(value: mine.canonicalText, stamp: myStamp.description)
            let theirPair = ShadowField(value: theirs.value.canonicalText, stamp: theirs.stamp.description)
            if myStamp > theirs.stamp {
                if differs { localWins = true }
                if concurrent {
                    try ledger.keepConflict(kind, id: id, field: field, kept: minePair, lost: theirPair, lostOn: .elsewhere, at: now)
                    kept += 1
                }
                continue
            }
            if concurrent {
                try ledger.keepConflict(kind, id: id, field: field, kept: theirPair, lost: minePair, lostOn: .here, at: now)
                kept += 1
            }
            merged.fields[field] = theirs.value
        }
        if !edited.isEmpty { report.merged += 1 }
        if resent { report.reuploaded += 1 }
        if refused { report.refuse(.olderValue) }
        merged.remoteVersion = version
        if localWins {
            // A value kept to be sent again makes even a synchronized record pending.
            merged.syncState = local.syncState == .failed || resent ? .pendingUpload : local.syncState
        } else {
            merged.syncState = .synchronized
            merged.updatedAt = now
        }
        return (merged, kept, knownHere, sendWhole)
    }

    /// `milliseconds` since the epoch as an ISO 8601 UTC stamp (`updated_at`'s form).
    static func utcStamp(milliseconds: Int64) -> String {
        Timestamp(secondsSinceEpoch: milliseconds / 1000, milliseconds: Int(milliseconds % 1000)).utcStamp
    }

    /// A record this device has never had. A place or booking whose trip is in the trash here,
    /// or an attachment whose booking is, joins it there (the server still has it live: its
    /// deletion is pushed from here); one whose parent was deleted and emptied from the trash
    /// here, its deletion not yet sent, becomes a deletion to send with it.

    private func insertNew(_ remote: WireRecord, version: Int64, fields: OpenedFields,
                           kind: RecordKind, at now: String) throws {
        let updatedAt = Self.utcStamp(milliseconds: fields.values.map(\.stamp.milliseconds).max() ?? 0)
        var record = SyncRecord(kind: kind, id: remote.id, fields: fields.mapValues(\.value), syncState: .synchronized,
                                remoteVersion: version, updatedAt: min(updatedAt, now))
        // Its parent in the trash here, or deleted and emptied from it with its deletion not yet
        // told: the child goes where that deletion's children went (its deletion is sent).
        // The parent decides where the record goes; one not here holds the record (`ParentMissing`),
        // told before anything is written (no savepoint may be there to undo it).
        var trashedWith: String?? = nil
        if let parent = record.parent {
            guard let owner = try ledger.standing(parent.kind, id: parent.id) else { throw ParentMissing() }
            trashedWith = Self.trashPlace(of: owner, id: parent.id)
        }
        if trashedWith != nil { record.syncState = .pendingDeletion }
        try ledger.writeSyncRecord(record, inserting: true)
        if let entry = trashedWith ?? nil {
            try ledger.placeInTrash(kind, id: remote.id, with: entry, at: now)
        } else {
            if kind == .attachment { try hashCopiesNotHashedYet(like: record) }
            report.duplicatesMerged += try ledger.absorbLocalDuplicate(of: record)
        }
    }

    /// Where a child of `parent` goes when its parent is not live here: `.some(entry)`, the trash
    /// entry the parent is in; `.some(nil)`, nowhere (the parent was deleted and emptied from the
    /// trash, its deletion not yet told); `nil` when the parent is live or not here.
    private func trashPlace(of parent: (kind: RecordKind, id: String)) throws -> String?? {
        guard let owner = try ledger.standing(parent.kind, id: parent.id) else { return nil }
        return Self.trashPlace(of: owner, id: parent.id)
    }

    /// `trashPlace(of:)` for the parent standing as `owner`, whose id is `id`.
    private static func trashPlace(of owner: SyncLedger.Standing, id: String) -> String?? {
        if owner.inTrash { return .some(owner.trashedWith ?? id) }
        return owner.tombstone ? .some(nil) : nil
    }

    /// This device's copies on the same booking, of the same size, never uploaded, whose bytes are
    /// not hashed yet (a migrated container before its hashing pass) are hashed now, in the page's
    /// transaction, so that `absorbLocalDuplicate` compares their hashes — a pending one equals
    /// nothing. Only the rows it could merge are read (rare: the same ticket filed on both devices
    /// before this one's hashing pass ended). A copy that cannot be read is left for `container
    /// check` to report: it is no duplicate of anything, and the pull goes on.
    private func hashCopiesNotHashedYet(like record: SyncRecord) throws {
        guard let bookingId = record.fields["bookingId"]?.stringValue, case .number(let text)? = record.fields["byteCount"],
              let byteCount = Int64(text), let hash = record.fields["contentHash"]?.stringValue, !hash.isEmpty else { return }
        for candidate in try store.unverifiedAttachments(bookingId: RecordID(bookingId), tripId: nil, byteCount: byteCount)
        where candidate.remoteVersion == nil && candidate.syncState == .pendingUpload {
            do {
                _ = try AttachmentHashing.verifiedHash(of: candidate, files: files, recordingIn: store)
            } catch is FileSystemError {
                continue
            }
        }
    }
}

/// The shadows of a pulled page's records new here (`SyncEngine.withPageShadows`): for each,
/// the server's fields, and whether its incarnation, when only an earlier shadow holds it, is
/// pinned before that shadow goes (`SyncLedger.clearShadow`).
struct PageShadows {
    private(set) var byKind: [RecordKind: [(id: String, fields: [String: ShadowField], pinning: Bool)]] = [:]
    private var keys: Set<String> = []

    var isEmpty: Bool { keys.isEmpty }

    func holds(_ kind: RecordKind, id: String) -> Bool { keys.contains(kind.rawValue + "/" + id) }

    mutating func add(_ kind: RecordKind, id: String, fields: [String: ShadowField], pinning: Bool) {
        keys.insert(kind.rawValue + "/" + id)
        byKind[kind, default: []].append((id, fields, pinning))
    }
}
