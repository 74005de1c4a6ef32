import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `app import` reads its document as a stream: `JSONStreamReader` walks the top-level object
/// and hands over one record at a time, checking the syntax exactly as `JSONValue.parse` does
/// whatever the size of its read buffer; `Store.importRecords` inserts each record as it is read.
struct StreamingImportTests {
    static let tripID = "7a1c0000-0000-4000-8000-000000000001"

    /// The members and elements the reader hands over, rebuilt into one value.
    private func walked(_ text: String, chunkSize: Int) throws -> JSONValue {
        var reader = JSONStreamReader(source: MemorySource(Array(text.utf8)), chunkSize: chunkSize)
        var members: [(key: String, value: JSONValue)] = []
        var whole: JSONValue?
        try reader.walk(begin: { key in
            members.append((key, .array([])))
            return .elements
        }, value: { key, value in
            members[members.count - 1] = (key, value)
        }, element: { key, _, value in
            guard case .array(let elements) = members[members.count - 1].value else { return }
            members[members.count - 1] = (key, .array(elements + [value]))
        }, notAnObject: { whole = $0 })
        return whole ?? .object(members)
    }

    static let documents = [
        #"{}"#,
        #" { "trips" : [ ] , "format" : "tripboard-export" } "#,
        "{\"trips\": [{\"name\": \"a\\\"]}\\\\\", \"n\": [1, {\"x\": []}]}, 2, \"s\", null, true],\n \"preferences\": {\"theme\": \"dark\"}, \"z\": -1.5e3}",
        #"[1, 2, {"a": "b"}]"#,
        #""just a string""#,
    ]

    @Test(arguments: documents, [1, 2, 3, 7, 64, 256 << 10])
    func anyBufferSizeReadsTheDocumentAsTheWholeParserDoes(document: String, chunkSize: Int) throws {
        #expect(try walked(document, chunkSize: chunkSize) == JSONValue.parse(Array(document.utf8)))
    }

    static let malformed = [
        "{\"trips\": [1, 2,]}",
        "{\"trips\": [1 2]}",
        "{\"a\": 1,\n \"b\": tru}",
        "{\"a\": 1}\n x",
        "{\"a\": \"unterminated",
        "{\"a\": [\n\n  {\"b\": 01}]}",
        "{\"a\" 1}",
        "{1: 2}",
        "",
        "{\"a\": \"\u{1}\"}",
    ]

    /// A syntax error is found wherever it is, and its line and column are the document's.
    @Test(arguments: malformed, [1, 5, 256 << 10])
    func aSyntaxErrorNamesItsLineInTheWholeDocument(document: String, chunkSize: Int) throws {
        let expected = try #require(throws: JSONSyntaxError.self) { try JSONValue.parse(Array(document.utf8)) }
        let found = try #require(throws: JSONSyntaxError.self) { try walked(document, chunkSize: chunkSize) }
        #expect(found.line == expected.line, "\(found) vs \(expected)")
        if found.message == expected.message { #expect(found.column == expected.column, "\(found) vs \(expected)") }
    }

    @Test func childrenMayComeBeforeTheirTrip() throws {
        let fixture = try StoreFixture()
        let summary = try fixture.store.importRecords(try ImportDocument.parse(Array("""
            {"bookings": [{"tripId": "\(Self.tripID)", "kind": "train", "title": "Alfa"}],
             "places": [{"tripId": "\(Self.tripID)", "name": "Belém"}],
             "trips": [{"id": "\(Self.tripID)", "name": "Lisbon", "startDate": "2026-12-12", "endDate": "2026-12-15"}]}
            """.utf8)))
        #expect(summary == ImportSummary(trips: 1, places: 1, bookings: 1))
        #expect(try fixture.store.bookings(tripId: RecordID(Self.tripID)).map(\.title) == ["Alfa"])
    }

    /// A live child before its trip, which comes later as a tombstone: refused once the trip is
    /// read, the child named, nothing imported.
    @Test func aLiveChildBeforeItsDeletedTripIsRefused() throws {
        let fixture = try StoreFixture()
        let document = try ImportDocument.parse(Array("""
            {"places": [{"tripId": "\(Self.tripID)", "name": "Belém"}],
             "trips": [{"id": "\(Self.tripID)", "name": "Lisbon", "startDate": "2026-12-12", "endDate": "2026-12-15",
                        "syncState": "pendingDeletion", "remoteVersion": 2}]}
            """.utf8))
        let error = try #require(throws: StoreError.self) { try fixture.store.importRecords(document) }
        guard case .invalidData(let message) = error else { Issue.record("\(error)"); return }
        #expect(message.hasPrefix("places[0]: place ") && message.contains("is not deleted, but its trip \(Self.tripID) is"), "\(message)")
        #expect(try fixture.rowCount("trips") == 0)
    }

    /// As for any JSON object read here, a repeated key's last value counts.
    @Test func aRepeatedKeyCountsOnlyItsLastValue() throws {
        let fixture = try StoreFixture()
        let document = try ImportDocument.parse(Array("""
            {"trips": [{"name": "First", "startDate": "2026-12-12", "endDate": "2026-12-15"}],
             "trips": [{"name": "Second", "startDate": "2026-12-12", "endDate": "2026-12-15"}]}
            """.utf8))
        #expect(document.recordCount == 1)
        _ = try fixture.store.importRecords(document)
        #expect(try fixture.store.trips().map(\.name) == ["Second"])
    }

    /// The errors of a document with several come in the order a whole-document decode gave
    /// them: its shape first (wherever it is), then the format, then the records' rules.
    @Test func aWrongFormatAfterTheRecordsIsReportedBeforeTheirRules() throws {
        let error = try #require(throws: StoreError.self) {
            try ImportDocument.parse(Array(#"{"bookings": [{"tripId": "x", "kind": "boat", "title": "T"}], "format": "other"}"#.utf8))
        }
        #expect(error.description.contains("format is 'other'"), "\(error)")
    }
}
