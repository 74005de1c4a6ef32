public import TripBoardKeychain
public import TripBoardSystem
public import TripBoardStorage
public import TripBoardSyncProtocol
public import TripBoardModel
import TripBoardKeys

/// What one `sync now` did. `sync now --json` prints this object.
/// Why a device did not believe what the server served (docs/sync.md, What the server can and
/// cannot do); each is said in a `warning:` line of its own.
public enum RefusalCause: String, Sendable, CaseIterable {
    /// A value older than the one this device holds (or knew the server had) for a field.
    case olderValue
    /// A tombstone no device sealed (past `unsealed_before`).
    case unsealedDeletion
    /// A sealed deletion this device saw before, served again against a later incarnation (a
    /// record brought back from the trash, an item set anew).
    case replayedDeletion
    /// A live copy of an incarnation this device knows is over (deleted or replaced).
    case deletedIncarnation
}

public struct SyncReport: Sendable, Equatable, Codable {
    /// Records brought from the server and written here (new, changed or merged).
    public var pulled = 0
    /// Of those, records where edits made here and on another device were merged field by field.
    public var merged = 0
    /// Records deleted on another device and moved to the trash here (delete beats edit).
    public var trashed = 0
    /// Records whose deletion went with a trip's or booking's deleted on another device, but
    /// which were moved out from under it here: kept, and sent as a new life.
    public var keptMovedOut = 0
    /// Records a salvage had recreated in place of lost ones (`container salvage`) that the
    /// server's copies replaced, or that held nothing any more and were removed.
    public var placeholdersReplaced = 0
    /// Of those, the ones that took something added or changed here and not yet sent: named,
    /// with the command that brings them back.
    public var trashedWithChangesHere: [TrashedWithChangesHere] = []
    /// Server records not applied (invalid, or a place whose trip is not here); counted, left on the server.
    public var skipped = 0
    /// Records and keychain items the server served with a value older than the one this device
    /// holds (or knows the server had) for a field: not applied; this device's value was sent
    /// again. `sync now` then exits 65 (docs/sync.md, What the server can and cannot do).
    public var refused = 0
    /// `refused` by cause (`RefusalCause` names; causes that did not happen are absent).
    public var refusedBecause: [String: Int] = [:]
    /// Milliseconds this run added to edit times to stamp them on the server's time scale: the
    /// median of the offsets learned at the last syncs (server − device).
    public var clockOffset: Int64 = 0
    /// This device's clock differs from the server's by more than an hour (server − device,
    /// milliseconds): not corrected; edits keep this device's clock, and `sync now` warns.
    public var clockOffsetIgnored: Int64?
    /// Records the server accepted from this device.
    public var pushed = 0
    /// Values that lost a field-level merge here (this device's edit or the other's), kept and
    /// listed by `sync conflicts`.
    public var conflictsKept = 0
    /// Pushes refused because the server had a newer version (then pulled, merged and pushed again).
    public var conflicts = 0
    /// Records of a batch sent again after an interruption (the server had applied it: nothing twice).
    public var replayed = 0
    /// Pull-and-push rounds.
    public var rounds = 0
    /// Trips, places, bookings and attachments still waiting for the server when it ended.
    public var pending = 0
    /// Pulled records waiting here for the trip or booking they belong to, which has not arrived
    /// (applied when it does; `sync status` lists them).
    public var held = 0
    /// Attachment files sealed and uploaded (a file the server had already is not counted), and
    /// downloaded, verified and published here.
    public var blobsUploaded = 0
    public var blobsDownloaded = 0
    /// Blobs this run removed from the server: no live record named them, and nothing had named
    /// or uploaded them for `AgentLimits.blobGraceDays`.
    public var blobsCollected = 0
    /// Attachments pulled here whose file could not be fetched or verified: they stay `missing`
    /// (never a half file) and the next sync tries again.
    public var attachmentsMissing = 0
    /// Attachment files not uploaded because their class is closed (the device locked): they
    /// wait for the unlock, and the next sync after it sends them.
    public var uploadsAwaitingUnlock = 0
    /// The zone asks for a newer client (`min_client_version`): this run only pulled.
    public var readOnly = false
    /// Why this run compared everything with the server first (`zoneRecreated`,
    /// `serverLostChanges`, `horizonPassed`), or nil for an ordinary run (docs/sync.md).
    public var reconciled: SyncEngine.ReconcileReason?
    /// Of the records compared, those sent again because the server had lost them (or an older
    /// version), and those found deleted on the server long ago and moved to the trash here.
    public var reuploaded = 0
    /// Tombstones older than the horizon this run removed from the server.
    public var tombstonesPurged = 0
    /// Bookings and attachments this device made that turned out to be the ones another device
    /// had already sent (the same ticket filed on both): merged into the server's.
    public var duplicatesMerged = 0
    /// Migratable keychain items (records of kind `secret`): written here from the server,
    /// accepted by the server from here (tombstones included), deleted here because they were
    /// deleted (or made this-device-only) on another device, and still waiting for the server.
    public var secretsPulled = 0
    public var secretsPushed = 0
    public var secretsDeleted = 0
    public var secretsPending = 0
    /// The container key is locked on this device (`app keychain recover`): keychain items were
    /// neither sent nor received this run; they wait, and so does the keychain's change token.
    public var keychainLocked = false
    /// The device is locked (or not unlocked since it started): migratable keychain items — of
    /// either class — are synced only while it is unlocked; they wait, and so does the keychain's
    /// change token. Records and attachments are synced as usual.
    public var keychainWaitsForUnlock = false
}

