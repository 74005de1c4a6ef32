import Testing
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardModel
import TripBoardTestSupport

/// Schema version 1 → 2 (the trash): a store the previous build made keeps every row, and ends
/// with exactly the schema a new store has.
struct SchemaMigrationTests {
    static let trip = "11111111-1111-4111-8111-111111111111"
    static let deadTrip = "22222222-2222-4222-8222-222222222222"
    static let booking = "33333333-3333-4333-8333-333333333333"
    static let deadBooking = "44444444-4444-4444-8444-444444444444"
    static let place = "55555555-5555-4555-8555-555555555555"
    static let stamp = "2026-11-01T10:00:00.000Z"

    /// What version 1 could hold: live records, tombstones, an attachment still live under a
    /// tombstoned booking (v1 never tombstoned attachments), an interrupted deletion, a finished
    /// one kept as a tombstone, a missing file.
    static let v1Rows = """
        INSERT INTO trips VALUES ('\(trip)', 'Lisbon', '2026-12-12', '2026-12-15', 'notes', 'pendingUpload', NULL, '\(stamp)');
        INSERT INTO trips VALUES ('\(deadTrip)', 'Gone', '2026-01-01', '2026-01-02', '', 'pendingDeletion', 3, '\(stamp)');
        INSERT INTO places VALUES ('\(place)', '\(trip)', 'Belém', 'Lisbon', 1, 'synchronized', 2, '\(stamp)');
        INSERT INTO places VALUES ('66666666-6666-4666-8666-666666666666', '\(deadTrip)', 'Old', NULL, 0, 'pendingDeletion', 1, '\(stamp)');
        INSERT INTO bookings VALUES ('\(booking)', '\(trip)', 'flight', 'TP 1351', '2026-12-12T07:35:00+00:00', 1796974500, 'X7K2QP',
                                     'failed', NULL, '\(stamp)');
        INSERT INTO bookings VALUES ('\(deadBooking)', '\(trip)', 'hotel', 'Hotel', NULL, NULL, NULL, 'pendingDeletion', 4, '\(stamp)');
        INSERT INTO attachments VALUES ('aaaaaaa1-0000-4000-8000-000000000001', '\(booking)', 'a.pdf', 'application/pdf', 10, 'h1', 1,
                                        'attachments/aa/aaaaaaa1-0000-4000-8000-000000000001.pdf', 'present', '\(stamp)', 'pendingUpload', NULL, '\(stamp)');
        INSERT INTO attachments VALUES ('aaaaaaa2-0000-4000-8000-000000000002', '\(booking)', 'b.pdf', 'application/pdf', 10, 'h2', 1,
                                        'attachments/aa/aaaaaaa2-0000-4000-8000-000000000002.pdf', 'missing', '\(stamp)', 'synchronized', 5, '\(stamp)');
        INSERT INTO attachments VALUES ('aaaaaaa3-0000-4000-8000-000000000003', '\(booking)', 'c.pdf', 'application/pdf', 10, 'h3', 1,
                                        'attachments/aa/aaaaaaa3-0000-4000-8000-000000000003.pdf', 'deleting', '\(stamp)', 'pendingUpload', NULL, '\(stamp)');
        INSERT INTO attachments VALUES ('aaaaaaa4-0000-4000-8000-000000000004', '\(booking)', 'd.pdf', 'application/pdf', 10, 'h4', 1,
                                        'attachments/aa/aaaaaaa4-0000-4000-8000-000000000004.pdf', 'deleting', '\(stamp)', 'pendingDeletion', 6, '\(stamp)');
        INSERT INTO attachments VALUES ('aaaaaaa5-0000-4000-8000-000000000005', '\(deadBooking)', 'e.pdf', 'application/pdf', 10, 'h5', NULL,
                                        'attachments/aa/aaaaaaa5-0000-4000-8000-000000000005.pdf', 'present', '\(stamp)', 'synchronized', 7, '\(stamp)');
        """

    static let v1Columns = [
        "trips": "id, name, start_date, end_date, notes, remote_version",
        "places": "id, trip_id, name, city, visited, sync_state, remote_version, updated_at",
        "bookings": "id, trip_id, kind, title, starts_at, starts_at_epoch, reference, sync_state, remote_version, updated_at",
        "attachments": "rowid, id, booking_id, original_filename, content_type, byte_count, content_hash, page_count, relative_path, state, created_at, remote_version, updated_at",
    ]

    static func dump(_ connection: Connection) throws -> [String] {
        var lines: [String] = []
        for (table, columns) in v1Columns.sorted(by: { $0.key < $1.key }) {
            lines += try connection.statement("SELECT '\(table)', \(columns.split(separator: ",").map { "quote(\($0))" }.joined(separator: " || '|' || ")) FROM \(table) ORDER BY rowid")
                .rows { $0.text(0) + " " + $0.text(1) }
        }
        return lines
    }

    static func v1Store(_ temporary: TemporaryDirectory) throws -> Connection {
        let connection = try Connection(path: temporary.child("v1.sqlite"), mode: .readWriteCreate)
        try connection.execute("PRAGMA foreign_keys = ON")
        try Schema.migrate(connection, steps: [Schema.migrations[0]])
        try connection.execute(v1Rows)
        #expect(try connection.userVersion() == 1)
        return connection
    }

