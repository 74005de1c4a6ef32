import TripBoardKeychain
import TripBoardSystem
import TripBoardStorage
import TripBoardSyncProtocol
import TripBoardModel

/// Reconciling: when the change feed alone cannot be trusted, the device compares everything it
/// has with everything the server has, and settles each difference by the record's
/// `remoteVersion` — which tells "the server had it" from "never uploaded" (docs/sync.md, When
/// the server forgets).
extension SyncEngine {
    public enum ReconcileReason: String, Sendable, Codable, Equatable {
        /// The zone has another epoch than the token: it was recreated, and holds nothing of
        /// what this device had sent.
        case zoneRecreated
        /// The server went back in time: its change counter is below the token, or it no longer
        /// has this device's last batch, or its copy of the last record the token covers is
        /// older (restored from an older dump, or run without durable commits and crashed).
        case serverLostChanges
        /// The token is older than the tombstones the server still keeps: deletions may have
        /// been missed.
        case horizonPassed
    }

    /// Why the feed alone will not do this time, or nil. A device that never synced has nothing
    /// to compare (its first sync copies live records) — unless it pushed without ever finishing
    /// a pull (a pull that refused what the server sent does not stop the push) and the server
    /// no longer has that batch: what it pushed was lost with a restore, and only a comparison
    /// sends it again (a first pull copies what the server has, and the records it pushed are
    /// `synchronized` here).
    func reconcileReason() -> ReconcileReason? {
        guard let epoch = account.epoch else { return serverHasLastMutation == false ? .serverLostChanges : nil }
        if epoch != zone.epoch { return .zoneRecreated }
        let purgedThrough = zone.purgedThrough ?? 0
        if account.changeSequence < purgedThrough { return .horizonPassed }
        if account.changeSequence > zone.changeSequence || serverHasLastMutation == false { return .serverLostChanges }
        // The token's record may be gone for a good reason: a tombstone purged at or after it.
        if serverHasTokenRecord == false && account.changeSequence > purgedThrough { return .serverLostChanges }
        return nil
    }

    /// Pulls the whole zone (live records and the tombstones it keeps) in one consistent read,
    /// applying it as any pull does, then settles every record this device has that the server
    /// has older or not at all, and only then moves the token: a crash before the end leaves the
    /// reason in place, and the next run reconciles again (applying a page twice changes nothing).
    func reconcile(_ reason: ReconcileReason) throws {
        report.reconciled = reason
        var onServer: [String: Int64] = [:]
        guard case .pullBegun(let high) = try agent.send(.pullBegin(zone: account.zone, afterSequence: 0, liveOnly: false)) else {
            throw agent.unexpectedAnswer()
        }
        var ended = false
        defer { if !ended { _ = try? agent.send(.pullEnd) } }  // after a failure (see `pull`)
        var last: WireRecord?
        var secrets: [WireRecord] = []
        while true {
            try agent.post(.pullPage(limit: AgentLimits.pageRecords))
            let (records, more, _, _) = try WireJSON.page(try agent.collect(), agent)
            let now = store.stamp()
            // Keychain items are settled in the keychain's transaction, with its own token.
            secrets += records.filter { $0.kind == Self.secretKind }
            try store.writeTransaction {
                for record in records where record.kind != Self.secretKind {
                    if let version = record.version { onServer[record.kind + "/" + record.id] = version }
                    try apply(record, at: now)
                }
                try applyHeldWhoseParentArrived(at: now)
            }
            last = records.last ?? last
            if !more { break }
        }
        try endPull(&ended)
        // The keychain first: the store's token moving is what ends the reconcile, so a crash
        // between the two reconciles again (settling an item twice changes nothing).
        try reconcileSecrets(secrets, high: high, reason: reason)
        let now = store.stamp()
        try store.writeTransaction {
            for kind in SyncRecord.kinds {
                for (id, remoteVersion) in try ledger.uploadedVersions(kind) {
                    let serverVersion = onServer[kind.rawValue + "/" + id]
                    if let serverVersion, serverVersion >= remoteVersion { continue }
                    // Read again: settling a trip has moved its children since the list was made.
                    guard let record = try ledger.syncRecord(kind, id: id), record.remoteVersion != nil else { continue }
                    try settle(record, serverVersion: serverVersion, reason: reason, at: now)
                }
            }
            try ledger.setChangeToken(epoch: zone.epoch, sequence: high, record: last?.versioned)
            if reason != .horizonPassed { try ledger.setLastMutation(nil) }
        }
        account.epoch = zone.epoch
        account.changeSequence = high
    }

