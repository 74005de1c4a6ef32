import TripBoardSystem
import TripBoardStorage
import TripBoardSyncProtocol

/// What `app` remembers of a batch it pushed, to record the server's answer locally.
struct OutgoingEntry: Codable {
    var kind: String
    var id: String
    /// The record's `updated_at` when the batch was made: an edit after it keeps the record pending.
    var updatedAt: String
    var deleted: Bool
    var fields: [String: ShadowField]
}

extension WireJSON {
    /// `entries` as a JSON array of `OutgoingEntry`s.
    static func entries(_ entries: [OutgoingEntry]) -> [UInt8] {
        var writer = JSONWriter(pretty: false, capacity: entries.count * 300 + 2)
        writer.beginArray()
        for entry in entries {
            head(kind: entry.kind, id: entry.id, &writer)
            writer.key("updatedAt")
            writer.string(entry.updatedAt)
            writer.key("deleted")
            writer.bool(entry.deleted)
            writer.key("fields")
            fieldObject(entry.fields, &writer) { field, writer in
                writer.key("value")
                writer.string(field.value)
                writer.key("stamp")
                writer.string(field.stamp)
            }
            writer.endObject()
        }
        writer.endArray()
        return writer.bytes
    }
}
