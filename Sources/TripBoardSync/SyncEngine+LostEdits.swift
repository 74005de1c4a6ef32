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

    /// `lostEdits` for a push of `record`: the values of other devices that lost a merge here and
    /// that they have not been told of, sealed, and as the shadow will keep it.
    func lostEdits(of record: SyncRecord, _ untold: [(field: String, lost: ShadowField, keptStamp: String)],
                   shadow: [String: ShadowField]) throws -> (sealed: SealedField, pushed: ShadowField) {
        let value = JSONValue.array(untold.map { entry in
            .object([("field", .string(entry.field)), ("keptStamp", .string(entry.keptStamp)), ("stamp", .string(entry.lost.stamp)),
                     ("value", .string(entry.lost.value))])
        })
        let canonical = value.serialized(pretty: false, sortedKeys: true)
        let stamp = localStamp(updatedAt: store.stamp(), after: shadow[Self.lostEditsField]?.stamp).description
        let sealed = try key.seal(canonical: canonical, kind: record.kind, id: record.id, field: Self.lostEditsField, stamp: stamp)
        return (sealed, ShadowField(value: String(decoding: canonical, as: UTF8.self), stamp: stamp))
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