/// A deletion from another device that took this device's own unsent work to the trash.
public struct TrashedWithChangesHere: Sendable, Equatable, Codable {
    public var kind: RecordKind
    public var id: String
    public var name: String
    /// What went to the trash with it.
    public var contents: TrashEntry.Contents
    /// How many of the records it took (it included) were added or changed here and not sent.
    public var changedHere: Int
    /// The command that puts it back.
    public var restore: String

    init(entry: TrashEntry, changedHere: Int) {
        kind = entry.kind
        id = entry.id
        name = entry.name
        contents = entry.contents
        self.changedHere = changedHere
        restore = "app trash restore \(entry.id.prefix(8))"
    }
}

/// One `sync now`: send again a batch an interrupted run left, then pull, merge and push until
/// nothing is left (at most `maximumRounds`). The rules: docs/sync.md §3.
///
/// Each pulled page is applied in one SQLite write transaction with the change token it reaches;
/// each push batch is saved before it is sent and its acknowledgements are recorded in one
/// transaction, so a crash at any point loses nothing and applies nothing twice.
public final class SyncEngine {
    static let maximumRounds = 6
    /// The store's page cache while a pull applies pages or a push records answers (`Store.withSyncCache`).
    static let syncCacheKibibytes = 8 << 10
    /// The store's page cache while a push makes batches and records answers: the set-based
    /// acknowledgement seeks each record's row and its id in random order, and a large push's
    /// rows and indexes outgrow `syncCacheKibibytes` (a page missed is a page opened again).
    static let pushCacheKibibytes = 24 << 10
    /// The records a pulled page must hold for its search indexing to be done once at its end.
    static let bulkIndexingRecords = 64
    /// What this client's sync understands, compared with a zone's `min_client_version`: a zone
    /// that asks for more (a newer client changed what records mean) is only read from here.
    /// 2: deletions are sealed to an incarnation; this build raises the zone to it, so that an
    /// earlier build, whose deletions no device could tell from a server's forgery, only receives.
    public static let clientVersion = 2

    let store: Store
    /// What sync keeps in the store (`Store.syncLedger`).
    var ledger: SyncLedger { store.syncLedger }
    let files: AttachmentFiles
    let key: ZoneKey
    /// This device's keychain, for migratable items; `nil`: they are not synced this run.
    let keychain: Keychain?
    let agent: SyncAgentClient
    var account: SyncAccount
    let zone: ZoneInfo
    /// The server's clock at connection, in milliseconds: local stamps are clamped to it + 5 minutes.
    let serverMilliseconds: Int64
    /// This device's clock at the same moment (its store's clock), in milliseconds.
    let deviceMilliseconds: Int64
    /// What this run adds to edit times to stamp them on the server's time scale (`learnClockOffset`).
    var clockOffset: Int64 = 0
    /// The change sequence at or below which an unsealed tombstone (an earlier build's) is believed.
    var unsealedBefore: Int64 = 0
    /// What the server answered to this device's `SyncCheck`: whether it still has this device's
    /// last batch and the last record the token covers (nil: not asked).
    let serverHasLastMutation: Bool?
    let serverHasTokenRecord: Bool?
    /// `sync now --compare`: compare the server's list of records with this device's in this
    /// run, whenever the last comparison was.
    let compareNow: Bool
    var report = SyncReport()
    /// Blobs the server said it lacks, for records a batch named: uploaded again once no batch is
    /// in flight (an upload is a request of its own, and the agent answers one at a time).
    var blobsMissingOnServer: [String] = []
    /// Records a push found at another version than it expected: settled once the push ends
    /// (`settleConflicts`).
    var pushConflicts: [PushResult] = []
    /// Records a batch created on the server that were deleted and purged here meanwhile: their
    /// deletions go in a batch of their own (`sendDeletionsOfPurged`).
    var purgedWhileInFlight: [WireRecord] = []
    /// Keychain items (their record ids) whose waiting deletion the server has no row for (lost,
    /// or a zone made again): sent as a new sealed deletion, as a record's is, so that the server
    /// keeps it once this device's ledger is gone (a reinstall). A tombstone keeps no mark of
    /// this across runs: a later run meets the missing row again and sends it the same way.
    var secretDeletionsTheServerLacks: Set<String> = []
    /// Records a salvage recreated in place of lost ones (`kind/id` → when), loaded once per run:
    /// never sent, replaced by the server's copy when it comes.
    var placeholders: [String: String] = [:]
    /// The shadows of records new here, written for a whole pulled page at its end
    /// (`withPageShadows`); nil outside a page, where each record's is written with it.
    var pageShadows: PageShadows?
    /// The nonces a push's fields are sealed under (`sealChangedFields`).
    var nonces = NonceBuffer()

    public init(store: Store, files: AttachmentFiles, key: ZoneKey, keychain: Keychain? = nil, agent: SyncAgentClient,
                account: SyncAccount, zone: ZoneInfo, serverTime: Timestamp, serverHasLastMutation: Bool? = nil,
                serverHasTokenRecord: Bool? = nil, compareNow: Bool = false) {
        self.compareNow = compareNow
        self.store = store
        self.files = files
        self.key = key
        self.keychain = keychain
        self.agent = agent
        self.account = account
        self.zone = zone
        self.serverHasLastMutation = serverHasLastMutation
        self.serverHasTokenRecord = serverHasTokenRecord
        serverMilliseconds = serverTime.secondsSinceEpoch * 1000 + Int64(serverTime.milliseconds)
        deviceMilliseconds = Self.milliseconds(store.stamp()) ?? serverMilliseconds
    }

