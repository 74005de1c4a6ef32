import Foundation
import Testing
@testable import TripBoardCLI
@testable import TripBoardCommandLine
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// The lists printed from their rows' bytes (`StoreRow`, `TableRow`, `JSONWriter`) against
/// the model path they replaced — every row made a model, its cells `String`s, its JSON through
/// `Encodable` — over data the field rules would refuse but a store can hold: the outputs must
/// be the same bytes.
struct RawListTests {
    /// A container in a fresh directory, removed afterwards, filled by raw SQL.
    final class Fixture {
        let path: String
        let store: Store

        /// The device the container's store is sealed under: a directory of the fixture's own,
        /// so that neither the fixture nor `app` touches the user's.
        let environment: [String: String]

        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("tripboard-rawlist-\(UUID().uuidString)").path
            environment = ["TRIPBOARD_CONTAINER": path, "TZ": "UTC", "TRIPBOARD_DEVICE_DIR": path + "-device", "TRIPBOARD_KEYRING": "session"]
            store = try Container.openForWriting(at: path, options: ContainerOptions(processName: "app", environment: environment)).store
        }

        deinit {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-device")
        }

        /// A trip row as given; `name` and `notes` may be a blob cast to text (invalid UTF-8).
        func insertTrip(id: SQLValue, name: SQLValue, start: String, end: String, notes: SQLValue = .text(""),
                        state: String = "pendingUpload", remoteVersion: SQLValue = .null, updatedAt: SQLValue = .text("2026-11-30T23:12:17.123Z")) throws {
            try store.connection.statement("""
                INSERT INTO trips (id, name, start_date, end_date, notes, sync_state, remote_version, updated_at)
                VALUES (CAST(?1 AS TEXT), CAST(?2 AS TEXT), ?3, ?4, CAST(?5 AS TEXT), ?6, ?7, CAST(?8 AS TEXT))
                """).run([id, name, .text(start), .text(end), notes, .text(state), remoteVersion, updatedAt])
        }

