import Testing
@testable import TripBoardCLI
@testable import TripBoardCommandLine
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// `place list`, `booking list`, `sync pending` and `export` printed from their rows' bytes, as
/// `trip list` is: over 1,000 places, 1,000 bookings and their pending changes — the tricky texts
/// of `RawListTests`, every kind, state, time form and zone, tombstones and trashed rows — each
/// output must be the very bytes the model path printed. The digests below were taken from the
/// model path's output (main at bab5442) before the lists read their rows' bytes.
struct RawChildListTests {
    static let lisbon = "aaaaaaaa-0000-4000-8000-000000000001"
    static let tokyo = "bbbbbbbb-0000-4000-8000-000000000002"
    static let now = "2026-12-15T12:00:00Z"

    /// Two trips, `rows` places and `rows` bookings on them, three attachments: fixed ids and
    /// stamps, so the outputs are the same on every run.
    static func fill(_ fixture: RawListTests.Fixture, rows: Int = 1_000) throws {
        let texts = RawListTests.texts
        let states = ["pendingUpload", "synchronized", "failed", "pendingDeletion", "pendingUpload"]
        func stamp(_ index: Int) -> String {
            "2026-11-\(pad(1 + index % 28))T\(pad(index % 24)):\(pad(index % 60)):17.\(pad(index % 1000, 3))Z"
        }
        try fixture.store.connection.writeTransaction {
            try fixture.insertTrip(id: .text(lisbon), name: .text("Lisbon"), start: "2026-12-10", end: "2026-12-20")
            try fixture.insertTrip(id: .text(tokyo), name: .text("東京 — 大阪"), start: "2027-01-05", end: "2027-01-09",
                                   state: "synchronized", remoteVersion: .integer(3))
            for index in 0..<rows {
                try fixture.store.connection.statement("""
                    INSERT INTO places (id, trip_id, name, city, visited, sync_state, remote_version, updated_at, trashed_at)
                    VALUES (?1, ?2, CAST(?3 AS TEXT), CAST(?4 AS TEXT), ?5, ?6, ?7, ?8, ?9)
                    """).run([.text("p\(index)-0123456789"), .text(index % 10 == 9 ? tokyo : lisbon), texts[index % texts.count],
                              index % 3 == 0 ? .null : texts[(index + 5) % texts.count], .integer(Int64(index % 2)),
                              .text(states[index % 5]), index % 4 == 0 ? .null : .integer(Int64(index) * 7), .text(stamp(index)),
                              index % 37 == 0 ? .text("2026-11-30T00:00:00.000Z") : .null])
                try insertBooking(fixture, index, texts: texts, state: states[(index + 1) % 5], updatedAt: stamp(index + 3))
            }
            for index in 0..<3 {
                try fixture.store.connection.statement("""
                    INSERT INTO attachments (id, booking_id, original_filename, content_type, byte_count, content_hash, relative_path,
                                             created_at, sync_state, remote_version, updated_at)
                    VALUES (?1, 'b1-0123456789abcdef', 'ticket.pdf', 'application/pdf', 100, ?2, ?3, ?4, ?5, ?6, ?4)
                    """).run([.text("t\(index)-attachment"), .text(String(repeating: "ab", count: 32)),
                              .text("attachments/ab/t\(index).pdf"), .text(stamp(index * 11)), .text(states[index + 1]),
                              index == 0 ? .null : .integer(Int64(index))])
            }
        }
    }

