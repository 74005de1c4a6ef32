import Foundation
import Testing
import TripBoardStorage
import TripBoardSystem

/// The `app` contract, run as a user runs it: the built executable on a fresh container.
@Suite struct AppCommandTests {
    @Test func tripLifecycleFromAddToDelete() throws {
        let container = try TestContainer()
        let id = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        #expect(id.count == 36)
        #expect(try container.appOK("trip", "list").contains("Lisbon"))

        try container.appOK("trip", "edit", String(id.prefix(6)), "--name", "Lisboa", "--notes", "pastéis")
        let shown = try container.appOK("trip", "show", id, "--json")
        let trip = try #require(try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any])
        #expect(trip["name"] as? String == "Lisboa")
        #expect(trip["notes"] as? String == "pastéis")

        try container.appOK("trip", "delete", String(id.prefix(8)))
        #expect(try container.appOK("trip", "list", "--json") == "[\n\n]" || container.appOK("trip", "list", "--json") == "[]")
        #expect(try container.app("trip", "show", id).status == 66)
    }

    @Test func tripJSONHasExactlyTheDocumentedKeys() throws {
        let container = try TestContainer()
        try container.addTrip()
        let listed = try container.appOK("trip", "list", "--json")
        let trips = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
        #expect(trips.count == 1)
        #expect(Set(trips[0].keys) == ["id", "name", "startDate", "endDate", "notes", "syncState", "remoteVersion", "updatedAt"])
        #expect(trips[0]["syncState"] as? String == "pendingUpload")
        #expect(trips[0]["remoteVersion"] is NSNull)
    }

