import TripBoardSystem
import TripBoardStorage
import TripBoardSyncProtocol
import TripBoardModel

/// Telling a device that its edit lost (docs/sync.md, "The losing value is kept"). The device
/// that merges two edits of a field keeps the losing one; when the loser is another device's,
/// the next push of the record carries it in one more sealed field, `lostEdits` — a list of
/// `{field, value, stamp, keptStamp}` — and the device whose node made the lost stamp lists it
/// too when it pulls the record. Clients that do not know the field ignore it (they read only
/// the fields of the record's kind), and the server keeps it like any other field.
extension SyncEngine {
    static let lostEditsField = "lostEdits"

    /// How many of the losing values that other merges told of a push of a record carries on, the
    /// newest first: the server keeps one `lostEdits` per record, which the push replaces.
    static let lostEditsRelayed = 32

    /// `lostEdits` for a push of `record`: the values of other devices that lost a merge here and
    /// that they have not been told of, sealed, and as the shadow will keep it. Those the record
    /// carried when this device last had it (another device's merge told of them) go on with it:
    /// the push replaces the server's `lostEdits`, and the device whose edit lost there may not
    /// have pulled that version (an edit that lost on one device and then on another is still
    /// listed on its own) — at most `lostEditsRelayed` of them, the newest.
    func lostEdits(of record: SyncRecord, _ untold: [(field: String, lost: ShadowField, keptStamp: String)],
                   shadow: [String: ShadowField]) throws -> (sealed: SealedField, pushed: ShadowField) {
        var entries: [JSONValue] = untold.map { entry in
            .object([("field", .string(entry.field)), ("keptStamp", .string(entry.keptStamp)), ("stamp", .string(entry.lost.stamp)),
                     ("value", .string(entry.lost.value))])
        }
        let told = Set(untold.map { $0.field + "\u{0}" + $0.lost.stamp })
        entries += relayedLostEdits(shadow[Self.lostEditsField], kind: record.kind, excluding: told)
        let value = JSONValue.array(entries)
        let canonical = value.serialized(pretty: false, sortedKeys: true)
        let stamp = localStamp(updatedAt: store.stamp(), after: shadow[Self.lostEditsField]?.stamp).description
        let sealed = try key.seal(canonical: canonical, kind: record.kind, id: record.id, field: Self.lostEditsField, stamp: stamp, nonces: &nonces)
        return (sealed, ShadowField(value: String(decoding: canonical, as: UTF8.self), stamp: stamp))
    }

    /// The entries of the `lostEdits` this device last saw on a record (`carried`) that are for
    /// other devices and well formed, not in `excluding` (`field` NUL `stamp`), newest first, at
    /// most `lostEditsRelayed`.
    func relayedLostEdits(_ carried: ShadowField?, kind: RecordKind, excluding: Set<String>) -> [JSONValue] {
        guard let carried, case .array(let entries)? = try? JSONValue.parse(Array(carried.value.utf8)) else { return [] }
        var relayed: [(stamp: HybridStamp, entry: JSONValue)] = []
        var seen = excluding
        for entry in entries {
            guard case .object(let members) = entry else { continue }
            let named = Dictionary(members, uniquingKeysWith: { first, _ in first })
            guard let field = named["field"]?.stringValue, SyncRecord.fieldNames(kind).contains(field),
                  named["value"]?.stringValue != nil, named["keptStamp"]?.stringValue != nil,
                  let stampText = named["stamp"]?.stringValue, let stamp = HybridStamp(stampText), stamp.node != account.node,
                  seen.insert(field + "\u{0}" + stampText).inserted else { continue }
            relayed.append((stamp, entry))
        }
        return relayed.sorted { $0.stamp > $1.stamp }.prefix(Self.lostEditsRelayed).map(\.entry)
    }

    /// The `lostEdits` a pulled record carries, if new here: those whose stamp this device's node
    /// made are kept as this device's edits that lost (`sync conflicts`, lost on this device).
    func keepConflictsTold(in fields: OpenedFields, kind: RecordKind, id: String, previousStamp: String?, at now: String) throws {
        guard let told = fields[Self.lostEditsField], told.stamp.description != previousStamp,
              case .array(let entries) = told.value else { return }
        for case .object(let members) in entries {
            let entry = Dictionary(members, uniquingKeysWith: { first, _ in first })
            guard let field = entry["field"]?.stringValue, SyncRecord.fieldNames(kind).contains(field),
                  let value = entry["value"]?.stringValue, let stampText = entry["stamp"]?.stringValue,
                  let stamp = HybridStamp(stampText), stamp.node == account.node,
                  let kept = fields[field] else { continue }
            try ledger.keepConflictToldByAnotherDevice(kind, id: id, field: field,
                                                      kept: ShadowField(value: kept.value.canonicalText, stamp: kept.stamp.description),
                                                      lost: ShadowField(value: value, stamp: stampText), at: now)
            report.conflictsKept += 1
        }
    }
}
