extension MigrationPlanner {
    /// Reads every legacy trip, place and booking through the converter into `digest` (so a
    /// record the new store would refuse stops the migration before it starts); returns how many
    /// bookings had a kind this version does not know.
    func digestTripsPlacesAndBookings(into digest: inout MigrationDigest, ids: inout IDRegister) throws -> Int {
        let converter = LegacyConverter(storePath: legacy.path, migratedAt: migratedAt)
        try legacy.forEachRow("trips") {
            let trip = try converter.trip($0)
            try checkAgainstDestination(.trip, trip.id)
            ids.add(trip.id, .trip)
            digest.add(trip)
        }
        try legacy.forEachRow("places") {
            let place = try converter.place($0)
            try checkAgainstDestination(.place, place.id)
            ids.add(place.id, .place)
            digest.add(place)
        }
        var kindsChanged = 0
        try legacy.forEachRow("bookings") {
            let (booking, kindChanged) = try converter.booking($0)
            try checkAgainstDestination(.booking, booking.id)
            ids.add(booking.id, .booking)
            digest.add(booking)
            if kindChanged { kindsChanged += 1 }
        }
        return kindsChanged
    }

    /// Into a container that has records (`--merge`), a version-1 record whose id a record of
    /// another kind has there is refused now: the store would refuse it (ids are unique across
    /// kinds), and a plan, once written, is never decided again.
    func checkAgainstDestination(_ kind: RecordKind, _ id: String) throws {
        guard let destinationStore, let holder = try Store(connection: destinationStore).kindHolding(id: id), holder != kind else { return }
        throw MigrationError.invalidLegacyRecord(path: legacy.path, detail: """
            \(kind.rawValue) \(id) has the id of \(holder.withArticle) in the container; ids are unique across trips, places, \
            bookings and attachments
            """)
    }
}

/// The converted ids of every version-1 record, to find one that two records share: in the new
/// store an id names one record of any kind (`sync ack ID`), while version 1's four tables were
/// separate and compared ids case-sensitively (`AAAA…` and `aaaa…` were two trips). Each id is
/// kept as its 128 bits with its kind (24 bytes, not a string: 2.9 MB for 120,000 records) and
/// the list sorted once at the end; SQLite's `GROUP BY` over the four tables' ids took 0.8 s for
/// 310,000 of them here.
struct IDRegister {
    private var entries: [(high: UInt64, low: UInt64, kind: RecordKind)] = []

    /// Records `id`, a lowercase UUID that `FieldRules.id` accepted.
    mutating func add(_ id: String, _ kind: RecordKind) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var count = 0
        for byte in id.utf8 where byte != UInt8(ascii: "-") {
            let nibble = UInt64(byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : byte - UInt8(ascii: "a") + 10)
            if count < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
            count += 1
        }
        entries.append((high, low, kind))
    }

    /// Throws, naming the id and both kinds, when two records have the same id; then forgets
    /// every id (its memory is back before the plan hashes the files).
    mutating func refuseRepeats(storePath: String) throws {
        defer { entries = [] }
        entries.sort { ($0.high, $0.low) < ($1.high, $1.low) }
        for index in entries.indices.dropFirst() where (entries[index].high, entries[index].low) == (entries[index - 1].high, entries[index - 1].low) {
            let (first, second) = (entries[index - 1], entries[index])
            let hex = Self.hex(first.high) + Self.hex(first.low)
            let id = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
                .joined(separator: "-")
            throw MigrationError.invalidLegacyRecord(path: storePath, detail: """
                \(first.kind.withArticle) and \(second.kind.withArticle) have the id \(id) (in some case); ids must be unique across \
                trips, places, bookings and attachments
                """)
        }
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
