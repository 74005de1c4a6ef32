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
        row.withText(column) { bytes in
            let name: StaticString = switch bytes.count {
            case 12: "synchronized"
            case 13: "pendingUpload"
            case 15: "pendingDeletion"
            default: "failed"
            }
            return bytes.elementsEqual(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)) ? name : "failed"
        }
    }

    /// A trip (`RecordRows.tripColumns`) as the next element of a pretty JSON array: `Trip`'s
    /// members in the order `JSON.encode` sorts them.
    package static func tripJSON(_ row: borrowing RawRow, into array: inout JSONArrayWriter, _ output: inout [UInt8]) {
        var object = array.objectElement(into: &output)
        object.date("endDate", date(row, 3), into: &output)
        row.withText(0) { object.string("id", utf8: $0, into: &output) }
        row.withText(1) { object.string("name", utf8: $0, into: &output) }
        row.withText(4) { object.string("notes", utf8: $0, into: &output) }
        object.integer("remoteVersion", row.isNull(6) ? nil : row.integer(6), into: &output)
        object.date("startDate", date(row, 2), into: &output)
        object.string("syncState", ascii: syncStateName(row, 5), into: &output)
        row.withText(7) { object.string("updatedAt", utf8: $0, into: &output) }
        object.end(into: &output)
    }
}
