public import TripBoardStorage
public import TripBoardSyncProtocol

/// What a device asks the server before it syncs, to tell whether the server lost changes it
/// had acknowledged (`Store.syncCheck`, docs/sync.md).
public struct SyncCheck: Sendable, Equatable {
    /// The mutation id of the last batch this device pushed and the server answered.
    public var lastMutation: String?
    /// The last record the change token covers, as kind, id, version and change sequence, and
    /// its fields' stamps.
    public var tokenRecord: WireRecord?
    public var tokenRecordStamps: String?

    public init(lastMutation: String?, tokenRecord: WireRecord?, tokenRecordStamps: String? = nil) {
        self.lastMutation = lastMutation
        self.tokenRecord = tokenRecord
        self.tokenRecordStamps = tokenRecordStamps
    }
}

extension SyncLedger {
    /// What the server is asked before a sync, to tell whether it lost changes it had acknowledged.
    public func syncCheck() throws -> SyncCheck {
        let (lastMutation, tokenRecord) = try syncCheckpoint()
        return SyncCheck(lastMutation: lastMutation, tokenRecord: tokenRecord.map {
            WireRecord(kind: $0.kind, id: $0.id, version: $0.version, sequence: $0.sequence, deleted: false, fields: [:], written: $0.written)
        }, tokenRecordStamps: tokenRecord?.stamps)
    }

    /// Removes the kept conflict whose id starts with `prefix` (one match): the user has read it.
    /// Returns its full id; `SyncError.noSuchConflict` when none has that prefix.
    public func dismissSyncConflict(_ prefix: String) throws -> String {
        guard let id = try removeSyncConflict(prefix: prefix) else { throw SyncError.noSuchConflict(id: prefix) }
        return id
    }
}

extension WireRecord {
    /// The record as the change token names it (`Store.setChangeToken`), when it has a version.
    var versioned: SyncVersionedRecord? {
        version.map { SyncVersionedRecord(kind: kind, id: id, version: $0, sequence: sequence, stamps: stampList, written: written) }
    }

    /// Its fields' stamps as `field=stamp,…` in byte order of the names: what the server's copy
    /// must still carry for the change token to hold (`AgentService`'s zone check builds the same).
    var stampList: String {
        fields.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            .map { $0.key + "=" + $0.value.stamp }.joined(separator: ",")
    }
}