        func run(_ words: [String], now: String? = nil) -> (status: Int32, output: [UInt8]) {
            let console = Console(echoesErrors: false)
            var environment = self.environment
            if let now { environment["TRIPBOARD_NOW"] = now }
            let status = AppCommand.main(arguments: words, environment: environment, console: console)
            return (status, console.outputBytes)
        }
    }

    /// Names and notes that exercise escaping and widths: non-ASCII, emoji (one with a ZWJ
    /// sequence), combining marks, wide CJK, every kind of control character, quotes, backslashes,
    /// DEL, empty text, long text, invalid UTF-8.
    static let texts: [SQLValue] = [
        .text("Lisbon"), .text("Zürich"), .text("東京 — 大阪"), .text("👨‍👩‍👧 family"), .text("e\u{301}e\u{301}"),
        .text("say \"hi\""), .text("back\\slash\\"), .text("tab\there"), .text("line\nbreak"), .text("cr\r\nlf"),
        .text("bell\u{7}\u{1}\u{1f}"), .text("del\u{7f}"), .text("trailing  "), .text(" "), .text(String(repeating: "long name ", count: 40)),
        .text("nul\u{0}inside"), .blob([0x66, 0xff, 0x6f, 0xc3]), .blob([0xe2, 0x82]), .text("/slash"),
    ]

    private static func fill(_ fixture: Fixture) throws {
        for (index, text) in texts.enumerated() {
            try fixture.insertTrip(id: .text("id-\(index)-0123456789"), name: text.isEmptyText ? .text("x") : text,
                                   start: "2026-01-\(String(format: "%02d", index + 1))", end: "2026-02-28", notes: text,
                                   remoteVersion: index % 3 == 0 ? .null : .integer(Int64(index) * 1_000_000_007 - 5_000_000_000))
        }
        // Ids the short prefix must cut as `String.prefix` does; dates the models read as 1970-01-01;
        // every sync state.
        let odd: [(SQLValue, String, String, String)] = [
            (.text("é1234567890"), "2026-03-01", "2026-03-02", "synchronized"), (.text("1234567e\u{301}9"), "2026-03-01", "2026-03-01", "failed"),
            (.text("1234567\r\n9"), "2026-02-30", "2026-03-01", "pendingUpload"), (.text("short"), "0001-01-01", "9999-12-31", "synchronized"),
            (.text("1234567890"), "2026-13-01", "2026-3-01", "pendingUpload"), (.blob([0x31, 0x32, 0xff, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39]), "", "x", "failed"),
            (.text("🧳🧳🧳🧳🧳🧳🧳🧳🧳"), "2024-02-29", "2024-03-01", "synchronized"),
        ]
        for (index, (id, start, end, state)) in odd.enumerated() {
            try fixture.insertTrip(id: id, name: .text("odd \(index)"), start: start, end: end, state: state, remoteVersion: .integer(Int64.min + Int64(index)))
        }
    }

    /// What `trip list` printed before it read the rows' bytes.
    private static func modelOutput(_ store: Store, _ query: TripQuery, json: Bool) throws -> [UInt8] {
        let console = Console(echoesErrors: false)
        if json {
            try console.printJSONArray(store.tripRows(query))
        } else {
            try console.printTable(header: AppCommand.tripListHeader, emptyMessage: "No trips match.", store.tripRows(query)) { trip in
                [String(trip.id.text.prefix(8)), trip.name, trip.startDate.description, trip.endDate.description,
                 String(trip.dayCount), trip.syncState.rawValue]
            }
        }
        return console.outputBytes
    }

    @Test(arguments: [false, true])
    func trickyTripsPrintTheSameBytesAsTheModelPath(json: Bool) throws {
        let fixture = try Fixture()
        try Self.fill(fixture)
        let (status, output) = fixture.run(["trip", "list", "--sort", "name"] + (json ? ["--json"] : []))
        #expect(status == 0)
        let expected = try Self.modelOutput(fixture.store, TripQuery(order: .name, today: try #require(CivilDate("2026-12-01"))), json: json)
        #expect(output == expected, "\(String(decoding: output, as: UTF8.self))\n---\n\(String(decoding: expected, as: UTF8.self))")
        #expect(output.count > 2_000)
    }

    /// Past the first page (1,000 rows, which sizes the columns) every row is printed as it is
    /// read; a wider cell later pushes its line right, as it did.
    @Test func rowsPastTheFirstPagePrintAsTheModelPathPrintsThem() throws {
        let fixture = try Fixture()
        try fixture.store.connection.writeTransaction {
            for index in 0..<1_005 {
                let name = index == 1_002 ? "a much wider name than any on the first page 東京" : "trip \(index)"
                try fixture.insertTrip(id: .text(String(format: "%08x-tail", index)), name: .text(name),
                                       start: "2026-05-01", end: "2026-05-0\(1 + index % 9)")
            }
        }
        let today = try #require(CivilDate("2026-12-01"))
        for json in [false, true] {
            let (status, output) = fixture.run(["trip", "list"] + (json ? ["--json"] : []))
            #expect(status == 0)
            #expect(output == (try Self.modelOutput(fixture.store, TripQuery(today: today), json: json)))
        }
    }

    @Test func anEmptyListPrintsTheSameAsBefore() throws {
        let fixture = try Fixture()
        #expect(fixture.run(["trip", "list", "--json"]).output == Array("[]\n".utf8))
        #expect(fixture.run(["trip", "list", "--past"]).output == Array("No trips match.\n".utf8))
    }

    /// The JSON string writer for bytes against the one for `String`s, byte by byte.
    @Test(arguments: texts)
    func aJSONStringFromBytesIsTheStringsEncoding(text: SQLValue) {
        let bytes: [UInt8] = switch text {
        case .text(let string): Array(string.utf8)
        case .blob(let blob): blob
        default: []
        }
        var fromBytes: [UInt8] = []
        bytes.withUnsafeBytes { JSONWriter.appendString(utf8: $0, to: &fromBytes) }
        #expect(fromBytes == JSONValue.string(String(decoding: bytes, as: UTF8.self)).serialized())
    }
}

extension SQLValue {
    fileprivate var isEmptyText: Bool { self == .text("") }
}
