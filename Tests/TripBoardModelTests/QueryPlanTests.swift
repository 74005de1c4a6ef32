import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `EXPLAIN QUERY PLAN` of the hot queries on a store of this schema with trips in and out of the
/// trash: the widget's four lookups stay one index probe each (the plans docs/performance.md
/// shows), and what a writer asks on every open, and the 30-day purge, are probes of the trash's
/// partial indexes — never a scan of a table.
struct QueryPlanTests {
    /// The plan's detail lines, with `?1` and `?2` replaced by values of the types the code binds.
    static func plan(_ sql: String, _ store: Store, _ first: String = "'2026-12-01T00:00:00.000Z'",
                     _ second: String = "'2026-12-15'") throws -> [String] {
        let literal = sql.replacingOccurrences(of: "?1", with: first).replacingOccurrences(of: "?2", with: second)
            .replacingOccurrences(of: "?3", with: second)
        return try store.connection.statement("EXPLAIN QUERY PLAN " + literal).rows { $0.text(3) }
    }

    static func storeWithATrash() throws -> StoreFixture {
        let fixture = try StoreFixture()
        for index in 0..<40 {
            let trip = try fixture.addTrip("Trip \(index)", from: "2026-12-\(10 + index % 10)", to: "2026-12-2\(index % 10)")
            _ = try fixture.store.addBooking(BookingDraft(tripId: trip.id, kind: .hotel, title: "Hotel", startsAt: Timestamp.now()))
            if index % 4 == 0 { try fixture.store.deleteTrip(id: trip.id) }
        }
        return fixture
    }

    @Test(arguments: [
        (NextTrip.Query.longestTrip, "SEARCH trips USING INDEX trips_live_by_length"),
        (NextTrip.Query.tripInProgress, "SEARCH trips USING INDEX trips_live_by_start (start_date>? AND start_date<?)"),
        (NextTrip.Query.upcomingTrip, "SEARCH trips USING INDEX trips_live_by_start (start_date>?)"),
        (NextTrip.Query.nextBooking, "SEARCH bookings USING INDEX bookings_by_trip (trip_id=? AND starts_at_epoch>?)"),
    ])
    func theWidgetsLookupsAreOneIndexProbeEach(sql: String, expected: String) throws {
        let fixture = try Self.storeWithATrash()
        let secondIsAnInstant = sql == NextTrip.Query.nextBooking
        #expect(try Self.plan(sql, fixture.store, "'2026-12-01'", secondIsAnInstant ? "1796974500" : "'2026-12-15'") == [expected])
    }

