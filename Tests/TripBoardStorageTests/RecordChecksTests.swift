import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// The rules that need the store: an id belongs to one record of any kind, and nothing live hangs
/// from a deleted trip. Checked inside the inserting transaction on every path.
struct RecordChecksTests {
    static let tripID = "7a1c0000-0000-4000-8000-000000000001"
    static let sharedID = "7a1c0000-0000-4000-8000-00000000000a"

    private func importJSON(_ json: String, into store: Store) throws -> ImportSummary {
        try store.importRecords(try ImportDocument.parse(Array(json.utf8)))
    }

    /// The `.invalidData` message of a refused import, after checking that nothing changed.
    private func refusedImport(_ json: String, fixture: StoreFixture, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let before = try fixture.store.exportDocument(preferences: Preferences())
        let error = try #require(throws: StoreError.self, sourceLocation: sourceLocation) { try importJSON(json, into: fixture.store) }
        #expect(try fixture.store.exportDocument(preferences: Preferences()) == before, sourceLocation: sourceLocation)
        guard case .invalidData(let message) = error else {
            Issue.record("expected .invalidData, got \(error)", sourceLocation: sourceLocation)
            return ""
        }
        #expect(message.hasSuffix("; nothing was imported"), "\(message)", sourceLocation: sourceLocation)
        return message
    }

    private func attachment(id: String, bookingId: String) -> TripBoardStorage.Attachment {
        TripBoardStorage.Attachment(id: RecordID(id), bookingId: RecordID(bookingId), originalFilename: "ticket.pdf", contentType: "application/pdf", byteCount: 3,
                   contentHash: .verified(String(repeating: "0f", count: 32)), pageCount: 1, relativePath: "attachments/\(id.prefix(2))/\(id).pdf",
                   state: .present, createdAt: Timestamp(stored: "2026-12-01T00:00:00.000Z"), syncState: .pendingUpload, remoteVersion: nil,
                   updatedAt: Timestamp(stored: "2026-12-01T00:00:00.000Z"))
    }

    // MARK: - One id, one record

    @Test func aPlaceMayNotTakeTheIdOfATripInTheSameImport() throws {
        let fixture = try StoreFixture()
        let message = try refusedImport("""
            {"trips": [{"id": "\(Self.sharedID)", "name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02"}],
             "places": [{"id": "\(Self.sharedID)", "tripId": "\(Self.sharedID)", "name": "P"}]}
            """, fixture: fixture)
        #expect(message.contains("the id \(Self.sharedID) appears twice in the import (trips[0] and places[0])"), "\(message)")
    }

