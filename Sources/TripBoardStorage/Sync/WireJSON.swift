import TripBoardSystem

/// Push batches written as JSON straight into bytes: the same document `JSON.encode` makes of
/// them (compact; keys in another order, which JSON does not care about), without building a
/// `Codable` node tree and a `JSONValue` for every field of every record — which was most of a
/// large push's time.
package enum WireJSON {
    /// `records` as a JSON array of `WireRecord`s.
    static func records(_ records: [WireRecord]) -> [UInt8] {
        array(records, bytesEach: 600) { record, output in
            head(kind: record.kind, id: record.id, into: &output)
            if let version = record.version { output += Array(",\"version\":\(version)".utf8) }
            if let expected = record.expectedVersion { output += Array(",\"expectedVersion\":\(expected)".utf8) }
            if let sequence = record.sequence { output += Array(",\"sequence\":\(sequence)".utf8) }
            output += Array(",\"deleted\":\(record.deleted),\"fields\":".utf8)
            fields(record.fields, into: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// `[` the elements, each written by `element`, separated by commas `]`.
    private static func array<Element>(_ elements: [Element], bytesEach: Int,
                                       _ element: (Element, inout [UInt8]) -> Void) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(elements.count * bytesEach)
        output.append(UInt8(ascii: "["))
        for (index, item) in elements.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            element(item, &output)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }

    /// `{"kind":KIND,"id":ID` — the start of every record-like object.
    private static func head(kind: String, id: String, into output: inout [UInt8]) {
        output += Array(#"{"kind":"#.utf8)
        JSONValue.writeString(kind, into: &output)
        output += Array(#","id":"#.utf8)
        JSONValue.writeString(id, into: &output)
    }

    /// `entries` as a JSON array of `OutgoingEntry`s.
    static func entries(_ entries: [OutgoingEntry]) -> [UInt8] {
        array(entries, bytesEach: 300) { entry, output in
            head(kind: entry.kind, id: entry.id, into: &output)
            output += Array(#","updatedAt":"#.utf8)
            JSONValue.writeString(entry.updatedAt, into: &output)
            output += Array(",\"deleted\":\(entry.deleted),\"fields\":{".utf8)
            for (position, (name, field)) in entry.fields.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONValue.writeString(name, into: &output)
                output += Array(#":{"value":"#.utf8)
                JSONValue.writeString(field.value, into: &output)
                output += Array(#","stamp":"#.utf8)
                JSONValue.writeString(field.stamp, into: &output)
                output.append(UInt8(ascii: "}"))
            }
            output += Array("}}".utf8)
        }
    }

    /// The request `request` (whose `records` are not set) with `records`, already JSON, as its
    /// `records` member.
    static func request(_ request: AgentRequest, records: [UInt8]) throws -> [UInt8] {
        var bytes = try JSON.encode(request, pretty: false)
        guard bytes.last == UInt8(ascii: "}") else { return bytes }
        bytes.removeLast()
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes += Array(#""records":"#.utf8)
        bytes += records
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

extension WireJSON {
    /// A pulled page (`pullPage`'s answer), read from its JSON value tree by hand rather than
    /// through `Codable`: its records, whether more follow, and the read's high mark. A failure
    /// answer throws what it means (`SyncAgentClient.response`); a record whose fields are not
    /// sealed values is damaged server data.
    static func page(_ answer: [UInt8], _ agent: SyncAgentClient) throws -> (records: [WireRecord], more: Bool, high: Int64?) {
        guard let value = try? JSONValue.parse(answer), case .object(let members) = value else {
            _ = try agent.response(answer)
            throw SyncError.agentFailed(detail: "an answer that is not a response")
        }
        var records: [WireRecord] = []
        var more = false
        var high: Int64?
        for (key, member) in members {
            switch (key, member) {
            case ("failure", .null): continue
            case ("failure", _):
                _ = try agent.response(answer)
                throw SyncError.agentFailed(detail: "an answer that is not a response")
            case ("more", .bool(let flag)): more = flag
            case ("highSequence", .number(let text)): high = Int64(text)
            case ("records", .array(let elements)):
                records.reserveCapacity(elements.count)
                for element in elements { records.append(try record(element)) }
            default: continue
            }
        }
        return (records, more, high)
    }

    private static func record(_ value: JSONValue) throws -> WireRecord {
        guard case .object(let members) = value else { throw SyncError.agentFailed(detail: "an answer that is not a response") }
        var kind = "", id = "", deleted = false
        var version: Int64?, sequence: Int64?
        var rawFields: JSONValue?
        for (key, member) in members {
            switch (key, member) {
            case ("kind", .string(let text)): kind = text
            case ("id", .string(let text)): id = text
            case ("version", .number(let text)): version = Int64(text)
            case ("sequence", .number(let text)): sequence = Int64(text)
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
        return WireRecord(kind: kind, id: id, version: version, sequence: sequence, deleted: deleted, fields: fields)
    }

    private static func unreadable(_ id: String) -> SyncError {
        .damagedServerData("record \(id) on the server has unreadable fields")
    }
}

extension WireJSON {
    /// A record's sealed fields as a JSON object (what the server keeps in `records.fields`).
    package static func fields(_ fields: [String: SealedField], into output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        for (position, (name, field)) in fields.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONValue.writeString(name, into: &output)
            output += Array(#":{"stamp":"#.utf8)
            JSONValue.writeString(field.stamp, into: &output)
            output += Array(#","nonce":"#.utf8)
            JSONValue.writeString(field.nonce, into: &output)
            output += Array(#","ciphertext":"#.utf8)
            JSONValue.writeString(field.ciphertext, into: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Push results as a JSON array of `PushResult`s.
    package static func results(_ results: [PushResult]) -> [UInt8] {
        array(results, bytesEach: 100) { result, output in
            head(kind: result.kind, id: result.id, into: &output)
            output += Array(",\"status\":\"\(result.status.rawValue)\",\"version\":\(result.version)".utf8)
            if let sequence = result.sequence { output += Array(",\"sequence\":\(sequence)".utf8) }
            output.append(UInt8(ascii: "}"))
        }
    }
}
