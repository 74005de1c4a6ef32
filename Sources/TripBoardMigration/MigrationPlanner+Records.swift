import TripBoardStorage
import TripBoardModel
extension MigrationPlanner {
    /// Reads every legacy trip, place and booking through the converter into `digest` (so a
    /// record the new store would refuse stops the migration before it starts); returns how many
    /// bookings had a kind this version does not know.
    func digestTripsPlacesAndBookings(into digest: inout MigrationDigest) throws -> Int {
        let converter = LegacyConverter(storePath: legacy.path, migratedAt: migratedAt)
        try legacy.forEachRow("trips") {
            let trip = try converter.trip($0)
            try checkAgainstDestination(.trip, trip.id.text)
            digest.add(trip)
        }
        try legacy.forEachRow("places") {
            let place = try converter.place($0)
            try checkAgainstDestination(.place, place.id.text)
            digest.add(place)
        }
        var kindsChanged = 0
        try legacy.forEachRow("bookings") {
            let (booking, kindChanged) = try converter.booking($0)
            try checkAgainstDestination(.booking, booking.id.text)
            digest.add(booking)
            if kindChanged { kindsChanged += 1 }
        }
        return kindsChanged
    }

    /// Into a container that has records (`--merge`), a version-1 record whose id a record of
    /// another kind has there is refused now: the store would refuse it (ids are unique across
    /// kinds), and a plan, once written, is never decided again.
    func checkAgainstDestination(_ kind: RecordKind, _ id: String) throws {
        guard let destinationStore, let holder = try destinationStore.kindHolding(id: id), holder != kind else { return }
        throw MigrationError.invalidLegacyRecord(path: legacy.path, detail: """
            \(kind.rawValue) \(id) has the id of \(holder.withArticle) in the container; ids are unique across trips, places, \
            bookings and attachments
            """)
    }
}
