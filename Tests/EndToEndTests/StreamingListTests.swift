import Foundation
import Testing
import TripBoardModel

/// Lists stream from the statement to the output: the human table takes its column widths from
/// the first page of rows (1,000) and prints every later row as it comes, so a cell wider than
/// its column further down pushes the rest of its own line right; `--json` and `export` write
/// the same bytes they always did.
@Suite struct StreamingListTests {
    /// 1,200 trips, one day each from 2030-01-01 on; the last one's name is longer than any other.
    static func importTrips(_ container: TestContainer, count: Int = 1_200, longName: String) throws {
        var trips: [[String: String]] = []
        for index in 0..<count {
            let date = Date(timeIntervalSince1970: 1_893_456_000 + Double(index) * 86_400)  // 2030-01-01 + index days
            let day = ISO8601DateFormatter.string(from: date, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
            trips.append(["name": index == count - 1 ? longName : String(format: "Trip %04d", index), "startDate": day, "endDate": day])
        }
        let file = container.root.appendingPathComponent("trips.json")
        try JSONSerialization.data(withJSONObject: ["trips": trips]).write(to: file)
        try container.appOK("import", file.path)
    }

    @Test func aTableLongerThanItsFirstPageKeepsThatPagesWidths() throws {
        let container = try TestContainer()
        let longName = "A trip whose name is longer than any other"
        try Self.importTrips(container, longName: longName)

        let lines = try container.app("trip", "list").stdoutLines

        #expect(lines.count == 1_201)
        // ID (8) + 2, NAME ("Trip 0000": 9) + 2: START begins at column 21 on every line of the page
        // and on every later line but the long one.
        let header = try #require(lines.first)
        #expect(header.hasPrefix("ID        NAME       START"), "\(header)")
        for line in lines.dropFirst().dropLast() {
            #expect(line.dropFirst(21).hasPrefix("20"), "\(line)")
        }
        let last = try #require(lines.last)
        #expect(last.dropFirst(10).hasPrefix(longName + "  2033-04-14  2033-04-14  1"), "pushed right, two spaces apart: \(last)")
    }

    @Test func theJSONListIsOneArrayOfEveryTrip() throws {
        let container = try TestContainer()
        try Self.importTrips(container, count: 1_500, longName: "Last")
        let listed = try container.app("trip", "list", "--json")
        #expect(listed.status == 0, "\(listed)")
        let trips = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(trips.count == 1_500)
        #expect(trips.last?["name"] as? String == "Last")
        #expect(listed.stdout.hasPrefix("[\n  {\n    \"endDate\" : "), "pretty, sorted keys, as before")
        #expect(listed.stdout.hasSuffix("\n  }\n]\n"))
    }

    /// `export` writes the document as it reads it, to stdout or to `--output FILE` (atomically):
    /// both the same bytes, which import into a fresh container as the same records.
    @Test func anExportWrittenAsItIsReadImportsBackWhole() throws {
        let container = try TestContainer()
        try Self.importTrips(container, count: 1_500, longName: "Last")
        let stdout = try container.app("export")
        #expect(stdout.status == 0, "\(stdout)")
        let file = container.root.appendingPathComponent("export.json")
        try container.appOK("export", "--output", file.path)
        let written = try String(contentsOf: file, encoding: .utf8)
        // Only exportedAt may differ between the two runs.
        func withoutStamp(_ text: String) -> String {
            text.split(separator: "\n").filter { !$0.contains("\"exportedAt\"") }.joined(separator: "\n")
        }
        #expect(withoutStamp(written) == withoutStamp(stdout.stdout))
        let other = try TestContainer()
        try other.appOK("import", file.path)
        #expect(try other.app("trip", "list").stdout == (try container.app("trip", "list").stdout))
    }
}
