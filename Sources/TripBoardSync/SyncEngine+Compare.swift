import TripBoardKeychain
import TripBoardSystem
import TripBoardStorage
import TripBoardSyncProtocol
import TripBoardModel

/// Noticing what no change feed announces (docs/sync.md, When the server forgets): a push that
/// meets a version this device's feed never brought, and rows the server lost. Version numbers
/// are concurrency tokens here, never the proof that a device has something: what it merges is
/// decided by the fields' stamps (`apply`).
extension SyncEngine {
    /// Settles the records a push found at another version than expected: those the server no
    /// longer has are sent again as new (or, deletions, are done); the others are fetched and
    /// merged now, so the next push goes against the server's version even when its feed never
    /// lists them again (a version lowered, a row put back by a restore).
    func settleConflicts(_ conflicts: [PushResult]) throws {
        let records = conflicts.filter { RecordKind(rawValue: $0.kind).map(SyncRecord.kinds.contains) == true }
        guard !records.isEmpty else { return }
        let lost = records.filter { $0.version == 0 }
        let differing = records.filter { $0.version > 0 }
        let now = store.stamp()
        if !lost.isEmpty {
            let keys = lost.compactMap { result in RecordKind(rawValue: result.kind).map { (kind: $0, id: result.id) } }
            try store.writeTransaction { try settleLostOnServer(keys, at: now) }
        }
        if !differing.isEmpty { try fetchAndApply(differing.map { ($0.kind, $0.id) }) }
    }

    /// Records the server no longer has though this device had them uploaded, inside the caller's
    /// transaction: sent again as new (deletions are done), when the absence means a loss.
    private func settleLostOnServer(_ keys: [(kind: RecordKind, id: String)], at now: String) throws {
        guard mayTrustAbsence else { return }
        for (kind, id) in keys {
            guard let record = try ledger.syncRecord(kind, id: id), record.remoteVersion != nil else { continue }
            try settle(record, serverVersion: nil, reason: .serverLostChanges, at: now)
        }
    }

    /// Whether a record the server lacks was lost there rather than deleted past the horizon:
    /// this device has followed the feed past every tombstone the server purged.
    var mayTrustAbsence: Bool { account.epoch == zone.epoch && account.changeSequence >= (zone.purgedThrough ?? 0) }

    /// Fetches the server's copies of `keys` (kind, id) and applies them as pulled records, a
    /// batch at a time, each batch in one transaction.
    func fetchAndApply(_ keys: [(kind: String, id: String)]) throws {
        try fetch(keys) { records in
            let now = store.stamp()
            try store.writeTransaction {
                for record in records { try apply(record, at: now) }
                try applyHeldWhoseParentArrived(at: now)
            }
        }
    }

    /// The server's current copies of `keys` (kind, id), handed to `body` a batch at a time.
    func fetch(_ keys: [(kind: String, id: String)], _ body: ([WireRecord]) throws -> Void) throws {
        var start = 0
        while start < keys.count {
            let slice = keys[start..<min(start + AgentLimits.batchRecords, keys.count)]
            try agent.post(.fetch(zone: account.zone, records: slice.map { WireRecord(kind: $0.kind, id: $0.id, deleted: false, fields: [:]) }))
            // An answer holds at most a page's bytes: it says how many of the records asked it
            // settles, and the rest are asked again.
            let page = try WireJSON.page(try agent.collect(), agent)
            guard let covered = page.covered, (1...slice.count).contains(covered) else {
                throw SyncError.agentFailed(detail: "a fetch answer that settles none of the records asked")
            }
            start += covered
            try body(page.records)
        }
    }

    /// The keychain's side of the comparison: a migratable item this device had uploaded that the
    /// server no longer has goes again as new; one the server has at an older version, deleted, or
    /// that this device lacks is fetched and merged as a pull would (the keychain's token stays).
    func compareSecrets(with onServer: [String: (version: Int64, deleted: Bool)]) throws {
        guard let keychain = syncingKeychain, try secretPullStart()?.fresh == false else { return }
        var fetching: [(kind: String, id: String)] = []
        var lost: [KeychainSyncItem] = []
        var mine: Set<String> = []
        for item in try keychain.syncItems() {
            let id = try key.secretID(service: item.service, account: item.account)
            mine.insert(id)
            guard let version = item.version else { continue }  // never uploaded: pending already
            guard let server = onServer[id] else { lost.append(item); continue }
            if server.version < version || server.deleted { fetching.append((Self.secretKind, id)) }
        }
        for tombstone in try keychain.syncTombstones() { mine.insert(try key.secretID(service: tombstone.service, account: tombstone.account)) }
        for (id, server) in onServer where !server.deleted && !mine.contains(id) { fetching.append((Self.secretKind, id)) }
        try fetchAndApplySecrets(fetching)
        guard mayTrustAbsence, !lost.isEmpty else { return }
        try keychain.write {
            for item in lost {
                try keychain.setSyncState(service: item.service, account: item.account, pending: true, version: nil, stamp: nil, digest: nil)
            }
        }
        report.reuploaded += lost.count
    }