    /// How far from the server's a device's clock may be and still be corrected: beyond, the
    /// server's time is not taken (a server cannot move stamps by more than this) and edits keep
    /// this device's clock, with a warning.
    public static let clockCorrectionBound: Int64 = 60 * 60 * 1000

    /// Learns this device's offset from the server's clock at this connection and sets the one
    /// this run stamps with: the median of the last offsets within `clockCorrectionBound`.
    func learnClockOffset() throws {
        let sample = serverMilliseconds - deviceMilliseconds
        guard abs(sample) <= Self.clockCorrectionBound else {
            report.clockOffsetIgnored = sample
            clockOffset = 0
            return
        }
        let learned = try ledger.noteClockSample(sample)
        // Under a second is the measurement's own noise (the round trip, a process starting):
        // a clock kept right by NTP keeps its own time.
        clockOffset = abs(learned) < Self.clockCorrectionFloor ? 0 : learned
    }

    /// Offsets smaller than this are not applied (`learnClockOffset`).
    public static let clockCorrectionFloor: Int64 = 1000

    static func milliseconds(_ iso8601: String) -> Int64? {
        Timestamp(iso8601: iso8601).map { $0.secondsSinceEpoch * 1000 + Int64($0.milliseconds) }
    }

    public func run() throws -> SyncReport {
        try learnClockOffset()
        report.clockOffset = clockOffset
        unsealedBefore = try ledger.unsealedDeletionsBefore()
        if zone.minClientVersion > Self.clientVersion {
            // Read-only: what others push still arrives; nothing of this device's is sent,
            // not even a batch an interrupted run saved (it waits, as every pending record).
            report.readOnly = true
            report.rounds = 1
            try pull()
            try downloadBlobs()
            try finishReport()
            return report
        }
        if zone.minClientVersion < Self.clientVersion {
            _ = try agent.send(.requireClientVersion(zone: account.zone, clientVersion: Self.clientVersion))
        }
        // A first sync, and a reconcile, read the whole zone: the day's comparison is done.
        let copiesEverything = account.epoch != zone.epoch
        let reason = reconcileReason()
        let reconciling = reason != nil
        if let reason {
            // A batch saved for a server that has lost what it knew cannot be replayed against
            // it; its records are still pending and go out again after the comparison.
            if reason != .horizonPassed {
                try store.writeTransaction { try ledger.dropOutgoing() }
                try syncingKeychain?.dropSyncOutgoing()
            }
            try replayOutgoing()
            try replaySecretOutgoing()
            try reconcile(reason)
        } else {
            try replayOutgoing()
            try replaySecretOutgoing()
        }
        // A pull that fails on what the server sent (not on reaching it) does not keep this
        // device's own changes from going up: the push goes on, and the failure is reported at
        // the end (the token did not move past what failed, so the next run tries again).
        var pullFailure: (any Error)?
        try replacePlaceholders()
        for _ in 0..<Self.maximumRounds {
            report.rounds += 1
            if pullFailure == nil {
                do {
                    try pullAndSettle()
                } catch where Self.isAboutTheData(error) {
                    pullFailure = error
                }
            }
            let (recordsPushed, recordConflicts) = try ledger.withSyncCache(kibibytes: Self.pushCacheKibibytes) { try pushPending() }
            if !pushConflicts.isEmpty {
                defer { pushConflicts = [] }
                try settleConflicts(pushConflicts)
            }
            let (secretsPushed, secretConflicts) = try pushSecrets()
            let (pushed, conflicts) = (recordsPushed + secretsPushed, recordConflicts + secretConflicts)
            if conflicts == 0 && pushed == 0 { break }
            if pullFailure != nil && pushed == 0 { break }  // conflicts need a pull to settle
            if conflicts == 0, try ledger.pendingSyncRecords(limit: 1).isEmpty, try !secretsWaiting() { break }
        }
        try sendDeletionsOfPurged()
        if let pullFailure { throw pullFailure }
        if let reuploading = try compareWithServerIfDue(copiedEverything: copiesEverything || reconciling),
           try reuploading > 0 || !ledger.pendingSyncRecords(limit: 1).isEmpty || secretsWaiting() {
            // What the comparison found to send again (or would not take, this device's own value
            // going again) goes now, not at the next sync.
            _ = try ledger.withSyncCache(kibibytes: Self.pushCacheKibibytes) { try pushPending() }
            _ = try pushSecrets()
        }
        if !placeholders.isEmpty || report.placeholdersReplaced > 0 {
            report.placeholdersReplaced += try ledger.removeEmptyPlaceholderTrips()
        }
        try downloadBlobs()
        try purgeTombstones()
        try collectBlobs()
        try finishReport()
        return report
    }

    /// Whether `error` is about what was pulled (damaged server data, a record the store
    /// refused) rather than about reaching the server, after which nothing more can be sent.
    static func isAboutTheData(_ error: any Error) -> Bool {
        guard let error = error as? SyncError else { return true }
        if case .damagedServerData = error { return true }
        return false
    }

    // MARK: - Push