    @Test func whatAWriterAsksOnOpeningIsAProbeOfTheTrashIndexes() throws {
        let fixture = try Self.storeWithATrash()
        let plan = try Self.plan(StoreTrash.trashWorkQuery, fixture.store).filter { $0.hasPrefix("SEARCH") || $0.hasPrefix("SCAN") && $0 != "SCAN CONSTANT ROW" }
        // The queue's partial index holds only queued rows: its scan stops at the first (EXISTS).
        #expect(plan == [
            "SCAN attachments USING INDEX attachments_deletion_queue",
            "SEARCH trips USING COVERING INDEX trips_trashed (trashed_at<?)",
            "SEARCH places USING COVERING INDEX places_trashed (trashed_at<?)",
            "SEARCH bookings USING COVERING INDEX bookings_trashed (trashed_at<?)",
            "SEARCH attachments USING COVERING INDEX attachments_trashed (trashed_at<?)",
        ])
        #expect(try Self.plan("SELECT id FROM trips WHERE trashed_at < ?1 AND trashed_with = id", fixture.store)
                == ["SEARCH trips USING INDEX trips_trashed (trashed_at<?)"])
        // An entry's members, through their parents' indexes (restoring, purging, thumbnails).
        let scope = StoreTrash.childScope(.attachment, of: .trip, liveOnly: false)
        #expect(try Self.plan("SELECT id FROM attachments WHERE \(scope) AND trashed_with = ?2", fixture.store, "'x'", "'x'")
                == ["SEARCH attachments USING INDEX attachments_by_booking (booking_id=?)",
                    "LIST SUBQUERY 1", "SEARCH bookings USING INDEX bookings_by_trip (trip_id=?)"])
        #expect(try Self.plan("SELECT id FROM places WHERE trip_id = ?2 AND trashed_with = ?2", fixture.store, "'x'", "'x'")
                == ["SEARCH places USING INDEX places_by_trip (trip_id=?)"])
    }

    /// `booking list --trip T`: the dated bookings in the index's order, then the undated ones;
    /// neither statement sorts (a sort holds every row of the trip in memory).
    @Test func aTripsBookingsAreListedWithoutASort() throws {
        let fixture = try Self.storeWithATrash()
        #expect(try Self.plan(Store.datedBookingsOfTrip, fixture.store, "'x'")
                == ["SEARCH bookings USING INDEX bookings_by_trip (trip_id=? AND starts_at_epoch>?)"])
        #expect(try Self.plan(Store.undatedBookingsOfTrip, fixture.store, "'x'")
                == ["SEARCH bookings USING INDEX bookings_by_trip (trip_id=? AND starts_at_epoch=?)"])
    }

    @Test func liveListsAndCountsUseThePartialIndexes() throws {
        let fixture = try Self.storeWithATrash()
        #expect(try Self.plan("SELECT count(*) FROM trips WHERE \(RecordRows.live)", fixture.store)
                == ["SCAN trips USING COVERING INDEX trips_live_by_start"])
        #expect(try Self.plan("SELECT id FROM trips WHERE \(RecordRows.live) ORDER BY start_date, end_date, name, id", fixture.store)
                .first == "SCAN trips USING COVERING INDEX trips_live_by_start")
        #expect(try Self.plan("SELECT id FROM trips WHERE \(SyncLedger.pending)", fixture.store)
                == ["SCAN trips USING INDEX trips_pending"])
        // A push batch: the oldest pending records of a kind, read in the index's order (no sort);
        // a batch in flight is left out by a list made once, and a salvage's unedited
        // placeholders by two primary-key probes per record.
        for kind in SyncRecord.kinds {
            let plan = try Self.plan("SELECT id FROM \(kind.table) " + SyncLedger.pendingInPushOrder(kind), fixture.store, "10", "'[]'")
            #expect(plan == ["SCAN \(kind.table) USING INDEX \(kind.table)_pending", "LIST SUBQUERY 3", "SCAN json_each VIRTUAL TABLE INDEX 1:",
                             "CORRELATED SCALAR SUBQUERY 2",
                             "SEARCH p USING INDEX sqlite_autoindex_sync_placeholders_1 (kind=? AND id=?)", "CORRELATED SCALAR SUBQUERY 1",
                             "SEARCH e USING INDEX sqlite_autoindex_sync_field_edits_1 (kind=? AND id=?)"], "\(plan)")
        }
        #expect(try Self.plan("""
            SELECT id FROM attachments WHERE content_hash = ?1 AND state = 'missing' AND byte_count = ?2
            AND sync_state <> 'pendingDeletion' AND trashed_at IS NULL
            """, fixture.store, "'x'", "1") == ["SEARCH attachments USING INDEX attachments_missing (content_hash=?)"])
    }

    /// Search ranks bare rowids (one sort, in the co-routine), then reads each hit's row in that
    /// order: the left joins keep the ranked hits the outer loop, and nothing sorts them again.
    @Test func searchSortsOnlyTheRankedRowids() throws {
        let fixture = try Self.storeWithATrash()
        #expect(try Self.plan(SearchIndex.searchSQL, fixture.store, "'\"trip\"*'", "-1") == [
            "CO-ROUTINE s",
            "SCAN search_index VIRTUAL TABLE INDEX 0:M2",
            "USE TEMP B-TREE FOR ORDER BY",
            "SCAN s",
            "SEARCH t USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN",
            "SEARCH p USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN",
            "SEARCH b USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN",
            "CORRELATED SCALAR SUBQUERY 1",
            "SEARCH trips USING INDEX sqlite_autoindex_trips_1 (id=?)",
        ])
    }
}