    /// One record the server has older (`serverVersion`) or not at all (nil).
    func settle(_ record: SyncRecord, serverVersion: Int64?, reason: ReconcileReason, at now: String) throws {
        let kind = record.kind
        // What the server has of it is not what this device last saw: every field goes again,
        // stamped no lower than what this device knew.
        try ledger.markSentWhole(kind, id: record.id)
        let deletedHere = record.isTombstone || record.isInTrash
        if let serverVersion {
            // The server lost later versions: the live record, or its deletion, goes out again
            // against the version the server has.
            try ledger.setSyncMetadata(kind, id: record.id, state: deletedHere ? .pendingDeletion : .pendingUpload,
                                      remoteVersion: serverVersion)
            report.reuploaded += 1
            return
        }
        if !deletedHere {
            // The server lost it, or (past the horizon) its tombstone is gone: absence never
            // proves a deletion — a server could claim any horizon — so it is sent again as a
            // new record. (A deletion this device saw is in the trash, not here.)
            try ledger.setSyncMetadata(kind, id: record.id, state: .pendingUpload, remoteVersion: nil)
            report.reuploaded += 1
            return
        }
        // Deleted here (in the trash, or a tombstone) and the server no longer has the record:
        // that incarnation is over (the ledger), and the deletion goes to the server again as a
        // new sealed tombstone, so that a device that still has the record live meets it — a
        // deletion is never dropped because the server forgot the record. (Restoring it from
        // the trash later sends it as a new incarnation.)
        try ledger.noteDead(kind, id: record.id, incarnation: try currentIncarnation(of: record))
        try ledger.setSyncMetadata(kind, id: record.id, state: .pendingDeletion, remoteVersion: nil)
    }

    /// The keychain's side of a reconcile: the zone's keychain items applied as a pull from
    /// zero would, then each migratable item the server has older or not at all settled as a
    /// record is — sent again against what the server has, or as new; gone from here when the
    /// horizon passed (deleted there long ago: delete beats edit) — and each local deletion
    /// waiting for a server that no longer has the item dropped; the keychain's token moved to
    /// the zone's mark, all in one keychain transaction.
    func reconcileSecrets(_ records: [WireRecord], high: Int64, reason: ReconcileReason) throws {
        guard syncingKeychain != nil else { return }
        var onServer: [String: Int64] = [:]
        for record in records { if let version = record.version { onServer[record.id] = version } }
        try applySecrets(records, token: high) { keychain in
            for item in try keychain.syncItems() {
                guard let version = item.version else { continue }  // never uploaded: pending already
                let serverVersion = onServer[try key.secretID(service: item.service, account: item.account)]
                if let serverVersion, serverVersion >= version { continue }
                // No digest: the value goes again even if it is the one last sent.
                try keychain.setSyncState(service: item.service, account: item.account, pending: true, version: serverVersion,
                                          stamp: serverVersion == nil ? nil : item.stamp, digest: nil)
                report.reuploaded += 1
            }
            for tombstone in try keychain.syncTombstones() {
                let serverVersion = onServer[try key.secretID(service: tombstone.service, account: tombstone.account)]
                guard let serverVersion else {
                    // The server lost the item: the deletion goes as a new sealed one, which the
                    // server keeps; the ledger keeps that the incarnation is over meanwhile.
                    try keychain.noteDeadIncarnation(service: tombstone.service, account: tombstone.account,
                                                     tombstone.incarnation ?? Keychain.legacySyncIncarnation)
                    secretDeletionsTheServerLacks.insert(try key.secretID(service: tombstone.service, account: tombstone.account))
                    continue
                }
                try keychain.settleSyncTombstone(service: tombstone.service, account: tombstone.account, serverVersion: serverVersion)
            }
        }
    }

    /// Asks the server to drop tombstones older than the horizon (at least 400 days). A server
    /// that cannot (busy, older schema) is not an error of this sync: the next run asks again.
    /// A connection that is gone is: the requests after this one could not go anywhere either.
    func purgeTombstones() throws {
        do {
            guard case .tombstonesPurged(let count) = try agent.send(.purgeTombstones(zone: account.zone, horizonDays: nil)) else {
                throw agent.unexpectedAnswer()
            }
            report.tombstonesPurged = count
        } catch {
            switch error as? SyncError {
            case .serverUnavailable, .agentFailed: throw error
            default: report.tombstonesPurged = 0
            }
        }
    }
}