    /// Pushes pending records batch after batch until none is left, a batch meets a conflict
    /// (the next round pulls and merges first) or nothing moves; returns how many were applied
    /// and refused. While the agent and the server write one batch, this side makes and saves the
    /// next (other records: those in flight are left out); once a successful answer comes, the
    /// next batch is sent first and the answer recorded while the server writes it — unless the
    /// answer reports blobs the server lacks: those are uploaded first, then the next is sent.
    func pushPending() throws -> (Int, Int) {
        var applied = 0
        var conflicts = 0
        var inFlight: OutgoingBatch?
        while true {
            let prepared = try prepareBatch(excluding: inFlight?.keys ?? [], mayUpload: inFlight == nil)
            var next = prepared.batch
            if let batch = inFlight {
                // A failed answer is thrown here, before the next batch goes: batches apply in
                // order (parents first), and one that failed stops those after it.
                let response = try pushAnswer(try agent.collect())
                inFlight = nil
                // Blobs it says the server lacks are uploaded before anything else is sent.
                if response.missingBlobs.isEmpty, let batch = next {
                    try post(mutationID: batch.mutationID, batch.wire, encoded: batch.encoded)
                    inFlight = batch
                    next = nil
                }
                let (pushed, refused) = try finish(batch.mutationID, batch.entries, response: response, replaying: false)
                applied += pushed
                conflicts += refused
                if inFlight == nil { try uploadBlobsMissingOnServer() }
            }
            if let batch = next {
                try post(mutationID: batch.mutationID, batch.wire, encoded: batch.encoded)
                inFlight = batch
            }
            if conflicts > 0 {
                // The batch already sent is answered and recorded; the rest waits for the next round.
                if let batch = inFlight {
                    let response = try pushAnswer(try agent.collect())
                    let (pushed, refused) = try finish(batch.mutationID, batch.entries, response: response, replaying: false)
                    applied += pushed
                    conflicts += refused
                    try uploadBlobsMissingOnServer()
                }
                return (applied, conflicts)
            }
            if inFlight != nil || prepared.acknowledged > 0 || prepared.waitedForUpload { continue }
            return (applied, conflicts)
        }
    }

    /// A batch made, saved and not yet answered.
    struct OutgoingBatch {
        var mutationID: String
        var wire: [WireRecord]
        var entries: [OutgoingEntry]
        var encoded: [UInt8]
        var keys: Set<String> { Set(wire.map { $0.kind + "/" + $0.id }) }
    }

