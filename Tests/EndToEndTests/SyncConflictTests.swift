import Foundation
import Testing
import TripBoardStorage

/// `app sync conflicts`: two devices edit the same fields while apart; the later edit wins on
/// both, and the value that lost is kept on the device that merged, whichever pushed first, and
/// on the device whose edit lost.
@Suite struct SyncConflictTests {
    /// Timeline (both orders): A and B hold the trip at version 1 → A edits notes and dates
    /// (clock +60 s), B the same fields (+65 s: the later) → `first` syncs (pushes), `second`
    /// syncs (pulls, merges: A's values lose), `first` syncs (pulls B's values).
    @Test(arguments: [true, false])
    func theLosingValueOfASameFieldEditIsKeptAndListed(aPushesFirst: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2026-12-01", "--end", "2026-12-04", "--notes", "Tram 28")
        try a.sync()
        try b.sync()

        let format = ISO8601DateFormatter()
        try a.ok("trip", "edit", trip, "--notes", "Pastéis in Belém (A)", "--start", "2026-12-02", "--end", "2026-12-05",
                 environment: ["TRIPBOARD_NOW": format.string(from: Date().addingTimeInterval(60))])
        try b.ok("trip", "edit", trip, "--notes", "Fado in Alfama (B)", "--start", "2026-12-03", "--end", "2026-12-06",
                 environment: ["TRIPBOARD_NOW": format.string(from: Date().addingTimeInterval(65))])
        let (first, second) = aPushesFirst ? (a, b) : (b, a)
        #expect(try first.sync()["conflictsKept"] as? Int == 0)
        let merged = try second.sync()
        #expect(merged["conflictsKept"] as? Int == 2 && merged["merged"] as? Int == 1, "\(merged)")
        // When the other device's edit lost (A pushed first), the merged record tells it so.
        #expect(try first.sync()["conflictsKept"] as? Int == (aPushesFirst ? 2 : 0))

        for device in [a, b] {
            let row = try device.container.sqlite("SELECT notes, start_date, end_date FROM trips WHERE id = '\(trip)'").trimmedStdout
            #expect(row == "Fado in Alfama (B)|2026-12-03|2026-12-06")
        }
        let told = try #require(try first.json("sync", "conflicts") as? [[String: Any]])
        #expect(told.count == (aPushesFirst ? 2 : 0), "\(told)")
        for conflict in told {
            #expect(conflict["lostOn"] as? String == "here" && conflict["recordName"] as? String == "Lisbon", "\(conflict)")
            #expect(conflict["field"] as? String != "notes" || conflict["lost"] as? String == "Pastéis in Belém (A)", "\(conflict)")
        }
        let conflicts = try #require(try second.json("sync", "conflicts") as? [[String: Any]])
        #expect(conflicts.count == 2, "\(conflicts)")
        let byField = Dictionary(conflicts.map { ($0["field"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        let notes = try #require(byField["notes"])
        #expect(notes["lost"] as? String == "Pastéis in Belém (A)" && notes["kept"] as? String == "Fado in Alfama (B)")
        #expect(notes["kind"] as? String == "trip" && notes["recordId"] as? String == trip && notes["recordName"] as? String == "Lisbon")
        #expect(notes["lostOn"] as? String == (aPushesFirst ? "elsewhere" : "here"))
        let dates = try #require(byField["dates"])
        #expect(dates["lost"] as? [String: String] == ["start": "2026-12-02", "end": "2026-12-05"], "the dates lose as one: \(dates)")
        #expect((notes["lostStamp"] as? String ?? "") < (notes["keptStamp"] as? String ?? ""))

        let table = try second.ok("sync", "conflicts")
        #expect(table.contains("Pastéis in Belém (A)") && table.contains(aPushesFirst ? "another device" : "this device"), "\(table)")
        #expect(table.contains("trip Lisbon"), "the record by its name: \(table)")
        let status = try #require(try second.json("sync", "status") as? [String: Any])
        #expect(status["conflicts"] as? Int == 2)
        #expect(try second.ok("sync", "status").contains("2 kept"))

        // Syncing again keeps them once; dismissing one (by a prefix of its id) removes that one only.
        try second.sync()
        try first.sync()
        #expect(try second.container.sqlite("SELECT count(*) FROM sync_conflicts").trimmedStdout == "2")
        #expect(try (first.json("sync", "conflicts") as? [Any])?.count == (aPushesFirst ? 2 : 0), "told once")
        let id = try #require(notes["id"] as? String)
        let dismissed = try second.app("sync", "conflicts", "--dismiss", String(id.prefix(12)))
        #expect(dismissed.status == 0 && dismissed.stderr.contains(id), "\(dismissed)")
        #expect(try (second.json("sync", "conflicts") as? [[String: Any]])?.map { $0["field"] as? String } == ["dates"])
        let unknown = try second.app("sync", "conflicts", "--dismiss", id)
        #expect(unknown.status == 66 && unknown.stderr.contains("no kept conflict"), "\(unknown)")
        #expect(try second.container.sqlite("SELECT count(*) FROM sync_conflicts").trimmedStdout == "1")
    }

    /// An edit that loses on one device and then, with that device's edit, on another is still
    /// listed on its own device, which pulls only the last merge: a push carries on the losing
    /// values the record already told of (`lostEdits`), with its own. Before, C's push replaced
    /// B's `lostEdits`, and A never heard that its name lost (torture seed 996832742).
    @Test func anEditThatLosesTwiceIsListedOnItsDevice() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let c = try SyncDevice()
        #expect(try c.join(server).status == 0)
        let trip = try a.ok("trip", "add", "--name", "Porto", "--start", "2026-12-01", "--end", "2026-12-04")
        try a.sync()
        try b.sync()
        try c.sync()

        let format = ISO8601DateFormatter()
        func at(_ seconds: Double) -> [String: String] { ["TRIPBOARD_NOW": format.string(from: Date().addingTimeInterval(seconds))] }
        try a.ok("trip", "edit", trip, "--name", "Porto (A)", environment: at(60))
        try b.ok("trip", "edit", trip, "--name", "Porto (B)", environment: at(70))
        try c.ok("trip", "edit", trip, "--name", "Porto (C)", "--notes", "Ribeira", environment: at(80))
        try a.sync()
        #expect(try b.sync()["conflictsKept"] as? Int == 1, "B's name beats A's")
        #expect(try c.sync()["conflictsKept"] as? Int == 1, "C's name beats B's")
        #expect(try a.sync()["conflictsKept"] as? Int == 1, "A pulls C's version only, and hears of its own loss there")
        #expect(try b.sync()["conflictsKept"] as? Int == 1)

        for (device, lost) in [(a, "Porto (A)"), (b, "Porto (B)")] {
            let listed = try #require(try device.json("sync", "conflicts") as? [[String: Any]])
            let here = listed.filter { $0["lostOn"] as? String == "here" }
            #expect(here.count == 1 && here.first?["lost"] as? String == lost && here.first?["kept"] as? String == "Porto (C)", "\(listed)")
        }
        let merged = try #require(try c.json("sync", "conflicts") as? [[String: Any]])
        #expect(merged.map { $0["lost"] as? String } == ["Porto (B)"] && merged.first?["lostOn"] as? String == "elsewhere", "\(merged)")
        // Told once: syncing again keeps nothing twice, and every device ends on C's name.
        for device in [a, b, c] { #expect(try device.sync()["conflictsKept"] as? Int == 0) }
        for device in [a, b, c] { #expect(try SyncTests.tripName(device, trip) == "Porto (C)") }
        #expect(try a.container.sqlite("SELECT count(*) FROM sync_conflicts").trimmedStdout == "1")
    }

    /// Fields edited on one side only, or the same value typed on both, are no conflict.
    @Test func editsThatDoNotCompeteKeepNothing() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.container.addTrip("Ghent", start: "2026-12-01", end: "2026-12-04")
        try a.sync()
        try b.sync()
        try a.ok("trip", "edit", trip, "--name", "Gent", "--notes", "Same words")
        try b.ok("trip", "edit", trip, "--notes", "Same words", "--start", "2026-12-02", "--end", "2026-12-05")
        try a.sync()
        #expect(try b.sync()["conflictsKept"] as? Int == 0)
        try a.sync()
        for device in [a, b] {
            #expect(try device.ok("sync", "conflicts") == "No conflicts: no edit has lost a merge on this device.")
        }
        #expect(try a.content() == b.content())
    }

    /// `sync fields` shows the stamps that decide a merge: each field of a synced trip with the
    /// value and stamp the server had, the incarnation, and an edit made here and not yet sent.
    @Test func syncFieldsShowsWhatDecidesAMerge() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30", "--notes", "first")
        try a.sync()
        try b.sync()
        try b.ok("trip", "edit", trip, "--notes", "second")
        let fields = try #require(try b.json("sync", "fields", "--record", trip) as? [[String: Any]])
        #expect(fields.map { $0["field"] as? String } == ["name", "dates", "notes"], "\(fields)")
        let notes = try #require(fields.first { $0["field"] as? String == "notes" })
        #expect(notes["value"] as? String == "first" && notes["editedHere"] as? Bool == true && notes["incarnation"] as? String == "", "\(notes)")
        let stamp = try #require(notes["stamp"] as? String)
        #expect(stamp.range(of: #"^[0-9]{13}-[0-9a-f]{4}-[0-9a-f]+$"#, options: .regularExpression) != nil, "\(stamp)")
        try b.sync()
        let after = try #require(try b.json("sync", "fields", "--record", trip) as? [[String: Any]])
        let sent = try #require(after.first { $0["field"] as? String == "notes" })
        #expect(sent["value"] as? String == "second" && sent["editedHere"] as? Bool == false, "\(sent)")
        #expect(try #require(sent["stamp"] as? String) > stamp)
        #expect(try a.ok("sync", "fields").contains("notes"))
        let unsynced = try TestContainer()
        _ = try unsynced.addTrip()
        #expect(try unsynced.appOK("sync", "fields").trimmingCharacters(in: .whitespacesAndNewlines) == "No synced records on this device.")
    }
}