    /// Once every `AgentLimits.comparisonHours`, or when asked (`sync now --compare`), and never
    /// on a first sync or a reconcile, which read everything: lists every record the server has (kind, id, version; no fields) and
    /// compares it with this device's. A record this device has had uploaded that the server no
    /// longer has is sent again as new; one the server has at an older version, deleted at a
    /// version held here live, or that this device lacks, is fetched and merged by its stamps; a
    /// held record the server no longer has live is let go. Costs, once a day, one request per
    /// `AgentLimits.listRecords` records of the zone and one read of this device's ids.
    /// Returns how many records it found to send again; nil when it did not compare.
    func compareWithServerIfDue(copiedEverything: Bool) throws -> Int? {
        let now = store.stamp()
        guard account.epoch == zone.epoch else { return nil }
        if copiedEverything {
            try store.writeTransaction { try ledger.setLastComparedAt(now) }
            return nil
        }
        if !compareNow, let last = try ledger.lastComparedAt(), let lastTime = Timestamp(iso8601: last), let nowTime = Timestamp(iso8601: now),
           nowTime.secondsSinceEpoch - lastTime.secondsSinceEpoch < Int64(AgentLimits.comparisonHours) * 3600,
           nowTime.secondsSinceEpoch >= lastTime.secondsSinceEpoch {
            return nil
        }
        let reuploadedBefore = report.reuploaded
        var onServer: [String: (version: Int64, deleted: Bool)] = [:]
        var secretsOnServer: [String: (version: Int64, deleted: Bool)] = [:]
        var afterKey: String?
        while true {
            guard case .recordList(let records, let more) = try agent.send(.listRecords(zone: account.zone, afterKey: afterKey, limit: nil)) else {
                throw agent.unexpectedAnswer()
            }
            for record in records {
                if record.kind == Self.secretKind {
                    secretsOnServer[record.id] = (record.version ?? 0, record.deleted)
                } else {
                    onServer[record.kind + "/" + record.id] = (record.version ?? 0, record.deleted)
                }
            }
            guard more, let last = records.last else { break }
            afterKey = last.kind + "/" + last.id
        }
        var fetching: [(kind: String, id: String)] = []
        var lost: [(kind: RecordKind, id: String)] = []
        for kind in SyncRecord.kinds {
            let known = try ledger.knownIDs(kind)
            for (id, remoteVersion) in try ledger.uploadedVersions(kind) {
                guard let server = onServer[kind.rawValue + "/" + id] else { lost.append((kind, id)); continue }
                // Older there, or deleted there at a version held here live (numbered after the
                // server went back): fetched and merged.
                if server.version < remoteVersion || (server.deleted && known[id] == false) { fetching.append((kind.rawValue, id)) }
            }
            for (key, server) in onServer where !server.deleted && key.hasPrefix(kind.rawValue + "/") {
                let id = String(key.dropFirst(kind.rawValue.utf8.count + 1))
                if known[id] == nil { fetching.append((kind.rawValue, id)) }
            }
        }
        if !fetching.isEmpty { try fetchAndApply(fetching) }
        try compareSecrets(with: secretsOnServer)
        // A held record the server no longer has live (deleted there, or lost) waits for nothing
        // any more: it was never this device's, and whoever still has it sends it again.
        let gone = try ledger.heldRecords().filter { held in onServer[held.kind.rawValue + "/" + held.id].map(\.deleted) ?? true }
        try store.writeTransaction {
            for held in gone { try ledger.dropHeld(held.kind, id: held.id) }
            try settleLostOnServer(lost, at: now)
            try ledger.setLastComparedAt(now)
        }
        return report.reuploaded - reuploadedBefore
    }

    /// Asks the server for its copies of the records a salvage recreated as placeholders (their
    /// children kept): each one it has replaces the placeholder (`apply`); the others stay.
    func replacePlaceholders() throws {
        placeholders = try ledger.placeholders()
        let keys = placeholders.keys.compactMap { key -> (kind: String, id: String)? in
            let parts = key.split(separator: "/", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }
        if !keys.isEmpty { try fetchAndApply(keys.sorted { ($0.kind, $0.id) < ($1.kind, $1.id) }) }
    }
}