    /// Makes and saves one batch of pending records not in `excluding` (at most
    /// `AgentLimits.batchRecords`, and about `AgentLimits.batchBytes` of sealed fields); also
    /// acknowledges those edited and edited back (the server has their values). Without
    /// `mayUpload` (a push is in flight: the agent is busy), the batch ends before the first
    /// attachment whose file would have to be uploaded (`waitedForUpload`).
    private func prepareBatch(excluding: Set<String>, mayUpload: Bool) throws -> (batch: OutgoingBatch?, acknowledged: Int, waitedForUpload: Bool) {
        var wire: [WireRecord] = []
        var entries: [OutgoingEntry] = []
        var unchanged: [SyncRecord] = []
        var bytes = 0
        var waited = false
        // The records, their shadows and field edits, and the losing values of other devices to tell
        // them of, from one snapshot; the batch may end before the last record.
        var untold: [String: [(field: String, lost: ShadowField, keptStamp: String)]] = [:]
        let candidates = try store.readTransaction {
            untold = try ledger.untoldConflicts()
            // After an import (a push of many new records) nothing has been edited: no probe each.
            let anyEdits = try ledger.hasFieldEdits()
            // Incarnations made here (restores) are few: none at all spares every record the lookup.
            let anyMadeHere = try ledger.hasIncarnationsMadeHere()
            // Records to send whole again (`Store.markSentWhole`) are few: none spares the lookup.
            let anyWhole = try ledger.hasRecordsToSendWhole()
            return try ledger.pendingSyncRecords(limit: AgentLimits.batchRecords, excluding: excluding).map {
                record -> (record: SyncRecord, shadow: [String: ShadowField], edits: [String: String], incarnation: String?, whole: Bool) in
                if record.isTombstone { return (record, [:], [:], try ledger.incarnation(record.kind, id: record.id), false) }
                let shadow = try ledger.shadow(record.kind, id: record.id)
                let whole = try SyncLedger.isOnlyKept(shadow) || (anyWhole && ledger.isToSendWhole(record.kind, id: record.id))
                return (record, shadow, anyEdits ? try ledger.fieldEdits(record.kind, id: record.id) : [:],
                        anyMadeHere && whole ? try ledger.incarnation(record.kind, id: record.id) : nil, whole)
            }
        }
        let presealed = try sealPlainRecords(candidates)
        for (index, (record, shadow, edits, incarnation, whole)) in candidates.enumerated() {
            if bytes >= AgentLimits.batchBytes { break }
            if record.isTombstone {
                // A deletion is sealed like an edit, bound to the incarnation it deletes.
                let fields = try sealedDeletion(record.kind, id: record.id, updatedAt: record.updatedAt,
                                                incarnation: incarnation ?? SyncLedger.legacyIncarnation,
                                                with: try record.trashedWith.flatMap { entry in
                                                    try entry == record.id ? nil : parentFieldStamp(of: record).map { (entry, $0) }
                                                })
                wire.append(WireRecord(kind: record.kind.rawValue, id: record.id, expectedVersion: record.remoteVersion, deleted: true, fields: fields))
                // The deletion's stamp, so that once the server has it this device knows it as seen,
                // and the incarnation it deletes (JSON), which is then over.
                let deleted = String(decoding: JSONValue.string(incarnation ?? SyncLedger.legacyIncarnation).serialized(pretty: false, sortedKeys: true),
                                     as: UTF8.self)
                let seen = fields.mapValues { ShadowField(value: deleted, stamp: $0.stamp) }
                entries.append(OutgoingEntry(kind: record.kind.rawValue, id: record.id, updatedAt: record.updatedAt, deleted: true, fields: seen))
                continue
            }
            var record = record
            var blobName: String?
            if record.kind == .attachment {
                // Its file goes first: the blob is on the server before any record names it.
                if let name = Self.blobName(in: shadow) {
                    blobName = name
                } else if !mayUpload {
                    waited = true
                    break
                } else if let (name, contentHash) = try uploadBlob(of: record) {
                    blobName = name
                    record.fields["contentHash"] = .string(contentHash)
                } else {
                    continue  // its file is not here (or not what its row says): it waits
                }
                record.fields["blob"] = blobName.map(JSONValue.string)
            }
            var (sealed, pushed) = try presealed[index]
                ?? Self.sealChangedFields(of: record, shadow: shadow, edits: edits, whole: whole, key: key, stamps: fieldStamps, nonces: &nonces)
            // Its incarnation: a record's first life is the unnamed one (no field, nothing to
            // store); one a restore brought back has a random one (`Store.endIncarnation`), sealed
            // with it when the server knows none of its fields (the deletion cleared them, or it
            // is sent whole again). The server keeps it from then on (`fields || new`).
            if let current = incarnation, current != SyncLedger.legacyIncarnation, whole {
                let canonical = JSONValue.string(current).serialized(pretty: false, sortedKeys: true)
                let stamp = sealed.values.map(\.stamp).max() ?? localStamp(updatedAt: record.updatedAt, after: nil).description
                sealed[Self.incarnationField] = try key.seal(canonical: canonical, kind: record.kind, id: record.id,
                                                             field: Self.incarnationField, stamp: stamp, nonces: &nonces)
            }
            if let entries = untold[record.kind.rawValue + "/" + record.id] {
                (sealed[Self.lostEditsField], pushed[Self.lostEditsField]) = try lostEdits(of: record, entries, shadow: shadow)
            }
            if sealed.isEmpty && record.remoteVersion != nil {
                unchanged.append(record)
                continue
            }
            bytes += Self.sealedBytes(sealed)
            wire.append(WireRecord(kind: record.kind.rawValue, id: record.id, expectedVersion: record.remoteVersion, deleted: false, fields: sealed,
                                   blob: blobName))
            entries.append(OutgoingEntry(kind: record.kind.rawValue, id: record.id, updatedAt: record.updatedAt, deleted: false, fields: pushed))
        }
        try acknowledgeUnchanged(unchanged)
        guard !wire.isEmpty else { return (nil, unchanged.count, waited) }

        let mutationID = Identifier.make()
        // The two texts are made at once, the entries' on a thread of its own.
        let local = entries.count < Self.sealOnOneThreadBelow ? nil : BackgroundResult { [entries] in WireJSON.entries(entries) }
        let encoded = WireJSON.records(wire)
        try ledger.saveOutgoing(mutationID: mutationID, request: encoded, local: try local?.value() ?? WireJSON.entries(entries))
        CrashPoint.reach("sync.batch-saved")
        return (OutgoingBatch(mutationID: mutationID, wire: wire, entries: entries, encoded: encoded), unchanged.count, waited)
    }

    /// The sealed field of a deletion of the record: `deletion`, whose value is the incarnation it
    /// deletes (this device's current one unless given; the legacy one for a record an earlier
    /// build synced), stamped with the deletion's time. The server cannot make one, nor move one
    /// to another record or incarnation.
    /// `with`: the record whose deletion this one went with (its trash entry) and the stamp of the
    /// field that put this one under it, sealed as `deletedWith`, so that a device where the
    /// record was moved elsewhere later keeps it (`isMovedOutOfDeletion`).
    func sealedDeletion(_ kind: RecordKind, id: String, updatedAt: String, incarnation: String? = nil,
                        with entry: (id: String, parentStamp: HybridStamp)? = nil) throws -> [String: SealedField] {
        let deleted = try incarnation ?? ledger.incarnation(kind, id: id) ?? SyncLedger.legacyIncarnation
        let canonical = JSONValue.string(deleted).serialized(pretty: false, sortedKeys: true)
        let stamp = localStamp(updatedAt: updatedAt, after: nil).description
        var fields = [Self.deletionField: try key.seal(canonical: canonical, kind: kind, id: id, field: Self.deletionField, stamp: stamp, nonces: &nonces)]
        if let entry {
            let told = JSONValue.array([.string(entry.id), .string(entry.parentStamp.description)])
            fields[Self.deletedWithField] = try key.seal(canonical: told.serialized(pretty: false, sortedKeys: true),
                                                         kind: kind, id: id, field: Self.deletedWithField, stamp: stamp, nonces: &nonces)
        }
        return fields
    }

    /// Records edited and edited back: the server already has these values, so they are
    /// acknowledged at the version they have (one transaction).
    private func acknowledgeUnchanged(_ unchanged: [SyncRecord]) throws {
        guard !unchanged.isEmpty else { return }
        try store.writeTransaction {
            for record in unchanged {
                _ = try ledger.recordAcknowledgement(kind: record.kind, id: record.id, remoteVersion: record.remoteVersion ?? 1,
                                                    expectedUpdatedAt: record.updatedAt)
            }
        }
    }

