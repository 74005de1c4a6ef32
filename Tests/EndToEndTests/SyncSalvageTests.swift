import Foundation
import Testing

/// A salvaged store and sync (docs/sync.md, "Placeholders a salvage made"): the server's copies
/// of damaged records replace the placeholders a salvage made, rows the damage took come back
/// from the server, and no placeholder is ever pushed.
@Suite struct SyncSalvageTests {
    @Test func theServerHealsASalvagedStoreAndNoPlaceholderIsPushed() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        var trips: [[String: Any]] = [], places: [[String: Any]] = [], bookings: [[String: Any]] = []
        for index in 0..<300 {
            let id = UUID().uuidString.lowercased()
            let day = String(format: "2027-%02d-%02d", index % 12 + 1, index % 28 + 1)
            trips.append(["id": id, "name": "Trip \(index)", "startDate": day, "endDate": day, "notes": String(repeating: "n", count: 150)])
            places.append(["id": UUID().uuidString.lowercased(), "tripId": id, "name": "Place \(index)"])
            bookings.append(["id": UUID().uuidString.lowercased(), "tripId": id, "kind": "hotel", "title": "Hotel \(index)",
                             "startsAt": day + "T15:00:00Z", "reference": "R\(index)"])
        }
        let file = a.container.root.path + "/seed.json"
        try JSONSerialization.data(withJSONObject: ["trips": trips, "places": places, "bookings": bookings])
            .write(to: URL(fileURLWithPath: file))
        try a.ok("import", file)
        try a.sync()
        try b.sync()
        #expect(try a.container.sqlite("PRAGMA wal_checkpoint(TRUNCATE)").status == 0)

        // A trip leaf in the middle (its trips recreated as placeholders), the last booking leaf
        // (rows after the last one read: counted on the primary key's index).
        let tripLeaves = try DamagedStoreTests.pages(of: "trips", type: "leaf", in: a.container)
        let bookingLeaves = try DamagedStoreTests.pages(of: "bookings", type: "leaf", in: a.container)
        try DamagedStoreTests.damage(a.container, pages: [tripLeaves[tripLeaves.count / 2], try #require(bookingLeaves.last)])
        let salvage = try a.app("container", "salvage", "--json")
        #expect(salvage.status == 0, "\(salvage)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(salvage.stdout.utf8)) as? [String: Any])
        let tables = Dictionary(((report["tables"] as? [[String: Any]]) ?? []).map { ($0["table"] as? String ?? "", $0) },
                                uniquingKeysWith: { first, _ in first })
        let lostTrips = try #require(tables["trips"]?["lost"] as? Int)
        let lostBookings = try #require(tables["bookings"]?["lost"] as? Int)
        #expect(lostTrips > 0 && (tables["trips"]?["copied"] as? Int) == 300 - lostTrips, "\(tables["trips"] ?? [:])")
        #expect(lostBookings > 0 && (tables["bookings"]?["copied"] as? Int) == 300 - lostBookings, "counted honestly: \(tables["bookings"] ?? [:])")
        #expect((report["placeholders"] as? [String])?.count == lostTrips)
        let human = try a.app("container", "salvage")
        #expect(human.status == 0)

        let healed = try a.sync()
        #expect(healed["placeholdersReplaced"] as? Int == lostTrips && healed["pending"] as? Int == 0, "\(healed)")
        #expect((healed["conflicts"] as? Int ?? 0) == 0, "\(healed)")
        let again = try a.sync()
        #expect(again["conflicts"] as? Int == 0 && again["pushed"] as? Int == 0, "\(again)")
        #expect(!(try a.ok("trip", "list")).contains("Recovered"), "the server's names are back")
        try b.sync()
        #expect(!(try b.ok("trip", "list")).contains("Recovered"), "no placeholder reached another device")
        #expect(try DeviceRecords.live(of: a) == DeviceRecords.live(of: b))
        #expect(try a.ok("booking", "list", "--json").components(separatedBy: "\"reference\"").count - 1 == 300, "every booking is back")
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE NOT deleted") == "900")
    }
}
