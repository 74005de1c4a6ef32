import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// After a salvage copied what could be read, records whose parent was lost (a place or booking
/// whose trip's row was on a damaged page, an attachment whose booking's was) would dangle. They
/// are the user's, so they are kept: the lost parent is recreated under its own id as a
/// placeholder named for what it is, with dates taken from its children, and the report lists
/// it. The user can rename it, move what it holds, or delete it (to the trash).
struct SalvagePlaceholders {
    let connection: Connection
    /// `updated_at` of the placeholders (UTC).
    let stamp: String
    static let tripName = "Recovered trip (its details were lost to damage)"
    static let bookingTitle = "Recovered booking (its details were lost to damage)"
    static let orphanTripName = "Recovered items (their trip was lost to damage)"

    /// Recreates every lost parent; returns `trip <id>` / `booking <id>` for each. Each is listed
    /// in `sync_placeholders`: sync never sends it until the user edits it, and the server's copy
    /// of the lost record, when it has one, replaces it.
    func recreateLostParents() throws -> [String] {
        var made: [String] = []
        // Bookings first: a recreated booking needs a trip, which the trips step then finds.
        for bookingID in try missingParents(child: "attachments", column: "booking_id", parent: "bookings") {
            let booking = Booking(id: RecordID(bookingID), tripId: RecordID(try orphanTrip()), kind: .other, title: Self.bookingTitle, startsAt: nil,
                                  reference: nil, syncState: .pendingUpload, remoteVersion: nil, updatedAt: Timestamp(stored: stamp))
            try connection.statement(BookingColumn.insert(into: "salvage.bookings"))
                .run(BookingColumn.values(of: booking) + [.null, .null])
            try markPlaceholder("booking", bookingID)
            made.append("booking \(bookingID)")
        }
        var trips = Set(try missingParents(child: "places", column: "trip_id", parent: "trips"))
        trips.formUnion(try missingParents(child: "bookings", column: "trip_id", parent: "trips"))
        for tripID in trips.sorted() {
            let (start, end) = try dates(ofChildrenOf: tripID)
            try insertTrip(id: tripID, name: Self.tripName, start: start, end: end)
            made.append("trip \(tripID)")
        }
        return made
    }

    /// Parent ids that children name and the new store lacks.
    func missingParents(child: String, column: String, parent: String) throws -> [String] {
        try connection.statement("""
            SELECT DISTINCT c.\(column) FROM salvage.\(child) c
            WHERE c.\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM salvage.\(parent) p WHERE p.id = c.\(column)) ORDER BY 1
            """).rows { $0.text(0) }
    }

    /// The first and last day of a lost trip's bookings (their local dates), else today.
    func dates(ofChildrenOf tripID: String) throws -> (String, String) {
        let rows = try connection.statement("""
            SELECT min(substr(starts_at, 1, 10)), max(substr(starts_at, 1, 10)) FROM salvage.bookings
            WHERE trip_id = ?1 AND starts_at IS NOT NULL
            """).rows([.text(tripID)]) { ($0.optionalText(0), $0.optionalText(1)) }
        let today = Timestamp(stored: stamp).withOffset(0).localDate.description
        guard let (start, end) = rows.first, let start, let end else { return (today, today) }
        return (start, end)
    }

    /// The one trip that holds recreated bookings (whose own trip is unknown), made on first use.
    func orphanTrip() throws -> String {
        if let existing = try connection.statement("SELECT id FROM salvage.trips WHERE name = ?1")
            .rows([.text(Self.orphanTripName)], { $0.text(0) }).first { return existing }
        let id = Identifier.make()
        let today = Timestamp(stored: stamp).withOffset(0).localDate.description
        try insertTrip(id: id, name: Self.orphanTripName, start: today, end: today)
        return id
    }

    func insertTrip(id: String, name: String, start: String, end: String) throws {
        // The dates are the children's as stored, or today: kept as text, as they were.
        var values = TripColumn.values(of: Trip(id: RecordID(id), name: name, startDate: CivilDate(daysSinceEpoch: 0), endDate: CivilDate(daysSinceEpoch: 0),
                                                notes: "", syncState: .pendingUpload, remoteVersion: nil, updatedAt: Timestamp(stored: stamp)))
        values[Int(TripColumn.startDate.position)] = .text(start)
        values[Int(TripColumn.endDate.position)] = .text(end)
        try connection.statement(TripColumn.insert(into: "salvage.trips")).run(values)
        try markPlaceholder("trip", id)
    }

    func markPlaceholder(_ kind: String, _ id: String) throws {
        try connection.statement("INSERT OR IGNORE INTO salvage.sync_placeholders (kind, id, made_at) VALUES (?1, ?2, ?3)")
            .run([.text(kind), .text(id), .text(stamp)])
    }
}
