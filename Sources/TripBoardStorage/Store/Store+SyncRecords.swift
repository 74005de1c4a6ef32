package import TripBoardSystem
package import TripBoardReadPath

/// A trip, place or booking as sync sees it: its fields as JSON values, by the names the server
/// knows them by, and its sync metadata. A trip's start and end dates are one field, `dates`, so
/// that they always merge together and `end ≥ start` holds whatever two devices did.
package struct SyncRecord {
    package var kind: RecordKind
    package var id: String
    package var fields: [String: JSONValue]
    package var syncState: SyncState
    package var remoteVersion: Int64?
    package var updatedAt: String
    package var trashedAt: String?
    package var trashedWith: String?
    /// Attachments: the row's `state` and file.
    package var fileState: Attachment.State?
    package var relativePath: String?

    package init(kind: RecordKind, id: String, fields: [String: JSONValue], syncState: SyncState, remoteVersion: Int64?,
                 updatedAt: String, trashedAt: String? = nil, trashedWith: String? = nil, fileState: Attachment.State? = nil,
                 relativePath: String? = nil) {
        self.kind = kind
        self.id = id
        self.fields = fields
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
        self.trashedAt = trashedAt
        self.trashedWith = trashedWith
        self.fileState = fileState
        self.relativePath = relativePath
    }

    /// The kinds sync carries, parents first (a push batch is in this order).
    package static let kinds: [RecordKind] = [.trip, .place, .booking, .attachment]

    /// The fields of each kind, in the order they are written.
    package static func fieldNames(_ kind: RecordKind) -> [String] {
        switch kind {
        case .trip: ["name", "dates", "notes"]
        case .place: ["tripId", "name", "city", "visited"]
        case .booking: ["tripId", "kind", "title", "startsAt", "endsAt", "zone", "reference"]
        case .attachment: ["bookingId", "originalFilename", "contentType", "byteCount", "contentHash", "pageCount", "blob"]
        }
    }

    package var isTombstone: Bool { syncState == .pendingDeletion }
    package var isInTrash: Bool { trashedAt != nil }
    package var tripId: String? { fields["tripId"].flatMap(\.stringValue) }
    /// The record this one belongs to (trash entries go with it): a place's or booking's trip, an attachment's booking.
    package var parent: (kind: RecordKind, id: String)? {
        switch kind {
        case .trip: nil
        case .place, .booking: tripId.map { (.trip, $0) }
        case .attachment: fields["bookingId"].flatMap(\.stringValue).map { (.booking, $0) }
        }
    }
}

extension JSONValue {
    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The compact, key-sorted text: what is sealed, kept in the shadow, and compared.
    package var canonicalText: String { String(decoding: serialized(pretty: false, sortedKeys: true), as: UTF8.self) }

    package static func optionalString(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
}

extension Store {
    /// The record `id` of `kind` in any state (live, pending, tombstone, in the trash), or nil.
    package func syncRecord(_ kind: RecordKind, id: String) throws -> SyncRecord? {
        let sql: String
        switch kind {
        case .trip: sql = "SELECT name, start_date, end_date, notes, sync_state, remote_version, updated_at, trashed_at, trashed_with FROM trips WHERE id = ?"
        case .place: sql = "SELECT trip_id, name, city, visited, sync_state, remote_version, updated_at, trashed_at, trashed_with FROM places WHERE id = ?"
        case .booking: sql = "SELECT trip_id, kind, title, starts_at, reference, ends_at, zone, sync_state, remote_version, updated_at, trashed_at, trashed_with FROM bookings WHERE id = ?"
        case .attachment: return try attachmentSyncRecord(id: id)
        }
        return try connection.statement(sql).rows([.text(id)]) { row -> SyncRecord in
            let fields: [String: JSONValue]
            let metadata: Int32
            switch kind {
            case .trip:
                fields = ["name": .string(row.text(0)),
                          "dates": .object([("end", .string(row.text(2))), ("start", .string(row.text(1)))]),
                          "notes": .string(row.text(3))]
                metadata = 4
            case .place:
                fields = ["tripId": .string(row.text(0)), "name": .string(row.text(1)), "city": .optionalString(row.optionalText(2)),
                          "visited": .bool(row.integer(3) != 0)]
                metadata = 4
            default:
                fields = ["tripId": .string(row.text(0)), "kind": .string(row.text(1)), "title": .string(row.text(2)),
                          "startsAt": .optionalString(row.optionalText(3)), "reference": .optionalString(row.optionalText(4)),
                          "endsAt": .optionalString(row.optionalText(5)), "zone": .optionalString(row.optionalText(6))]
                metadata = 7
            }
            return SyncRecord(kind: kind, id: id, fields: fields, syncState: SyncState(rawValue: row.text(metadata)) ?? .failed,
                              remoteVersion: row.optionalInteger(metadata + 1), updatedAt: row.text(metadata + 2),
                              trashedAt: row.optionalText(metadata + 3), trashedWith: row.optionalText(metadata + 4))
        }.first
    }

    /// The records the server must hear about (`Store.pending`), trips first so that a place's
    /// trip is written on the server before it, at most `limit`.
    /// `excluding` ("kind/id") leaves out the records of a batch still in flight.
    package func pendingSyncRecords(limit: Int, excluding: Set<String> = []) throws -> [SyncRecord] {
        var records: [SyncRecord] = []
        for kind in SyncRecord.kinds where records.count < limit {
            let ids = try connection.statement(Self.pendingInPushOrder(kind))
                .rows([.integer(Int64(limit - records.count + excluding.count))]) { $0.text(0) }
                .filter { !excluding.contains(kind.rawValue + "/" + $0) }
                .prefix(limit - records.count)
            records += try ids.compactMap { try syncRecord(kind, id: $0) }
        }
        return records
    }

