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
    package static let placeColumns = PlaceColumn.selectList
    package static let bookingColumns = BookingColumn.selectList

    /// How many rows the table of `kind` holds, whatever their state (tombstones and the trash included).
    package static func count(_ kind: RecordKind, in connection: Connection) throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM \(kind.table)"))
    }

    package static func trip(from row: Statement) -> Trip {
        Trip(id: row.text(TripColumn.id), name: row.text(TripColumn.name),
             startDate: CivilDate(row.text(TripColumn.startDate)) ?? CivilDate(daysSinceEpoch: 0),
             endDate: CivilDate(row.text(TripColumn.endDate)) ?? CivilDate(daysSinceEpoch: 0),
             notes: row.text(TripColumn.notes), syncState: SyncState(rawValue: row.text(TripColumn.syncState)) ?? .failed,
             remoteVersion: row.optionalInteger(TripColumn.remoteVersion), updatedAt: row.text(TripColumn.updatedAt))
    }

    package static func place(from row: Statement) -> Place {
        Place(id: row.text(PlaceColumn.id), tripId: row.text(PlaceColumn.tripId), name: row.text(PlaceColumn.name),
              city: row.optionalText(PlaceColumn.city), visited: row.integer(PlaceColumn.visited) != 0,
              syncState: SyncState(rawValue: row.text(PlaceColumn.syncState)) ?? .failed,
              remoteVersion: row.optionalInteger(PlaceColumn.remoteVersion), updatedAt: row.text(PlaceColumn.updatedAt))
    }

    package static func booking(from row: Statement) -> Booking {
        Booking(id: row.text(BookingColumn.id), tripId: row.text(BookingColumn.tripId),
                kind: BookingKind(rawValue: row.text(BookingColumn.kind)) ?? .other, title: row.text(BookingColumn.title),
                startsAt: row.optionalText(BookingColumn.startsAt), reference: row.optionalText(BookingColumn.reference),
                syncState: SyncState(rawValue: row.text(BookingColumn.syncState)) ?? .failed,
                remoteVersion: row.optionalInteger(BookingColumn.remoteVersion), updatedAt: row.text(BookingColumn.updatedAt),
                endsAt: row.optionalText(BookingColumn.endsAt), zone: row.optionalText(BookingColumn.zone))
    }
}
