import TripBoardKeychain
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardStorage
import TripBoardSyncProtocol
import TripBoardModel

/// Migratable keychain items, synced as records of kind `secret` (docs/sync.md, "Keychain
/// items"). A record's id is a keyed BLAKE2b of service and account; its fields `service`,
/// `account` and `value` are sealed under a zone subkey of their own. Everything this device
/// writes for them — the item, its bookkeeping, the change token, the saved batch — goes to the
/// keychain's database in the keychain's own transactions, never to the store: the store and
/// its backups hold neither a secret nor its name. This-device-only items never leave.
extension SyncEngine {
    static let secretKind = "secret"
    static let secretFields = ["service", "account", "value"]

    /// What a saved batch records locally once the server answers, per item.
    struct SecretEntry: Codable {
        var id: String
        var service: String
        var account: String
        var updatedAt: String
        var deleted: Bool
        var stamp: String?
        var digest: String?
        /// The incarnation pushed (the live item's, or the one its deletion names).
        var incarnation: String?
    }

    /// The keychain when its items can be synced now; notes a locked container key in the report.
    var syncingKeychain: Keychain? {
        guard let keychain else { return nil }
        if let blocker = keychain.migratableSyncBlocker {
            if case .deviceLocked = blocker { report.keychainWaitsForUnlock = true } else { report.keychainLocked = true }
            return nil
        }
        return keychain
    }

    /// Where the keychain's pull starts and whether it copies from zero; `nil` when its items
    /// are not synced this run.
    func secretPullStart() throws -> (after: Int64, fresh: Bool)? {
        guard let keychain = syncingKeychain else { return nil }
        // A token past the zone's counter is of a server that went back while the keychain
        // could not follow (locked during the reconcile): read from the start again.
        guard let token = try keychain.secretSyncToken(), token.zone == account.zone, token.epoch == zone.epoch,
              token.sequence <= zone.changeSequence else {
            return (0, true)
        }
        return (token.sequence, false)
    }

    func secretsWaiting() throws -> Bool {
        guard let keychain = syncingKeychain else { return false }
        return try keychain.syncBacklog().items > 0
    }

    func finishReport() throws {
        report.pending = try ledger.syncBacklog().records
        report.held = try ledger.heldCount()
        try ledger.forgetFieldEditsOfSynchronizedRecords()
        if let keychain { report.secretsPending = try keychain.syncBacklog().items }
        _ = syncingKeychain  // notes a locked container key
    }

    // MARK: - Pull

    /// Applies a page's keychain items and the keychain's token in one keychain transaction;
    /// `then` runs in it too, after the items (a reconcile settles what the server lacks there).
    func applySecrets(_ records: [WireRecord], token: Int64, then settle: (Keychain) throws -> Void = { _ in }) throws {
        guard let keychain else { return }
        // Ids of the items this device has (or has tombstones of), to find what a record names.
        var names: [String: (service: String, account: String)] = [:]
        if !records.isEmpty {
            for item in try keychain.syncItems() { names[try key.secretID(service: item.service, account: item.account)] = (item.service, item.account) }
            for tombstone in try keychain.syncTombstones() {
                names[try key.secretID(service: tombstone.service, account: tombstone.account)] = (tombstone.service, tombstone.account)
            }
        }
        // Opened before the transaction: a record that does not open ends the sync with nothing written.
        let opened = try records.map { ($0, try openSecret($0, names: names)) }
        try keychain.write {
            for (remote, fields) in opened { try applySecret(remote, fields, names: names, keychain: keychain) }
            try settle(keychain)
            try keychain.setSecretSyncToken(zone: account.zone, epoch: zone.epoch, sequence: token)
        }
    }

    private struct OpenedSecret {
        var service: String
        var account: String
        var value: SecureBytes
        var stamp: HybridStamp
        var incarnation: String
        /// Sealed with the value; absent from an earlier build's item, which is after-first-unlock.
        var accessibility: KeychainAccessibility
    }

    /// The sealed field of a keychain item's accessibility (`when-unlocked`, `after-first-unlock`).
    static let accessibilityField = "accessibility"

