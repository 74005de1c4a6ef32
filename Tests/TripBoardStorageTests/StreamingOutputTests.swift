import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// Lists and exports that stream: `RowCursor` hands out rows as the statement steps, and
/// `JSONWriter` / `Store.writeExport` write, piece by piece, exactly the bytes `JSON.encode`
/// gives for the whole value.
struct StreamingOutputTests {
    private struct Item: Encodable { var name: String; var count: Int; var note: String? }

    private static let items = [
        Item(name: "a", count: 1, note: nil), Item(name: "b\n\"c\"", count: -2, note: "é"), Item(name: "", count: 0, note: ""),
    ]

    /// `items` written one at a time, the bytes taken after each; as the `items` member of an
    /// object when `insideAnObject`.
    private func streamed(_ items: [Item], insideAnObject: Bool = false) throws -> [UInt8] {
        var writer = JSONWriter(pretty: true)
        var bytes: [UInt8] = []
        if insideAnObject {
            writer.beginObject()
            writer.key("items")
        }
        writer.beginArray()
        for item in items {
            try JSON.makeValue(item).write(to: &writer)
            writer.moveBytes(into: &bytes)
        }
        writer.endArray()
        if insideAnObject { writer.endObject() }
        return bytes + writer.bytes
    }

    @Test(arguments: [0, 1, 2, 3])
    func anArrayWrittenElementByElementIsTheEncodedArray(count: Int) throws {
        let items = Array(Self.items.prefix(count))
        #expect(try streamed(items) == JSON.encode(items))
    }

    /// Inside an object (`{"items" : [...]}`) the array and its elements are indented one level more.
    @Test(arguments: [0, 3])
    func anArrayInsideAnObjectIsIndentedAsEncoded(count: Int) throws {
        struct Wrapper: Encodable { var items: [Item] }
        let items = Array(Self.items.prefix(count))
        let expected = try JSON.encode(Wrapper(items: items))
        #expect(try streamed(items, insideAnObject: true) == expected)
    }

    @Test func theStreamedExportIsTheEncodedExportDocument() throws {
        let fixture = try StoreFixture()
        let lisbon = try fixture.addTrip("Lisbon")
        try fixture.addTrip("Porto \"Ribeira\"", from: "2027-03-01", to: "2027-03-04", notes: "two\nlines")
        _ = try fixture.store.addPlace(tripId: lisbon.id, name: "Belém Tower", city: "Lisbon")
        _ = try fixture.store.addBooking(BookingDraft(tripId: lisbon.id, kind: .flight, title: "TP 1351", startsAt: nil, reference: "X7K2QP"))
        let gone = try fixture.addTrip("Gone")
        try fixture.store.syncLedger.acknowledge(kind: .trip, id: gone.id.text, remoteVersion: 3)
        try fixture.store.deleteTrip(id: gone.id)
        for preferences in [Preferences(), Preferences(explicitValues: [.currency: .text("USD"), .cacheLimitMB: .number(5)])] {
            var streamed: [UInt8] = []
            try fixture.store.writeExport(preferences: preferences) { streamed += $0 }
            #expect(streamed == (try JSON.encode(try fixture.store.exportDocument(preferences: preferences))) + [0x0a])
        }
        var empty: [UInt8] = []
        let fresh = try StoreFixture()
        try fresh.store.writeExport(preferences: Preferences()) { empty += $0 }
        #expect(empty == (try JSON.encode(try fresh.store.exportDocument(preferences: Preferences()))) + [0x0a])
    }

    @Test func aCursorHandsOutTheRowsInOrderAndChecksTheTripWhenWalked() throws {
        let fixture = try StoreFixture()
        let trip = try fixture.addTrip()
        for name in ["one", "two", "three"] { _ = try fixture.store.addPlace(tripId: trip.id, name: name, city: nil) }
        #expect(try fixture.store.placeRows(tripId: trip.id).collect().map(\.name) == ["one", "two", "three"])
        let missing = fixture.store.placeRows(tripId: "7a1c0000-0000-4000-8000-00000000dead")
        #expect(throws: StoreError.notFound(kind: .trip, id: "7a1c0000-0000-4000-8000-00000000dead")) { try missing.collect() }
    }

    /// A body that stops the walk (the reader of the output went away) leaves no statement
    /// holding a snapshot: a write right after it commits, and a new walk starts from the top.
    @Test func aWalkThatThrowsHoldsNoSnapshot() throws {
        struct Stop: Error {}
        let fixture = try StoreFixture()
        for index in 0..<5 { try fixture.addTrip("Trip \(index)") }
        var seen = 0
        #expect(throws: Stop.self) {
            try fixture.store.tripRows().forEach { _ in
                seen += 1
                if seen == 2 { throw Stop() }
            }
        }
        #expect(!fixture.store.connection.isInsideTransaction)
        try fixture.addTrip("After")
        #expect(try fixture.store.tripRows().collect().count == 6)
    }
}
