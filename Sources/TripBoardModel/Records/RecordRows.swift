package import TripBoardSQLite
import TripBoardSystem

/// How trips, places and bookings are read back from their rows: the columns every query selects
/// (their kind's `RecordColumn` declaration, in its order), and the mapping from a row to the
/// model, column by name. The store's queries and the widget's (`NextTrip`) share them, so a
/// column declared once reaches both.
package enum RecordRows {
    /// What every query on live trips, places and bookings says — neither a tombstone nor in the
    /// trash — in the very words of the partial indexes, which SQLite uses only when the query's
    /// WHERE contains their terms.
    package static let live = "sync_state <> 'pendingDeletion' AND trashed_at IS NULL"

    package static let tripColumns = TripColumn.selectList
    /// The columns a `trip list` table shows, at their `tripColumns` positions, the others NULL:
    /// every one is in `trips_live_by_start`, so the list reads that index alone, no table page.
    package static let tripTableColumns = TripColumn.allCases.map {
        [.id, .name, .startDate, .endDate, .syncState].contains($0) ? $0.sqlName : "NULL"
    }.joined(separator: ", ")
    package static let placeColumns = PlaceColumn.selectList
    package static let bookingColumns = BookingColumn.selectList

    /// How many rows the table of `kind` holds, whatever their state (tombstones and the trash included).
    package static func count(_ kind: RecordKind, in connection: Connection) throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM \(kind.table)"))
    }

    package static func trip(from row: Statement) -> Trip { TripColumn.record(from: RowValues(row)) }
    package static func place(from row: Statement) -> Place { PlaceColumn.record(from: RowValues(row)) }
    package static func booking(from row: Statement) -> Booking { BookingColumn.record(from: RowValues(row)) }
}
