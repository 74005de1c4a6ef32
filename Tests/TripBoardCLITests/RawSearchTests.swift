import Testing
@testable import TripBoardCLI
@testable import TripBoardCommandLine
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// `app search` printed from its rows' bytes (`AppCommand.searchHitCells`,
/// `RecordBytes.searchHitJSON`) against the model path it replaced — every hit a `SearchHit`, its
/// cells `String`s, its JSON through `Encodable` — over trips, places and bookings whose names,
/// notes, cities and references are `RawListTests.texts`: the same bytes.
struct RawSearchTests {
    /// Every record's searched text starts with this word; its other text is the tricky one.
    static let word = "zqx"

    private static func fill(_ fixture: RawListTests.Fixture) throws {
        let texts = RawListTests.texts
        try fixture.store.connection.writeTransaction {
            for (index, text) in texts.enumerated() {
                let tripId = SQLValue.text("t\(index)-0123456789")
                // A name the word finds, with the tricky text after it; the notes the tricky text
                // alone, and every fourth one the text over several lines, a long line first.
                let name = SQLValue.text("\(word) \(index) ").concatenated(text)
                let notes: SQLValue = index % 4 == 3 ? .text(String(repeating: "ĺong ", count: 13) + "\nsecond line") : text
                try fixture.insertTrip(id: tripId, name: name, start: "2026-05-01", end: "2026-05-03", notes: notes)
                try fixture.store.connection.statement("""
                    INSERT INTO places (id, trip_id, name, city, visited, sync_state, updated_at)
                    VALUES (?1, ?2, CAST(?3 AS TEXT), CAST(?4 AS TEXT), 0, 'pendingUpload', '2026-11-30T00:00:00.000Z')
                    """).run([.text("p\(index)-0123456789"), tripId, name, index % 3 == 0 ? .null : text])
                try fixture.store.connection.statement("""
                    INSERT INTO bookings (id, trip_id, kind, title, reference, sync_state, updated_at)
                    VALUES (?1, ?2, 'train', CAST(?3 AS TEXT), CAST(?4 AS TEXT), 'pendingUpload', '2026-11-30T00:00:00.000Z')
                    """).run([.text("b\(index)-0123456789"), tripId, name, text])
            }
        }
    }

    /// What `app search` printed before it read the rows' bytes.
    private static func modelOutput(_ store: Store, _ text: String, limit: Int?, json: Bool) throws -> [UInt8] {
        let console = Console(echoesErrors: false)
        let hits = try store.searchIndex.searchRows(text, limit: limit)
        if json {
            try console.printJSONArray(hits)
        } else {
            try console.printTable(header: AppCommand.searchHeader, emptyMessage: "Nothing found.", hits) { hit in
                let firstLine = hit.detail.map { String($0.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") } ?? ""
                return [hit.kind.rawValue, String(hit.id.prefix(8)), hit.kind == .trip ? "" : hit.tripName, hit.title,
                        firstLine.count > 60 ? String(firstLine.prefix(59)) + "…" : firstLine]
            }
        }
        return console.outputBytes
    }

    @Test(arguments: [false, true])
    func trickyHitsPrintTheSameBytesAsTheModelPath(json: Bool) throws {
        let fixture = try RawListTests.Fixture()
        try Self.fill(fixture)
        for (query, limit) in [(Self.word, nil), (Self.word, 7), ("\(Self.word) 1", nil), ("nothing-here", nil)] as [(String, Int?)] {
            let (status, output) = fixture.run(["search"] + query.split(separator: " ").map(String.init)
                                                + (limit.map { ["--limit", String($0)] } ?? []) + (json ? ["--json"] : []))
            #expect(status == 0)
            let expected = try Self.modelOutput(fixture.store, query, limit: limit, json: json)
            #expect(output == expected, "\(query): \(String(decoding: output, as: UTF8.self))\n---\n\(String(decoding: expected, as: UTF8.self))")
        }
        // Every kind was found, several lines were cut and a detail was long.
        let all = String(decoding: fixture.run(["search", Self.word]).output, as: UTF8.self)
        #expect(all.contains("place ") && all.contains("booking ") && all.contains("trip "))
        #expect(all.contains("…"))
    }

    /// The first line of a detail from bytes against `String`'s own split and prefix.
    @Test(arguments: ["", "plain", "a\nb", "\nfirst empty", "cr\r\nlf", "lone\rcr", String(repeating: "x", count: 60),
                      String(repeating: "x", count: 61), String(repeating: "é", count: 70), "e\u{301}\nz", "東京\n大阪"])
    func aDetailsFirstLineFromBytesIsTheStringsOwn(text: String) {
        var fromBytes = TableRow(), fromString = TableRow()
        Array(text.utf8).withUnsafeBytes { fromBytes.append(firstLineOf: $0, characters: 60) }
        let line = String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        fromString.append(line.count > 60 ? String(line.prefix(59)) + "…" : line)
        #expect(fromBytes.bytes == fromString.bytes && fromBytes.widths == fromString.widths)
    }
}

extension SQLValue {
    /// Text followed by `other`'s bytes (text or a blob: invalid UTF-8 kept), as a blob the
    /// store's `CAST(… AS TEXT)` makes text.
    fileprivate func concatenated(_ other: SQLValue) -> SQLValue {
        func bytes(_ value: SQLValue) -> [UInt8] {
            switch value {
            case .text(let string): Array(string.utf8)
            case .blob(let blob): blob
            default: []
            }
        }
        return .blob(bytes(self) + bytes(other))
    }
}
