import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

struct StoreTests {
    // MARK: - Trips

    @Test func addTripStoresATrimmedNewTripWaitingForUpload() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip("  Lisbon \t", notes: "pastéis\nde nata")

        #expect(trip.name == "Lisbon")
        #expect(trip.notes == "pastéis\nde nata")
        #expect(trip.startDate == (try day("2026-12-12")))
        #expect(trip.endDate == (try day("2026-12-15")))
        #expect(trip.dayCount == 4)
        #expect(trip.syncState == .pendingUpload)
        #expect(trip.remoteVersion == nil)
        #expect(trip.updatedAt.utcStamp == "2026-11-30T23:12:17.123Z")
        #expect(Identifier.isValid(trip.id.text))
        #expect(trip.id.text == trip.id.text.lowercased())
        #expect(try fixture.store.trip(id: trip.id) == trip)
        #expect(try fixture.store.trips() == [trip])
    }

    @Test func tripsAreListedSoonestFirst() throws {
        let fixture = try StoreFixture()
        try fixture.addTrip("Later", from: "2027-03-01", to: "2027-03-02")
        try fixture.addTrip("Long", from: "2026-06-01", to: "2026-06-30")
        try fixture.addTrip("Short", from: "2026-06-01", to: "2026-06-02")
        try fixture.addTrip("Earlier", from: "2025-01-01", to: "2025-01-01")
        #expect(try fixture.store.trips().map(\.name) == ["Earlier", "Short", "Long", "Later"])
    }

    @Test func unknownTripIsNotFound() throws {
        let fixture = try StoreFixture()
        let id = Identifier.make()
        #expect(throws: StoreError.notFound(kind: .trip, id: id)) { try fixture.store.trip(id: RecordID(id)) }
        #expect(throws: StoreError.notFound(kind: .trip, id: id)) { try fixture.store.editTrip(id: RecordID(id), changes: TripChanges(name: "x")) }
        #expect(throws: StoreError.notFound(kind: .trip, id: id)) { try fixture.store.deleteTrip(id: RecordID(id)) }
    }

    @Test func editTripChangesOnlyTheGivenFields() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip(notes: "keep me")
        fixture.clock.advance()

        let edited = try fixture.store.editTrip(id: trip.id, changes: TripChanges(name: " Lisboa ", endDate: try day("2026-12-16")))

        var expected = trip
        expected.name = "Lisboa"
        expected.endDate = try day("2026-12-16")
        expected.updatedAt = Timestamp(stored: "2026-11-30T23:12:18.123Z")
        #expect(edited == expected)
        #expect(try fixture.store.trip(id: trip.id) == expected)
    }

    @Test(arguments: [
        TripChanges(endDate: CivilDate("2026-12-11")),
        TripChanges(startDate: CivilDate("2026-12-16")),
        TripChanges(startDate: CivilDate("2026-12-20"), endDate: CivilDate("2026-12-19")),
    ])
    func editThatPutsTheEndBeforeTheStartIsRefused(changes: TripChanges) throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let error = try #require(throws: StoreError.self) { try fixture.store.editTrip(id: trip.id, changes: changes) }
        guard case .invalidData(let message) = error else {
            Issue.record("expected .invalidData, got \(error)")
            return
        }
        #expect(message.contains("before the start date"))
        #expect(try fixture.store.trip(id: trip.id) == trip)
    }

    @Test func editThatMovesBothDatesTogetherIsAccepted() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let moved = try fixture.store.editTrip(id: trip.id, changes: TripChanges(startDate: try day("2027-01-10"), endDate: try day("2027-01-12")))
        #expect(moved.dayCount == 3)
    }

    @Test(arguments: [
        ("", "name must not be empty"),
        ("   \t ", "name must not be empty"),
        ("Lisbon\nPorto", "control characters"),
        ("Tab\there", "control characters"),
        ("Bell\u{07}", "control characters"),
        ("Null\u{0}byte", "control characters"),
        (String(repeating: "x", count: 201), "longer than 200"),
    ])
    func invalidTripNameIsRefusedAndNothingIsStored(name: String, reason: String) throws {
        let fixture = try StoreFixture()
        let error = try #require(throws: StoreError.self) { try fixture.addTrip(name) }
        guard case .invalidField(field: "name", _) = error else {
            Issue.record("expected .invalidField for the name, got \(error)")
            return
        }
        #expect(error.description.contains(reason), "\(error)")
        #expect(try fixture.rowCount("trips") == 0)
    }

    @Test func longestNameAndSingleDayTripAreAccepted() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip(String(repeating: "é", count: 200), from: "2026-12-12", to: "2026-12-12")
        #expect(trip.dayCount == 1)
    }

    @Test func endBeforeStartIsRefusedAsInvalidData() throws {
        let fixture = try StoreFixture()
        #expect(throws: StoreError.invalidData("the end date 2026-12-11 is before the start date 2026-12-12")) {
            try fixture.addTrip(from: "2026-12-12", to: "2026-12-11")
        }
        #expect(try fixture.rowCount("trips") == 0)
    }

    @Test(arguments: [
        ("line one\nline two\twith tab", true),
        ("", true),
        ("escape \u{1b}[31m", false),
        ("carriage\rreturn", false),
        (String(repeating: "n", count: 10_000), true),
        (String(repeating: "n", count: 10_001), false),
    ])
    func notesMayHaveLinesAndTabsButNoOtherControls(notes: String, accepted: Bool) throws {
        let fixture = try StoreFixture()
        if accepted {
            #expect(try fixture.addTrip(notes: notes).notes == notes)
        } else {
            #expect(throws: StoreError.self) { try fixture.addTrip(notes: notes) }
            let trip = try fixture.addTrip()
            #expect(throws: StoreError.self) { try fixture.store.editTrip(id: trip.id, changes: TripChanges(notes: notes)) }
            #expect(try fixture.store.trip(id: trip.id).notes == "")
        }
    }

    // MARK: - Places

    @Test func placesBelongToALiveTripInTheOrderAdded() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let other = try fixture.addTrip("Porto")
        let tower = try fixture.store.addPlace(tripId: trip.id, name: " Belém Tower ", city: " Lisbon ")
        let tram = try fixture.store.addPlace(tripId: trip.id, name: "Tram 28", city: "   ")
        _ = try fixture.store.addPlace(tripId: other.id, name: "Livraria Lello", city: nil)

        #expect(tower.name == "Belém Tower")
        #expect(tower.city == "Lisbon")
        #expect(tram.city == nil, "a blank city is no city")
        #expect(!tower.visited)
        #expect(tower.syncState == .pendingUpload)
        #expect(tower.tripId == trip.id)
        #expect(try fixture.store.places(tripId: trip.id) == [tower, tram])
    }

    @Test func placeNeedsAnExistingTripAndAValidName() throws {
        let fixture = try StoreFixture()
        let missing = Identifier.make()
        #expect(throws: StoreError.notFound(kind: .trip, id: missing)) {
            try fixture.store.addPlace(tripId: RecordID(missing), name: "Nowhere", city: nil)
        }
        #expect(throws: StoreError.notFound(kind: .trip, id: missing)) { try fixture.store.places(tripId: RecordID(missing)) }
        let trip = try fixture.addTrip()
        #expect(throws: StoreError.self) { try fixture.store.addPlace(tripId: trip.id, name: "", city: nil) }
        #expect(throws: StoreError.self) { try fixture.store.addPlace(tripId: trip.id, name: "Ok", city: "two\nlines") }
        #expect(try fixture.rowCount("places") == 0)
    }

    @Test func setVisitedChangesThePlaceOnlyWhenTheValueChanges() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        fixture.clock.advance()

        let visited = try fixture.store.setVisited(placeId: place.id)
        #expect(visited.visited)
        #expect(visited.updatedAt.utcStamp == fixture.clock.stamp)
        fixture.clock.advance()
        #expect(try fixture.store.setVisited(placeId: place.id, true) == visited, "already visited: unchanged")
        #expect(try fixture.store.places(tripId: trip.id) == [visited])
        #expect(try !fixture.store.setVisited(placeId: place.id, false).visited)
        #expect(throws: StoreError.self) { try fixture.store.setVisited(placeId: .make()) }
    }

    @Test func deletePlaceMovesANeverUploadedPlaceToTheTrash() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        #expect(try fixture.store.deletePlace(id: place.id).syncState == .pendingUpload)
        #expect(try fixture.store.places(tripId: trip.id) == [])
        #expect(try fixture.rowCount("places") == 1, "kept in the trash")
        #expect(throws: StoreError.notFound(kind: .place, id: place.id.text)) { try fixture.store.deletePlace(id: place.id) }
    }

    // MARK: - Bookings

    @Test func bookingsAreListedByInstantWithUndatedOnesLast() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let hotel = try fixture.store.addBooking(BookingDraft(
            tripId: trip.id, kind: .hotel, title: "Hotel Avenida", startsAt: Timestamp(iso8601: "2026-12-12T15:00+00:00")))
        let museum = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .event, title: "Museum"))
        let flight = try fixture.store.addBooking(BookingDraft(
            tripId: trip.id, kind: .flight, title: " TP 1351 ", startsAt: Timestamp(iso8601: "2026-12-12T07:35:00Z"), reference: " X7K2QP "))
        // 16:00 at +03:00 is 13:00 UTC: before the 15:00 UTC hotel although its wall clock reads later.
        let train = try fixture.store.addBooking(BookingDraft(
            tripId: trip.id, kind: .train, title: "Train", startsAt: Timestamp(iso8601: "2026-12-12T16:00+03:00")))

        #expect(flight.title == "TP 1351")
        #expect(flight.reference == "X7K2QP")
        #expect(flight.startsAt?.text == "2026-12-12T07:35:00+00:00")
        #expect(train.startsAt?.text == "2026-12-12T16:00:00+03:00", "the offset it was entered in is kept")
        #expect(museum.startsAt == nil)
        #expect(try fixture.store.bookings(tripId: trip.id) == [flight, train, hotel, museum])
    }

    @Test func bookingFieldsAreValidated() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        #expect(throws: StoreError.self) { try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .car, title: " ")) }
        #expect(throws: StoreError.self) {
            try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .car, title: "Car", reference: String(repeating: "R", count: 101)))
        }
        let missing = Identifier.make()
        #expect(throws: StoreError.notFound(kind: .trip, id: missing)) {
            try fixture.store.addBooking(BookingDraft(tripId: RecordID(missing), kind: .car, title: "Car"))
        }
        #expect(try fixture.rowCount("bookings") == 0)
        let longest = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .car, title: "Car", reference: String(repeating: "R", count: 100)))
        #expect(longest.reference?.count == 100)
        #expect(try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .other, title: "x", reference: "  ")).reference == nil)
    }

    @Test func deleteBookingHidesANeverUploadedBooking() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let booking = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .car, title: "Car"))
        #expect(try fixture.store.deleteBooking(id: booking.id).kind == .booking)
        #expect(try fixture.store.bookings(tripId: trip.id) == [])
        #expect(throws: StoreError.notFound(kind: .booking, id: booking.id.text)) { try fixture.store.deleteBooking(id: booking.id) }
    }

    @Test func deletingANeverUploadedTripHidesItsPlacesAndBookingsInTheTrash() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let kept = try fixture.addTrip("Porto")
        _ = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Hotel"))
        _ = try fixture.store.addPlace(tripId: kept.id, name: "Lello", city: nil)

        let entry = try fixture.store.deleteTrip(id: trip.id)

        #expect(entry.contents == TrashEntry.Contents(places: 1, bookings: 1, attachments: 0))
        #expect(try fixture.store.trips() == [kept])
        #expect(try fixture.store.counts() == StoreCounts(trips: 1, places: 1, bookings: 0, attachments: 0, tombstones: 0, pendingChanges: 2))
        #expect(try fixture.rowCount("trips") == 2, "kept in the trash")
        #expect(try fixture.rowCount("bookings") == 1)
        #expect(try fixture.store.integrityProblems() == [])
    }

    @Test func countsLiveRecords() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        try fixture.addTrip("Porto")
        _ = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Hotel"))
        #expect(try fixture.store.counts() == StoreCounts(trips: 2, places: 1, bookings: 1, attachments: 0, tombstones: 0, pendingChanges: 4))
    }

    /// `counts()` makes one pass per table: what it says equals each condition counted alone,
    /// over live, trashed, tombstoned, synchronized and pending rows of every counted table.
    @Test func countsEqualEachConditionCountedAlone() throws {
        let fixture = try StoreFixture()
        var trips: [Trip] = []
        for index in 0..<8 {
            let trip = try fixture.insertTrip(id: "0000000\(index)-0000-4000-8000-000000000000", name: "Trip \(index)",
                                              state: index < 4 ? .synchronized : .pendingUpload, remoteVersion: index < 4 ? 1 : nil)
            _ = try fixture.store.addPlace(tripId: trip.id, name: "Place \(index)", city: nil)
            _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Hotel \(index)"))
            trips.append(trip)
        }
        try fixture.store.connection.execute("UPDATE places SET sync_state = 'synchronized', remote_version = 1 WHERE rowid % 2 = 0")
        _ = try fixture.store.deleteTrip(id: trips[0].id)  // synchronized: a tombstone
        _ = try fixture.store.deleteTrip(id: trips[5].id)  // never uploaded: to the trash
        _ = try fixture.store.deletePlace(id: try fixture.store.places(tripId: trips[2].id)[0].id)
        _ = try fixture.store.deleteBooking(id: try fixture.store.bookings(tripId: trips[6].id)[0].id)

        let connection = fixture.store.connection
        func count(_ table: String, _ condition: String) throws -> Int { Int(try connection.integer("SELECT count(*) FROM \(table) WHERE \(condition)")) }
        let tables = ["trips", "places", "bookings", "attachments"]
        let expected = StoreCounts(
            trips: try count("trips", RecordRows.live), places: try count("places", RecordRows.live),
            bookings: try count("bookings", RecordRows.live), attachments: try count("attachments", Store.liveAttachment),
            tombstones: try tables.reduce(0) { $0 + (try count($1, "sync_state = 'pendingDeletion'")) },
            pendingChanges: try tables.reduce(0) { $0 + (try count($1, SyncLedger.pending)) })
        #expect(try fixture.store.counts() == expected)
        #expect(expected.trips == 6 && expected.tombstones >= 1 && expected.pendingChanges > 0, "the mix holds each kind of row")
    }

    // MARK: - Ids and prefixes

    @Test func resolveIDAcceptsAUniquePrefixInAnyCase() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.insertTrip(id: "3f2a9c4e-1b7d-4c8e-9f00-aa11bb22cc33")
        try fixture.insertTrip(id: "3f2b0000-0000-4000-8000-000000000000")
        #expect(try fixture.store.resolveID(Trip.self, "3f2a") == trip.id)
        #expect(try fixture.store.resolveID(Trip.self, "3F2A9C") == trip.id)
        #expect(try fixture.store.resolveID(Trip.self, "3f2a9c4e-1b7d") == trip.id)
        #expect(try fixture.store.resolveID(Trip.self, trip.id.text) == trip.id)
        #expect(try fixture.store.resolveID(Trip.self, trip.id.text.uppercased()) == trip.id)
    }

    @Test func ambiguousPrefixListsTheCandidates() throws {
        let fixture = try StoreFixture()
        let first = try fixture.insertTrip(id: "3f2a0000-0000-4000-8000-000000000001")
        let second = try fixture.insertTrip(id: "3f2a0000-0000-4000-8000-000000000002")
        #expect(throws: StoreError.ambiguous(kind: .trip, prefix: "3f2a", candidates: [first.id.text, second.id.text])) {
            try fixture.store.resolveID(Trip.self, "3f2a")
        }
        let error = try #require(throws: StoreError.self) { try fixture.store.resolveID(Trip.self, "3F2A") }
        #expect(error.description.contains("give more characters"))
        #expect(try fixture.store.resolveID(Trip.self, "3f2a0000-0000-4000-8000-000000000002") == second.id)
    }

    @Test func ambiguousPrefixListsAtMostFiveCandidates() throws {
        let fixture = try StoreFixture()
        let ids = (1...7).map { "abcd0000-0000-4000-8000-00000000000\($0)" }
        for id in ids { try fixture.insertTrip(id: id) }
        #expect(throws: StoreError.ambiguous(kind: .trip, prefix: "abcd", candidates: Array(ids.prefix(5)) + ["…"])) {
            try fixture.store.resolveID(Trip.self, "abcd")
        }
    }

    @Test(arguments: ["", "xyz", "lisbon", "3f2a 9c", "3f2a_", "é", String(repeating: "a", count: 37), "3f2a%", "*"])
    func malformedIDIsAnInvalidArgument(text: String) throws {
        let fixture = try StoreFixture()
        try fixture.insertTrip(id: "aaaa0000-0000-4000-8000-000000000001")
        let error = try #require(throws: StoreError.self) { try fixture.store.resolveID(Trip.self, text) }
        guard case .invalidArgument(let message) = error else {
            Issue.record("expected .invalidArgument, got \(error)")
            return
        }
        #expect(message.contains("is not a trip id"))
    }

    @Test func prefixMatchingNothingIsNotFound() throws {
        let fixture = try StoreFixture()
        try fixture.insertTrip(id: "aaaa0000-0000-4000-8000-000000000001")
        #expect(throws: StoreError.notFound(kind: .trip, id: "ab")) { try fixture.store.resolveID(Trip.self, "ab") }
        #expect(throws: StoreError.notFound(kind: .place, id: "aaaa")) { try fixture.store.resolveID(.place, "aaaa") }
    }

    @Test func tombstonesAreInvisibleToPrefixesUnlessAsked() throws {
        let fixture = try StoreFixture()
        let live = try fixture.insertTrip(id: "cafe0000-0000-4000-8000-000000000001")
        let dead = try fixture.insertTrip(id: "cafe0000-0000-4000-8000-000000000002", state: .synchronized, remoteVersion: 1)
        try fixture.store.deleteTrip(id: dead.id)

        #expect(try fixture.store.resolveID(Trip.self, "cafe") == live.id, "the tombstone does not make it ambiguous")
        #expect(throws: StoreError.notFound(kind: .trip, id: dead.id.text)) { try fixture.store.resolveID(Trip.self, dead.id.text) }
        #expect(try fixture.store.resolveID(Trip.self, dead.id.text, includingTombstones: true) == dead.id)
        #expect(throws: StoreError.self) { try fixture.store.resolveID(Trip.self, "cafe", includingTombstones: true) }
    }

    @Test func resolveAnyIDFindsTheKind() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.insertTrip(id: "11110000-0000-4000-8000-000000000001")
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Place", city: nil)
        #expect(try fixture.store.resolveAnyID("1111").kind == .trip)
        #expect(try fixture.store.resolveAnyID(place.id.text) == (kind: .place, id: place.id.text))
        #expect(throws: StoreError.noRecord(id: "ffff")) { try fixture.store.resolveAnyID("ffff") }
    }

    @Test(arguments: [
        ("3F2A", "3f2a"),
        ("abc-DEF-0123456789", "abc-def-0123456789"),
        ("1", "1"),
    ])
    func normalizedPrefixLowercasesHexAndDashes(text: String, expected: String) {
        #expect(Identifier.normalizedPrefix(text) == expected)
    }

    @Test func madeIdentifiersAreLowercaseVersion4UUIDs() {
        let ids = (0..<100).map { _ in Identifier.make() }
        #expect(Set(ids).count == 100)
        for id in ids {
            #expect(Identifier.isValid(id))
            #expect(id == id.lowercased())
            #expect(Array(id)[14] == "4", "version 4")
            #expect("89ab".contains(Array(id)[19]), "RFC 9562 variant")
        }
        #expect(Identifier.isValid("3F2A9C4E-1B7D-4C8E-9F00-AA11BB22CC33"))
        #expect(!Identifier.isValid("3f2a9c4e"))
        #expect(!Identifier.isValid("not-a-uuid"))
    }
}
