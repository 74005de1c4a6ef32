import TripBoardSystem

/// Push batches written as JSON straight into bytes: the same document `JSON.encode` makes of
/// them (compact; keys in another order, which JSON does not care about), without building a
/// `Codable` node tree and a `JSONValue` for every field of every record — which was most of a
/// large push's time.
package enum WireJSON {
    /// `records` as a JSON array of `WireRecord`s.
    package static func records(_ records: [WireRecord]) -> [UInt8] {
        array(records, bytesEach: 600) { record, output in
            head(kind: record.kind, id: record.id, into: &output)
            if let version = record.version { output += Array(",\"version\":\(version)".utf8) }
            if let expected = record.expectedVersion { output += Array(",\"expectedVersion\":\(expected)".utf8) }
            if let sequence = record.sequence { output += Array(",\"sequence\":\(sequence)".utf8) }
            output += Array(",\"deleted\":\(record.deleted),\"fields\":".utf8)
            fields(record.fields, into: &output)
            if let blob = record.blob {
                output += Array(#","blob":"#.utf8)
                JSONValue.writeString(blob, into: &output)
            }
            if let written = record.written { output += Array(",\"written\":\(written)".utf8) }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// `[` the elements, each written by `element`, separated by commas `]`.
    package static func array<Element>(_ elements: [Element], bytesEach: Int,
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
    package static func head(kind: String, id: String, into output: inout [UInt8]) {
        output += Array(#"{"kind":"#.utf8)
        JSONValue.writeString(kind, into: &output)
        output += Array(#","id":"#.utf8)
        JSONValue.writeString(id, into: &output)
    }

    /// The request `request` (whose `records` are not set) with `records`, already JSON, as its
    /// `records` member.
    package static func request(_ request: AgentRequest, records: [UInt8]) throws -> [UInt8] {
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
    /// A record's sealed fields as a JSON object (what the server keeps in `records.fields`).
    package static func fields(_ fields: [String: SealedField], into output: inout [UInt8]) {
        object(fields, into: &output) { field, output in
            output += Array(#"{"stamp":"#.utf8)
            JSONValue.writeString(field.stamp, into: &output)
            output += Array(#","nonce":"#.utf8)
            JSONValue.writeString(field.nonce, into: &output)
            output += Array(#","ciphertext":"#.utf8)
            JSONValue.writeString(field.ciphertext, into: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// `members` as a JSON object: each name as a JSON string, its value written by `value`.
    @inlinable package static func object<Value>(_ members: [String: Value], into output: inout [UInt8],
                                      _ value: (Value, inout [UInt8]) -> Void) {
        output.append(UInt8(ascii: "{"))
        for (position, (name, member)) in members.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONValue.writeString(name, into: &output)
            output.append(UInt8(ascii: ":"))
            value(member, &output)
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
