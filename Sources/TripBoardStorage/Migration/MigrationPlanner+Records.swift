import TripBoardSQLite
import TripBoardReadPath

/// Every legacy record read through `LegacyConverter` and registered by id, stopping at the first
/// one the new store would refuse (`MigrationError.invalidLegacyRecord`, naming the record and its
/// version-1 column). The plan runs it when the records go into a store that has some (`--merge`)
/// and for a dry run; a migration into a container with no record checks them inside SQLite as it
/// converts them (`LegacySQLConversion`) and runs this only to name what SQLite refused.
struct LegacyRecordCheck {
    /// Where the rows are read (the legacy store, or the migration's copy of it).
    let rows: LegacyStore
    /// The legacy store's path, named in messages.
    let storePath: String
    let migratedAt: String
    /// The destination store, whose records' ids a legacy record of another kind may not take.
    let destinationStore: Connection?

    /// Trips, places and bookings, their ids added to `ids`; returns how many bookings had a kind
    /// this version does not know.
    func checkTripsPlacesAndBookings(ids: inout IDRegister) throws -> Int {
        let converter = LegacyConverter(storePath: storePath, migratedAt: migratedAt)
        try rows.forEachRow("trips") {
            let trip = try converter.trip($0)
            try checkAgainstDestination(.trip, trip.id)
            ids.add(trip.id, .trip)
        }
        try rows.forEachRow("places") {
            let place = try converter.place($0)
            try checkAgainstDestination(.place, place.id)
            ids.add(place.id, .place)
        }
        var kindsChanged = 0
        try rows.forEachRow("bookings") {
            let (booking, kindChanged) = try converter.booking($0)
            try checkAgainstDestination(.booking, booking.id)
            ids.add(booking.id, .booking)
            if kindChanged { kindsChanged += 1 }
        }
        return kindsChanged
    }

    /// Every record of the four kinds, and their ids unique across kinds: the first refusal thrown.
    func checkAll() throws {
        var ids = IDRegister()
        _ = try checkTripsPlacesAndBookings(ids: &ids)
        let converter = LegacyConverter(storePath: storePath, migratedAt: migratedAt)
        try rows.forEachAttachmentRow { row in
            let id = try converter.attachment(row, file: nil).id
            try checkAgainstDestination(.attachment, id)
            ids.add(id, .attachment)
        }
        try checkUnique(ids)
    }

    /// Ids are unique across trips, places, bookings and attachments (in any case).
    func checkUnique(_ ids: IDRegister) throws {
        var ids = ids
        guard let repeated = ids.firstRepeat() else { return }
        throw MigrationError.invalidLegacyRecord(path: storePath, detail: """
            \(repeated.first.kind.withArticle) and \(repeated.second.kind.withArticle) have the id \(repeated.id) (in some \
            case); ids must be unique across trips, places, bookings and attachments
            """)
    }

    /// Into a container that has records (`--merge`), a version-1 record whose id a record of
    /// another kind has there is refused now: the store would refuse it (ids are unique across
    /// kinds), and a plan, once written, is never decided again.
    func checkAgainstDestination(_ kind: RecordKind, _ id: String) throws {
        guard let destinationStore, let holder = try Store(connection: destinationStore).kindHolding(id: id), holder != kind else { return }
        throw MigrationError.invalidLegacyRecord(path: storePath, detail: """
            \(kind.rawValue) \(id) has the id of \(holder.withArticle) in the container; ids are unique across trips, places, \
            bookings and attachments
            """)
    }
}