    /// The fields of a live record, checked; `nil` for a tombstone or a record that is skipped.
    private func openSecret(_ remote: WireRecord, names: [String: (service: String, account: String)]) throws -> OpenedSecret? {
        guard !remote.deleted, Self.isSecretID(remote.id), let version = remote.version, version >= 1,
              let sealedValue = remote.fields["value"] else { return nil }
        guard let stamp = HybridStamp(sealedValue.stamp) else { throw SyncError.damagedServerData("secret \(remote.id): a field's stamp is malformed") }
        func text(_ field: String) throws -> String? {
            guard let sealed = remote.fields[field] else { return nil }
            let bytes = try key.openSecretField(sealed, id: remote.id, field: field)
            return bytes.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
        }
        let service = try text("service") ?? names[remote.id]?.service
        let account = try text("account") ?? names[remote.id]?.account
        let value = try key.openSecretField(sealedValue, id: remote.id, field: "value")
        guard let service, let account, (try? Keychain.checkedName(service, "service")) != nil, (try? Keychain.checkedName(account, "account")) != nil,
              value.count > 0, try key.secretID(service: service, account: account) == remote.id else { return nil }
        let accessibility = try text(Self.accessibilityField).map { KeychainAccessibility(rawValue: $0) } ?? .afterFirstUnlock
        guard let accessibility, accessibility.isMigratable else { return nil }  // one this build does not know: skipped
        return OpenedSecret(service: service, account: account, value: value, stamp: stamp,
                            incarnation: try text(Self.incarnationField) ?? Keychain.legacySyncIncarnation, accessibility: accessibility)
    }