    @Test func aVersion1StoreKeepsEveryRowAndItsValues() throws {
        let temporary = try TemporaryDirectory()
        let connection = try Self.v1Store(temporary)
        let before = try Self.dump(connection)

        try Schema.migrate(connection)

        #expect(try connection.userVersion() == Store.schemaVersion)
        #expect(try Self.dump(connection) == before)
        #expect(try Store(connection: connection).integrityProblems() == [])
        #expect(try connection.integer("SELECT count(*) FROM trips WHERE trashed_at IS NOT NULL") == 0)
    }

    @Test func version1LeftoversJoinTheQueueOrTheTrash() throws {
        let temporary = try TemporaryDirectory()
        let connection = try Self.v1Store(temporary)
        try Schema.migrate(connection)
        let store = Store(connection: connection)
        let rows = try connection.statement("""
            SELECT id, state, sync_state, trashed_at IS NOT NULL, ifnull(trashed_with, '-') FROM attachments ORDER BY id
            """).rows { "\($0.text(0).prefix(8)) \($0.text(1)) \($0.text(2)) \($0.integer(3)) \($0.text(4).prefix(8))" }
        #expect(rows == [
            "aaaaaaa1 present pendingUpload 0 -",
            "aaaaaaa2 missing synchronized 0 -",
            "aaaaaaa3 deleting pendingUpload 1 -",  // interrupted: queued for the next writer
            "aaaaaaa4 deleting pendingDeletion 0 -",  // finished, waiting for the server
            "aaaaaaa5 present pendingDeletion 1 aaaaaaa5",  // its booking was deleted: in the trash, told to the server
        ])
        #expect(try store.trash.queuedAttachments().map { $0.id.short } == ["aaaaaaa3"])
        #expect(try store.trash.trashEntries().map { "\($0.kind) \($0.name) \($0.parentName ?? "-")" } == ["attachment e.pdf Hotel"])
        #expect(try store.allAttachments().count == 4, "the finished tombstone names no file")
        #expect(try store.syncLedger.pendingChanges().map(\.kind).filter { $0 == .attachment }.count == 3)
    }

    @Test func aMigratedStoreHasExactlyTheSchemaOfANewOne() throws {
        let temporary = try TemporaryDirectory()
        let migrated = try Self.v1Store(temporary)
        try Schema.migrate(migrated)
        let fresh = try Connection(path: temporary.child("new.sqlite"), mode: .readWriteCreate)
        try Schema.migrate(fresh)
        func schema(_ connection: Connection) throws -> [String] {
            try connection.statement("SELECT type || ' ' || name || ' ' || ifnull(sql, '') FROM sqlite_master ORDER BY name").rows { $0.text(0) }
        }
        #expect(try schema(migrated) == schema(fresh))
        #expect(try schema(fresh).contains { $0.hasPrefix("index sqlite_autoindex_attachments_1") }, "the rebuilt table's own name")
    }

    /// Deleting a booking row never takes attachment rows (and so their files) with it.
    /// Step 3 made an old all-day booking over at its start (00:00 UTC of its day); step 18 makes
    /// it over at its day's end, as every booking written since is, and leaves the others alone.
    @Test func anOldAllDayBookingIsOverAtItsDaysEnd() throws {
        let temporary = try TemporaryDirectory()
        let connection = try Self.v1Store(temporary)
        try connection.execute("""
            INSERT INTO bookings VALUES ('77777777-7777-4777-8777-777777777777', '\(Self.trip)', 'hotel', 'Stay', '2026-12-13', 1797120000,
                                         NULL, 'pendingUpload', NULL, '\(Self.stamp)');
            """)
        try Schema.migrate(connection, steps: Array(Schema.migrations.prefix(17)))
        let overAt = "SELECT over_at_epoch FROM bookings WHERE id = ?"
        #expect(try connection.integer(overAt, [.text("77777777-7777-4777-8777-777777777777")]) == 1_797_120_000, "step 3 left it at its start")
        try Schema.migrate(connection)
        #expect(try connection.integer(overAt, [.text("77777777-7777-4777-8777-777777777777")]) == 1_797_206_400, "24:00 UTC of 13 Dec")
        #expect(try connection.integer(overAt, [.text(Self.booking)]) == 1_796_974_500, "a time is over at its start")
        let written = BookingTime.epochs(startsAt: BookingTime("2026-12-13"), endsAt: nil)
        #expect(written.overAt == 1_797_206_400, "what a booking written today holds")
    }

    @Test func aBookingWithALiveAttachmentCannotBeDeletedInSQL() throws {
        let temporary = try TemporaryDirectory()
        let connection = try Self.v1Store(temporary)
        try Schema.migrate(connection)
        #expect(throws: SQLiteError.self) { try connection.execute("DELETE FROM bookings WHERE id = '\(Self.booking)'") }
        #expect(throws: SQLiteError.self) { try connection.execute("DELETE FROM trips WHERE id = '\(Self.trip)'") }
        #expect(try connection.integer("SELECT count(*) FROM attachments") == 5)
        // The trashed one under the tombstone may lose its booking (acknowledging that deletion).
        try connection.execute("DELETE FROM bookings WHERE id = '\(Self.deadBooking)'")
        #expect(try connection.text("SELECT ifnull(booking_id, 'null') FROM attachments WHERE id LIKE 'aaaaaaa5%'") == "null")
    }
}
