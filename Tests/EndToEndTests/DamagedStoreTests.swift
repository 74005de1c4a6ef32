import Foundation
import Testing
import TripBoardModel

/// When the store will not open or has damaged pages: what does not need it keeps working,
/// `container check` reports instead of dying, writers refuse a store a command found damaged,
/// `container salvage` copies out what reads, and `container diagnose` tells support the state
/// without a word of the user's data.
@Suite struct DamagedStoreTests {
    static let pageSize = 4096

    /// A container with `trips` trips (ids in order), each with one place and one booking, the
    /// store checkpointed so that every page is in the main file.
    static func seeded(trips count: Int, device: String? = nil) throws -> (TestContainer, [String]) {
        let container = try TestContainer(device: device)
        try container.appOK("container", "init")
        var document: [String: Any] = [:]
        var tripIDs: [String] = []
        var trips: [[String: Any]] = [], places: [[String: Any]] = [], bookings: [[String: Any]] = []
        for index in 0..<count {
            let id = UUID().uuidString.lowercased()
            tripIDs.append(id)
            let day = String(format: "2027-%02d-%02d", index % 12 + 1, index % 28 + 1)
            trips.append(["id": id, "name": "Trip \(index)", "startDate": day, "endDate": day, "notes": String(repeating: "n", count: 150)])
            places.append(["id": UUID().uuidString.lowercased(), "tripId": id, "name": "Place \(index)"])
            bookings.append(["id": UUID().uuidString.lowercased(), "tripId": id, "kind": "hotel", "title": "Hotel \(index)",
                             "startsAt": day + "T15:00:00Z"])
        }
        document["trips"] = trips
        document["places"] = places
        document["bookings"] = bookings
        let file = container.root.path + "/seed.json"
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: file))
        try container.appOK("import", file)
        #expect(try container.sqlite("PRAGMA wal_checkpoint(TRUNCATE)").status == 0)
        return (container, tripIDs)
    }

    /// Overwrites whole pages of the store with bytes that no b-tree page begins with.
    static func damage(_ container: TestContainer, pages: [Int]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: container.storePath))
        for page in pages {
            try handle.seek(toOffset: UInt64((page - 1) * pageSize))
            try handle.write(contentsOf: Data(repeating: 0xff, count: pageSize))
        }
        try handle.close()
    }

    /// Pages of `name` (a table or index) of the given `pagetype`, from SQLite's dbstat table.
    static func pages(of name: String, type: String, in container: TestContainer) throws -> [Int] {
        try container.sqlite("SELECT pageno FROM dbstat WHERE name = '\(name)' AND pagetype = '\(type)' ORDER BY pageno", readOnly: true)
            .stdoutLines.compactMap { Int($0) }
    }

    @Test func theKeychainPreferencesAndCacheWorkWithoutAReadableStore() throws {
        let container = try TestContainer(extraEnvironment: ["TRIPBOARD_DEVICE_DIR": NSTemporaryDirectory() + "/device-\(UUID())"])
        try container.addTrip()
        try container.appOK("keychain", "set", "api", "ana", stdin: "s3cret")
        try container.appOK("prefs", "set", "theme", "dark")
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: container.storePath))
        try? FileManager.default.removeItem(atPath: container.storePath + "-wal")
        #expect(try container.app("trip", "list").status == 65)
        for arguments in [["keychain", "list"], ["keychain", "get", "api", "ana"], ["auth", "status"], ["prefs", "list"],
                          ["prefs", "get", "theme"], ["prefs", "set", "currency", "JPY"], ["cache", "clear"], ["container", "info"],
                          ["container", "diagnose"]] {
            let result = try container.app(arguments: arguments)
            #expect(result.status == 0, "\(arguments) should not need the store: \(result)")
        }
        #expect(try container.appOK("keychain", "get", "api", "ana") == "s3cret")
        let info = try container.app("container", "info", "--json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(json["storeState"] as? String == "corrupt", "\(info)")
        #expect(json["counts"] is NSNull && json["schemaVersion"] is NSNull)
        // Files it could not count are unknown, never "0 sealed, 0 in the clear".
        let protection = try #require(json["protection"] as? [String: Any])
        #expect(protection["attachments"] is NSNull && protection["thumbnails"] is NSNull && protection["recovered"] is NSNull, "\(protection)")
        #expect((protection["filesProblem"] as? String)?.isEmpty == false, "\(protection)")
        let text = try container.appOK("container", "info")
        #expect(text.contains("protection:  files unknown (") && !text.contains("0 sealed"), "\(text)")
        #expect((try Data(contentsOf: URL(fileURLWithPath: container.storePath))) == Data(repeating: 0x41, count: 8192), "left as it was")
    }

    @Test func checkReportsADamagedStoreInsteadOfDying() throws {
        let (container, _) = try Self.seeded(trips: 600)
        try Self.damage(container, pages: try Self.pages(of: "trips_live_by_start", type: "leaf", in: container).prefix(1).map { $0 })
        let check = try container.app("container", "check", "--json")
        #expect(check.status == 65, "\(check)")
        #expect(check.stderrLines.count == 1 && check.stderr.contains("container salvage"), "\(check)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any])
        #expect(!((report["storeProblems"] as? [String]) ?? []).isEmpty, "\(report)")
    }

    @Test func aDamagedPageMetOnceMakesWritersRefuseTheStore() throws {
        let (container, _) = try Self.seeded(trips: 600)
        try Self.damage(container, pages: try Self.pages(of: "trips_live_by_start", type: "internal", in: container)
            + Self.pages(of: "trips_live_by_start", type: "leaf", in: container).prefix(2))
        let first = try container.app("trip", "add", "--name", "X", "--start", "2027-01-05", "--end", "2027-01-06")
        #expect(first.status == 65 && first.stderr.contains("damaged page"), "\(first)")
        let manifest = try String(contentsOfFile: container.path + "/container.json", encoding: .utf8)
        #expect(manifest.contains("storeDamage"), "\(manifest)")
        // A write that would not have touched the damaged pages is refused all the same.
        let second = try container.app("place", "add", "--trip", "0", "--name", "Y")
        #expect(second.status == 65 && second.stderr.contains("has a damaged page (met at"), "\(second)")
        #expect(try container.app("prefs", "list").status == 0, "what does not need the store still works")
    }

    @Test func salvageOfADamagedIndexKeepsEveryRow() throws {
        let (container, _) = try Self.seeded(trips: 600)
        try Self.damage(container, pages: try Self.pages(of: "trips_live_by_start", type: "leaf", in: container))
        let salvage = try container.app("container", "salvage", "--json")
        #expect(salvage.status == 0, "\(salvage)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(salvage.stdout.utf8)) as? [String: Any])
        let tables = try #require(report["tables"] as? [[String: Any]])
        // Then the sync tables (empty here), after the four record tables.
        #expect(tables.map { $0["copied"] as? Int } == [600, 600, 600, 0] + Array(repeating: 0, count: max(0, tables.count - 4)))
        #expect(try container.sqlite("SELECT count(*) FROM trips").trimmedStdout == "600")
        #expect(try container.appOK("container", "check") == "The container is consistent.")
        let kept = try #require(report["damagedStoreKeptIn"] as? String)
        #expect(FileManager.default.fileExists(atPath: container.path + "/" + kept + "/TripBoard.sqlite"), "kept, never deleted")
        try container.addTrip("After salvage")
    }

    @Test func salvageOfDamagedTablePagesCountsWhatIsLostAndKeepsTheChildren() throws {
        let (container, tripIDs) = try Self.seeded(trips: 600)
        let leaves = try Self.pages(of: "trips", type: "leaf", in: container)
        try Self.damage(container, pages: [leaves[2], leaves[leaves.count / 2]])
        let salvage = try container.app("container", "salvage", "--json")
        #expect(salvage.status == 0, "\(salvage)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(salvage.stdout.utf8)) as? [String: Any])
        let trips = try #require((report["tables"] as? [[String: Any]])?.first)
        let copied = try #require(trips["copied"] as? Int), lost = try #require(trips["lostAtMost"] as? Int)
        #expect(copied < 600 && copied + lost + ((trips["refused"] as? Int) ?? 0) == 600, "\(trips)")
        #expect((trips["unreadableRanges"] as? [String])?.count == 2, "\(trips)")
        // Every place and booking is kept: their lost trips are recreated under the same ids.
        #expect(try container.sqlite("SELECT count(*) FROM places").trimmedStdout == "600")
        #expect(try container.sqlite("SELECT count(*) FROM bookings").trimmedStdout == "600")
        #expect(try container.sqlite("SELECT count(*) FROM trips").trimmedStdout == "600")
        let placeholders = try #require(report["placeholders"] as? [String])
        #expect(placeholders.count == lost, "\(placeholders)")
        let recreated = try container.sqlite("SELECT id FROM trips WHERE name LIKE 'Recovered trip%'").stdoutLines
        #expect(Set(recreated).isSubset(of: Set(tripIDs)) && recreated.count == lost)
        #expect(try container.integrity() == "ok")
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }

    @Test(arguments: ["salvage.built", "salvage.kept", "salvage.unlinked", "salvage.published"])
    func aSalvageKilledAtAStepIsFinishedByTheNext(point: String) throws {
        let (container, _) = try Self.seeded(trips: 300)
        try Self.damage(container, pages: try Self.pages(of: "trips_live_by_start", type: "leaf", in: container))
        let killed = try container.app(arguments: ["container", "salvage"], environment: ["TRIPBOARD_CRASH_AT": point])
        #expect(killed.wasSignaled, "\(point): \(killed)")
        let writer = try container.app("trip", "add", "--name", "X", "--start", "2027-01-05", "--end", "2027-01-06")
        #expect(writer.status == 65, "\(point): writers stay away from a store being salvaged: \(writer)")
        let again = try container.app("container", "salvage")
        #expect(again.status == 0, "\(point): \(again)")
        #expect(try container.sqlite("SELECT count(*) FROM trips").trimmedStdout == "300", "\(point)")
        #expect(try container.appOK("container", "check") == "The container is consistent.", "\(point)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: container.path + "/store").filter { $0.hasPrefix("damaged-") }
        #expect(kept.count == 1, "\(point): \(kept)")
        try container.addTrip("After")
    }

    @Test func salvageOfASoundStoreChangesNothingAndClearsAStaleMark() throws {
        let (container, _) = try Self.seeded(trips: 10)
        let before = try container.state()
        #expect(try container.appOK("container", "salvage").contains("nothing to salvage"))
        #expect(try container.state() == before)
        var manifest = try String(contentsOfFile: container.path + "/container.json", encoding: .utf8)
        manifest = manifest.replacingOccurrences(of: "\"storeCreated\" : true", with: "\"storeCreated\" : true, \"storeDamage\" : {\"foundAt\" : \"2026-12-01T00:00:00.000Z\", \"detail\" : \"test\"}")
        try manifest.write(toFile: container.path + "/container.json", atomically: true, encoding: .utf8)
        #expect(try container.app("trip", "list").status == 65)
        let check = try container.app("container", "check")
        #expect(check.status == 65 && check.stdout.contains("damage mark"), "\(check)")
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(try container.app("trip", "list").status == 0)
    }

    /// The planted strings are every kind of thing a user keeps: none may reach the report.
    @Test func theDiagnosisHoldsNoneOfTheUsersData() throws {
        let container = try TestContainer(extraEnvironment: ["TRIPBOARD_DEVICE_DIR": NSTemporaryDirectory() + "/device-\(UUID())"])
        let planted = ["Zanzibarquest", "notes-Quokka", "place-Wombat", "city-Axolotl", "title-Narwhal", "REFXYZ987",
                       "ticket-Pangolin.pdf", "service-Okapi", "account-Tapir", "secret-Capybara"]
        let trip = try container.appOK("trip", "add", "--name", planted[0], "--start", "2026-12-12", "--end", "2026-12-15",
                                       "--notes", planted[1])
        let place = try container.appOK("place", "add", "--trip", trip, "--name", planted[2], "--city", planted[3])
        let booking = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", planted[4],
                                          "--starts-at", "2026-12-12T07:35Z", "--reference", planted[5])
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "t.pdf")
        _ = try container.share([ticket, "--trip", trip, "--booking", booking, "--name", planted[6]])
        try container.appOK("keychain", "set", planted[7], planted[8], stdin: planted[9])
        try container.appOK("prefs", "set", "currency", "JPY")
        let output = container.root.path + "/diagnosis.json"
        let result = try container.app("container", "diagnose", "--output", output)
        #expect(result.status == 0, "\(result)")
        let report = try String(contentsOfFile: output, encoding: .utf8)
        for secret in planted + [trip, place, booking, String(trip.prefix(8)), "JPY", container.path, container.root.path] {
            #expect(!report.contains(secret), "the diagnosis names \(secret)")
        }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any])
        #expect((json["integrity"] as? [String: Any])?["ok"] as? Bool == true)
        #expect(((json["store"] as? [String: Any])?["counts"] as? [String: Any])?["trips"] as? Int == 1)
        #expect((json["keychain"] as? [String: Any])?["items"] as? Int == 1)
        var info = stat()
        #expect(stat(output, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }
}
