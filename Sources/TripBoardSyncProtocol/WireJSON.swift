package import TripBoardSystem

/// Push batches written as JSON straight into bytes (`JSONWriter`, compact): the same document
/// `JSON.encode` makes of them without its `null` members (keys in another order, which JSON
/// does not care about), and without building a `Codable` node tree and a `JSONValue` for every
/// field of every record — which was most of a large push's time.
package enum WireJSON {
    /// `records` as a JSON array of `WireRecord`s.
    package static func records(_ records: [WireRecord]) -> [UInt8] {
        var writer = JSONWriter(pretty: false, capacity: records.count * 600 + 2)
        writer.beginArray()
        for record in records { write(record, to: &writer) }
        writer.endArray()
        return writer.bytes
    }

    /// One `WireRecord`, its absent members left out.
    private static func write(_ record: WireRecord, to writer: inout JSONWriter) {
        head(kind: record.kind, id: record.id, &writer)
        if let version = record.version { writer.key("version"); writer.integer(version) }
        if let expected = record.expectedVersion { writer.key("expectedVersion"); writer.integer(expected) }
        if let sequence = record.sequence { writer.key("sequence"); writer.integer(sequence) }
        writer.key("deleted")
        writer.bool(record.deleted)
        writer.key("fields")
        fields(record.fields, &writer)
        if let blob = record.blob { writer.key("blob"); writer.string(blob) }
        if let written = record.written { writer.key("written"); writer.integer(written) }
        writer.endObject()
    }

    /// `{"kind":KIND,"id":ID` — the start of every record-like object, left open.
    package static func head(kind: String, id: String, _ writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("kind")
        writer.string(kind)
        writer.key("id")
        writer.string(id)
    }

    /// `AgentRequest.push` with `records` already JSON (`records(_:)`): the members of
    /// `JSON.encode`'s request that a push has, with `records` last.
    package static func push(zone: String, mutationID: String, records: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(pretty: false, capacity: records.count + zone.utf8.count + mutationID.utf8.count + 64)
        writer.beginObject()
        writer.key("mutationId")
        writer.string(mutationID)
        writer.key("operation")
        writer.string(ascii: "push")
        writer.key("zone")
        writer.string(zone)
        writer.key("records")
        writer.json(records)
        writer.endObject()
        return writer.bytes
    }

    /// A record's sealed fields as a JSON object (what the server keeps in `records.fields`).
    package static func fields(_ fields: [String: SealedField], _ writer: inout JSONWriter) {
        fieldObject(fields, &writer) { field, writer in
            writer.key("stamp")
            writer.string(field.stamp)
            writer.key("nonce")
            writer.string(field.nonce)
            writer.key("ciphertext")
            writer.string(field.ciphertext)
        }
    }

    /// Fields by name as a JSON object of objects, each field's members written by `members`.
    @inlinable package static func fieldObject<Field>(_ fields: [String: Field], _ writer: inout JSONWriter,
                                                    _ members: (Field, inout JSONWriter) -> Void) {
        writer.beginObject()
        for (name, field) in fields {
            writer.key(escaping: name)
            writer.beginObject()
            members(field, &writer)
            writer.endObject()
        }
        writer.endObject()
    }

    /// Push results as a JSON array of `PushResult`s.
    package static func results(_ results: [PushResult]) -> [UInt8] {
        var writer = JSONWriter(pretty: false, capacity: results.count * 100 + 2)
        writer.beginArray()
        for result in results {
            head(kind: result.kind, id: result.id, &writer)
            writer.key("status")
            writer.string(result.status.rawValue)
            writer.key("version")
            writer.integer(result.version)
            if let sequence = result.sequence { writer.key("sequence"); writer.integer(sequence) }
            writer.endObject()
        }
        writer.endArray()
        return writer.bytes
    }
}
