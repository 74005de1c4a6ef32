import Foundation
import Testing

/// Data that export and sync could not carry is refused on the way in, on every path: `app
/// import`, the commands and the `$EDITOR` file — one `error:` line naming the record and the
/// rule, nothing written.
@Suite struct HostileImportTests {
    /// A container with a trip and an attachment (filed by `share-extension`); returns the
    /// attachment's id.
    private func containerWithAnAttachment() throws -> (TestContainer, String) {
        let container = try TestContainer()
        try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let file = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let shared = try container.shareOK(file)
        let attachment = try #require(shared["attachment"] as? [String: Any])
        return (container, try #require(attachment["id"] as? String))
    }

    @Test(arguments: HostileImports.documents)
    func aDocumentExportOrSyncCouldNotCarryIsRefusedWhole(document: HostileImports.Document) throws {
        let (container, attachmentID) = document.needsAnAttachment ? try containerWithAnAttachment() : (try TestContainer(), "")
        if !document.needsAnAttachment { try container.addTrip() }
        let before = try container.state()
        let result = try container.app("import", "-", stdin: document.json.replacingOccurrences(of: "ATTACHMENT_ID", with: attachmentID))
        #expect(result.status == 65, "\(document): \(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(document): \(result)")
        #expect(result.stderr.contains(document.message), "\(document): \(result)")
        #expect(result.stderr.contains("nothing was imported"), "\(document): \(result)")
        #expect(result.stdout.isEmpty)
        #expect(try container.state() == before, "\(document) changed the container")
    }

    /// The edges of what is accepted export and import again unchanged.
    @Test func theLatestAndEarliestTimesAndTheLongestTextsTravel() throws {
        let container = try TestContainer()
        let name = String(repeating: "𝄞", count: 200)  // 200 characters, 800 bytes
        let document = #"""
            {"trips": [{"id": "\#(HostileImports.trip)", "name": "\#(name)", "startDate": "9999-12-30", "endDate": "9999-12-31",
                        "updatedAt": "9999-12-31T23:59:59.999Z", "syncState": "synchronized", "remoteVersion": 9007199254740991}],
             "bookings": [{"tripId": "\#(HostileImports.trip)", "kind": "FLIGHT", "title": "First", "startsAt": "0001-01-01T00:00+00:00",
                           "reference": "\#(String(repeating: "R", count: 100))"}]}
            """#
        try container.appOK("import", "-", stdin: document)
        let exported = try container.appOK("export")
        let other = try TestContainer()
        try other.appOK("import", "-", stdin: exported)
        #expect(try other.appOK("export").replacingOccurrences(of: #""exportedAt" : "[^"]*""#, with: "", options: .regularExpression)
                == exported.replacingOccurrences(of: #""exportedAt" : "[^"]*""#, with: "", options: .regularExpression))
        #expect(exported.contains(#""kind" : "flight""#), "FLIGHT is read as booking add --kind FLIGHT reads it")
    }

    @Test func importReadsABookingKindInAnyCaseLikeBookingAdd() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try container.appOK("booking", "add", "--trip", trip, "--kind", "FLIGHT", "--title", "By command")
        try container.appOK("import", "-", stdin: #"{"bookings": [{"tripId": "\#(trip)", "kind": "FLIGHT", "title": "By import"}]}"#)
        let kinds = try container.sqlite("SELECT title || ' ' || kind FROM bookings ORDER BY rowid").stdoutLines
        #expect(kinds == ["By command flight", "By import flight"])
    }

    /// Ten megabytes of combining marks on one letter is one character: refused by its bytes, so
    /// that the widget never prints it as one line.
    @Test func aTenMegabyteNameOfOneCharacterNeverReachesTheWidget() throws {
        let container = try TestContainer()
        try container.addTrip("Past", start: "2020-01-01", end: "2020-01-02")
        let name = "e" + String(repeating: "\u{301}", count: 5_000_000)
        let before = try container.state()
        let result = try container.app("import", "-", stdin: #"{"trips": [{"name": "\#(name)", "startDate": "2026-12-12", "endDate": "2026-12-15"}]}"#)
        #expect(result.status == 65, "\(result.status) \(result.stderr.prefix(300))")
        #expect(result.stderr == "error: trips[0].name is longer than 800 bytes of UTF-8; nothing was imported\n")
        #expect(try container.state() == before)
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-01T10:00Z"], environment: container.environment)
        #expect(widget.stdout == "No upcoming trips\n", "\(widget)")
    }

    @Test(arguments: [
        (["trip", "add", "--name", HostileImports.combiningMarks, "--start", "2026-12-12", "--end", "2026-12-15"], "name is longer than 800 bytes"),
        (["trip", "edit", "TRIP", "--notes", String(repeating: "\u{301}", count: 20_001)], "notes is longer than 40000 bytes"),
        (["place", "add", "--trip", "TRIP", "--name", "P", "--city", HostileImports.combiningMarks], "city is longer than 800 bytes"),
        (["booking", "add", "--trip", "TRIP", "--kind", "car", "--title", HostileImports.combiningMarks], "title is longer than 800 bytes"),
        (["booking", "add", "--trip", "TRIP", "--kind", "car", "--title", "B", "--reference", "R" + String(repeating: "\u{301}", count: 200)],
         "reference is longer than 400 bytes"),
        (["booking", "add", "--trip", "TRIP", "--kind", "car", "--title", "B", "--starts-at", "9999-12-31T23:00-05:00"],
         "startsAt falls in the year 10000 in UTC"),
        (["sync", "ack", "TRIP", "--version", "9007199254740992"], "remoteVersion must be at most 9007199254740991"),
    ])
    func commandsApplyTheSameRules(arguments: [String], message: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let before = try container.state()
        let result = try container.app(arguments: arguments.map { $0 == "TRIP" ? trip : $0 })
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains(message), "\(result)")
        #expect(try container.state() == before)
    }

    @Test func theEditorFileIsHeldToTheSameRules() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let before = try container.state()
        let editor = "sed -i 's/\"name\" : \"Lisbon\"/\"name\" : \"\(HostileImports.combiningMarks)\"/'"
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": editor])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.hasPrefix("error: name is longer than 800 bytes of UTF-8; nothing was changed; your edit is kept in "), "\(result)")
        if let path = EditorRecoveryTests.keptPath(result.stderr) { try? FileManager.default.removeItem(atPath: path) }
        #expect(try container.state() == before)
    }
}
