package import TripBoardSQLite
package import TripBoardSystem

/// How the lists print a record straight from its row (`RowCursor.forEachRawRow`), in the
/// columns of `RecordRows`: no model, no `String` for ASCII text, no `Encodable`. Each function
/// gives the very bytes the model path gives — `RecordRows.trip(from:)` then `JSON.encode` — the
/// stand-ins for a value the model cannot read included (`RawListTests` compares the two).
package enum RecordBytes {
    /// The column as the models read a date: a strict `YYYY-MM-DD`, else 1970-01-01.
    package static func date(_ row: borrowing RawRow, _ column: Int32) -> CivilDate {
        row.withText(column) { CivilDate(utf8: $0) } ?? CivilDate(daysSinceEpoch: 0)
    }

    /// The column as the models read a sync state — one of the four, else `failed` — by its
    /// name, which needs no `String` to print.
    package static func syncStateName(_ row: borrowing RawRow, _ column: Int32) -> StaticString {
        name(row, column, among: syncStateNames, else: "failed")
    }

    /// The column as the models read a booking's kind: one of the six, else `other`.
    package static func bookingKindName(_ row: borrowing RawRow, _ column: Int32) -> StaticString {
        name(row, column, among: bookingKindNames, else: "other")
    }

    /// The column as `PendingChange` reads a record's kind: one of the four, else `trip`.
    package static func recordKindName(_ row: borrowing RawRow, _ column: Int32) -> StaticString {
        name(row, column, among: recordKindNames, else: "trip")
    }

    private static let syncStateNames: [StaticString] = ["synchronized", "pendingUpload", "pendingDeletion", "failed"]
    private static let bookingKindNames: [StaticString] = ["flight", "train", "hotel", "car", "event", "other"]
    private static let recordKindNames: [StaticString] = ["trip", "place", "booking", "attachment"]

    /// The one of `names` the column's text is exactly (what `rawValue:` finds), else `fallback`.
    private static func name(_ row: borrowing RawRow, _ column: Int32, among names: [StaticString], else fallback: StaticString) -> StaticString {
        row.withText(column) { bytes in
            names.first { name in
                name.utf8CodeUnitCount == bytes.count
                    && bytes.elementsEqual(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            } ?? fallback
        }
    }

    /// A text member that is `null` when the column is NULL (`optionalText`, then `encode`).
    private static func optionalText(_ key: StaticString, _ row: borrowing RawRow, _ column: Int32,
                                     _ object: inout JSONObjectWriter, _ output: inout [UInt8]) {
        if row.isNull(column) { return object.null(key, into: &output) }
        row.withText(column) { object.string(key, utf8: $0, into: &output) }
    }

    private static func remoteVersion(_ row: borrowing RawRow, _ column: Int32, _ object: inout JSONObjectWriter, _ output: inout [UInt8]) {
        object.integer("remoteVersion", row.isNull(column) ? nil : row.integer(column), into: &output)
    }

    /// A trip (`RecordRows.tripColumns`) as the next element of a pretty JSON array: `Trip`'s
    /// members in the order `JSON.encode` sorts them.
    package static func tripJSON(_ row: borrowing RawRow, into array: inout JSONArrayWriter, _ output: inout [UInt8]) {
        var object = array.objectElement(into: &output)
        object.date("endDate", date(row, 3), into: &output)
        row.withText(0) { object.string("id", utf8: $0, into: &output) }
        row.withText(1) { object.string("name", utf8: $0, into: &output) }
        row.withText(4) { object.string("notes", utf8: $0, into: &output) }
        remoteVersion(row, 6, &object, &output)
        object.date("startDate", date(row, 2), into: &output)
        object.string("syncState", ascii: syncStateName(row, 5), into: &output)
        row.withText(7) { object.string("updatedAt", utf8: $0, into: &output) }
        object.end(into: &output)
    }

    /// A place (`RecordRows.placeColumns`) as the next element: `Place`'s members, sorted.
    package static func placeJSON(_ row: borrowing RawRow, into array: inout JSONArrayWriter, _ output: inout [UInt8]) {
        var object = array.objectElement(into: &output)
        optionalText("city", row, 3, &object, &output)
        row.withText(0) { object.string("id", utf8: $0, into: &output) }
        row.withText(2) { object.string("name", utf8: $0, into: &output) }
        remoteVersion(row, 6, &object, &output)
        object.string("syncState", ascii: syncStateName(row, 5), into: &output)
        row.withText(1) { object.string("tripId", utf8: $0, into: &output) }
        row.withText(7) { object.string("updatedAt", utf8: $0, into: &output) }
        object.bool("visited", row.integer(4) != 0, into: &output)
        object.end(into: &output)
    }

    /// A booking (`RecordRows.bookingColumns`, any columns after them ignored) as the next
    /// element: `Booking`'s members, sorted.
    package static func bookingJSON(_ row: borrowing RawRow, into array: inout JSONArrayWriter, _ output: inout [UInt8]) {
        var object = array.objectElement(into: &output)
        optionalText("endsAt", row, 9, &object, &output)
        row.withText(0) { object.string("id", utf8: $0, into: &output) }
        object.string("kind", ascii: bookingKindName(row, 2), into: &output)
        optionalText("reference", row, 5, &object, &output)
        remoteVersion(row, 7, &object, &output)
        optionalText("startsAt", row, 4, &object, &output)
        object.string("syncState", ascii: syncStateName(row, 6), into: &output)
        row.withText(3) { object.string("title", utf8: $0, into: &output) }
        row.withText(1) { object.string("tripId", utf8: $0, into: &output) }
        row.withText(8) { object.string("updatedAt", utf8: $0, into: &output) }
        optionalText("zone", row, 10, &object, &output)
        object.end(into: &output)
    }

    /// A pending change (`Store.pendingChangeRows`: kind, id, sync state, remote version,
    /// updated at) as the next element: `PendingChange`'s members, sorted.
    package static func pendingChangeJSON(_ row: borrowing RawRow, into array: inout JSONArrayWriter, _ output: inout [UInt8]) {
        var object = array.objectElement(into: &output)
        row.withText(1) { object.string("id", utf8: $0, into: &output) }
        object.string("kind", ascii: recordKindName(row, 0), into: &output)
        remoteVersion(row, 3, &object, &output)
        object.string("syncState", ascii: syncStateName(row, 2), into: &output)
        row.withText(4) { object.string("updatedAt", utf8: $0, into: &output) }
        object.end(into: &output)
    }
}
