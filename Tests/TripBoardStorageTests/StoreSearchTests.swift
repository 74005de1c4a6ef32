import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardModel
import TripBoardSystem
import TripBoardTestSupport

/// The search index: kept by triggers in the write's own transaction, live records only, words
/// matched from their start without case or accents, and built for a store upgraded to it.
struct StoreSearchTests {
    static func titles(_ store: Store, _ text: String) throws -> [String] { try store.searchIndex.search(text).map(\.title) }

    @Test func findsTripsPlacesAndBookingsByAnyOfTheirWords() throws {
        let fixture = try StoreFixture()
        let lisbon = try fixture.addTrip("Lisbon", notes: "Pastéis de Belém at 9:00")
        _ = try fixture.store.addPlace(tripId: lisbon.id, name: "Torre de Belém", city: "Lisboa")
        _ = try fixture.store.addBooking(BookingDraft(tripId: lisbon.id, kind: .flight, title: "TP 1351", reference: "X7K2QP"))
        #expect(Set(try Self.titles(fixture.store, "belem")) == ["Lisbon", "Torre de Belém"])
        #expect(Set(try Self.titles(fixture.store, "LISB")) == ["Lisbon", "Torre de Belém"], "a prefix (Lisboa too), in any case")
        #expect(try Self.titles(fixture.store, "lisboa torre") == ["Torre de Belém"], "every word, in any column")
        #expect(try Self.titles(fixture.store, "x7k2") == ["TP 1351"])
        let hit = try #require(try fixture.store.searchIndex.search("x7k2qp").first)
        #expect(hit.kind == .booking && hit.tripId == lisbon.id.text && hit.tripName == "Lisbon" && hit.detail == "X7K2QP")
        #expect(try Self.titles(fixture.store, "porto").isEmpty)
    }

    /// The statement before `searchSQL` ranked bare rowids first: every hit's whole row joined, then
    /// all of them sorted. The reference for what `search` returns, and in what order.
    static let wholeRowsSQL = """
        SELECT s.rowid % 4, coalesce(t.id, p.id, b.id), coalesce(t.id, p.trip_id, b.trip_id),
               coalesce(t.name, p.name, b.title), coalesce(t.notes, p.city, b.reference),
               (SELECT name FROM trips WHERE id = coalesce(t.id, p.trip_id, b.trip_id))
        FROM search_index s
        LEFT JOIN trips t ON s.rowid % 4 = 0 AND t.rowid = s.rowid / 4
        LEFT JOIN places p ON s.rowid % 4 = 1 AND p.rowid = s.rowid / 4
        LEFT JOIN bookings b ON s.rowid % 4 = 2 AND b.rowid = s.rowid / 4
        WHERE search_index MATCH ?1
        ORDER BY s.rank, s.rowid LIMIT ?2
        """

    @Test func theHitsAndTheirOrderAreThoseOfSortingWholeRows() throws {
        let fixture = try StoreFixture()
        let words = ["lisbon", "porto", "hotel", "harbour", "tram", "belem", "x7k2qp", "night"]
        // Words picked by a fixed stride, a few of them repeated: hits of many ranks, some equal.
        var next = 0
        func phrase(_ count: Int) -> String {
            (0..<count).map { _ in next = (next * 5 + 3) % 1_009; return words[next % words.count] }.joined(separator: " ")
        }
        for index in 0..<120 {
            let trip = try fixture.addTrip("Trip \(index) \(phrase(1 + index % 3))", notes: phrase(index % 7))
            for place in 0..<(index % 3) {
                _ = try fixture.store.addPlace(tripId: trip.id, name: "Place " + phrase(2), city: place == 0 ? phrase(1) : nil)
            }
            _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Hotel " + phrase(1), reference: "R\(index)"))
            if index % 9 == 0 { try fixture.store.deleteTrip(id: trip.id) }
        }
        for text in words + ["trip", "trip 1", "hotel porto", "place", "r1", "nothing"] {
            let query = try #require(SearchIndex.searchQuery(text))
            for limit in [-1, 1, 7] {
                let expected = try fixture.store.connection.statement(Self.wholeRowsSQL).rows([.text(query), .integer(Int64(limit))]) {
                    [String($0.integer(0)), $0.text(1), $0.text(2), $0.text(3), $0.optionalText(4) ?? "", $0.text(5)]
                }
                let kinds: [RecordKind] = [.trip, .place, .booking]
                let hits = try fixture.store.searchIndex.search(text, limit: limit < 0 ? nil : limit).map {
                    [String(kinds.firstIndex(of: $0.kind)!), $0.id, $0.tripId, $0.title, $0.detail ?? "", $0.tripName]
                }
                #expect(hits == expected, "\(text), limit \(limit)")
            }
        }
    }

