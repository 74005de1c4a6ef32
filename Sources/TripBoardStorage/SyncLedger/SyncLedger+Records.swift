package import TripBoardSystem
package import TripBoardModel
import TripBoardSQLite

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

    /// The fields of each kind, in the order they are written: the kind's declaration's
    /// (`RecordColumn.syncFields`).
    package static func fieldNames(_ kind: RecordKind) -> [String] {
        switch kind {
        case .trip: tripFields
        case .place: placeFields
        case .booking: bookingFields
        case .attachment: ["bookingId", "originalFilename", "contentType", "byteCount", "contentHash", "pageCount", "protection", "blob"]
        }
    }

    private static let tripFields = TripColumn.syncFields
    private static let placeFields = PlaceColumn.syncFields
    private static let bookingFields = BookingColumn.syncFields

    package var isTombstone: Bool { syncState == .pendingDeletion }
    package var isInTrash: Bool { trashedAt != nil }
    package var tripId: String? { fields["tripId"].flatMap(\.stringValue) }
    /// The field naming the record a `kind` belongs to, and that record's kind: a place's or
    /// booking's `tripId`, an attachment's `bookingId`; nil for a trip.
    package static func parentField(of kind: RecordKind) -> (field: String, kind: RecordKind)? {
        switch kind {
        case .trip: nil
        case .place, .booking: ("tripId", .trip)
        case .attachment: ("bookingId", .booking)
        }
    }

    /// The record this one belongs to (trash entries go with it): a place's or booking's trip, an attachment's booking.
    package var parent: (kind: RecordKind, id: String)? {
        guard let (field, parentKind) = Self.parentField(of: kind), let id = fields[field]?.stringValue else { return nil }
        return (parentKind, id)
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

extension SyncLedger {
    /// The record `id` of `kind` in any state (live, pending, tombstone, in the trash), or nil.
    package func syncRecord(_ kind: RecordKind, id: String) throws -> SyncRecord? {
        switch kind {
        case .trip: try syncRecord(TripColumn.self, kind, id: id)
        case .place: try syncRecord(PlaceColumn.self, kind, id: id)
        case .booking: try syncRecord(BookingColumn.self, kind, id: id)
        case .attachment: try attachmentSyncRecord(id: id)
        }
    }

    /// Where a trip, place or booking stands, its fields not read: nil when it is not here; else
    /// whether it is in the trash (and the entry it went with) and whether it is a tombstone.
    /// What a pulled child asks of its parent: reading the parent whole cost a first sync a
    /// sync record made per child (about 30,000 instructions).
    package func standing(_ kind: RecordKind, id: String) throws -> Standing? {
        precondition(kind != .attachment, "an attachment is nobody's parent")
        return try connection.statement("""
            SELECT trashed_at IS NOT NULL, trashed_with, sync_state = 'pendingDeletion' FROM \(kind.table) WHERE id = ?
            """).rows([.text(id)]) { Standing(inTrash: $0.integer(0) != 0, trashedWith: $0.optionalText(1), tombstone: $0.integer(2) != 0) }.first
    }

    /// Where a record stands (`standing(_:id:)`).
    package struct Standing {
        package var inTrash: Bool
        /// The trash entry it went with (nil: its own).
        package var trashedWith: String?
        package var tombstone: Bool
    }

    /// A trip, place or booking as its declaration makes it a sync record: each column with a
    /// sync field gives that field (the columns of one field make an object of their parts).
    private func syncRecord<Column: RecordColumn>(_ columns: Column.Type, _ kind: RecordKind, id: String) throws -> SyncRecord? {
        try syncRecords(Column.self, kind, "WHERE id = ?", [.text(id)]).first
    }

    /// The records of `kind` among `ids`, in any state, in id order: one statement for the lot
    /// (a comparison of two stores reads them a batch at a time, not one lookup each).
    package func syncRecords(_ kind: RecordKind, ids: [String]) throws -> [SyncRecord] {
        let suffix = "WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id"
        let values: [SQLValue] = [.text(JSONWriter.array(of: ids))]
        return switch kind {
        case .trip: try syncRecords(TripColumn.self, kind, suffix, values)
        case .place: try syncRecords(PlaceColumn.self, kind, suffix, values)
        case .booking: try syncRecords(BookingColumn.self, kind, suffix, values)
        case .attachment: try attachmentSyncRecords(suffix, values)
        }
    }

    /// The rows of `kind` that `suffix` (a WHERE clause, an order, a limit) selects, as sync
    /// records, in its order.
    private func syncRecords<Column: RecordColumn>(_ columns: Column.Type, _ kind: RecordKind, _ suffix: String,
                                                   _ values: [SQLValue]) throws -> [SyncRecord] {
        try connection.statement("SELECT \(Column.selectList), trashed_at, trashed_with FROM \(kind.table) \(suffix)")
            .rows(values) { row -> SyncRecord in
                var fields: [String: JSONValue] = [:]
                var parts: [String: [(key: String, value: JSONValue)]] = [:]
                for column in Column.allCases {
                    guard let field = column.spec.syncField else { continue }
                    let value: JSONValue = switch column.spec.form {
                    case .text, .date, .syncState, .bookingKind: .string(row.text(column))
                    case .optionalText: .optionalString(row.optionalText(column))
                    case .bool: .bool(row.integer(column) != 0)
                    case .version: row.optionalInteger(column).map { .number(String($0)) } ?? .null
                    }
                    if let part = column.spec.syncPart { parts[field, default: []].append((part, value)) } else { fields[field] = value }
                }
                for (field, members) in parts { fields[field] = .object(members.sorted { $0.key < $1.key }) }
                return SyncRecord(kind: kind, id: row.text(Column.id), fields: fields,
                                  syncState: SyncState(rawValue: row.text(Column.syncState)) ?? .failed,
                                  remoteVersion: row.optionalInteger(Column.remoteVersion), updatedAt: row.text(Column.updatedAt),
                                  trashedAt: row.optionalText(Column.count), trashedWith: row.optionalText(Column.count + 1))
            }
    }

    /// The records the server must hear about (`Store.pending`), trips first so that a place's
    /// trip is written on the server before it, at most `limit`.
    /// `excluding` ("kind/id") leaves out the records of a batch still in flight.
    package func pendingSyncRecords(limit: Int, excluding: Set<String> = []) throws -> [SyncRecord] {
        var records: [SyncRecord] = []
        for kind in SyncRecord.kinds where records.count < limit {
            // Trips, places and bookings are read whole in the index's order (one lookup each),
            // those of a batch in flight left out by the query; an attachment's record also reads
            // its file's name and hash.
            let prefix = kind.rawValue + "/"
            let inFlight = JSONWriter.array(of: excluding.lazy.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) })
            let bound: [SQLValue] = [.integer(Int64(limit - records.count)), .text(inFlight)]
            let order = Self.pendingInPushOrder(kind)
            switch kind {
            case .trip: records += try syncRecords(TripColumn.self, kind, order, bound)
            case .place: records += try syncRecords(PlaceColumn.self, kind, order, bound)
            case .booking: records += try syncRecords(BookingColumn.self, kind, order, bound)
            case .attachment:
                records += try connection.statement("SELECT id FROM \(kind.table) \(order)").rows(bound) { $0.text(0) }
                    .compactMap { try attachmentSyncRecord(id: $0) }
            }
        }
        return records
    }

    /// What selects the oldest pending records of `kind` but those whose ids are in the JSON
    /// array `?2` (a batch in flight), at most `?1`: the first entries of its `*_pending` index
    /// (schema 8), not a sort of every pending record.
    static func pendingInPushOrder(_ kind: RecordKind) -> String {
        "WHERE \(pending(kind)) AND id NOT IN (SELECT value FROM json_each(?2)) ORDER BY updated_at, id LIMIT ?1"
    }

    /// Writes `record`'s fields and metadata over its row, or inserts it, checked by the same
    /// rules as every other write (`validated()`, `FieldRules`). A field missing from `fields`
    /// makes the record invalid (`StoreError.invalidField`).
    package func writeSyncRecord(_ record: SyncRecord, inserting: Bool) throws {
        let values = SyncFieldValues(record: record)
        switch record.kind {
        case .trip:
            let trip = try TripColumn.validated(values: TripColumn.storedValues(from: values))
            if inserting { return try store.insert(validated: trip) }
            try store.update(TripColumn.self, trip)
        case .place:
            let place = try PlaceColumn.validated(values: PlaceColumn.storedValues(from: values))
            if inserting { return try store.insert(validated: place) }
            try store.update(PlaceColumn.self, place)
        case .booking:
            let booking = try BookingColumn.validated(values: BookingColumn.storedValues(from: values))
            if inserting { return try store.insert(validated: booking) }
            try store.update(BookingColumn.self, booking)
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

/// A sync record's fields, and its metadata, as a record's column values (`RecordColumn`):
/// strictly — a field of the wrong form is `StoreError.invalidField`, checked by the same rules
/// as every other write afterwards (`validated()`). An optional field the record lacks reads as
/// nil: a client that did not know it (`endsAt` before schema 3, `zone` before 6) sent none.
struct SyncFieldValues: ColumnValues {
    typealias Failure = any Error
    let record: SyncRecord

    /// The field's value (or its part's), nil when the record has none.
    private func value<Column: RecordColumn>(_ column: Column) -> JSONValue? {
        guard let field = column.spec.syncField else { return nil }
        guard let part = column.spec.syncPart else { return record.fields[field] }
        return record.fields[field]?[part]
    }

    private func invalid<Column: RecordColumn>(_ column: Column, _ rule: String) -> StoreError {
        StoreError.invalidField(field: column.spec.syncField ?? column.sqlName, rule: rule)
    }

    func text<Column: RecordColumn>(_ column: Column) throws -> String {
        // The two text columns sync does not carry as fields are the record's metadata.
        if column.spec.syncField == nil { return column.position == Column.id.position ? record.id : record.updatedAt }
        guard let text = value(column)?.stringValue else { throw invalid(column, "missing or not text in the synchronised record") }
        return text
    }

    func optionalText<Column: RecordColumn>(_ column: Column) throws -> String? {
        guard let found = value(column), found != .null else { return nil }
        guard let text = found.stringValue else { throw invalid(column, "not text in the synchronised record") }
        return text
    }

    func date<Column: RecordColumn>(_ column: Column) throws -> CivilDate {
        guard let date = value(column)?.stringValue.flatMap(CivilDate.init) else {
            throw invalid(column, "must hold a start and an end date (YYYY-MM-DD)")
        }
        return date
    }

    func bool<Column: RecordColumn>(_ column: Column) throws -> Bool {
        guard case .bool(let flag)? = value(column) else { throw invalid(column, "must be true or false") }
        return flag
    }

    func syncState<Column: RecordColumn>(_ column: Column) -> SyncState { record.syncState }

    func bookingKind<Column: RecordColumn>(_ column: Column) throws -> BookingKind {
        try FieldRules.bookingKind(try text(column), field: column.spec.syncField ?? column.sqlName)
    }

    func version<Column: RecordColumn>(_ column: Column) -> Int64? { record.remoteVersion }
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
