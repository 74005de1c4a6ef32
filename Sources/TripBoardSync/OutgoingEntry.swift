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
        array(entries, bytesEach: 300) { entry, output in
            head(kind: entry.kind, id: entry.id, into: &output)
            output += Array(#","updatedAt":"#.utf8)
            JSONValue.writeString(entry.updatedAt, into: &output)
            output += Array(",\"deleted\":\(entry.deleted),\"fields\":".utf8)
            object(entry.fields, into: &output) { field, output in
                output += Array(#"{"value":"#.utf8)
                JSONValue.writeString(field.value, into: &output)
                output += Array(#","stamp":"#.utf8)
                JSONValue.writeString(field.stamp, into: &output)
                output.append(UInt8(ascii: "}"))
            }
            output.append(UInt8(ascii: "}"))
        }
    }
}
