import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// One test per fix from review; each failed before its fix.
struct RegressionTests {
    static let storeRelativePath = "container/store/TripBoard.sqlite"
    static let tripID = "7a1c0000-0000-4000-8000-000000000001"
    static let childID = "7a1c0000-0000-4000-8000-000000000002"

    /// Creates a container with one trip in its store and closes it.
    private func makeContainer(_ temporary: TemporaryDirectory) throws {
        let clock = TestClock()
        let container = try Container.openForWriting(at: temporary.child("container"), options: clock.options)
        _ = try container.store.addTrip(TripDraft(name: "Lisbon", startDate: try day("2026-12-12"), endDate: try day("2026-12-15")))
    }

    private func removeWALFiles(_ temporary: TemporaryDirectory) throws {
        for suffix in ["-wal", "-shm"] where temporary.exists(Self.storeRelativePath + suffix) {
            try FileManager.default.removeItem(atPath: temporary.child(Self.storeRelativePath + suffix))
        }
    }

    private func openForWriting(_ temporary: TemporaryDirectory) throws -> Container {
        try Container.openForWriting(at: temporary.child("container"), options: TestClock().options)
    }

    // MARK: - Import

    /// Before: the date check's own message, without the record or "nothing was imported".
    @Test func importWithTheEndBeforeTheStartNamesTheRecord() throws {
        let fixture = try StoreFixture()
        let json = #"{"trips": [{"name": "Backwards", "startDate": "2026-12-15", "endDate": "2026-12-12"}]}"#

        let error = try #require(throws: StoreError.self) {
            try fixture.store.importRecords(try ImportDocument.parse(Array(json.utf8)))
        }