    /// The fields of `record` that changed since the server's version, sealed for the wire, and
    /// as the shadow will keep them once the server has them; each stamped with its own edit's
    /// time (`edits`, `Store.fieldEdits`). With `whole` (the server knows none of its values)
    /// every field goes: one still as this device knew the server had it keeps that value's own
    /// stamp — sent again, it is no newer than it was, and never older. A function of its
    /// arguments only (any thread, its own `nonces`): `prepareBatch` seals a batch on two.
    static func sealChangedFields(of record: SyncRecord, shadow: [String: ShadowField], edits: [String: String], whole: Bool,
                                  key: ZoneKey, stamps: FieldStamps,
                                  nonces: inout NonceBuffer) throws -> (sealed: [String: SealedField], pushed: [String: ShadowField]) {
        var sealed: [String: SealedField] = [:]
        var pushed: [String: ShadowField] = [:]
        guard record.syncState != .synchronized else { return (sealed, pushed) }
        // `changedFields` and `localStamp`, with each value's canonical text made once (compared,
        // sealed and kept) and the stamp of a field the server has never seen written once.
        var firstStamp: String?
        for field in SyncRecord.fieldNames(record.kind) {
            guard let value = record.fields[field] else { continue }
            let canonical = value.serialized(pretty: false, sortedKeys: true)
            let text = String(decoding: canonical, as: UTF8.self)
            let before = shadow[field]
            let stamp: String
            if let before, before.value == text {
                guard whole else { continue }
                stamp = before.stamp
            } else if before == nil, edits[field] == nil, let firstStamp {
                stamp = firstStamp
            } else {
                stamp = stamps.edit(updatedAt: edits[field] ?? record.updatedAt, after: before?.stamp).description
                if before == nil && edits[field] == nil { firstStamp = stamp }
            }
            sealed[field] = try key.seal(canonical: canonical, kind: record.kind, id: record.id, field: field, stamp: stamp, nonces: &nonces)
            pushed[field] = ShadowField(value: text, stamp: stamp)
        }
        return (sealed, pushed)
    }

    /// `sealChangedFields` for each live record of `candidates` but attachments (whose fields an
    /// upload completes first), in order, the second half on a thread of its own: sealing is most
    /// of making a batch, which the push's own thread otherwise does while the other core is
    /// partly idle. Only as many as the batch's byte limit is likely to take (`sealedSizeEstimate`):
    /// large records fill a batch long before its last candidate. `nil` for the records it leaves
    /// to the caller.
    private func sealPlainRecords(_ candidates: [(record: SyncRecord, shadow: [String: ShadowField], edits: [String: String],
                                                  incarnation: String?, whole: Bool)])
        throws -> [(sealed: [String: SealedField], pushed: [String: ShadowField])?] {
        var plain: [Int] = []
        var estimate = 0
        for index in candidates.indices where estimate < AgentLimits.batchBytes {
            let record = candidates[index].record
            guard !record.isTombstone, record.kind != .attachment else { continue }
            plain.append(index)
            estimate += Self.sealedSizeEstimate(of: record)
        }
        var results = [(sealed: [String: SealedField], pushed: [String: ShadowField])?](repeating: nil, count: candidates.count)
        guard !plain.isEmpty else { return results }
        let key = key
        let stamps = fieldStamps
        func seal(_ indices: ArraySlice<Int>, nonces: inout NonceBuffer) throws -> [(sealed: [String: SealedField], pushed: [String: ShadowField])] {
            try indices.map { index in
                let candidate = candidates[index]
                return try Self.sealChangedFields(of: candidate.record, shadow: candidate.shadow, edits: candidate.edits,
                                                  whole: candidate.whole, key: key, stamps: stamps, nonces: &nonces)
            }
        }
        let middle = plain.count < Self.sealOnOneThreadBelow ? plain.endIndex : plain.startIndex + plain.count / 2
        let second = plain[middle...]
        let background = second.isEmpty ? nil : BackgroundResult {
            var nonces = NonceBuffer()
            return try seal(second, nonces: &nonces)
        }
        let first = try seal(plain[..<middle], nonces: &nonces)
        for (index, result) in zip(plain[..<middle], first) { results[index] = result }
        if let background {
            for (index, result) in zip(second, try background.value()) { results[index] = result }
        }
        return results
    }

    /// Fewer live records than this are sealed on this thread alone: a thread costs more than it saves.
    static let sealOnOneThreadBelow = 64

    /// The bytes of a record's sealed fields, as a batch's size is counted against
    /// `AgentLimits.batchBytes` (each field's name, stamp, nonce and ciphertext, and its JSON).
    static func sealedBytes(_ sealed: [String: SealedField]) -> Int {
        sealed.reduce(0) { $0 + $1.key.utf8.count + $1.value.stamp.utf8.count + $1.value.nonce.utf8.count + $1.value.ciphertext.utf8.count + 48 }
    }

    /// About as many bytes as `record`'s fields take sealed (`sealedBytes`), from their values
    /// alone: each value's text, in base64, beside its field's name, stamp, nonce and tag.
    static func sealedSizeEstimate(of record: SyncRecord) -> Int {
        func length(_ value: JSONValue) -> Int {
            switch value {
            case .null: 4
            case .bool: 5
            case .number(let text): text.utf8.count
            case .string(let text): text.utf8.count + 2
            case .array(let items): items.reduce(2) { $0 + length($1) + 1 }
            case .object(let members): members.reduce(2) { $0 + $1.key.utf8.count + 4 + length($1.value) }
            }
        }
        return record.fields.reduce(0) { $0 + $1.key.utf8.count + 120 + (length($1.value) + 16) * 4 / 3 }
    }

