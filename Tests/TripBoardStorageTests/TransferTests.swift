import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `export` → `import`: one JSON document, imported all or nothing.
struct TransferTests {
    static let tripID = "7a1c0000-0000-4000-8000-000000000001"
    static let placeID = "7a1c0000-0000-4000-8000-000000000002"
    static let bookingID = "7a1c0000-0000-4000-8000-000000000003"

    private func importJSON(_ json: String, into store: Store) throws -> ImportSummary {
        try store.importRecords(try ImportDocument.parse(Array(json.utf8)))
    }

    /// Expects `json` to be refused as invalid data whose message contains every fragment, and
    /// the store to be left exactly as it was.
    private func expectRefused(_ json: String, _ fragments: [String], fixture: StoreFixture,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try fixture.store.exportDocument(preferences: Preferences())
        let error = try #require(throws: StoreError.self, sourceLocation: sourceLocation) {
            try importJSON(json, into: fixture.store)
        }
        guard case .invalidData(let message) = error else {
            Issue.record("expected .invalidData, got \(error)", sourceLocation: sourceLocation)
            return
        }
        for fragment in fragments + ["nothing was imported"] {
            #expect(message.contains(fragment), "\(message)", sourceLocation: sourceLocation)
        }
        #expect(!message.contains("\n"), "one line", sourceLocation: sourceLocation)
        #expect(try fixture.store.exportDocument(preferences: Preferences()) == before, sourceLocation: sourceLocation)
    }

    // MARK: - Round trip

    @Test func exportThenImportIntoAFreshContainerGivesEqualRecords() throws {
        let source = try StoreFixture()
        let lisbon = try source.addTrip("Lisbon", notes: "pastéis\n\tde nata")
        let porto = try source.addTrip("Porto", from: "2027-05-01", to: "2027-05-03")
        let gone = try source.addTrip("Gone", from: "2025-01-01", to: "2025-01-02")
        let tower = try source.store.addPlace(tripId: lisbon.id, name: "Belém Tower", city: "Lisbon")
        try source.store.setVisited(placeId: tower.id)
        _ = try source.store.addPlace(tripId: porto.id, name: "Livraria Lello", city: nil)
        _ = try source.store.addBooking(BookingDraft(tripId: lisbon.id, kind: .flight, title: "TP 1351",
                                                     startsAt: Timestamp(iso8601: "2026-12-12T07:35+01:00"), reference: "X7K2QP"))
        _ = try source.store.addBooking(BookingDraft(tripId: porto.id, kind: .hotel, title: "Hotel"))
        try source.store.syncLedger.acknowledge(kind: .trip, id: porto.id.text, remoteVersion: 4)
        try source.store.syncLedger.markFailed(kind: .place, id: tower.id.text)
        try source.store.syncLedger.acknowledge(kind: .trip, id: gone.id.text, remoteVersion: 2)
        source.clock.advance()
        try source.store.deleteTrip(id: gone.id)
        var preferences = Preferences()
        preferences.set(.currency, .text("JPY"))

        let exported = try source.store.exportDocument(preferences: preferences)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes = Array(try encoder.encode(exported))

        let destination = try StoreFixture()
        destination.clock.advance(milliseconds: 3_600_000)
        let document = try ImportDocument.parse(bytes)
        let summary = try destination.store.importRecords(document)
        let reexported = try destination.store.exportDocument(preferences: preferences)

        #expect(summary == ImportSummary(trips: 3, places: 2, bookings: 2))
        #expect(document.recordCount == 7)
        #expect(document.preferences == ["currency": .text("JPY")])
        #expect(reexported.trips == exported.trips)
        #expect(reexported.places == exported.places)
        #expect(reexported.bookings == exported.bookings)
        #expect(exported.trips.contains { $0.id == gone.id && $0.syncState == .pendingDeletion }, "tombstones travel too")
        #expect(try destination.store.counts() == source.store.counts())
        #expect(try destination.store.integrityProblems() == [])
    }

    @Test func exportDocumentDescribesItselfAndOnlyTheSetPreferences() throws {
        let fixture = try StoreFixture()
        var preferences = Preferences()
        preferences.set(.theme, .text("dark"))
        let exported = try fixture.store.exportDocument(preferences: preferences)
        #expect(exported.format == "tripboard-export")
        #expect(exported.formatVersion == 1)
        #expect(exported.exportedAt == fixture.clock.stamp)
        #expect(exported.preferences == ["theme": .text("dark")])
        #expect(exported.trips.isEmpty && exported.places.isEmpty && exported.bookings.isEmpty)

        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(exported)) as? [String: Any])
        #expect(Set(json.keys) == ["format", "formatVersion", "exportedAt", "trips", "places", "bookings", "preferences"])
    }

    @Test func importedRecordsWithoutIDsOrMetadataAreNewAndPending() throws {
        let fixture = try StoreFixture()
        let summary = try importJSON("""
            {"trips": [{"name": " Madeira ", "startDate": "2027-02-01", "endDate": "2027-02-08"}]}
            """, into: fixture.store)
        #expect(summary == ImportSummary(trips: 1, places: 0, bookings: 0))
        let trip = try #require(try fixture.store.trips().first)
        #expect(trip.name == "Madeira")
        #expect(Identifier.isValid(trip.id.text))
        #expect(trip.syncState == .pendingUpload)
        #expect(trip.remoteVersion == nil)
        #expect(trip.updatedAt.utcStamp == fixture.clock.stamp)
        #expect(trip.notes == "")
    }

    @Test func importNormalizesIDsAndTimes() throws {
        let fixture = try StoreFixture()
        _ = try importJSON("""
            {"trips": [{"id": "\(Self.tripID.uppercased())", "name": "T", "startDate": "2026-12-12", "endDate": "2026-12-12",
                        "updatedAt": "2026-12-01T10:00:00+01:00", "syncState": "synchronized", "remoteVersion": 9}],
             "bookings": [{"id": "\(Self.bookingID)", "tripId": "\(Self.tripID)", "kind": "train", "title": "Alfa",
                           "startsAt": "2026-12-12T07:35+0100"}]}
            """, into: fixture.store)
        let trip = try fixture.store.trip(id: RecordID(Self.tripID))
        #expect(trip.updatedAt.utcStamp == "2026-12-01T09:00:00.000Z")
        #expect(trip.syncState == .synchronized)
        #expect(trip.remoteVersion == 9)
        #expect(try fixture.store.bookings(tripId: RecordID(Self.tripID)).map(\.startsAt?.text) == ["2026-12-12T07:35:00+01:00"])
    }

    @Test func importMayAddToATripAlreadyInTheStore() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        _ = try importJSON("""
            {"places": [{"tripId": "\(trip.id)", "name": "Tram 28", "visited": true}]}
            """, into: fixture.store)
        #expect(try fixture.store.places(tripId: trip.id).map { "\($0.name) \($0.visited)" } == ["Tram 28 true"])
    }

    // MARK: - All or nothing

    @Test func aBadRecordAtTheEndLeavesNothingImported() throws {
        let fixture = try StoreFixture()
        try fixture.addTrip("Already here")
        // Fails validation before anything is written.
        try expectRefused("""
            {"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"},
                       {"name": "B", "startDate": "2026-02-01", "endDate": "2026-02-02"}],
             "bookings": [{"tripId": "\(Self.tripID)", "kind": "car", "title": "Car"},
                          {"tripId": "\(Self.tripID)", "kind": "car", "title": "  "}]}
            """, ["bookings[1]", "title must not be empty"], fixture: fixture)
        #expect(try fixture.store.trips().map(\.name) == ["Already here"])
    }

    @Test func aConstraintFailingOnTheLastInsertRollsEverythingBack() throws {
        let fixture = try StoreFixture()
        // The trips and the first place are inserted before the last place fails its foreign key.
        let missingTrip = "7a1c0000-0000-4000-8000-0000000000ff"
        try expectRefused("""
            {"trips": [{"id": "\(Self.tripID)", "name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"}],
             "places": [{"tripId": "\(Self.tripID)", "name": "Fine"},
                        {"id": "\(Self.placeID)", "tripId": "\(missingTrip)", "name": "Orphan"}]}
            """, ["places[1] belongs to trip \(missingTrip)", "neither in the import nor in the store"], fixture: fixture)
        for table in ["trips", "places", "bookings"] { #expect(try fixture.rowCount(table) == 0) }
    }

    // MARK: - Refused documents

    @Test func duplicateIDInTheFileIsRefused() throws {
        let fixture = try StoreFixture()
        try expectRefused("""
            {"trips": [{"id": "\(Self.tripID)", "name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02"},
                       {"id": "\(Self.tripID)", "name": "B", "startDate": "2026-01-01", "endDate": "2026-01-02"}]}
            """, ["the trip id \(Self.tripID) appears twice"], fixture: fixture)
    }

    @Test func idAlreadyInTheStoreIsRefused() throws {
        let fixture = try StoreFixture()
        try fixture.insertTrip(id: Self.tripID, name: "Original")
        try expectRefused("""
            {"trips": [{"name": "New", "startDate": "2026-01-01", "endDate": "2026-01-02"},
                       {"id": "\(Self.tripID)", "name": "Copy", "startDate": "2026-01-01", "endDate": "2026-01-02"}]}
            """, ["trip \(Self.tripID) already exists in the store"], fixture: fixture)
        #expect(try fixture.store.trip(id: RecordID(Self.tripID)).name == "Original")
    }

    @Test func bookingWhoseTripIsMissingIsRefused() throws {
        let fixture = try StoreFixture()
        try expectRefused("""
            {"bookings": [{"id": "\(Self.bookingID)", "tripId": "\(Self.tripID)", "kind": "hotel", "title": "Hotel"}]}
            """, ["bookings[0] belongs to trip \(Self.tripID)"], fixture: fixture)
    }

    @Test(arguments: [
        (#"{"trips": [{"name": "A", "startDate": "2026-02-30", "endDate": "2026-03-01"}]}"#, ["trips[0].startDate"]),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "1/2/2026"}]}"#, ["trips[0].endDate"]),
        (#"{"format": "other-app", "trips": []}"#, ["format is 'other-app'"]),
        (#"{"format": "tripboard-export", "formatVersion": 2, "trips": []}"#, ["format version 2", "newer"]),
        (#"{"trips": [{"startDate": "2026-01-01", "endDate": "2026-01-02"}]}"#, ["missing key 'name'", "trips[0]"]),
        (#"{"trips": [{"name": 5, "startDate": "2026-01-01", "endDate": "2026-01-02"}]}"#, ["wrong type", "trips[0].name"]),
        (#"{"trips": [{"name": "", "startDate": "2026-01-01", "endDate": "2026-01-02"}]}"#, ["trips[0]", "name must not be empty"]),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02", "updatedAt": "yesterday"}]}"#,
         ["trips[0]", "updatedAt 'yesterday'"]),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02", "remoteVersion": 0}]}"#,
         ["trips[0].remoteVersion must be a positive integer"]),
        (#"{"trips": [{"name": "A", "startDate": "2026-01-01", "endDate": "2026-01-02", "syncState": "uploaded"}]}"#,
         ["trips[0].syncState"]),
        (#"{"places": [{"id": "nope", "tripId": "7a1c0000-0000-4000-8000-000000000001", "name": "P"}]}"#,
         ["places[0]", "'nope' is not a UUID"]),
        (#"{"places": [{"tripId": "lisbon", "name": "P"}]}"#, ["places[0]", "'lisbon' is not a UUID"]),
        (#"{"bookings": [{"tripId": "7a1c0000-0000-4000-8000-000000000001", "kind": "boat", "title": "B"}]}"#,
         ["bookings[0].kind"]),
        (#"{"bookings": [{"tripId": "7a1c0000-0000-4000-8000-000000000001", "kind": "car", "title": "B", "startsAt": "noon"}]}"#,
         ["bookings[0]", "startsAt 'noon'"]),
        ("{not json", ["not valid JSON"]),
        ("", ["not valid JSON"]),
    ])
    func malformedDocumentIsRefusedNamingTheRecord(json: String, fragments: [String]) throws {
        let fixture = try StoreFixture()
        try fixture.addTrip("Already here")
        try expectRefused(json, fragments, fixture: fixture)
    }
}