    @Test func placesAndBookingsBelongToATrip() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let place = try container.appOK("place", "add", "--trip", trip, "--name", "Belém Tower", "--city", "Lisbon")
        try container.appOK("place", "visit", String(place.prefix(8)))
        let places = try container.appOK("place", "list", "--trip", trip, "--json")
        #expect(places.contains("\"visited\" : true"))

        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Hotel Avenida",
                            "--starts-at", "2026-12-12T15:00+00:00")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351",
                            "--starts-at", "2026-12-12T07:35+00:00", "--reference", "X7K2QP")
        let bookings = try container.appOK("booking", "list", "--trip", trip, "--json")
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(bookings.utf8)) as? [[String: Any]])
        #expect(decoded.map { $0["title"] as? String } == ["TP 1351", "Hotel Avenida"], "earliest first")
        #expect(decoded.first?["startsAt"] as? String == "2026-12-12T07:35:00+00:00")

        // Deleting the trip takes its places and bookings with it, into the trash.
        try container.appOK("trip", "delete", trip)
        #expect(try container.sqlite("SELECT count(*) FROM places WHERE trashed_with = '\(trip)'; SELECT count(*) FROM bookings WHERE trashed_with = '\(trip)';").stdoutLines == ["1", "2"])
        #expect(try container.app("place", "list", "--trip", trip).status == 66, "hidden with its trip")
    }

    @Test func syncAcknowledgementTurnsDeletesIntoTombstonesUntilAcknowledged() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try container.appOK("sync", "ack", trip, "--version", "3")
        #expect(try container.appOK("sync", "pending") == "Everything is synchronized.")

        try container.appOK("trip", "edit", trip, "--notes", "changed")
        let pending = try container.appOK("sync", "pending", "--json")
        #expect(pending.contains("\"syncState\" : \"pendingUpload\""))
        try container.appOK("sync", "ack", trip, "--version", "4")

        try container.appOK("trip", "delete", trip)
        #expect(try container.appOK("trip", "list") .contains("No trips yet"))
        #expect(try container.appOK("sync", "pending", "--json").contains("pendingDeletion"))
        #expect(try container.app("sync", "ack", trip, "--version", "2").status == 65, "versions never go back")
        try container.appOK("sync", "ack", trip, "--version", "5")
        #expect(try container.appOK("sync", "pending") == "Everything is synchronized.")
        #expect(try container.sqlite("SELECT sync_state, remote_version FROM trips").trimmedStdout == "synchronized|5",
                "acknowledged, still in the trash: restorable")
        try container.appOK("trash", "empty", "--yes")
        #expect(try container.sqlite("SELECT count(*) FROM trips").trimmedStdout == "0", "the server had confirmed: gone for good")
    }

    @Test func staleAcknowledgementIsRefusedAsBusy() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let result = try container.app("sync", "ack", trip, "--version", "1", "--if-updated-at", "2000-01-01T00:00:00.000Z")
        #expect(result.status == 75, "\(result)")
        #expect(try container.appOK("sync", "pending").contains(trip))
    }

    @Test func preferencesAreTypedWithDefaults() throws {
        let container = try TestContainer()
        try container.appOK("container", "init")
        #expect(try container.appOK("prefs", "get", "currency") == "EUR")
        try container.appOK("prefs", "set", "currency", "jpy")
        try container.appOK("prefs", "set", "showsVisitedPlaces", "false")
        #expect(try container.appOK("prefs", "get", "currency") == "JPY")
        let listed = try container.appOK("prefs", "list", "--json")
        let values = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any])
        #expect(values["showsVisitedPlaces"] as? Bool == false)
        #expect(values["theme"] as? String == "system")
        #expect(try container.bytes("container/preferences/preferences.json").count > 0)
    }

    @Test func corruptPreferencesAreMovedAsideWithOneWarning() throws {
        let container = try TestContainer()
        try container.appOK("prefs", "set", "theme", "dark")
        try Data("{not json".utf8).write(to: container.root.appendingPathComponent("container/preferences/preferences.json"))
        let first = try container.app("prefs", "get", "theme")
        #expect(first.status == 0)
        #expect(first.trimmedStdout == "system")
        #expect(first.stderr.contains("moved aside"))
        let second = try container.app("prefs", "get", "theme")
        #expect(second.stderr.isEmpty, "warned once")
        let names = try FileManager.default.contentsOfDirectory(atPath: container.path + "/preferences")
        #expect(names.contains { $0.hasPrefix("preferences.json.corrupt-") })
    }

    @Test func exportThenImportIntoAnotherContainerRoundTrips() throws {
        let source = try TestContainer()
        let trip = try source.addTrip()
        try source.appOK("place", "add", "--trip", trip, "--name", "Alfama")
        try source.appOK("booking", "add", "--trip", trip, "--kind", "train", "--title", "Alfa Pendular", "--starts-at", "2026-12-13T09:00+00:00")
        try source.appOK("prefs", "set", "mapStyle", "hybrid")
        let exportFile = source.root.appendingPathComponent("export.json").path
        try source.appOK("export", "--output", exportFile)
        let mode = try FileManager.default.attributesOfItem(atPath: exportFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let destination = try TestContainer()
        let summary = try destination.appOK("import", exportFile, "--json")
        #expect(summary.contains("\"trips\" : 1"))
        #expect(try destination.appOK("prefs", "get", "mapStyle") == "hybrid")
        #expect(try destination.appOK("trip", "show", trip, "--json") == source.appOK("trip", "show", trip, "--json"))

        // Importing the same document again would duplicate ids: refused, nothing added.
        let before = try destination.state()
        let again = try destination.app("import", exportFile)
        #expect(again.status == 65)
        #expect(again.stderr.contains("already exists"))
        #expect(try destination.state() == before)
    }

    @Test func importReadsStandardInput() throws {
        let container = try TestContainer()
        let document = #"{"trips": [{"name": "Kyoto", "startDate": "2027-04-01", "endDate": "2027-04-09"}]}"#
        let result = try container.app("import", "-", stdin: document)
        #expect(result.status == 0, "\(result)")
        #expect(try container.appOK("trip", "list").contains("Kyoto"))
    }

    @Test func tripEditWithoutFlagsOpensTheEditorOnJSON() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let script = container.root.appendingPathComponent("editor.sh")
        try "#!/bin/sh\nsed -i 's/\"Lisbon\"/\"Sintra\"/' \"$1\"\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": script.path])
        #expect(result.status == 0, "\(result)")
        #expect(try container.appOK("trip", "show", trip, "--json").contains("\"Sintra\""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: container.path + "/tmp").isEmpty, "temp file removed")
    }

    @Test(arguments: [
        ("s/2026-12-15/2026-12-01/", "before the start date"),
        ("s/\"name\"/\"title\"/", "exactly name, startDate, endDate and notes"),
        ("s/{/[/", "not a JSON object"),
    ])
    func invalidEditorResultChangesNothing(sedScript: String, message: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let before = try container.state()
        let script = container.root.appendingPathComponent("editor.sh")
        try "#!/bin/sh\nsed -i '\(sedScript)' \"$1\"\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": script.path])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
        #expect(try container.state().storeDump == before.storeDump)
        // The refused text is kept outside the container (EditorRecoveryTests); not needed here.
        if let path = EditorRecoveryTests.keptPath(result.stderr) { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func containerInfoReportsPathsVersionsAndCounts() throws {
        let container = try TestContainer()
        try container.addTrip()
        let info = try container.appOK("container", "info", "--json")
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any])
        #expect(decoded["schemaVersion"] as? Int == Int(Store.schemaVersion))
        #expect(decoded["layoutVersion"] as? Int == 1)
        #expect((decoded["counts"] as? [String: Any])?["trips"] as? Int == 1)
        #expect((decoded["paths"] as? [String: Any])?["store"] as? String == container.storePath)
    }

    @Test func helpIsAvailableForEveryCommandAndWritesNothing() throws {
        let container = try TestContainer()
        for command in [[], ["trip"], ["trip", "add"], ["place", "list"], ["booking", "add"], ["prefs", "set"],
                        ["export"], ["import"], ["sync", "ack"], ["container", "info"]] {
            let result = try container.app(arguments: command + ["--help"])
            #expect(result.status == 0, "\(command): \(result)")
            #expect(result.stdout.contains("usage: app"))
        }
        #expect(!FileManager.default.fileExists(atPath: container.path))
    }
}