    /// The incarnation a pulled keychain tombstone's sealed deletion names; nil when it carries
    /// none (an earlier build's).
    private func deletedSecretIncarnation(_ remote: WireRecord) throws -> (incarnation: String, stamp: String)? {
        guard let sealed = remote.fields[Self.deletionField] else { return nil }
        let bytes = try key.openSecretField(sealed, id: remote.id, field: Self.deletionField)
        guard let text = bytes.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
            throw SyncError.damagedServerData("secret \(remote.id): its deletion names no incarnation")
        }
        return (text, sealed.stamp)
    }

    static func isSecretID(_ id: String) -> Bool {
        id.utf8.count == 64 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Whether a pulled keychain deletion is one a device holding the item as `deleting` (its
    /// incarnation) believes: sealed to that incarnation or one this device never knew replaced,
    /// or an earlier build's unsealed tombstone from before this keychain first ran this build.
    private func isBelieved(_ sealed: (incarnation: String, stamp: String)?, deleting: String, _ remote: WireRecord,
                            service: String, account: String, keychain: Keychain) throws -> Bool {
        guard let sealed else { return try (remote.sequence ?? .max) <= keychain.unsealedDeletionsBefore() }
        return try sealed.incarnation == deleting || !keychain.isDeadIncarnation(service: service, account: account, sealed.incarnation)
    }

    /// Whether `local`, which a deletion of another incarnation meets, is an item set on this
    /// device after that deletion and never acknowledged by the server (no version: neither pulled
    /// nor pushed). Names are the record's id, so a device that never held the deleted item can
    /// make one of the same name; no device could have replaced it, so the deletion cannot be of
    /// it, and the later of the two stamps decides, as between two values.
    private func isSetHereAfter(_ sealed: (incarnation: String, stamp: String)?, _ local: KeychainSyncItem, current: String,
                                keychain: Keychain) throws -> Bool {
        guard local.version == nil, local.pending, let sealed, sealed.incarnation != current,
              let deletedAt = HybridStamp(sealed.stamp),
              try !keychain.isDeadIncarnation(service: local.service, account: local.account, sealed.incarnation) else { return false }
        return localStamp(updatedAt: local.updatedAt, after: nil) > deletedAt
    }

    /// One record, inside the keychain's transaction. The merge rules are the store's: the later
    /// stamp wins a value edited on both sides, and delete beats edit.
    private func applySecret(_ remote: WireRecord, _ opened: OpenedSecret?, names: [String: (service: String, account: String)],
                             keychain: Keychain) throws {
        guard let version = remote.version, version >= 1, Self.isSecretID(remote.id) else {
            report.skipped += 1
            return
        }
        if remote.deleted {
            guard let (service, account) = names[remote.id] else { return }  // never had it
            if let tombstone = try keychain.syncTombstones().first(where: { $0.service == service && $0.account == account }) {
                let deleting = tombstone.incarnation ?? Keychain.legacySyncIncarnation
                let sealed = try deletedSecretIncarnation(remote)
                // Deleted on both sides: the server's deletion stands for this device's only if a
                // device holding the item would believe it (as for a record: `judgeDeletion`).
                // One no device sealed, or one of an incarnation this device knows replaced, is
                // not; this device's sealed deletion goes again, against the server's version.
                guard try isBelieved(sealed, deleting: deleting, remote, service: service, account: account, keychain: keychain) else {
                    if sealed == nil { report.refuse(.unsealedDeletion) }
                    try keychain.setSyncTombstone(service: service, account: account, version: version, incarnation: tombstone.incarnation)
                    return
                }
                // Acknowledged; that incarnation is over.
                try keychain.noteDeadIncarnation(service: service, account: account, deleting)
                if let sealed { try keychain.noteDeletionSeen(service: service, account: account, stamp: sealed.stamp) }
                try keychain.deleteSyncTombstone(service: service, account: account)
                return
            }
            guard let local = try keychain.syncItem(service: service, account: account) else { return }
            let sealed = try deletedSecretIncarnation(remote)
            if let known = local.version, known >= version {
                // Versions are tokens (see `SyncEngine.apply`): a sealed deletion this device has
                // not seen is news at any version — a server restored from an older dump numbers
                // the deletion sent again below the version held here for the item.
                guard let sealed, try !keychain.sawDeletion(service: service, account: account, stamp: sealed.stamp) else { return }
            }
            // Sealed to an incarnation, as a record's deletion is: one no device sealed (past
            // where this keychain was when it first ran this build), or one of an incarnation
            // this device knows replaced, is refused and the item sent again.
            let current = local.incarnation ?? Keychain.legacySyncIncarnation
            if try isSetHereAfter(sealed, local, current: current, keychain: keychain) {
                // Made on this device after that deletion and never on the server: not the item
                // deleted (its name only). It stays, and goes to the server against the deletion's version.
                try keychain.setSyncConflictVersion(service: service, account: account, version)
                return
            }
            guard try isBelieved(sealed, deleting: current, remote, service: service, account: account, keychain: keychain) else {
                try keychain.setSyncState(service: service, account: account, pending: true, version: version, stamp: nil, digest: nil)
                // A deletion of a replaced incarnation is counted only when seen before (a replay):
                // `DeletionVerdict.superseded`.
                if let sealed {
                    // A replay only once this device has seen the server hold a later value (its
                    // own deletion pulled back after it set the item again is not one).
                    let laterSeen = local.stamp.flatMap(HybridStamp.init).map { known in HybridStamp(sealed.stamp).map { known > $0 } ?? false } ?? false
                    if try laterSeen && keychain.sawDeletion(service: service, account: account, stamp: sealed.stamp) {
                        report.refuse(.replayedDeletion)
                    }
                } else {
                    report.refuse(.unsealedDeletion)
                }
                return
            }
            // Delete beats edit: the item goes, edited here or not (the keychain has no trash).
            try keychain.deleteFromSync(service: service, account: account)
            try keychain.noteDeadIncarnation(service: service, account: account, current)
            if let sealed {
                try keychain.noteDeadIncarnation(service: service, account: account, sealed.incarnation)
                try keychain.noteDeletionSeen(service: service, account: account, stamp: sealed.stamp)
            }
            report.secretsDeleted += 1
            return
        }
        guard let opened else {
            report.skipped += 1
            return
        }
        let (service, account) = (opened.service, opened.account)
        if try keychain.isDeadIncarnation(service: service, account: account, opened.incarnation) {
            // A live copy of an incarnation that is over (a deleted item served again): refused;
            // this device's own state goes again — its item, or its deletion of that incarnation.
            // Counted when this device saw a deletion of the item (see `refuseResurrection`).
            if try keychain.sawAnyDeletion(service: service, account: account) || keychain.syncItem(service: service, account: account) == nil {
                report.refuse(.deletedIncarnation)
            }
            if try keychain.syncItem(service: service, account: account) != nil {
                try keychain.setSyncState(service: service, account: account, pending: true, version: version, stamp: nil, digest: nil)
            } else {
                try keychain.setSyncTombstone(service: service, account: account, version: version, incarnation: opened.incarnation)
            }
            return
        }
        let theirDigest = try key.secretDigest(opened.value, opened.accessibility)
        if let tombstone = try keychain.syncTombstones().first(where: { $0.service == service && $0.account == account }) {
            // Deleted here, edited there: delete beats edit; the tombstone now expects this version.
            if tombstone.version < version { try keychain.setSyncTombstone(service: service, account: account, version: version) }
            return
        }
        if let local = try keychain.syncItem(service: service, account: account) {
            let current = local.incarnation ?? Keychain.legacySyncIncarnation
            if current != opened.incarnation {
                // A later incarnation (set again after a deletion on another device): this one is over.
                try keychain.noteDeadIncarnation(service: service, account: account, current)
                try keychain.setSyncIncarnation(service: service, account: account,
                                                opened.incarnation == Keychain.legacySyncIncarnation ? nil : opened.incarnation)
            }
            let known = local.stamp.flatMap(HybridStamp.init)
            if let current = local.version, current >= version, known.map({ opened.stamp <= $0 }) ?? true {
                // Our own push coming back, or older — unless the value carries a newer stamp than
                // the one known here: versions are tokens, and a value sent again as new after the
                // server lost the item is numbered with a version devices hold for the old one.
                // An older value than the one this device knows the server had, at the version
                // held here (served again under it), is refused below.
                let olderValue = known.map { opened.stamp < $0 } == true && theirDigest != local.digest
                guard version < current || olderValue else { return }
                // Numbered lower than this device holds (the server went back): the next push goes
                // against the server's version (else it would meet a conflict at every push, for
                // good). An older value there is not taken: this device's goes again, as a reconcile
                // sends what a restored server lost.
                if version < current {
                    try keychain.setSyncState(service: service, account: account, pending: local.pending || olderValue, version: version,
                                              stamp: olderValue ? opened.stamp.description : local.stamp,
                                              digest: olderValue ? theirDigest : local.digest)
                    return
                }
            }
            let mine = try keychain.get(service: service, account: account)
            let myDigest = try key.secretDigest(mine, try keychain.migratableAccessibility(service: service, account: account) ?? .afterFirstUnlock)
            if let known, opened.stamp < known, myDigest != theirDigest {
                // Older than the value this device knows the server had (a rotated token served
                // again, a server gone back): refused, and this device's value sent again
                // against the server's version.
                // (The shadow takes what the server has now, so that the push sees this value as changed.)
                try keychain.setSyncState(service: service, account: account, pending: true, version: version,
                                          stamp: opened.stamp.description, digest: theirDigest)
                report.refuse(.olderValue)
                return
            }
            if local.pending && myDigest != local.digest
                && localStamp(updatedAt: local.updatedAt, after: local.stamp) > opened.stamp && myDigest != theirDigest {
                // Edited here later than there: this value stays and is pushed against this version.
                try keychain.setSyncState(service: service, account: account, pending: true, version: version,
                                          stamp: opened.stamp.description, digest: theirDigest)
                report.secretsPulled += 1
                return
            }
            if myDigest != theirDigest {
                try keychain.storeFromSync(opened.value, service: service, account: account, accessibility: opened.accessibility)
            }
            // The stamp known never goes down: this device's own value served under an older
            // stamp keeps the later one (see `SyncEngine.mergeFields`).
            let stamp = known.map { Swift.max($0, opened.stamp) } ?? opened.stamp
            try keychain.setSyncState(service: service, account: account, pending: false, version: version,
                                      stamp: stamp.description, digest: theirDigest)
            report.secretsPulled += 1
            return
        }
        if try keychain.holdsThisDeviceOnlyItem(service: service, account: account) {
            // This device keeps its own this-device-only item of that name; the other stays there.
            report.skipped += 1
            return
        }
        try keychain.storeFromSync(opened.value, service: service, account: account, accessibility: opened.accessibility)
        try keychain.setSyncState(service: service, account: account, pending: false, version: version,
                                  stamp: opened.stamp.description, digest: theirDigest)
        if opened.incarnation != Keychain.legacySyncIncarnation {
            try keychain.setSyncIncarnation(service: service, account: account, opened.incarnation)
        }
        report.secretsPulled += 1
    }

    // MARK: - Push

    /// Pushes up to one batch of migratable items waiting for the server, and tombstones.
    func pushSecrets() throws -> (Int, Int) {
        guard let keychain = syncingKeychain else { return (0, 0) }
        var wire: [WireRecord] = []
        var entries: [SecretEntry] = []
        var unchanged: [KeychainSyncItem] = []
        for item in try keychain.syncItems(pendingOnly: true) where wire.count < AgentLimits.batchRecords {
            let value: SecureBytes
            do {
                value = try keychain.get(service: item.service, account: item.account)
            } catch is KeychainError {
                continue  // unreadable here (sealed under a container key not unlocked): it waits
            }
            let id = try key.secretID(service: item.service, account: item.account)
            let digest = try key.secretDigest(value, item.accessibility)
            // Against the version a refused push met, when no pull brought a later one.
            let expected = max(item.version ?? 0, item.conflictVersion ?? 0)
            let expectedVersion: Int64? = expected == 0 ? nil : expected
            let serverKnown = item.stamp != nil && expectedVersion == item.version
            if serverKnown && digest == item.digest {
                unchanged.append(item)  // edited and edited back, or set to the value it had
                continue
            }
            let stamp = localStamp(updatedAt: item.updatedAt, after: serverKnown ? item.stamp : nil)
            var fields = ["value": try key.sealSecretField(value, id: id, field: "value", stamp: stamp),
                          Self.accessibilityField: try key.sealSecretField(try SecureBytes(copying: Array(item.accessibility.rawValue.utf8)), id: id,
                                                                           field: Self.accessibilityField, stamp: stamp)]
            // Its incarnation, with every push: made at the first one (and after it was set again
            // following a deletion); an earlier build's item keeps the legacy one, named by none.
            var incarnation = item.incarnation
            if incarnation == nil && item.version == nil {
                incarnation = SyncLedger.newIncarnation()
                try keychain.write { try keychain.setSyncIncarnation(service: item.service, account: item.account, incarnation) }
            }
            if let incarnation {
                fields[Self.incarnationField] = try key.sealSecretField(try SecureBytes(copying: Array(incarnation.utf8)), id: id,
                                                                        field: Self.incarnationField, stamp: stamp)
            }
            if !serverKnown {
                fields["service"] = try key.sealSecretField(try SecureBytes(copying: Array(item.service.utf8)), id: id, field: "service", stamp: stamp)
                fields["account"] = try key.sealSecretField(try SecureBytes(copying: Array(item.account.utf8)), id: id, field: "account", stamp: stamp)
            }
            wire.append(WireRecord(kind: Self.secretKind, id: id, expectedVersion: expectedVersion, deleted: false, fields: fields))
            entries.append(SecretEntry(id: id, service: item.service, account: item.account, updatedAt: item.updatedAt, deleted: false,
                                       stamp: stamp.description, digest: digest, incarnation: incarnation))
        }
        for tombstone in try keychain.syncTombstones() where wire.count < AgentLimits.batchRecords {
            let id = try key.secretID(service: tombstone.service, account: tombstone.account)
            // Sealed to the incarnation it deletes, as a record's deletion is.
            let deleted = tombstone.incarnation ?? Keychain.legacySyncIncarnation
            let stamp = localStamp(updatedAt: store.stamp(), after: nil)
            let sealed = try key.sealSecretField(try SecureBytes(copying: Array(deleted.utf8)), id: id, field: Self.deletionField, stamp: stamp)
            wire.append(WireRecord(kind: Self.secretKind, id: id, expectedVersion: secretDeletionsTheServerLacks.contains(id) ? nil : tombstone.version,
                                   deleted: true, fields: [Self.deletionField: sealed]))
            entries.append(SecretEntry(id: id, service: tombstone.service, account: tombstone.account, updatedAt: "", deleted: true,
                                       stamp: stamp.description, incarnation: deleted))
        }
        if !unchanged.isEmpty {
            try keychain.write {
                for item in unchanged {
                    try keychain.setSyncState(service: item.service, account: item.account, pending: false, version: item.version,
                                              stamp: item.stamp, digest: item.digest)
                }
            }
        }
        guard !wire.isEmpty else { return (0, 0) }
        let mutationID = Identifier.make()
        try keychain.saveSyncOutgoing(mutationID: mutationID, request: String(decoding: try JSON.encode(wire, pretty: false), as: UTF8.self),
                                      local: String(decoding: try JSON.encode(entries, pretty: false), as: UTF8.self))
        CrashPoint.reach("sync.batch-saved")
        return try sendSecrets(mutationID: mutationID, wire, entries, replaying: false, keychain: keychain)
    }

    /// A keychain batch an interrupted run left: sent again under its mutation id.
    func replaySecretOutgoing() throws {
        guard let keychain = syncingKeychain else { return }
        while let (mutationID, request, local) = try keychain.syncOutgoing() {
            let wire: [WireRecord]
            let entries: [SecretEntry]
            do {
                wire = try JSON.decode([WireRecord].self, from: Array(request.utf8))
                entries = try JSON.decode([SecretEntry].self, from: Array(local.utf8))
            } catch {
                throw StoreError.corrupt(path: keychain.databasePath, detail: "a saved keychain sync batch is not readable")
            }
            _ = try sendSecrets(mutationID: mutationID, wire, entries, replaying: true, keychain: keychain)
        }
    }

    private func sendSecrets(mutationID: String, _ wire: [WireRecord], _ entries: [SecretEntry], replaying: Bool,
                             keychain: Keychain) throws -> (Int, Int) {
        guard case .pushed(let response) = try agent.send(.push(zone: account.zone, mutationID: mutationID, records: wire)) else {
            throw agent.unexpectedAnswer()
        }
        CrashPoint.reach("sync.pushed")
        let results = response.results
        if replaying && response.replayed { report.replayed += results.count }
        let byID = Dictionary(entries.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var applied = 0
        var conflicts = 0
        var differing: [(kind: String, id: String)] = []
        try keychain.write {
            applied = 0
            conflicts = 0
            differing = []
            for result in results where result.kind == Self.secretKind {
                guard let entry = byID[result.id] else { continue }
                guard result.status == .applied else {
                    conflicts += 1
                    switch (entry.deleted, result.version >= 1) {
                    case (true, true):
                        secretDeletionsTheServerLacks.remove(entry.id)
                        try keychain.setSyncTombstone(service: entry.service, account: entry.account, version: result.version)
                    case (true, false):
                        // The server has no such record (lost, or a zone made again): the deletion
                        // goes again as a new one, which the server keeps (a device whose ledger
                        // knows the incarnation is over may be reinstalled before another sends
                        // the item again live). The ledger keeps it meanwhile.
                        try keychain.noteDeadIncarnation(service: entry.service, account: entry.account,
                                                         entry.incarnation ?? Keychain.legacySyncIncarnation)
                        secretDeletionsTheServerLacks.insert(entry.id)
                    case (false, true):
                        try keychain.setSyncConflictVersion(service: entry.service, account: entry.account, result.version)
                        differing.append((Self.secretKind, result.id))
                    case (false, false):
                        // The server has no such record: the item is sent again as a new one.
                        try keychain.setSyncState(service: entry.service, account: entry.account, pending: true, version: nil,
                                                  stamp: nil, digest: nil)
                    }
                    continue
                }
                applied += 1
                try recordSecretApplied(entry, version: result.version, keychain: keychain)
            }
            try keychain.deleteSyncOutgoing(mutationID: mutationID)
        }
        // The store's checkpoint names the last batch of either kind, so a server that forgets
        // a keychain batch is noticed as one that forgets the store's (`reconcileReason`).
        if applied > 0 { try store.writeTransaction { try ledger.setLastMutation(mutationID) } }
        report.secretsPushed += applied
        report.conflicts += conflicts
        try fetchAndApplySecrets(differing)
        return (applied, conflicts)
    }

    /// The server's copies of items a push met at another version, merged as a pull would (the
    /// keychain's token stays), as `settleConflicts` does for records: a version the server
    /// numbered lower comes with no change to pull, and would otherwise be met at every push.
    func fetchAndApplySecrets(_ keys: [(kind: String, id: String)]) throws {
        guard !keys.isEmpty, let start = try secretPullStart(), !start.fresh else { return }
        try fetch(keys) { records in try applySecrets(records, token: start.after) }
    }

    /// The server has `entry` at `version`, recorded as it is now here: an item edited since the
    /// batch was made stays pending; one deleted or made this-device-only since gets a tombstone.
    private func recordSecretApplied(_ entry: SecretEntry, version: Int64, keychain: Keychain) throws {
        let local = try keychain.syncItem(service: entry.service, account: entry.account)
        if entry.deleted {
            // The server has the deletion: that incarnation is over, in the ledger, and the
            // deletion is one seen, should it be served again.
            try keychain.noteDeadIncarnation(service: entry.service, account: entry.account, entry.incarnation ?? Keychain.legacySyncIncarnation)
            if let stamp = entry.stamp { try keychain.noteDeletionSeen(service: entry.service, account: entry.account, stamp: stamp) }
            let sentAsNew = secretDeletionsTheServerLacks.remove(entry.id) != nil
            guard let tombstone = try keychain.syncTombstones().first(where: { $0.service == entry.service && $0.account == entry.account }) else {
                return
            }
            if sentAsNew || tombstone.version < version { try keychain.deleteSyncTombstone(service: entry.service, account: entry.account) }
            return
        }
        guard let local else {
            try keychain.setSyncTombstone(service: entry.service, account: entry.account, version: version)
            return
        }
        if let current = local.version, current >= version { return }
        try keychain.setSyncState(service: entry.service, account: entry.account, pending: local.updatedAt != entry.updatedAt,
                                  version: version, stamp: entry.stamp, digest: entry.digest)
    }
}
