import Foundation
import Testing
import TripBoardSystem

/// Clocks that do not agree (docs/sync.md, Merge rules, Clocks): a device learns its offset from
/// the server's clock at each sync, and stamps its edits on the server's time scale, so that the
/// edit made later wins whichever device's clock is off — within an hour; beyond, it warns.
@Suite struct SyncClockTests {
    static func at(_ date: Date) -> [String: String] {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return ["TRIPBOARD_NOW": format.string(from: date)]
    }

    /// A's clock is 10 minutes behind (or ahead of) the server's and B's. Once A has synced, the
    /// edit made later in real time wins on both devices, whichever pushes first: before, the
    /// clock that was behind lost with the newer edit, and the one ahead won with the older.
    @Test(arguments: [(-600, true), (-600, false), (600, true), (600, false)])
    func theLaterEditWinsWhateverTheClocksOnceTheDeviceHasSynced(skew: Int, aPushesFirst: Bool) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let aClock = { Self.at(Date().addingTimeInterval(Double(skew))) }
        let trip = try b.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try b.sync()
        try a.sync(environment: aClock())
        let status = try #require(try a.json("sync", "status") as? [String: Any])
        let offset = try #require((status["account"] as? [String: Any])?["clockOffsetMilliseconds"] as? Int)
        #expect(abs(offset + skew * 1000) < 3000, "learned \(offset) ms for a clock \(skew) s off")

        // The device whose clock is behind edits 2 s later in real time; the one ahead 2 s earlier.
        let realStart = Date()
        let aEditsLater = skew < 0
        let aReal = realStart.addingTimeInterval(aEditsLater ? 2 : 0)
        let bReal = realStart.addingTimeInterval(aEditsLater ? 0 : 2)
        try a.ok("trip", "edit", trip, "--notes", "A's notes", environment: Self.at(aReal.addingTimeInterval(Double(skew))))
        try b.ok("trip", "edit", trip, "--notes", "B's notes", environment: Self.at(bReal))
        for device in aPushesFirst ? [a, b, a] : [b, a, b] {
            try device.sync(environment: device === a ? aClock() : [:])
        }
        let winner = aEditsLater ? "A's notes" : "B's notes"
        for device in [a, b] {
            #expect(try SyncServerMemoryTests.notes(device, trip).notes == winner)
        }
    }

    /// A clock a day behind is beyond what a server may correct (an hour): every sync says so in
    /// one warning line, learns nothing, and stamps with the device's own clock.
    @Test func aClockADayOffIsNotCorrectedAndSaidSo() throws {
        let (server, a, _) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        for _ in 0..<2 {
            let result = try a.app("sync", "now", "--json", environment: Self.at(Date().addingTimeInterval(-86_400)))
            #expect(result.status == 0, "\(result)")
            let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
            #expect(warnings.count == 1 && warnings[0].contains("1440 minutes behind the server's"), "\(result.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(report["clockOffset"] as? Int == 0 && (report["clockOffsetIgnored"] as? Int ?? 0) > 86_000_000, "\(report)")
        }
        let status = try #require(try a.json("sync", "status") as? [String: Any])
        #expect((status["account"] as? [String: Any])?["clockOffsetMilliseconds"] is NSNull)
    }

    /// A record sent again whole (here: the server lost its row) keeps the stamps this device
    /// knew, never lower: A's clock is 2 hours behind (beyond what sync corrects), so its own
    /// time of the pull is older than B's edit; sent again, the notes still carry a stamp at
    /// least as late as B's — else a replay of any value between the two would be believed.
    @Test func aRecordSentAgainNeverLowersTheStampsItHeld() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let aClock = { Self.at(Date().addingTimeInterval(-7200)) }
        let trip = try b.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30", "--notes", "B's notes")
        try b.sync()
        _ = try a.app("sync", "now", environment: aClock())
        func notesStamp() throws -> String {
            let fields = try #require(try a.json("sync", "fields", "--record", trip) as? [[String: Any]])
            return try #require(fields.first { $0["field"] as? String == "notes" }?["stamp"] as? String)
        }
        let held = try notesStamp()
        _ = try server.psql("DELETE FROM tripboard.records WHERE id = '\(trip)'")
        let again = try a.app("sync", "now", "--compare", "--json", environment: aClock())
        #expect(again.status == 0 && again.stdout.contains("\"reuploaded\" : 1"), "\(again)")
        #expect(try notesStamp() >= held, "sent again with a stamp older than the one A held")
        try b.sync()
        #expect(try SyncServerMemoryTests.notes(b, trip).notes == "B's notes")
    }
}