    /// Sends the deletions owed for records purged here while the batch that created them on the
    /// server waited for its answer, as a batch saved first like any other (a kill before it is
    /// answered sends it again at the next run).
    func sendDeletionsOfPurged() throws {
        guard !purgedWhileInFlight.isEmpty else { return }
        let wire = purgedWhileInFlight
        purgedWhileInFlight = []
        let entries = wire.map { OutgoingEntry(kind: $0.kind, id: $0.id, updatedAt: store.stamp(), deleted: true, fields: [:]) }
        try ledger.saveOutgoing(mutationID: Identifier.make(), request: WireJSON.records(wire), local: WireJSON.entries(entries))
        try replayOutgoing()
    }

    /// A batch an interrupted run saved: sent again under its mutation id, so the server either
    /// applies it now or answers what it did the first time.
    func replayOutgoing() throws {
        while let (mutationID, request, local) = try ledger.outgoing() {
            let wire = try JSON.decode([WireRecord].self, from: request)
            let entries = try JSON.decode([OutgoingEntry].self, from: local)
            _ = try send(mutationID: mutationID, wire, entries, replaying: true)
        }
    }

    private func send(mutationID: String, _ wire: [WireRecord], _ entries: [OutgoingEntry], replaying: Bool) throws -> (Int, Int) {
        try post(mutationID: mutationID, wire, encoded: WireJSON.records(wire))
        let counts = try finish(mutationID, entries, response: try pushAnswer(try agent.collect()), replaying: replaying)
        try uploadBlobsMissingOnServer()
        return counts
    }

    /// Sends a saved batch to the agent; `finish` collects and records the answer.
    private func post(mutationID: String, _ wire: [WireRecord], encoded: [UInt8]) throws {
        try agent.post(encoded: WireJSON.push(zone: account.zone, mutationID: mutationID, records: encoded))
    }

    /// The answer to the batch `post` sent (a response that is not a failure), recorded: the
    /// acknowledgements, in one transaction that also removes the saved batch. Blobs it says the
    /// server lacks join `blobsMissingOnServer`, uploaded by the caller once nothing is in flight.
    private func finish(_ mutationID: String, _ entries: [OutgoingEntry], response: PushAnswer, replaying: Bool) throws -> (Int, Int) {
        CrashPoint.reach("sync.pushed")
        let results = response.results
        if replaying && response.replayed { report.replayed += results.count }
        let byID = Dictionary(entries.map { ($0.kind + "/" + $0.id, $0) }, uniquingKeysWith: { first, _ in first })
        // When the server numbered this batch's changes right after the change token (nobody
        // else's change in between), the token moves past them with their acknowledgements: the
        // next pull does not bring this device's own records back.
        var token: Int64?
        if !replaying && !response.replayed && account.epoch == zone.epoch {
            let sequences = results.compactMap { $0.status == .applied ? $0.sequence : nil }.sorted()
            if let last = sequences.last, sequences.first == account.changeSequence + 1,
               last == account.changeSequence + Int64(sequences.count) {
                token = last
            }
        }
        var applied = 0
        var conflicts = 0
        try store.writeTransaction {
            applied = 0
            conflicts = 0
            // Deletions and records that told of losing values one at a time, in the batch's
            // order; then the rest set-based, a few statements per kind (`acknowledgeApplied`).
            var inSets: [RecordKind: [(entry: OutgoingEntry, version: Int64)]] = [:]
            for result in results {
                guard result.status == .applied else {
                    conflicts += 1
                    pushConflicts.append(result)
                    continue
                }
                applied += 1
                guard let entry = byID[result.kind + "/" + result.id], let kind = RecordKind(rawValue: result.kind) else { continue }
                if entry.deleted || entry.fields[Self.lostEditsField] != nil {
                    try recordApplied(entry, kind: kind, version: result.version)
                } else {
                    inSets[kind, default: []].append((entry, result.version))
                }
            }
            for kind in RecordKind.allCases {
                guard let list = inSets[kind] else { continue }
                for (entry, version) in try acknowledgeApplied(list, kind: kind) {
                    try recordApplied(entry, kind: kind, version: version)
                }
            }
            try ledger.removeOutgoing(mutationID: mutationID)
            try ledger.setLastMutation(mutationID)
            if let token { try ledger.setChangeToken(epoch: zone.epoch, sequence: token) }
        }
        if let token { account.changeSequence = token }
        report.pushed += applied
        report.conflicts += conflicts
        blobsMissingOnServer += response.missingBlobs
        return (applied, conflicts)
    }

    /// The answer to a push, from its bytes (`SyncAgentClient.collect`).
    func pushAnswer(_ bytes: [UInt8]) throws -> PushAnswer {
        try WireJSON.pushAnswer(bytes, agent)
    }