    /// The ids of the oldest pending records of `kind`, at most `?1`: the first entries of its
    /// `*_pending` index (schema 8), not a sort of every pending record.
    static func pendingInPushOrder(_ kind: RecordKind) -> String {
        "SELECT id FROM \(kind.table) WHERE \(pending(kind)) ORDER BY updated_at, id LIMIT ?1"
    }

    /// Writes `record`'s fields and metadata over its row, or inserts it, checked by the same
    /// rules as every other write (`validated()`, `FieldRules`). A field missing from `fields`
    /// makes the record invalid (`StoreError.invalidField`).
    package func writeSyncRecord(_ record: SyncRecord, inserting: Bool) throws {
        func string(_ name: String) throws -> String { try record.requiredText(name) }
        func optionalString(_ name: String) throws -> String? {
            guard let value = record.fields[name] else { throw StoreError.invalidField(field: name, rule: "missing in the synchronised record") }
            if value == .null { return nil }
            guard let text = value.stringValue else { throw StoreError.invalidField(field: name, rule: "not text in the synchronised record") }
            return text
        }
        switch record.kind {
        case .trip:
            guard case .object = record.fields["dates"], let start = record.fields["dates"]?["start"]?.stringValue.flatMap(CivilDate.init),
                  let end = record.fields["dates"]?["end"]?.stringValue.flatMap(CivilDate.init) else {
                throw StoreError.invalidField(field: "dates", rule: "must hold a start and an end date (YYYY-MM-DD)")
            }
            let trip = try Trip(id: record.id, name: try string("name"), startDate: start, endDate: end, notes: try string("notes"),
                                syncState: record.syncState, remoteVersion: record.remoteVersion, updatedAt: record.updatedAt).validated()
            if inserting { return try insert(validated: trip) }
            try connection.statement("""
                UPDATE trips SET name = ?, start_date = ?, end_date = ?, notes = ?, sync_state = ?, remote_version = ?, updated_at = ? WHERE id = ?
                """).run([.text(trip.name), .text(trip.startDate.description), .text(trip.endDate.description), .text(trip.notes),
                          .text(trip.syncState.rawValue), .optional(trip.remoteVersion), .text(trip.updatedAt), .text(trip.id)])
        case .place:
            guard case .bool(let visited) = record.fields["visited"] else {
                throw StoreError.invalidField(field: "visited", rule: "must be true or false")
            }
            let place = try Place(id: record.id, tripId: try string("tripId"), name: try string("name"), city: try optionalString("city"),
                                  visited: visited, syncState: record.syncState, remoteVersion: record.remoteVersion,
                                  updatedAt: record.updatedAt).validated()
            if inserting { return try insert(validated: place) }
            try connection.statement("""
                UPDATE places SET trip_id = ?, name = ?, city = ?, visited = ?, sync_state = ?, remote_version = ?, updated_at = ? WHERE id = ?
                """).run([.text(place.tripId), .text(place.name), .optional(place.city), .integer(place.visited ? 1 : 0),
                          .text(place.syncState.rawValue), .optional(place.remoteVersion), .text(place.updatedAt), .text(place.id)])
        case .booking:
            // `endsAt` came with schema 3: a record pushed by a client that does not know it has none.
            let endsAt = record.fields["endsAt"] == nil ? nil : try optionalString("endsAt")
            // `zone` likewise came with schema 6.
            let zone = record.fields["zone"] == nil ? nil : try optionalString("zone")
            let booking = try Booking(id: record.id, tripId: try string("tripId"), kind: try FieldRules.bookingKind(try string("kind")),
                                      title: try string("title"), startsAt: try optionalString("startsAt"),
                                      reference: try optionalString("reference"), syncState: record.syncState,
                                      remoteVersion: record.remoteVersion, updatedAt: record.updatedAt, endsAt: endsAt, zone: zone).validated()
            if inserting { return try insert(validated: booking) }
            let epochs = BookingTime.epochs(startsAt: booking.startsAt, endsAt: booking.endsAt)
            try connection.statement("""
                UPDATE bookings SET trip_id = ?, kind = ?, title = ?, starts_at = ?, starts_at_epoch = ?, reference = ?, sync_state = ?,
                    remote_version = ?, updated_at = ?, ends_at = ?, over_at_epoch = ?, zone = ? WHERE id = ?
                """).run([.text(booking.tripId), .text(booking.kind.rawValue), .text(booking.title), .optional(booking.startsAt),
                          .optional(epochs.start), .optional(booking.reference), .text(booking.syncState.rawValue),
                          .optional(booking.remoteVersion), .text(booking.updatedAt), .optional(booking.endsAt),
                          .optional(epochs.overAt), .optional(booking.zone), .text(booking.id)])
        case .attachment:
            try writeAttachmentSyncRecord(record, inserting: inserting)
        }
    }

    /// Sets only the sync metadata of `kind` `id`.
    package func setSyncMetadata(_ kind: RecordKind, id: String, state: SyncState, remoteVersion: Int64?) throws {
        try connection.statement("UPDATE \(kind.table) SET sync_state = ?, remote_version = ? WHERE id = ?")
            .run([.text(state.rawValue), .optional(remoteVersion), .text(id)])
    }
}

extension SyncRecord {
    /// The text field `name`, which a record of its kind must have (`StoreError.invalidField` otherwise).
    func requiredText(_ name: String) throws(StoreError) -> String {
        guard let value = fields[name]?.stringValue else {
            throw StoreError.invalidField(field: name, rule: "missing or not text in the synchronised record")
        }
        return value
    }
}