    private static func pad(_ number: Int, _ width: Int = 2) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(width - text.count, 0)) + text
    }

    /// A booking with one of eight time forms: none, all day, times in zones whose abbreviation
    /// shows or not, a span of days, a zone this machine does not know, another year.
    private static func insertBooking(_ fixture: RawListTests.Fixture, _ index: Int, texts: [SQLValue], state: String,
                                      updatedAt: String) throws {
        let day = 10 + index % 10
        let times: (String?, String?, String?) = switch index % 8 {
        case 0: (nil, nil, nil)
        case 1: ("2026-12-\(day)", nil, nil)
        case 2: ("2026-12-\(day)T07:35:00+00:00", "2026-12-\(day)T09:05:00+00:00", "Europe/Lisbon")
        case 3: ("2026-12-\(day)T18:00:00+09:00", nil, "Asia/Tokyo")
        case 4: ("2027-01-0\(1 + index % 9)T16:30:00-05:00", "2027-01-0\(1 + index % 9)T18:00:00-05:00", "America/New_York")
        case 5: ("2026-12-\(day - 1)", "2026-12-\(day + 1)", nil)
        case 6: ("2026-06-01T10:00:00+01:00", nil, "Nowhere/Bogus")
        default: ("2025-12-31T23:59:59+05:45", nil, nil)
        }
        let epochs = BookingTime.epochs(startsAt: times.0.flatMap { BookingTime($0) }, endsAt: times.1.flatMap { BookingTime($0) })
        let kinds = BookingKind.allCases.map(\.rawValue)
        let reference: SQLValue = index % 3 == 0 ? .null : index % 3 == 1 ? .text("X7K2QP") : texts[index % texts.count]
        let seat: SQLValue = index % 4 == 2 ? .text("14C") : index % 4 == 3 ? texts[(index + 1) % texts.count] : .null
        try fixture.store.connection.statement("""
            INSERT INTO bookings (id, trip_id, kind, title, starts_at, starts_at_epoch, reference, sync_state, remote_version,
                                  updated_at, ends_at, over_at_epoch, zone, trashed_at, seat)
            VALUES (?1, ?2, ?3, CAST(?4 AS TEXT), ?5, ?6, CAST(?7 AS TEXT), ?8, ?9, ?10, ?11, ?12, ?13, ?14, CAST(?15 AS TEXT))
            """).run([.text("b\(index)-0123456789abcdef"), .text(index % 5 == 4 ? tokyo : lisbon), .text(kinds[index % kinds.count]),
                      texts[(index + 3) % texts.count], .optional(times.0), .optional(epochs.start), reference, .text(state),
                      index % 4 == 1 ? .null : .integer(Int64(index) - 40), .text(updatedAt), .optional(times.1),
                      .optional(epochs.overAt), .optional(times.2), index % 41 == 0 ? .text("2026-11-30T00:00:00.000Z") : .null, seat])
    }

    /// FNV-1a (64 bits) of the output, with the export's `exportedAt` line (the clock) left out.
    static func digest(_ output: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for line in output.split(separator: 0x0a, omittingEmptySubsequences: false) {
            guard !String(decoding: line, as: UTF8.self).contains("\"exportedAt\" : ") else { continue }
            for byte in line + [0x0a] {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return String(hash, radix: 16) + "/\(output.count)"
    }

    /// Each command's output, as digest/byte count, captured from the model path (the tables'
    /// again when cells came to be measured in terminal columns, CJK two wide: `TableRow.displayWidth`;
    /// the bookings' again when they gained a seat, checked by `bookingsWithSeatsPrintWhatTheirModelsPrint`).
    static let captured: [String: String] = [
        "place list --trip \(lisbon)": "f05811783c0c5f77/570406",
        "place list --trip \(lisbon) --json": "77d8a4faa60ff809/208705",
        "place list --trip bbbb --json": "ec11f2a047db7cc8/30213",
        "booking list --trip \(lisbon)": "182ef37a4005e166/759503",
        "booking list --trip \(lisbon) --json": "e48f289f4b16f9d3/263587",
        "booking list --trip \(tokyo) --upcoming": "84cd6b9ab57f178d/126277",
        "booking list --trip \(lisbon) --upcoming --limit 7 --json": "e18989760470ea9f/3228",
        "booking list": "7f7f9c6934fa61aa/1024863",
        "booking list --json": "1a20523d7bdc10b1/352101",
        "booking list --upcoming": "a492992381706ba/352868",
        "booking list --upcoming --limit 300 --json": "590bb1e1596521ed/123635",
        "booking list --limit 700": "c0860190669a54ca/919901",
        "booking list --trip \(lisbon) --limit 5": "91277c6a4f51f6cc/621",
        "sync pending": "85cb63439cd65eb3/133533",
        "sync pending --json": "2609f406516f4c50/268783",
        "export": "f46c62d27686d00d/793856",
    ]

    static let commands: [[String]] = [
        ["place", "list", "--trip", lisbon], ["place", "list", "--trip", lisbon, "--json"], ["place", "list", "--trip", "bbbb", "--json"],
        ["booking", "list", "--trip", lisbon], ["booking", "list", "--trip", lisbon, "--json"],
        ["booking", "list", "--trip", tokyo, "--upcoming"], ["booking", "list", "--trip", lisbon, "--upcoming", "--limit", "7", "--json"],
        ["booking", "list"], ["booking", "list", "--json"], ["booking", "list", "--upcoming"],
        ["booking", "list", "--upcoming", "--limit", "300", "--json"], ["booking", "list", "--limit", "700"], ["booking", "list", "--trip", lisbon, "--limit", "5"],
        ["sync", "pending"], ["sync", "pending", "--json"], ["export"],
    ]

    @Test func aThousandRowsOfEveryListPrintTheBytesTheModelPathPrinted() throws {
        let fixture = try RawListTests.Fixture()
        try Self.fill(fixture)
        for words in Self.commands {
            let (status, output) = fixture.run(words, now: Self.now)
            #expect(status == 0, "\(words)")
            let key = words.joined(separator: " ")
            #expect(Self.captured[key] == Self.digest(output), "\(key): \(Self.digest(output))")
        }
        #expect(Self.captured.count == Self.commands.count)
    }

    /// The oracle for the digests above since bookings have seats: a trip's bookings print as
    /// JSON what their models' encoder writes, and as a table the cells of the models' fields.
    @Test(arguments: [false, true])
    func bookingsWithSeatsPrintWhatTheirModelsPrint(json: Bool) throws {
        let fixture = try RawListTests.Fixture()
        try Self.fill(fixture)
        let (status, output) = fixture.run(["booking", "list", "--trip", Self.lisbon] + (json ? ["--json"] : []), now: Self.now)
        #expect(status == 0)
        let bookings = try fixture.store.bookings(tripId: RecordID(Self.lisbon))
        #expect(bookings.contains { $0.seat == "14C" } && bookings.contains { $0.seat == nil })
        let console = Console(echoesErrors: false)
        if json {
            try console.printJSONArray(fixture.store.bookingRows(tripId: RecordID(Self.lisbon)))
        } else {
            var times = BookingTimeText(viewer: .utc)
            let year = try fixture.store.trip(id: RecordID(Self.lisbon)).startDate.year
            try console.printTable(header: ["ID", "KIND", "TITLE", "STARTS AT", "ENDS AT", "REFERENCE", "SEAT", "SYNC"],
                                   fixture.store.bookingRows(tripId: RecordID(Self.lisbon))) { booking in
                [String(booking.id.text.prefix(8)), booking.kind.rawValue, booking.title,
                 times.text(booking.startsAt, zone: booking.zone, tripYear: year) ?? "", times.text(booking.endsAt, zone: booking.zone, tripYear: year) ?? "",
                 booking.reference ?? "", booking.seat ?? "", booking.syncState.rawValue]
            }
        }
        #expect(output == console.outputBytes, "\(String(decoding: output, as: UTF8.self).prefix(2_000))")
    }

    @Test func emptyListsPrintWhatTheyAlwaysPrinted() throws {
        let fixture = try RawListTests.Fixture()
        #expect(fixture.run(["booking", "list"]).output == Array("No bookings yet.\n".utf8))
        #expect(fixture.run(["booking", "list", "--upcoming"]).output == Array("No upcoming bookings.\n".utf8))
        #expect(fixture.run(["booking", "list", "--json"]).output == Array("[]\n".utf8))
        #expect(fixture.run(["sync", "pending"]).output == Array("Everything is synchronized.\n".utf8))
        #expect(fixture.run(["sync", "pending", "--json"]).output == Array("[]\n".utf8))
        try fixture.insertTrip(id: .text(Self.lisbon), name: .text("Lisbon"), start: "2026-12-10", end: "2026-12-20")
        #expect(fixture.run(["place", "list", "--trip", "aaaa"]).output == Array("ID  NAME  CITY  VISITED  SYNC\n".utf8))
        #expect(fixture.run(["place", "list", "--trip", "aaaa", "--json"]).output == Array("[]\n".utf8))
        #expect(fixture.run(["booking", "list", "--trip", "aaaa"]).output == Array("ID  KIND  TITLE  STARTS AT  ENDS AT  REFERENCE  SEAT  SYNC\n".utf8))
        #expect(fixture.run(["booking", "list", "--trip", "aaaa", "--upcoming", "--json"]).output == Array("[]\n".utf8))
        #expect(fixture.run(["place", "list", "--trip", "ffff"]).status == 66)
    }

    /// `booking list` held every booking to size its columns; it now streams as `trip list`
    /// does: the first 1,000 rows size them, and a wider title further down pushes the rest of
    /// its own line right, two spaces on.
    @Test func bookingsPastTheFirstPageKeepThatPagesWidths() throws {
        let fixture = try RawListTests.Fixture()
        try fixture.store.connection.writeTransaction {
            try fixture.insertTrip(id: .text(Self.lisbon), name: .text("Lisbon"), start: "2026-12-10", end: "2026-12-20")
            for index in 0..<1_005 {
                try fixture.store.connection.statement("""
                    INSERT INTO bookings (id, trip_id, kind, title, sync_state, updated_at) VALUES (?1, ?2, 'train', ?3, 'failed', ?4)
                    """).run([.text("b\(index)-0123456789"), .text(Self.lisbon),
                              .text(index == 1_002 ? "a much wider title than any on the first page" : "CP \(index % 10)"),
                              .text("2026-11-30T00:00:00.000Z")])
            }
        }
        for words in [["booking", "list", "--trip", "aaaa"], ["booking", "list"]] {
            let lines = String(decoding: fixture.run(words).output, as: UTF8.self).split(separator: "\n")
            #expect(lines.count == 1_006)
            // Every other line has the first page's columns: SYNC, the header's last cell, starts
            // where the header's does (the lines are ASCII).
            #expect(lines[0].hasSuffix("SYNC"))
            let column = lines[0].utf8.count - 4
            for line in lines.dropFirst() where !line.contains("wider") {
                #expect(line.utf8.dropFirst(column).starts(with: "failed".utf8), "\(line)")
            }
            let wide = lines[1_003]
            #expect(wide.contains("a much wider title than any on the first page  "), "two spaces after the wider cell: \(wide)")
            #expect(wide.hasSuffix("failed"))
        }
    }
}
