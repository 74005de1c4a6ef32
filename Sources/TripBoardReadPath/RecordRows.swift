package import TripBoardSQLite
import TripBoardSystem

/// How trips, places and bookings are read back from their rows: the columns every query selects,
/// in this order, and the mapping from a row to the model. The store's queries and the widget's
/// (`NextTrip`) share them, so a column added here reaches both.
package enum RecordRows {
    /// What every query on live trips, places and bookings says — neither a tombstone nor in the
    /// trash — in the very words of the partial indexes, which SQLite uses only when the query's
    /// WHERE contains their terms.
    package static let live = "sync_state <> 'pendingDeletion' AND trashed_at IS NULL"

    package static let tripColumns = "id, name, start_date, end_date, notes, sync_state, remote_version, updated_at"
    package static let placeColumns = "id, trip_id, name, city, visited, sync_state, remote_version, updated_at"
    package static let bookingColumns = "id, trip_id, kind, title, starts_at, reference, sync_state, remote_version, updated_at, ends_at, zone"

    /// How many rows the table of `kind` holds, whatever their state (tombstones and the trash included).
    package static func count(_ kind: RecordKind, in connection: Connection) throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM \(kind.table)"))
    }

    package static func trip(from row: Statement) -> Trip {
        Trip(id: row.text(0), name: row.text(1),
             startDate: CivilDate(row.text(2)) ?? CivilDate(daysSinceEpoch: 0),
             endDate: CivilDate(row.text(3)) ?? CivilDate(daysSinceEpoch: 0),
             notes: row.text(4), syncState: SyncState(rawValue: row.text(5)) ?? .failed,
             remoteVersion: row.optionalInteger(6), updatedAt: row.text(7))
    }

    package static func place(from row: Statement) -> Place {
        Place(id: row.text(0), tripId: row.text(1), name: row.text(2), city: row.optionalText(3),
              visited: row.integer(4) != 0, syncState: SyncState(rawValue: row.text(5)) ?? .failed,
              remoteVersion: row.optionalInteger(6), updatedAt: row.text(7))
    }

    package static func booking(from row: Statement) -> Booking {
        Booking(id: row.text(0), tripId: row.text(1), kind: BookingKind(rawValue: row.text(2)) ?? .other,
                title: row.text(3), startsAt: row.optionalText(4), reference: row.optionalText(5),
                syncState: SyncState(rawValue: row.text(6)) ?? .failed, remoteVersion: row.optionalInteger(7),
                updatedAt: row.text(8), endsAt: row.optionalText(9), zone: row.optionalText(10))
    }
}
