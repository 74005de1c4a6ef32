import TripBoardSQLite
package import TripBoardSystem
package import TripBoardModel

/// How the lists print a record straight from its row (`StoreCursor.forEachRow`), in the
/// columns of `RecordRows`: no model, no `String` for ASCII text, no `Encodable`. Each function
/// gives the very bytes the model path gives — `RecordRows.trip(from:)` then `JSON.encode` — the
/// stand-ins for a value the model cannot read included (`RawListTests` compares the two).
package enum RecordBytes {
    /// The column as the models read a date: a strict `YYYY-MM-DD`, else 1970-01-01.
    package static func date(_ row: borrowing StoreRow, _ column: Int32) -> CivilDate {
        row.withText(column) { CivilDate(utf8: $0) } ?? CivilDate(daysSinceEpoch: 0)
    }

    /// The column as the models read a sync state — one of the four, else `failed` — by its
    /// name, which needs no `String` to print.
    package static func syncStateName(_ row: borrowing StoreRow, _ column: Int32) -> StaticString {
        name(row, column, among: syncStateNames, else: "failed")
    }

    /// The column as the models read a booking's kind: one of the six, else `other`.
    package static func bookingKindName(_ row: borrowing StoreRow, _ column: Int32) -> StaticString {
        name(row, column, among: bookingKindNames, else: "other")
    }

    /// The column as `PendingChange` reads a record's kind: one of the four, else `trip`.
    package static func recordKindName(_ row: borrowing StoreRow, _ column: Int32) -> StaticString {
        name(row, column, among: recordKindNames, else: "trip")
    }

    private static let syncStateNames: [StaticString] = ["synchronized", "pendingUpload", "pendingDeletion", "failed"]
    private static let bookingKindNames: [StaticString] = ["flight", "train", "hotel", "car", "event", "other"]
    private static let recordKindNames = RecordKind.allCases.map(kindName)

    /// The one of `names` the column's text is exactly (what `rawValue:` finds), else `fallback`.
    private static func name(_ row: borrowing StoreRow, _ column: Int32, among names: [StaticString], else fallback: StaticString) -> StaticString {
        row.withText(column) { bytes in
            names.first { name in
                name.utf8CodeUnitCount == bytes.count
                    && bytes.elementsEqual(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            } ?? fallback
        }
    }

    /// The column's text as a string value, or `null` when the column is NULL
    /// (`optionalText`, then `encode`).
    private static func optionalText(_ row: borrowing StoreRow, _ column: Int32, _ writer: inout JSONWriter) {
        if row.isNull(column) { return writer.null() }
        row.withText(column) { writer.string(utf8: $0) }
    }

    /// The column's integer, or `null` when the column is NULL.
    private static func optionalInteger(_ row: borrowing StoreRow, _ column: Int32, _ writer: inout JSONWriter) {
        if row.isNull(column) { return writer.null() }
        writer.integer(row.integer(column))
    }

    /// A record's members as `JSON.encode` writes its model — in the order of their keys — each
    /// as its column's form says (`RecordColumn`): the position, key and form of every column,
    /// worked out once per kind.
    package struct Members: Sendable {
        let columns: [(key: StaticString, position: Int32, form: ColumnForm)]
        init<Column: RecordColumn>(_ kind: Column.Type) {
            columns = Column.inJSONOrder.map { ($0.spec.jsonKey, $0.position, $0.spec.form) }
        }
    }

    static let tripMembers = Members(TripColumn.self)
    static let placeMembers = Members(PlaceColumn.self)
    static let bookingMembers = Members(BookingColumn.self)

    /// A row of `members`' kind (its `selectList`, any columns after them ignored) as the next
    /// value `writer` writes.
    package static func json(_ row: borrowing StoreRow, _ members: Members, _ writer: inout JSONWriter) {
        writer.beginObject()
        for (key, column, form) in members.columns {
            writer.key(key)
            switch form {
            case .text: row.withText(column) { writer.string(utf8: $0) }
            case .optionalText: optionalText(row, column, &writer)
            case .date: writer.date(date(row, column))
            case .bool: writer.bool(row.integer(column) != 0)
            case .syncState: writer.string(ascii: syncStateName(row, column))
            case .bookingKind: writer.string(ascii: bookingKindName(row, column))
            case .version: optionalInteger(row, column, &writer)
            }
        }
        writer.endObject()
    }

    /// A trip (`RecordRows.tripColumns`) as the next value.
    package static func tripJSON(_ row: borrowing StoreRow, _ writer: inout JSONWriter) {
        json(row, tripMembers, &writer)
    }

    /// A place (`RecordRows.placeColumns`) as the next value.
    package static func placeJSON(_ row: borrowing StoreRow, _ writer: inout JSONWriter) {
        json(row, placeMembers, &writer)
    }

    /// A booking (`RecordRows.bookingColumns`, any columns after them ignored) as the next value.
    package static func bookingJSON(_ row: borrowing StoreRow, _ writer: inout JSONWriter) {
        json(row, bookingMembers, &writer)
    }

    /// A hit of `SearchIndex.searchRows` as the next value: `SearchHit`'s members, sorted, a
    /// detail that is NULL or empty as `null`.
    package static func searchHitJSON(_ row: borrowing StoreRow, _ writer: inout JSONWriter) {
        typealias Column = SearchIndex.HitColumn
        writer.beginObject()
        writer.key("detail")
        row.withText(Column.detail.rawValue) { $0.isEmpty ? writer.null() : writer.string(utf8: $0) }  // NULL lends no bytes
        writer.key("id")
        row.withText(Column.id.rawValue) { writer.string(utf8: $0) }
        writer.key("kind")
        writer.string(ascii: kindName(SearchIndex.hitKind(row.integer(Column.kind.rawValue))))
        writer.key("title")
        row.withText(Column.title.rawValue) { writer.string(utf8: $0) }
        writer.key("tripId")
        row.withText(Column.tripId.rawValue) { writer.string(utf8: $0) }
        writer.key("tripName")
        row.withText(Column.tripName.rawValue) { writer.string(utf8: $0) }
        writer.endObject()
    }

    /// A record kind's name (its `rawValue`), which needs no `String` to print.
    package static func kindName(_ kind: RecordKind) -> StaticString {
        switch kind {
        case .trip: "trip"
        case .place: "place"
        case .booking: "booking"
        case .attachment: "attachment"
        }
    }

    /// A pending change (`SyncLedger.pendingChangeRows`: kind, id, sync state, remote version,
    /// updated at) as the next value: `PendingChange`'s members, sorted.
    package static func pendingChangeJSON(_ row: borrowing StoreRow, _ writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("id")
        row.withText(1) { writer.string(utf8: $0) }
        writer.key("kind")
        writer.string(ascii: recordKindName(row, 0))
        writer.key("remoteVersion")
        optionalInteger(row, 3, &writer)
        writer.key("syncState")
        writer.string(ascii: syncStateName(row, 2))
        writer.key("updatedAt")
        row.withText(4) { writer.string(utf8: $0) }
        writer.endObject()
    }
}