    @Test(arguments: ["AND", "\"", "-x", "title:lisbon", "NEAR(a b)", "*", "lis*", "x OR"])
    func whatIsTypedIsNeverQuerySyntax(text: String) throws {
        let fixture = try StoreFixture()
        try fixture.addTrip("Lisbon")
        if SearchIndex.searchQuery(text) == nil {
            #expect(throws: StoreError.self) { try fixture.store.searchIndex.search(text) }
        } else {
            _ = try fixture.store.searchIndex.search(text)  // no FTS5 syntax error
        }
    }

    @Test func editsTheTrashAndPurgesKeepTheIndexExact() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip("Lisbon")
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Belém", city: nil)
        try fixture.store.editTrip(id: trip.id, changes: TripChanges(name: "Porto"))
        #expect(try Self.titles(fixture.store, "lisbon").isEmpty)
        #expect(try Self.titles(fixture.store, "porto") == ["Porto"])
        try fixture.store.editPlace(id: place.id, changes: PlaceChanges(city: "Lisboa"))
        #expect(try Self.titles(fixture.store, "lisboa") == ["Belém"])
        let entry = try fixture.store.deleteTrip(id: trip.id)
        #expect(try Self.titles(fixture.store, "porto").isEmpty && Self.titles(fixture.store, "belem").isEmpty, "the trash is not searched")
        _ = try fixture.store.trash.restoreFromTrash(.trip, id: entry.id)
        #expect(try Self.titles(fixture.store, "belém lisboa") == ["Belém"])
        #expect(try Self.titles(fixture.store, "porto") == ["Porto"])
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 1)
        #expect(try Self.titles(fixture.store, "porto") == ["Porto"], "a sync state change keeps it")
        try fixture.store.connection.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')")
        #expect(try fixture.store.connection.integer("SELECT count(*) FROM search_index") == 2)
    }

    @Test func aStoreUpgradedToTheIndexIsIndexedLiveRecordsOnly() throws {
        let temporary = try TemporaryDirectory()
        let connection = try Connection(path: temporary.child("old.sqlite"), mode: .readWriteCreate)
        try Schema.migrate(connection, steps: Array(Schema.migrations.prefix { $0 != Schema.bookingTimesAndSearch }))
        try connection.execute("""
            INSERT INTO trips (id, name, start_date, end_date, notes, updated_at) VALUES
                ('7a1c0000-0000-4000-8000-000000000001', 'Lisbon', '2026-12-12', '2026-12-15', 'fado', '2026-11-30T00:00:00.000Z');
            INSERT INTO trips (id, name, start_date, end_date, notes, updated_at, trashed_at, trashed_with) VALUES
                ('7a1c0000-0000-4000-8000-000000000002', 'Lisbon again', '2026-12-12', '2026-12-15', '', '2026-11-30T00:00:00.000Z',
                 '2026-11-30T00:00:00.000Z', '7a1c0000-0000-4000-8000-000000000002');
            INSERT INTO bookings (id, trip_id, kind, title, starts_at, starts_at_epoch, updated_at) VALUES
                ('7a1c0000-0000-4000-8000-000000000003', '7a1c0000-0000-4000-8000-000000000001', 'event', 'Fado night',
                 '2026-12-13T16:30:00-05:00', 1797197400, '2026-11-30T00:00:00.000Z');
            """)
        try Schema.migrate(connection)
        let store = Store(connection: connection)
        #expect(try Self.titles(store, "lisbon") == ["Lisbon"])
        #expect(Set(try Self.titles(store, "fado")) == ["Lisbon", "Fado night"])
        #expect(try connection.integer("SELECT over_at_epoch FROM bookings") == 1_797_197_400, "an old booking is over at its start")
    }

    /// An import indexes its rows once, at the end, with its insert triggers suspended
    /// (`Store.indexingInsertsOnce`), a batch of rows per statement: the index then holds exactly
    /// what the same records written one by one give, the triggers are the schema's again, and edits afterwards are indexed.
    @Test func aBulkImportIndexesExactlyWhatOneByOneWritesIndex() throws {
        var trips: [String] = [], places: [String] = [], bookings: [String] = []
        for index in 0..<60 {
            let trip = "7a1c0000-0000-4000-8000-\(String(format: "%012d", index))"
            let state = index % 7 == 3 ? #", "syncState": "pendingDeletion", "remoteVersion": 2"# : ""
            trips.append(#"{"id": "\#(trip)", "name": "Trip \#(index) Lisboa", "startDate": "2027-01-01", "endDate": "2027-01-03", "notes": "fado \#(index)"\#(state)}"#)
            places.append(#"{"tripId": "\#(trip)", "name": "Belém \#(index)", "city": \#(index % 2 == 0 ? "null" : "\"Porto\"")\#(state)}"#)
            bookings.append(#"{"tripId": "\#(trip)", "kind": "train", "title": "Alfa \#(index)", "reference": "R\#(index)"\#(state)}"#)
        }
        let document = #"{"format": "tripboard-export", "version": 1, "trips": [\#(trips.joined(separator: ","))], "places": [\#(places.joined(separator: ","))], "bookings": [\#(bookings.joined(separator: ","))]}"#
        let bulk = try StoreFixture()
        _ = try bulk.addTrip("Before the import", notes: "fado")
        // Indexed 7 rows a statement: the batches' edges (a trip in the trash among them) lose nothing.
        _ = try bulk.store.importRecords(try ImportDocument.parse(Array(document.utf8)), indexBatchRows: 7)
        let oneByOne = try StoreFixture()
        _ = try oneByOne.addTrip("Before the import", notes: "fado")
        try ImportDocument.parse(Array(document.utf8)).forEachRecord(now: oneByOne.store.stamp()) { record in
            try oneByOne.store.connection.writeTransaction {
                switch record {
                case .trip(let trip, _): try oneByOne.store.insert(trip)
                case .place(let place, _): try oneByOne.store.insert(place)
                case .booking(let booking, _): try oneByOne.store.insert(booking)
                }
            }
        }
        func index(_ store: Store) throws -> [String] {
            try store.connection.statement("SELECT title || '|' || detail FROM search_index ORDER BY title, detail").rows { $0.text(0) }
        }
        #expect(try index(bulk.store) == index(oneByOne.store))
        // Read once, checked and inserted as it is read: the same.
        let onePass = try StoreFixture()
        _ = try onePass.addTrip("Before the import", notes: "fado")
        _ = try onePass.store.importRecords(reading: { MemorySource(Array(document.utf8)) }, indexBatchRows: 7, checkPreferences: { _ in })
        #expect(try index(onePass.store) == index(oneByOne.store))
        #expect(try Schema.difference(of: onePass.store.connection) == nil)
        let live = (0..<60).filter { $0 % 7 != 3 }.count
        #expect(try index(bulk.store).count == 1 + 3 * live, "live records only")
        for word in ["fado", "lisboa", "belem", "porto", "alfa", "r17", "trip 3"] {
            #expect(Set(try Self.titles(bulk.store, word)) == Set(try Self.titles(oneByOne.store, word)), "\(word)")
        }
        #expect(try Schema.difference(of: bulk.store.connection) == nil, "the triggers are the schema's again")
        try bulk.store.connection.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')")
        let added = try bulk.addTrip("After the import")
        #expect(try Self.titles(bulk.store, "after") == ["After the import"], "the insert trigger works again: \(added.id)")
    }

    /// A bulk write may delete rows too (a pull acknowledges deletions and drops merged
    /// duplicates): a row inserted into the rowid a deleted row freed — below the table's largest
    /// rowid before the write — is indexed all the same, a deleted row's entry goes, an updated
    /// row is indexed once, and the temporary trigger and table are gone afterwards.
    @Test func aBulkWriteThatDeletesAndReusesRowidsIndexesWhatOneByOneWritesIndex() throws {
        func write(_ fixture: StoreFixture, bulk: Bool) throws {
            let kept = try fixture.addTrip("Kept Lisboa", notes: "fado")
            let last = try fixture.addTrip("Last Porto", notes: "vinho")
            try fixture.store.connection.writeTransaction {
                try fixture.store.indexingInsertsOnce(batchRows: 2, when: bulk) {
                    // The largest rowid goes: the next insert takes it again.
                    try fixture.store.connection.execute("DELETE FROM trips WHERE id = '\(last.id.text)'")
                    for index in 0..<5 {
                        try fixture.store.insert(Trip(id: RecordID("7a1c0000-0000-4000-8000-\(String(format: "%012d", index))"),
                                                      name: "New \(index) Braga", startDate: try day("2027-01-01"), endDate: try day("2027-01-02"),
                                                      notes: "sardinha", syncState: .pendingUpload, remoteVersion: nil, updatedAt: fixture.clock.now()))
                    }
                    try fixture.store.connection.execute("UPDATE trips SET name = 'Kept Coimbra' WHERE id = '\(kept.id.text)'")
                    try fixture.store.connection.execute("DELETE FROM trips WHERE name = 'New 4 Braga'")
                }
            }
        }
        let bulk = try StoreFixture(), oneByOne = try StoreFixture()
        try write(bulk, bulk: true)
        try write(oneByOne, bulk: false)
        func index(_ store: Store) throws -> [String] {
            try store.connection.statement("SELECT rowid || '|' || title || '|' || detail FROM search_index ORDER BY rowid").rows { $0.text(0) }
        }
        #expect(try index(bulk.store) == index(oneByOne.store))
        #expect(try Self.titles(bulk.store, "braga").count == 4)
        #expect(try Self.titles(bulk.store, "new 0") == ["New 0 Braga"], "the row in the freed rowid is indexed")
        #expect(try Self.titles(bulk.store, "porto").isEmpty && Self.titles(bulk.store, "coimbra") == ["Kept Coimbra"])
        #expect(try Schema.difference(of: bulk.store.connection) == nil, "the triggers are the schema's again")
        #expect(try bulk.store.connection.integer("SELECT count(*) FROM sqlite_temp_schema") == 0, "no temporary object is left")
        try bulk.store.connection.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')")
    }

    /// A booking is found by its kind too (schema 14): a hotel booked under its own name, a train
    /// by its number; a changed kind is indexed again; a store of schema 13 is indexed anew.
    @Test func aBookingIsFoundByItsKind() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip("Lisbon")
        let hotel = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Memmo Alfama", reference: "MA-1"))
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .train, title: "Alfa Pendular 123"))
        #expect(try Self.titles(fixture.store, "hotel") == ["Memmo Alfama"])
        #expect(try Self.titles(fixture.store, "train alfa") == ["Alfa Pendular 123"])
        #expect(try fixture.store.searchIndex.search("hotel").first?.detail == "MA-1", "the detail shown is the reference")
        _ = try fixture.store.editBooking(id: hotel.id, changes: BookingChanges(kind: .event))
        #expect(try Self.titles(fixture.store, "hotel").isEmpty && Self.titles(fixture.store, "event") == ["Memmo Alfama"])

        let temporary = try TemporaryDirectory()
        let connection = try Connection(path: temporary.child("thirteen.sqlite"), mode: .readWriteCreate)
        try Schema.migrate(connection, steps: Array(Schema.migrations.prefix { $0 != Schema.searchByKind }))
        try connection.execute("""
            INSERT INTO trips (id, name, start_date, end_date, notes, updated_at) VALUES
                ('7a1c0000-0000-4000-8000-000000000001', 'Lisbon', '2026-12-12', '2026-12-15', '', '2026-11-30T00:00:00.000Z');
            INSERT INTO bookings (id, trip_id, kind, title, updated_at) VALUES
                ('7a1c0000-0000-4000-8000-000000000003', '7a1c0000-0000-4000-8000-000000000001', 'hotel', 'Memmo Alfama',
                 '2026-11-30T00:00:00.000Z');
            """)
        #expect(try Self.titles(Store(connection: connection), "hotel").isEmpty, "schema 13 did not index the kind")
        try Schema.migrate(connection)
        #expect(try Self.titles(Store(connection: connection), "hotel") == ["Memmo Alfama"])
        #expect(try Self.titles(Store(connection: connection), "memmo") == ["Memmo Alfama"], "indexed once")
        try connection.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')")
    }
}