    @Test func aBookingMayNotTakeTheIdOfAnAttachmentInTheStore() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let booking = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .flight, title: "TP 1351"))
        try fixture.store.connection.writeTransaction { try fixture.store.insert(attachment(id: Self.sharedID, bookingId: booking.id.text)) }
        let message = try refusedImport("""
            {"bookings": [{"id": "\(Self.sharedID)", "tripId": "\(trip.id)", "kind": "train", "title": "Alfa"}]}
            """, fixture: fixture)
        #expect(message.hasPrefix("bookings[0]: booking \(Self.sharedID): an attachment in the store has this id"), "\(message)")
    }

    @Test(arguments: RecordKind.allCases)
    func everyInsertRefusesAnIdAnyRecordHas(holder: RecordKind) throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let booking = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .flight, title: "TP 1351"))
        let id: String
        switch holder {
        case .trip: id = trip.id.text
        case .booking: id = booking.id.text
        case .place: id = try fixture.store.addPlace(tripId: trip.id, name: "Belém", city: nil).id.text
        case .attachment:
            id = Self.sharedID
            try fixture.store.connection.writeTransaction { try fixture.store.insert(attachment(id: id, bookingId: booking.id.text)) }
        }
        let store = fixture.store
        let inserts: [() throws -> Void] = [
            { try store.insert(Trip(id: RecordID(id), name: "T", startDate: try day("2027-01-01"), endDate: try day("2027-01-02"), notes: "",
                                    syncState: .pendingUpload, remoteVersion: nil, updatedAt: fixture.clock.now())) },
            { try store.insert(Place(id: RecordID(id), tripId: trip.id, name: "P", city: nil, visited: false, syncState: .pendingUpload,
                                     remoteVersion: nil, updatedAt: fixture.clock.now())) },
            { try store.insert(Booking(id: RecordID(id), tripId: trip.id, kind: .car, title: "B", startsAt: nil, reference: nil,
                                       syncState: .pendingUpload, remoteVersion: nil, updatedAt: fixture.clock.now())) },
            { try store.insert(attachment(id: id, bookingId: booking.id.text)) },
        ]
        let before = try fixture.store.exportDocument(preferences: Preferences())
        for insert in inserts {
            #expect(throws: StoreError.self) { try store.connection.writeTransaction { try insert() } }
        }
        #expect(try fixture.store.exportDocument(preferences: Preferences()) == before)
        #expect(try fixture.store.resolveAnyID(id).id == id, "sync ack ID still names one record")
    }

    // MARK: - Nothing live under a deleted trip

    @Test func aLiveBookingUnderATripDeletedInTheSameImportIsRefused() throws {
        let fixture = try StoreFixture()
        let message = try refusedImport("""
            {"trips": [{"id": "\(Self.tripID)", "name": "Gone", "startDate": "2026-01-01", "endDate": "2026-01-02",
                        "syncState": "pendingDeletion", "remoteVersion": 3}],
             "bookings": [{"tripId": "\(Self.tripID)", "kind": "hotel", "title": "Hotel", "syncState": "synchronized", "remoteVersion": 1}]}
            """, fixture: fixture)
        #expect(message.contains("bookings[0]: booking "), "\(message)")
        #expect(message.contains("is not deleted, but its trip \(Self.tripID) is"), "\(message)")
    }

    @Test func aDeletedTripTravelsWithItsDeletedChildren() throws {
        let source = try StoreFixture()
        let trip = try source.addTrip("Gone")
        let place = try source.store.addPlace(tripId: trip.id, name: "Belém", city: nil)
        for (kind, id) in [(RecordKind.trip, trip.id.text), (.place, place.id.text)] {
            try source.store.syncLedger.acknowledge(kind: kind, id: id, remoteVersion: 1)
        }
        try source.store.deleteTrip(id: trip.id)
        let exported = try source.store.exportDocument(preferences: Preferences())
        #expect(exported.places.map(\.syncState) == [.pendingDeletion])

        let destination = try StoreFixture()
        let summary = try destination.store.importRecords(try ImportDocument.parse(try JSON.encode(exported)))
        #expect(summary == ImportSummary(trips: 1, places: 1, bookings: 0))
        #expect(try destination.store.exportDocument(preferences: Preferences()).places == exported.places)
    }

    // MARK: - States the app reaches

    @Test(arguments: [
        (#""syncState": "synchronized""#, "trips[0].syncState synchronized needs a remoteVersion"),
        (#""syncState": "pendingDeletion""#, "trips[0].syncState pendingDeletion needs a remoteVersion"),
        (#""remoteVersion": 9007199254740992"#, "trips[0].remoteVersion must be at most 9007199254740991"),
        (#""remoteVersion": 9223372036854775808"#, "trips[0].remoteVersion"),
        (#""remoteVersion": 1.5"#, "trips[0].remoteVersion"),
        (#""updatedAt": "9999-12-31T23:59:59-14:00""#, "trips[0].updatedAt falls in the year 10000 in UTC"),
        (#""id": "00000000-0000-0000-0000-000000000000""#, "trips[0].id 00000000-0000-0000-0000-000000000000 is the nil UUID"),
        (#""id": "7a1c0000-0000-1000-8000-000000000001""#, "trips[0].id 7a1c0000-0000-1000-8000-000000000001 is not a version-4"),
    ])
    func metadataTheAppCannotReachIsRefused(member: String, message: String) throws {
        let fixture = try StoreFixture()
        let refused = try refusedImport("""
            {"trips": [{"name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02", \(member)}]}
            """, fixture: fixture)
        #expect(refused.contains(message), "\(refused)")
    }

    @Test func aRemoteVersionWrittenWithAnExponentIsThatInteger() throws {
        let fixture = try StoreFixture()
        _ = try importJSON("""
            {"trips": [{"id": "\(Self.tripID)", "name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02", "remoteVersion": 1e3,
                        "syncState": "synchronized"}]}
            """, into: fixture.store)
        #expect(try fixture.store.trip(id: RecordID(Self.tripID)).remoteVersion == 1_000)
    }

    @Test func anAcknowledgementBeyondTheLargestVersionIsRefused() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        #expect(throws: StoreError.invalidField(field: "remoteVersion", rule: "must be at most 9007199254740991")) {
            try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: FieldRules.maximumRemoteVersion + 1)
        }
        #expect(try fixture.store.trip(id: trip.id).syncState == .pendingUpload)
    }
}
