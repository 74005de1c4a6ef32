import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// The records' one declaration (`RecordColumn`): what is derived from it agrees with the table,
/// the models' JSON and sync.
struct RecordColumnTests {
    func check<Column: RecordColumn>(_ columns: Column.Type, table: String, in connection: Connection) throws {
        for (index, column) in Column.allCases.enumerated() {
            #expect(column.position == Int32(index), "\(column): positions count the cases in order")
            #expect(column.stringValue == "\(column.spec.jsonKey)", "\(column): the CodingKey is the JSON key")
            #expect(column.intValue == nil, "\(column): a key by name only")
        }
        // Every declared column is one of the table's, and the table has no other the model reads
        // but those the store derives (epochs, the search's) and the trash's.
        let tableColumns = Set(try connection.statement("SELECT name FROM pragma_table_info(?)").rows([.text(table)]) { $0.text(0) })
        #expect(Set(Column.allCases.map(\.sqlName)).isSubset(of: tableColumns), "\(table): \(tableColumns)")
        let others = tableColumns.subtracting(Column.allCases.map(\.sqlName))
        #expect(others.isSubset(of: ["trashed_at", "trashed_with", "starts_at_epoch", "over_at_epoch"]), "\(table): \(others)")
    }

    @Test func theDeclarationsMatchTheTables() throws {
        let fixture = try StoreFixture()
        try check(TripColumn.self, table: "trips", in: fixture.store.connection)
        try check(PlaceColumn.self, table: "places", in: fixture.store.connection)
        try check(BookingColumn.self, table: "bookings", in: fixture.store.connection)
    }

    /// A model's JSON holds exactly its declaration's keys (a nil as `null`).
    @Test func aModelsJSONHoldsItsDeclarationsKeys() throws {
        let booking = Booking(id: "b", tripId: "t", kind: .hotel, title: "Memmo", startsAt: nil, reference: nil,
                              syncState: .pendingUpload, remoteVersion: nil, updatedAt: Timestamp(stored: "2026-12-05T00:00:00.000Z"))
        let trip = Trip(id: "t", name: "Lisbon", startDate: CivilDate(daysSinceEpoch: 0), endDate: CivilDate(daysSinceEpoch: 1), notes: "",
                        syncState: .synchronized, remoteVersion: 3, updatedAt: Timestamp(stored: "2026-12-05T00:00:00.000Z"))
        let place = Place(id: "p", tripId: "t", name: "LX", city: nil, visited: true, syncState: .failed, remoteVersion: nil,
                          updatedAt: Timestamp(stored: "2026-12-05T00:00:00.000Z"))
        func keys(_ bytes: [UInt8]) throws -> Set<String> {
            Set((try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] ?? [:]).keys)
        }
        #expect(try keys(JSON.encode(booking)) == Set(BookingColumn.allCases.map(\.stringValue)))
        #expect(try keys(JSON.encode(trip)) == Set(TripColumn.allCases.map(\.stringValue)))
        #expect(try keys(JSON.encode(place)) == Set(PlaceColumn.allCases.map(\.stringValue)))
    }

    /// Sync's fields per kind, in the order they have always been written.
    @Test func theSyncFieldsAreTheDeclarationsInOrder() {
        #expect(SyncRecord.fieldNames(.trip) == ["name", "dates", "notes"])
        #expect(SyncRecord.fieldNames(.place) == ["tripId", "name", "city", "visited"])
        #expect(SyncRecord.fieldNames(.booking) == ["tripId", "kind", "title", "startsAt", "endsAt", "zone", "endZone", "reference", "seat"])
    }

    /// What an insert writes reads back as the same model, and a sync record of it has its fields.
    @Test func anInsertReadsBackAndSyncsItsFields() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let trip = try store.addTrip(TripDraft(name: "Lisbon", startDate: CivilDate("2027-03-27")!, endDate: CivilDate("2027-03-30")!, notes: "Tram 28"))
        let record = try #require(try store.syncLedger.syncRecord(.trip, id: trip.id.text))
        #expect(record.fields["dates"]?.canonicalText == #"{"end":"2027-03-30","start":"2027-03-27"}"#)
        #expect(record.fields["notes"] == .string("Tram 28") && record.fields.count == 3)
        #expect(try store.trip(id: trip.id) == trip)
    }
}
