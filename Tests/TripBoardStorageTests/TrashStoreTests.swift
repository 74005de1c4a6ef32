import Testing
@testable import TripBoardStorage
import TripBoardModel
import TripBoardTestSupport

/// The trash in the store: what a deletion takes, what a restore brings back, what a purge keeps
/// for sync, and when the next writer purges.
struct TrashStoreTests {
    /// A trip with a place and a booking (and, for `uploaded`, the server's versions of all three).
    static func trip(_ fixture: StoreFixture, uploaded: Bool = false) throws -> (Trip, Place, Booking) {
        let trip = try fixture.addTrip()
        let place = try fixture.store.addPlace(tripId: trip.id, name: "Belém Tower", city: "Lisbon")
        let booking = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .flight, title: "TP 1351"))
        if uploaded {
            for (kind, id) in [(RecordKind.trip, trip.id.text), (.place, place.id.text), (.booking, booking.id.text)] {
                try fixture.store.syncLedger.acknowledge(kind: kind, id: id, remoteVersion: 1)
            }
        }
        return (trip, place, booking)
    }

    @Test func aDeletedTripIsOneEntryHoldingWhatWasLiveUnderIt() throws {
        let fixture = try StoreFixture()
        let (trip, place, booking) = try Self.trip(fixture)
        let earlier = try fixture.store.addPlace(tripId: trip.id, name: "LX Factory", city: nil)
        try fixture.store.deletePlace(id: earlier.id)
        fixture.clock.advance()

        let entry = try fixture.store.deleteTrip(id: trip.id)

        #expect(entry.contents == TrashEntry.Contents(places: 1, bookings: 1, attachments: 0))
        #expect(entry.trashedAt.utcStamp == fixture.clock.stamp)
        #expect(entry.purgeAfter.utcStamp == "2026-12-30T23:12:18.123Z")
        let entries = try fixture.store.trash.trashEntries()
        #expect(entries.map { "\($0.kind) \($0.name) \($0.parentName ?? "-")" } == ["trip Lisbon -", "place LX Factory Lisbon"],
                "newest first; the place deleted on its own earlier stays its own entry")
        #expect(try fixture.store.trips() == [])
        #expect(throws: StoreError.notFound(kind: .trip, id: trip.id.text)) { try fixture.store.resolveID(.trip, trip.id.text) }
        #expect(throws: StoreError.notFound(kind: .place, id: place.id.text)) { try fixture.store.setVisited(placeId: place.id) }
        #expect(throws: StoreError.notFound(kind: .trip, id: trip.id.text)) {
            try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .car, title: "Car"))
        }
        #expect(try fixture.store.resolveAnyID(booking.id.text) == (kind: .booking, id: booking.id.text), "sync reaches it")
    }

    @Test func restoringBringsBackTheSameSetAndLeavesSeparateEntriesAlone() throws {
        let fixture = try StoreFixture()
        let (trip, place, booking) = try Self.trip(fixture)
        let earlier = try fixture.store.addPlace(tripId: trip.id, name: "LX Factory", city: nil)
        try fixture.store.deletePlace(id: earlier.id)
        try fixture.store.deleteTrip(id: trip.id)

        #expect(throws: StoreError.self) { try fixture.store.trash.restoreFromTrash(.place, id: earlier.id.text) }
        let refused = try #require(throws: StoreError.self) { try fixture.store.trash.resolveTrashEntry(booking.id.text) }
        #expect(refused.description.contains("went to the trash with trip \(trip.id)"), "\(refused)")
        fixture.clock.advance()

        #expect(try fixture.store.trash.resolveTrashEntry(String(trip.id.text.prefix(6))) == (kind: .trip, id: trip.id.text))
        try fixture.store.trash.restoreFromTrash(.trip, id: trip.id.text)

        #expect(try fixture.store.places(tripId: trip.id).map(\.id) == [place.id])
        #expect(try fixture.store.bookings(tripId: trip.id).map(\.id) == [booking.id])
        #expect(try fixture.store.trash.trashEntries().map(\.id) == [earlier.id.text])
        try fixture.store.trash.restoreFromTrash(.place, id: earlier.id.text)
        #expect(try fixture.store.places(tripId: trip.id).count == 2)
        #expect(try fixture.store.trip(id: trip.id).updatedAt.utcStamp == fixture.clock.stamp)
    }

    /// The server had them: deleting tombstones them at once; restoring makes them new versions.
    @Test func uploadedRecordsAreTombstonedWhenTrashedAndPendingUploadWhenRestored() throws {
        let fixture = try StoreFixture()
        let (trip, _, _) = try Self.trip(fixture, uploaded: true)
        try fixture.store.deleteTrip(id: trip.id)
        #expect(try fixture.store.syncLedger.pendingChanges().map { "\($0.kind) \($0.syncState) \($0.remoteVersion ?? 0)" }.sorted() == [
            "booking pendingDeletion 1", "place pendingDeletion 1", "trip pendingDeletion 1",
        ])
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 2)
        #expect(try fixture.store.trash.trashEntries().first?.syncState == .synchronized, "acknowledged: still in the trash")

        try fixture.store.trash.restoreFromTrash(.trip, id: trip.id.text)

        #expect(try Set(fixture.store.syncLedger.pendingChanges().map { "\($0.kind) \($0.syncState) \($0.remoteVersion ?? 0)" }) == [
            "booking pendingUpload 1", "place pendingUpload 1", "trip pendingUpload 2",
        ])
    }

    /// Purged: what the server has still to hear of stays as a plain tombstone; the rest goes.
    @Test func aPurgeKeepsUnacknowledgedTombstonesAndRemovesTheRest() throws {
        let fixture = try StoreFixture()
        let (trip, place, booking) = try Self.trip(fixture, uploaded: true)
        let local = try fixture.store.addPlace(tripId: trip.id, name: "Never uploaded", city: nil)
        try fixture.store.deleteTrip(id: trip.id)
        try fixture.store.syncLedger.acknowledge(kind: .booking, id: booking.id.text, remoteVersion: 2)

        try fixture.store.trash.queuePurge([(.trip, trip.id.text)])

        #expect(try fixture.store.trash.trashEntries() == [])
        let rows = try fixture.store.connection.statement("""
            SELECT id, sync_state, trashed_at IS NULL AND trashed_with IS NULL FROM trips UNION ALL
            SELECT id, sync_state, trashed_at IS NULL AND trashed_with IS NULL FROM places UNION ALL
            SELECT id, sync_state, trashed_at IS NULL AND trashed_with IS NULL FROM bookings
            """).rows { "\($0.text(0)) \($0.text(1)) \($0.integer(2))" }
        #expect(Set(rows) == ["\(trip.id) pendingDeletion 1", "\(place.id) pendingDeletion 1"],
                "the acknowledged booking and the never-uploaded place are gone: \(rows), \(local.id)")
        try fixture.store.syncLedger.acknowledge(kind: .place, id: place.id.text, remoteVersion: 2)
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: trip.id.text, remoteVersion: 2)
        #expect(try fixture.rowCount("trips") + fixture.rowCount("places") + fixture.rowCount("bookings") == 0)
    }

    @Test(arguments: [(29, false), (31, true)])
    func theNextWriterPurgesWhatWasTrashedMoreThan30DaysAgo(days: Int64, purged: Bool) throws {
        let fixture = try StoreFixture()
        let (trip, _, _) = try Self.trip(fixture)
        try fixture.store.deleteTrip(id: trip.id)
        fixture.clock.advance(milliseconds: days * 86_400_000)

        // The next writer opens the container and runs its chore (`Chore.trashPurge`).
        let next = try Container.openForWriting(at: fixture.temporary.child("container"), options: fixture.clock.options)
        Trash.tidyUp(container: next)

        #expect(try next.store.trash.trashEntries().isEmpty == purged)
        #expect(try fixture.rowCount("trips") == (purged ? 0 : 1))
        #expect(try fixture.rowCount("places") + fixture.rowCount("bookings") == (purged ? 0 : 2))
    }

    @Test func aChildCannotBeRestoredIntoATripThatIsGoneForGood() throws {
        let fixture = try StoreFixture()
        let (trip, place, _) = try Self.trip(fixture)
        try fixture.store.deletePlace(id: place.id)
        try fixture.store.deleteTrip(id: trip.id)
        try fixture.store.trash.queuePurge([(.trip, trip.id.text)])
        #expect(try fixture.store.trash.trashEntries() == [], "the trip's purge took the place under it too")
        #expect(throws: StoreError.notInTrash(id: place.id.text)) { try fixture.store.trash.resolveTrashEntry(place.id.text) }
    }
}