        guard case .invalidData(let message) = error else {
            Issue.record("expected .invalidData, got \(error)")
            return
        }
        #expect(message.hasPrefix("trips[0]: "), "\(message)")
        #expect(message.contains("the end date 2026-12-12 is before the start date 2026-12-15"), "\(message)")
        #expect(message.hasSuffix("; nothing was imported"), "\(message)")
        #expect(try fixture.rowCount("trips") == 0)
    }

    /// Before: the foreign key accepted the child, which the server's acknowledgement of the
    /// trip's deletion would then silently drop.
    @Test(arguments: ["places", "bookings"])
    func importIntoADeletedTripIsRefusedAndAddsNothing(table: String) throws {
        let fixture = try StoreFixture()
        try fixture.insertTrip(id: Self.tripID, name: "Deleted", state: .synchronized, remoteVersion: 1)
        #expect(try fixture.store.deleteTrip(id: RecordID(Self.tripID)).syncState == .pendingDeletion)
        let live = try fixture.addTrip("Live")
        let record = table == "places"
            ? #"{"id": "\#(Self.childID)", "tripId": "\#(Self.tripID)", "name": "Tower"}"#
            : #"{"id": "\#(Self.childID)", "tripId": "\#(Self.tripID)", "kind": "hotel", "title": "Hotel"}"#
        let json = #"{"trips": [{"name": "New", "startDate": "2027-01-01", "endDate": "2027-01-02"}], "\#(table)": [\#(record)]}"#
        let before = try fixture.store.exportDocument(preferences: Preferences())

        let error = try #require(throws: StoreError.self) {
            try fixture.store.importRecords(try ImportDocument.parse(Array(json.utf8)))
        }

        guard case .invalidData(let message) = error else {
            Issue.record("expected .invalidData, got \(error)")
            return
        }
        let kind = table == "places" ? "place" : "booking"
        #expect(message.contains("\(kind) \(Self.childID) belongs to trip \(Self.tripID), which is deleted"), "\(message)")
        #expect(message.hasSuffix("nothing was imported"), "\(message)")
        #expect(try fixture.store.exportDocument(preferences: Preferences()) == before)
        #expect(try fixture.rowCount(table) == 0)
        #expect(try fixture.store.trips().map(\.id) == [live.id])
    }

    // MARK: - Refusing damaged stores untouched

    /// Before: a store emptied behind TripBoard's back was taken for a new one and migrated, so
    /// the loss went unnoticed.
    @Test func storeTruncatedToNothingIsCorruptAndLeftAsItWas() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        try #require(truncate(temporary.child(Self.storeRelativePath), 0) == 0)
        try removeWALFiles(temporary)

        let error = try #require(throws: StoreError.self) { try openForWriting(temporary) }

        guard case .corrupt(let path, _) = error else {
            Issue.record("expected .corrupt, got \(error)")
            return
        }
        #expect(path == temporary.child(Self.storeRelativePath))
        #expect(try temporary.bytes(Self.storeRelativePath) == [])
        #expect(try temporary.entries("container/store") == ["TripBoard.sqlite", "TripBoard.sqlite-key"], "no -wal, -shm or -journal")
    }

    enum Damage: String, Sendable, CaseIterable {
        /// `user_version` 99: written by a newer TripBoard.
        case newerSchema
        /// A WAL-mode header with an impossible page size (offset 16 = 3).
        case impossiblePageSize
    }

    /// Before: the store was opened read-write first, and SQLite created a -wal and -shm for a
    /// WAL-mode file before the refusal.
    @Test(arguments: Damage.allCases)
    func refusedStoreWithoutWALFilesGetsNone(damage: Damage) throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        switch damage {
        case .newerSchema:
            try openDatabaseFile(temporary.child(Self.storeRelativePath)).execute("PRAGMA user_version = 99")
        case .impossiblePageSize:
            let path = temporary.child(Self.storeRelativePath)
            // The header inside the seal: damage SQLite finds, not the VFS.
            try rewritePage(path, number: 1, key: try pageKey(ofDatabase: path)) { page in
                precondition(page[18] == 2 && page[19] == 2, "a WAL-mode store")
                page[16] = 0x00
                page[17] = 0x03
            }
        }
        try removeWALFiles(temporary)
        let storeBytes = try temporary.bytes(Self.storeRelativePath)

        let error = try #require(throws: StoreError.self) { try openForWriting(temporary) }

        switch (damage, error) {
        case (.newerSchema, .newerSchema(let path, found: 99, _)), (.impossiblePageSize, .corrupt(let path, _)):
            #expect(path == temporary.child(Self.storeRelativePath))
        default:
            Issue.record("\(damage): unexpected \(error)")
        }
        #expect(try temporary.entries("container/store") == ["TripBoard.sqlite", "TripBoard.sqlite-key"])
        #expect(try temporary.bytes(Self.storeRelativePath) == storeBytes)
    }

    /// Before: with a manifest, SQLite was asked to open the link (`unreadable`); without one,
    /// the message said only "not a regular file".
    @Test(arguments: [true, false])
    func storeThatIsASymbolicLinkIsUnusableSayingSo(withManifest: Bool) throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        try FileManager.default.moveItem(atPath: temporary.child(Self.storeRelativePath), toPath: temporary.child("elsewhere.sqlite"))
        try removeWALFiles(temporary)
        try temporary.makeSymbolicLink(Self.storeRelativePath, to: temporary.child("elsewhere.sqlite"))
        if !withManifest { try FileManager.default.removeItem(atPath: temporary.child("container/container.json")) }
        let target = try temporary.bytes("elsewhere.sqlite")

        let error = try #require(throws: ContainerError.self) { try openForWriting(temporary) }

        guard case .unusable(let path, let reason) = error else {
            Issue.record("expected .unusable, got \(error)")
            return
        }
        #expect(path == temporary.child(Self.storeRelativePath))
        #expect(reason.contains("symbolic link"), "\(reason)")
        #expect(error.description.contains("symbolic link"))
        #expect(try temporary.bytes("elsewhere.sqlite") == target)
        #expect(try temporary.entries() == ["container", "elsewhere.sqlite"])
        #expect(try temporary.entries("container/store") == ["TripBoard.sqlite", "TripBoard.sqlite-key"])
    }

    // MARK: - Preferences

    /// Before: one value that was not text or a flag made the whole file unreadable, so it was
    /// moved aside and every other preference was lost.
    @Test func preferenceOfAnUnexpectedTypeCostsOnlyItself() throws {
        let fixture = try StoreFixture()
        let file = "container/preferences/preferences.json"
        try fixture.temporary.write("""
            {"futureLimit": 5, "futureNested": {"a": [1, 2.5, null]}, "theme": 7, "currency": "JPY", "showsVisitedPlaces": false}
            """, to: file)
        var preferences = try PreferencesFile(container: fixture.container)

        let loaded = try preferences.load()

        #expect(loaded.explicitValues == [.currency: .text("JPY"), .showsVisitedPlaces: .flag(false)])
        #expect(loaded[.theme] == .text("system"))
        try #require(preferences.warnings.count == 1)
        #expect(preferences.warnings[0].contains("preference theme"), "\(preferences.warnings[0])")
        #expect(try fixture.temporary.entries("container/preferences") == ["preferences.json"], "not moved aside")

        try preferences.set(.mapStyle, to: .text("hybrid"))

        let raw = try #require(try JSONSerialization.jsonObject(with: Data(fixture.temporary.bytes(file))) as? [String: Any])
        #expect(raw["futureLimit"] as? Int == 5)
        #expect(raw["currency"] as? String == "JPY")
        #expect(raw["mapStyle"] as? String == "hybrid")
        let nested = try JSONValue.parse(try fixture.temporary.bytes(file))["futureNested"]
        #expect(nested == .object([("a", .array([.number("1"), .number("2.5"), .null]))]))
        var reader = try PreferencesFile(container: fixture.container)
        #expect(try reader.load().explicitValues == [.currency: .text("JPY"), .showsVisitedPlaces: .flag(false), .mapStyle: .text("hybrid")])
    }

    // MARK: - SQLite

    /// Before: text was bound with length -1, so SQLite stopped at the first NUL.
    @Test(arguments: ["before\u{0}after", "\u{0}", "\u{0}\u{0}x", "trailing\u{0}", "🥐\u{0}東京"])
    func textWithANulByteIsStoredWhole(text: String) throws {
        let temporary = try TemporaryDirectory()
        let connection = try Connection(path: temporary.child("test.sqlite"), mode: .readWriteCreate)
        try connection.execute("CREATE TABLE v (value)")
        try connection.statement("INSERT INTO v (value) VALUES (?)").run([.text(text)])

        let rows = try connection.statement("SELECT value, length(CAST(value AS BLOB)), typeof(value) FROM v").rows { row in
            (row.text(0), row.integer(1), row.text(2))
        }

        try #require(rows.count == 1)
        #expect(rows[0].0 == text)
        #expect(rows[0].1 == Int64(text.utf8.count))
        #expect(rows[0].2 == "text")
        #expect(try connection.integer("SELECT count(*) FROM v WHERE value = ?", [.text(text)]) == 1)
    }

    // MARK: - Timestamp

    /// Before: the synthesized `==` compared the offsets too, so these were unequal while
    /// neither was `<` the other.
    @Test func sameInstantInTwoOffsetsIsEqualAndHashesAlike() throws {
        let utc = try #require(Timestamp(iso8601: "2026-12-12T07:35Z"))
        let paris = try #require(Timestamp(iso8601: "2026-12-12T08:35+01:00"))

        #expect(utc == paris)
        #expect(!(utc < paris))
        #expect(!(paris < utc))
        #expect(utc.hashValue == paris.hashValue)
        #expect(Set([utc, paris]).count == 1)
        #expect(utc.offsetSeconds == 0)
        #expect(paris.offsetSeconds == 3600, "each keeps the offset it was written in")
        #expect(paris.iso8601() == "2026-12-12T08:35:00+01:00")

        let later = try #require(Timestamp(iso8601: "2026-12-12T08:35:00.001+01:00"))
        #expect(later != utc)
        #expect(utc < later)
    }
}
