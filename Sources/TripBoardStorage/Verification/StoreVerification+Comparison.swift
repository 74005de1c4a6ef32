public import TripBoardModel
import TripBoardSystem

/// How one kind of record differs between two stores (`app backup verify`): by id, in what a
/// user sees of each — the fields sync carries (the record's one declaration of them,
/// `SyncRecord.fieldNames`), whether it is in the trash, and an attachment's file being there —
/// never sync bookkeeping (state, versions, stamps), which changes with every acknowledgement.
public struct RecordDifference: Sendable, Equatable, Codable {
    /// In both, the same.
    public var same = 0
    /// In both, a field (or the trash, or the file) differs.
    public var changed = 0
    /// Here only: made since the backup (or restored from the trash for good).
    public var onlyHere = 0
    /// In the other store only: gone from here since (deleted for good, or never here).
    public var onlyThere = 0
    /// Up to five ids of each sort of difference, for the user to look at.
    public var examples: [String] = []

    public var differs: Bool { changed + onlyHere + onlyThere > 0 }

    package init() {}
}

extension StoreVerification {
    /// How the records this store holds differ from those of `other`, kind by kind (trips,
    /// places, bookings, attachments). Each store is read in one transaction, ids in order, the
    /// records both hold `comparisonBatch` at a time, each store's side of a batch on a thread of
    /// its own: memory holds the two lists of ids and one batch of records, not all of them.
    public func userRecordDifferences(from other: Store) throws -> [RecordKind: RecordDifference] {
        // In id order each record is on another table page, opened again on every miss: both
        // stores get the page cache of the whole-store checks meanwhile.
        try connection.withPageCache(kibibytes: Store.checkPageCacheKibibytes) {
            try other.connection.withPageCache(kibibytes: Store.checkPageCacheKibibytes) { try differences(from: other) }
        }
    }

    private func differences(from other: Store) throws -> [RecordKind: RecordDifference] {
        try connection.readTransaction {
            try other.connection.readTransaction {
                var differences: [RecordKind: RecordDifference] = [:]
                for kind in SyncRecord.kinds {
                    differences[kind] = try userRecordDifference(of: kind, from: other)
                }
                return differences
            }
        }
    }

    private func userRecordDifference(of kind: RecordKind, from other: Store) throws -> RecordDifference {
        let here = try userVisibleIDs(kind), there = try other.verification.userVisibleIDs(kind)
        var difference = RecordDifference()
        func note(_ id: String) { if difference.examples.count < 5 { difference.examples.append(id) } }
        // The ids both hold, compared a batch at a time (one statement a batch on each side).
        var both: [String] = []
        func compareBoth() throws {
            // The other store's side on a second thread meanwhile: each store has its own
            // connection, used by one thread at a time (the other's until `value()` returns).
            let batch = both
            let theirs = BackgroundResult { try other.verification.userViews(kind, ids: batch) }
            let views = try userViews(kind, ids: batch), otherViews = try theirs.value()
            for id in both {
                if views[id] == otherViews[id] {
                    difference.same += 1
                } else {
                    difference.changed += 1
                    note(id)
                }
            }
            both.removeAll(keepingCapacity: true)
        }
        var (i, j) = (0, 0)
        while i < here.count || j < there.count {
            if j == there.count || (i < here.count && here[i] < there[j]) {
                difference.onlyHere += 1
                note(here[i])
                i += 1
            } else if i == here.count || there[j] < here[i] {
                difference.onlyThere += 1
                note(there[j])
                j += 1
            } else {
                both.append(here[i])
                if both.count == Self.comparisonBatch { try compareBoth() }
                (i, j) = (i + 1, j + 1)
            }
        }
        if !both.isEmpty { try compareBoth() }
        return difference
    }

    /// Records read a statement at a time when two stores are compared.
    static let comparisonBatch = 500

    /// The ids a user can see of `kind` (live or in the trash; not a deletion waiting for the
    /// server, nor an attachment being deleted), in byte order.
    private func userVisibleIDs(_ kind: RecordKind) throws -> [String] {
        let notDeleting = kind == .attachment ? " AND state <> 'deleting'" : ""
        return try connection.statement("""
            SELECT id FROM \(kind.table) WHERE (\(Store.liveCondition(kind)) OR trashed_at IS NOT NULL)\(notDeleting) ORDER BY id
            """).rows { $0.text(0) }
    }

    /// What a user sees of each of `ids` this store holds, as canonical JSON text, by id.
    private func userViews(_ kind: RecordKind, ids: [String]) throws -> [String: String] {
        var views: [String: String] = [:]
        for record in try store.syncLedger.syncRecords(kind, ids: ids) {
            var fields = record.fields
            fields["inTrash"] = .bool(record.isInTrash)
            if kind == .attachment { fields["hasFile"] = .bool(record.fileState == .present) }
            views[record.id] = JSONValue.object(fields.sorted { $0.key < $1.key }).canonicalText
        }
        return views
    }
}