    /// `recordApplied` for live records of one kind that told of no losing value, set-based: the
    /// ones unchanged here since their batch was made are acknowledged and their "send whole"
    /// marks dropped in one statement each, their shadows written 64 rows to a statement.
    /// Returns the others (gone, edited, trashed or deleted meanwhile, already newer), for
    /// `recordApplied` one at a time.
    private func acknowledgeApplied(_ applied: [(entry: OutgoingEntry, version: Int64)],
                                    kind: RecordKind) throws -> [(entry: OutgoingEntry, version: Int64)] {
        var rows = JSONWriter(pretty: false, capacity: applied.count * 72)
        rows.beginArray()
        for (entry, version) in applied {
            rows.beginArray()
            rows.string(entry.id)
            rows.integer(version)
            rows.string(entry.updatedAt)
            rows.endArray()
        }
        rows.endArray()
        let acknowledged = try ledger.acknowledgePushed(kind, rows: String(decoding: rows.bytes, as: UTF8.self))
        var rest: [(entry: OutgoingEntry, version: Int64)] = []
        var shadows: [(id: String, fields: [String: ShadowField])] = []
        shadows.reserveCapacity(acknowledged.count)
        var ids = JSONWriter(pretty: false, capacity: acknowledged.count * 40)
        ids.beginArray()
        for (entry, version) in applied {
            guard acknowledged.contains(entry.id) else {
                rest.append((entry, version))
                continue
            }
            ids.string(entry.id)
            shadows.append((entry.id, entry.fields))
        }
        ids.endArray()
        if !acknowledged.isEmpty {
            try ledger.setShadows(kind, shadows)
            try ledger.sentWhole(kind, ids: String(decoding: ids.bytes, as: UTF8.self))
        }
        return rest
    }

    /// The server has `entry` at `version`: the existing acknowledgement path, unless the record
    /// changed since the batch was made (then only its remote version moves and it stays pending).
    private func recordApplied(_ entry: OutgoingEntry, kind: RecordKind, version: Int64) throws {
        switch try ledger.recordPushed(kind: kind, id: entry.id, remoteVersion: version, updatedAt: entry.updatedAt) {
        case .gone:
            // Deleted and emptied from the trash here while the batch waited for its answer: the
            // server has it now, so its deletion is owed (`sendDeletionsOfPurged`).
            if !entry.deleted {
                purgedWhileInFlight.append(WireRecord(kind: kind.rawValue, id: entry.id, expectedVersion: version, deleted: true,
                                                      fields: try sealedDeletion(kind, id: entry.id, updatedAt: entry.updatedAt)))
            }
            return
        case .alreadyNewer: return
        case .acknowledged, .changedSince: break
        }
        if entry.deleted {
            try ledger.clearShadow(kind, id: entry.id, keeping: SyncLedger.keptThroughDeletion)
            // The server has the deletion: that incarnation is over, in the ledger a purge keeps —
            // the one the deletion named (a restore since may have made another), or, for a batch
            // an earlier build saved (an empty value), the record's current one.
            let named = try entry.fields[Self.deletionField].flatMap { $0.value.isEmpty ? nil : try JSONValue.parse(Array($0.value.utf8)).stringValue }
            try ledger.noteDead(kind, id: entry.id, incarnation: try named ?? ledger.incarnation(kind, id: entry.id) ?? SyncLedger.legacyIncarnation)
            if let stamp = entry.fields[Self.deletionField]?.stamp { try ledger.noteDeletionSeen(kind, id: entry.id, stamp: stamp) }
        } else {
            try ledger.setShadow(kind, id: entry.id, fields: entry.fields)
            try ledger.sentWhole(kind, id: entry.id)
            if entry.fields[Self.lostEditsField] != nil { try ledger.markConflictsTold(kind, id: entry.id) }
        }
    }

    // MARK: - Local edits and their stamps

    /// The fields of a pending record that differ from what the server has: its local edits.
    /// A record the server has only as a tombstone (no shadow) sends all of them.
    func changedFields(of record: SyncRecord, shadow: [String: ShadowField]) -> [String] {
        guard record.syncState != .synchronized else { return [] }
        return SyncRecord.fieldNames(record.kind).filter { field in
            guard let value = record.fields[field] else { return false }
            return shadow[field]?.value != value.canonicalText
        }
    }

    /// The stamp of a local edit of one field: when that field was changed here (`updatedAt`:
    /// its row in `sync_field_edits`, or the record's `updated_at` for a field set with the
    /// record), clamped to the server's clock plus five minutes, and later than the value it
    /// replaced (`HybridStamp.edit`).
    func localStamp(updatedAt: String, after shadowStamp: String?) -> HybridStamp {
        fieldStamps.edit(updatedAt: updatedAt, after: shadowStamp)
    }

    /// What `localStamp` reads of this engine, as a value another thread can use.
    var fieldStamps: FieldStamps {
        FieldStamps(clockOffset: clockOffset, serverMilliseconds: serverMilliseconds, node: account.node)
    }
}

/// The stamps of local edits (`SyncEngine.localStamp`): the engine's learned clock offset, the
/// server's clock and this device's node.
struct FieldStamps: Sendable {
    let clockOffset: Int64
    let serverMilliseconds: Int64
    let node: String

    func edit(updatedAt: String, after shadowStamp: String?) -> HybridStamp {
        // The edit's time on the server's scale (this device's learned offset added), never
        // later than the server's clock allows.
        let edited = (SyncEngine.milliseconds(updatedAt) ?? 0) + clockOffset
        let wall = min(edited, serverMilliseconds + HybridStamp.maximumSkewMilliseconds)
        return HybridStamp.edit(at: wall, node: node, after: shadowStamp.flatMap { HybridStamp($0) })
    }
}

extension SyncReport {
    /// Counts one record or keychain item refused for `cause`.
    mutating func refuse(_ cause: RefusalCause) {
        refused += 1
        refusedBecause[cause.rawValue, default: 0] += 1
    }
}
