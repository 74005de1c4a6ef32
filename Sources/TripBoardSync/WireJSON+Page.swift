import TripBoardSystem
import TripBoardSyncProtocol

extension WireJSON {
    /// A pulled page (`pullPage`'s answer), read from its JSON value tree by hand rather than
    /// through `Codable`: its records, whether more follow, and the read's high mark. A failure
    /// answer throws what it means (`SyncAgentClient.response`); a record whose fields are not
    /// sealed values is damaged server data. `covered` (a `fetch`'s answer): how many of the
    /// records asked the answer settles.
    static func page(_ answer: [UInt8], _ agent: SyncAgentClient) throws -> (records: [WireRecord], more: Bool, high: Int64?, covered: Int?) {
        guard let value = try? JSONValue.parse(answer), case .object(let members) = value else {
            _ = try agent.response(answer, answering: .pullPage)
            throw SyncError.agentFailed(detail: "an answer that is not a response")
        }
        var records: [WireRecord] = []
        var more = false
        var high: Int64?
        var covered: Int?
        for (key, member) in members {
            switch (key, member) {
            case ("failure", .null): continue
            case ("failure", _):
                _ = try agent.response(answer, answering: .pullPage)
                throw SyncError.agentFailed(detail: "an answer that is not a response")
            case ("more", .bool(let flag)): more = flag
            case ("highSequence", .number(let text)): high = Int64(text)
            case ("covered", .number(let text)): covered = Int(text)
            case ("records", .array(let elements)):
                records.reserveCapacity(elements.count)
                for element in elements { records.append(try record(element)) }
            default: continue
            }
        }
        return (records, more, high, covered)
    }

    private static func record(_ value: JSONValue) throws -> WireRecord {
        guard case .object(let members) = value else { throw SyncError.agentFailed(detail: "an answer that is not a response") }
        var kind = "", id = "", deleted = false
        var version: Int64?, sequence: Int64?, written: Int64?
        var rawFields: JSONValue?
        for (key, member) in members {
            switch (key, member) {
            case ("kind", .string(let text)): kind = text
            case ("id", .string(let text)): id = text
            case ("version", .number(let text)): version = Int64(text)
            case ("sequence", .number(let text)): sequence = Int64(text)
            case ("written", .number(let text)): written = Int64(text)
            case ("deleted", .bool(let flag)): deleted = flag
            case ("fields", let fields): rawFields = fields
            default: continue
            }
        }
        var fields: [String: SealedField] = [:]
        switch rawFields {
        case nil, .null?: break
        case .object(let entries)?:
            for (name, entry) in entries {
                guard case .object(let parts) = entry else { throw unreadable(id) }
                var stamp: String?, nonce: String?, ciphertext: String?
                for (part, content) in parts {
                    guard case .string(let text) = content else { continue }
                    switch part {
                    case "stamp": stamp = text
                    case "nonce": nonce = text
                    case "ciphertext": ciphertext = text
                    default: continue
                    }
                }
                guard let stamp, let nonce, let ciphertext else { throw unreadable(id) }
                fields[name] = SealedField(stamp: stamp, nonce: nonce, ciphertext: ciphertext)
            }
        default: throw unreadable(id)
        }
        return WireRecord(kind: kind, id: id, version: version, sequence: sequence, deleted: deleted, fields: fields, written: written)
    }

    private static func unreadable(_ id: String) -> SyncError {
        .damagedServerData("record \(id) on the server has unreadable fields")
    }
}

