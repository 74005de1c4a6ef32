import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// Sync metadata: every change lands in the same transaction as its `syncState` and `updatedAt`,
/// stamped by the injected clock.
struct SyncTests {
    /// A trip the server has acknowledged at `remoteVersion` 1.
    private func uploadedTrip(_ fixture: StoreFixture) throws -> Trip {
        let trip = try fixture.addTrip()
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 1)
        return try fixture.store.trip(id: trip.id)
    }

    @Test func acknowledgeMarksTheRecordSynchronized() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        #expect(try fixture.store.syncLedger.pendingChanges() == [
            PendingChange(kind: .trip, id: trip.id.text, syncState: .pendingUpload, remoteVersion: nil, updatedAt: trip.updatedAt),
        ])

        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 3, expectedUpdatedAt: trip.updatedAt.utcStamp)

        let synchronized = try fixture.store.trip(id: trip.id)
        #expect(synchronized.syncState == .synchronized)
        #expect(synchronized.remoteVersion == 3)
        #expect(synchronized.updatedAt == trip.updatedAt, "acknowledging is not an edit")
        #expect(try fixture.store.syncLedger.pendingChanges() == [])
        #expect(try fixture.store.counts().pendingChanges == 0)
    }

    /// A saved batch goes without its pages being zeroed (a push wrote each page of its batches
    /// twice), and the connection's `secure_delete` is what it was for everything else.
    @Test(arguments: ["ON", "OFF", "FAST"])
    func removingASavedBatchLeavesTheConnectionsSecureDeleteAsItWas(setting: String) throws {
        let fixture = try StoreFixture()
        let ledger = fixture.store.syncLedger
        try fixture.store.connection.execute("PRAGMA secure_delete = \(setting)")
        let before = try fixture.store.connection.integer("PRAGMA secure_delete")
        try ledger.saveOutgoing(mutationID: "m1", request: Array(String(repeating: "x", count: 40_000).utf8), local: Array("[]".utf8))
        try fixture.store.writeTransaction { try ledger.removeOutgoing(mutationID: "m1") }
        #expect(try ledger.outgoing() == nil)
        #expect(try fixture.store.connection.integer("PRAGMA secure_delete") == before)
    }

    /// A sync's push or pull checkpoints the WAL at 64 MiB, not at every commit, and the
    /// connection is as it was afterwards, when the body throws too.
    @Test(arguments: [false, true])
    func aSyncCheckpointsTheLogLessOftenAndPutsTheSettingBack(throwing: Bool) throws {
        struct Thrown: Error {}
        let fixture = try StoreFixture()
        let connection = fixture.store.connection
        let before = try connection.integer("PRAGMA wal_autocheckpoint")
        do {
            try fixture.store.syncLedger.withSyncCache(kibibytes: 8 << 10) {
                #expect(try connection.integer("PRAGMA wal_autocheckpoint") == Int64(SyncLedger.syncCheckpointPages))
                if throwing { throw Thrown() }
            }
            #expect(!throwing)
        } catch is Thrown {
            #expect(throwing)
        }
        #expect(try connection.integer("PRAGMA wal_autocheckpoint") == before)
    }

    @Test func everyEditMakesTheRecordPendingUploadWithANewStamp() throws {
        let fixture = try StoreFixture()
        let trip = try uploadedTrip(fixture)
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        try fixture.store.syncLedger.acknowledge(kind: .place, id: place.id.text, remoteVersion: 1)

        let edits: [(String, () throws -> (SyncState, Int64?, String))] = [
            ("name", { let t = try fixture.store.editTrip(id: trip.id, changes: TripChanges(name: "Lisboa")); return (t.syncState, t.remoteVersion, t.updatedAt.utcStamp) }),
            ("notes", { let t = try fixture.store.editTrip(id: trip.id, changes: TripChanges(notes: "n")); return (t.syncState, t.remoteVersion, t.updatedAt.utcStamp) }),
            ("dates", { let t = try fixture.store.editTrip(id: trip.id, changes: TripChanges(endDate: try day("2026-12-20"))); return (t.syncState, t.remoteVersion, t.updatedAt.utcStamp) }),
            ("visited", { let p = try fixture.store.setVisited(placeId: place.id); return (p.syncState, p.remoteVersion, p.updatedAt.utcStamp) }),
        ]
        for (what, edit) in edits {
            let stamp = fixture.clock.advance().utcStamp
            let (state, version, updatedAt) = try edit()
            #expect(state == .pendingUpload, "\(what)")
            #expect(version == 1, "\(what): the server's version is kept until it acknowledges again")
            #expect(updatedAt == stamp, "\(what)")
        }
        #expect(try fixture.store.trip(id: trip.id).updatedAt.utcStamp == "2026-11-30T23:12:20.123Z")
        #expect(try fixture.store.syncLedger.pendingChanges().map(\.kind) == [.trip, .place])
    }

    @Test(arguments: [
        TripChanges(),
        TripChanges(name: "Lisbon"),
        TripChanges(name: "  Lisbon  "),
        TripChanges(startDate: CivilDate("2026-12-12"), notes: ""),
    ])
    func editThatChangesNothingLeavesSyncMetadataAlone(changes: TripChanges) throws {
        let fixture = try StoreFixture()
        let trip = try uploadedTrip(fixture)
        fixture.clock.advance()
        #expect(try fixture.store.editTrip(id: trip.id, changes: changes) == trip)
        #expect(try fixture.store.trip(id: trip.id) == trip)
        #expect(try fixture.store.syncLedger.pendingChanges() == [])
    }

    @Test func editWithAStaleExpectedStampIsAConflictAndChangesNothing() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        fixture.clock.advance()
        let changedElsewhere = try fixture.store.editTrip(id: trip.id, changes: TripChanges(notes: "other process"))

        let error = try #require(throws: StoreError.self) {
            try fixture.store.editTrip(id: trip.id, changes: TripChanges(name: "Mine"), expectedUpdatedAt: trip.updatedAt)
        }
        guard case .conflict(let message) = error else {
            Issue.record("expected .conflict, got \(error)")
            return
        }
        #expect(message.contains("nothing was changed"))
        #expect(try fixture.store.trip(id: trip.id) == changedElsewhere)
        let mine = try fixture.store.editTrip(id: trip.id, changes: TripChanges(name: "Mine"), expectedUpdatedAt: changedElsewhere.updatedAt)
        #expect(mine.name == "Mine")
    }

    // MARK: - Deleting

    @Test func deletingARecordNeverUploadedTrashesItWithItsChildrenAndTellsTheServerNothing() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        _ = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .flight, title: "TP 1351"))

        #expect(try fixture.store.deleteTrip(id: trip.id).syncState == .pendingUpload)

        for table in ["trips", "places", "bookings"] { #expect(try fixture.rowCount(table) == 1, "\(table): in the trash") }
        #expect(try fixture.store.syncLedger.pendingChanges() == [])
        #expect(try fixture.store.counts().pendingChanges == 0)
    }

    /// An uploaded trip with an uploaded place and a booking the server never saw: deleting the
    /// trip tombstones what the server knows and keeps what it does not in the trash, untold.
    @Test func deletingAnUploadedTripLeavesHiddenTombstones() throws {
        let fixture = try StoreFixture()
        let trip = try uploadedTrip(fixture)
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        try fixture.store.syncLedger.acknowledge(kind: .place, id: place.id.text, remoteVersion: 1)
        _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .flight, title: "TP 1351"))
        let stamp = fixture.clock.advance().utcStamp

        #expect(try fixture.store.deleteTrip(id: trip.id).syncState == .pendingDeletion)

        #expect(try fixture.store.trips() == [])
        #expect(throws: StoreError.notFound(kind: .trip, id: trip.id.text)) { try fixture.store.trip(id: trip.id) }
        #expect(throws: StoreError.notFound(kind: .trip, id: trip.id.text)) { try fixture.store.places(tripId: trip.id) }
        #expect(throws: StoreError.notFound(kind: .trip, id: trip.id.text)) { try fixture.store.deleteTrip(id: trip.id) }
        #expect(throws: StoreError.notFound(kind: .trip, id: trip.id.text)) {
            try fixture.store.editTrip(id: trip.id, changes: TripChanges(name: "Zombie"))
        }
        #expect(try fixture.store.connection.integer("SELECT count(*) FROM bookings WHERE trashed_with = ?", [.text(trip.id.text)]) == 1,
                "never uploaded: in the trash with its trip, not pending")
        #expect(try fixture.store.counts() == StoreCounts(trips: 0, places: 0, bookings: 0, attachments: 0, tombstones: 2, pendingChanges: 2))
        #expect(try Set(fixture.store.syncLedger.pendingChanges().map { "\($0.kind) \($0.syncState) \($0.remoteVersion ?? 0) \($0.updatedAt.utcStamp)" }) == [
            "trip pendingDeletion 1 \(stamp)", "place pendingDeletion 1 \(stamp)",
        ])
    }

    @Test func deletingAnUploadedPlaceOrBookingTombstonesIt() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: nil)
        let booking = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Hotel"))
        try fixture.store.syncLedger.acknowledge(kind: .place, id: place.id.text, remoteVersion: 2)
        try fixture.store.syncLedger.acknowledge(kind: .booking, id: booking.id.text, remoteVersion: 2)

        #expect(try fixture.store.deletePlace(id: place.id).syncState == .pendingDeletion)
        #expect(try fixture.store.deleteBooking(id: booking.id).syncState == .pendingDeletion)

        #expect(try fixture.store.places(tripId: trip.id) == [])
        #expect(try fixture.store.bookings(tripId: trip.id) == [])
        #expect(throws: StoreError.notFound(kind: .place, id: place.id.text)) { try fixture.store.setVisited(placeId: place.id) }
        #expect(throws: StoreError.notFound(kind: .place, id: place.id.text)) { try fixture.store.deletePlace(id: place.id) }
        #expect(try fixture.store.counts().tombstones == 2)
        #expect(try fixture.store.resolveAnyID(place.id.text) == (kind: .place, id: place.id.text), "sync commands still reach tombstones")
    }

    @Test func acknowledgingAPurgedTombstoneRemovesItForGood() throws {
        let fixture = try StoreFixture()
        let trip = try uploadedTrip(fixture)
        try fixture.store.deleteTrip(id: trip.id)
        try fixture.store.trash.queuePurge([(.trip, trip.id.text)])
        #expect(try fixture.store.trash.trashEntries() == [], "only its trash entry went")
        #expect(try fixture.store.syncLedger.pendingChanges().map(\.syncState) == [.pendingDeletion])

        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 2)

        #expect(try fixture.rowCount("trips") == 0)
        #expect(try fixture.store.counts() == StoreCounts(trips: 0, places: 0, bookings: 0, attachments: 0, tombstones: 0, pendingChanges: 0))
        #expect(throws: StoreError.notFound(kind: .trip, id: trip.id.text)) {
            try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 3)
        }
    }

    // MARK: - Acknowledging

    @Test func acknowledgingAfterALaterEditIsAConflict() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        let uploaded = trip.updatedAt
        fixture.clock.advance()
        let edited = try fixture.store.editTrip(id: trip.id, changes: TripChanges(notes: "edited during upload"))

        let error = try #require(throws: StoreError.self) {
            try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 1, expectedUpdatedAt: uploaded.utcStamp)
        }
        guard case .conflict(let message) = error else {
            Issue.record("expected .conflict, got \(error)")
            return
        }
        #expect(message.contains("stays pending"))
        #expect(try fixture.store.trip(id: trip.id) == edited)
    }

    @Test func remoteVersionNeverGoesBack() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 5)
        let edited = try fixture.store.editTrip(id: trip.id, changes: TripChanges(notes: "x"))

        #expect(throws: StoreError.invalidData("trip \(trip.id) is already at remote version 5; refusing to go back to 4")) {
            try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 4)
        }
        #expect(try fixture.store.trip(id: trip.id) == edited)
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 6)
        #expect(try fixture.store.trip(id: trip.id).remoteVersion == 6)
    }

    @Test(arguments: [0, -1] as [Int64])
    func remoteVersionMustBePositive(version: Int64) throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        #expect(throws: StoreError.invalidField(field: "remoteVersion", rule: "must be a positive integer")) {
            try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: version)
        }
        #expect(try fixture.store.trip(id: trip.id).syncState == .pendingUpload)
    }

    @Test func acknowledgingAnUnknownRecordIsNotFound() throws {
        let fixture = try StoreFixture()
        let id = Identifier.make()
        #expect(throws: StoreError.notFound(kind: .booking, id: id)) {
            try fixture.store.syncLedger.acknowledge(kind: .booking, id: id, remoteVersion: 1)
        }
    }

    // MARK: - Failed uploads

    @Test func markFailedKeepsTheRecordPendingAsFailed() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        try fixture.store.syncLedger.markFailed(kind: .trip, id: trip.id.text)

        let failed = try fixture.store.trip(id: trip.id)
        #expect(failed.syncState == .failed)
        #expect(failed.updatedAt == trip.updatedAt)
        #expect(try fixture.store.syncLedger.pendingChanges().map(\.syncState) == [.failed])
        #expect(try fixture.store.counts().pendingChanges == 1)

        fixture.clock.advance()
        #expect(try fixture.store.editTrip(id: trip.id, changes: TripChanges(name: "Retry")).syncState == .pendingUpload)
        try fixture.store.syncLedger.markFailed(kind: .trip, id: trip.id.text)
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 1)
        #expect(try fixture.store.trip(id: trip.id).syncState == .synchronized)
    }

    @Test func markFailedRefusesARecordThatIsNotWaitingForUpload() throws {
        let fixture = try StoreFixture()
        let trip = try uploadedTrip(fixture)
        let error = try #require(throws: StoreError.self) { try fixture.store.syncLedger.markFailed(kind: .trip, id: trip.id.text) }
        guard case .invalidData(let message) = error else {
            Issue.record("expected .invalidData, got \(error)")
            return
        }
        #expect(message.contains("not waiting for upload"))
        #expect(try fixture.store.trip(id: trip.id) == trip)

        try fixture.store.deleteTrip(id: trip.id)
        #expect(throws: StoreError.self) { try fixture.store.syncLedger.markFailed(kind: .trip, id: trip.id.text) }
        #expect(try fixture.store.syncLedger.pendingChanges().map(\.syncState) == [.pendingDeletion])

        let unknown = Identifier.make()
        #expect(throws: StoreError.notFound(kind: .trip, id: unknown)) { try fixture.store.syncLedger.markFailed(kind: .trip, id: unknown) }
    }

    @Test func pendingChangesListsOldestChangeFirstAcrossKinds() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        fixture.clock.advance()
        let booking = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .train, title: "Train"))
        fixture.clock.advance()
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Place", city: nil)
        fixture.clock.advance()
        try fixture.store.editTrip(id: trip.id, changes: TripChanges(notes: "latest"))

        #expect(try fixture.store.syncLedger.pendingChanges().map(\.id) == [booking.id.text, place.id.text, trip.id.text])
    }

    @Test func stampsComeFromTheInjectedClockThroughStoreInit() throws {
        let fixture = try StoreFixture()
        let clock = TestClock(Timestamp(secondsSinceEpoch: 0))
        let store = Store(connection: fixture.store.connection, clock: { clock.now() })
        let trip = try store.addTrip(TripDraft(name: "Epoch", startDate: try day("1970-01-01"), endDate: try day("1970-01-01")))
        #expect(trip.updatedAt.utcStamp == "1970-01-01T00:00:00.000Z")
    }
}
