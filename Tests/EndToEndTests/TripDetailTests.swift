import TripBoardKeychain
import Foundation
import Testing
import TripBoardStorage

/// `trip show` with attachments, `attachment list` naming booking and trip, `prefs unset`, and
/// the question `trip delete` and `keychain delete-all` ask on a terminal.
@Suite struct TripDetailTests {
    @Test func tripShowListsAttachmentsAndItsJSONHoldsEverything() throws {
        let container = try TestContainer()
        let (trip, booking, _) = try container.tripWithAttachments(2)
        let place = try container.appOK("place", "add", "--trip", trip, "--name", "Belém")
        let shown = try container.appOK("trip", "show", trip)
        #expect(shown.contains("  attachments:\n    ticket-"), "\(shown)")
        for name in ["ticket-0.pdf", "ticket-1.pdf"] {
            #expect(shown.contains("    \(name) · 4096 bytes, 1 page · for TP 1351  ("), "\(shown)")
        }
        let json = try #require(try container.appJSON("trip", "show", trip) as? [String: Any])
        #expect(Set(json.keys) == ["id", "name", "startDate", "endDate", "notes", "syncState", "remoteVersion", "updatedAt",
                                   "places", "bookings", "attachments"])
        #expect((json["places"] as? [[String: Any]])?.map { $0["id"] as? String } == [place])
        #expect((json["bookings"] as? [[String: Any]])?.map { $0["id"] as? String } == [booking])
        #expect((json["attachments"] as? [[String: Any]])?.compactMap { $0["originalFilename"] as? String }.sorted() == ["ticket-0.pdf", "ticket-1.pdf"])
        let empty = try container.addTrip("Porto")
        #expect(try container.appOK("trip", "show", empty).contains("  attachments: none"))
        #expect((try container.appJSON("trip", "show", empty) as? [String: Any])?["attachments"] as? [Any] != nil)
    }

    @Test func attachmentListNamesEachAttachmentsBookingAndTrip() throws {
        let container = try TestContainer()
        _ = try container.tripWithAttachments(1)
        _ = try container.tripWithAttachments(1, name: "Porto")
        let lines = try container.appOK("attachment", "list").split(separator: "\n").map(String.init)
        #expect(lines[0].hasSuffix("STATE    PROTECTION            BOOKING  TRIP"), "\(lines)")
        #expect(Set(lines.dropFirst().map { String($0.split(separator: " ").last ?? "") }) == ["Lisbon", "Porto"], "\(lines)")
        #expect(lines.dropFirst().allSatisfy { $0.contains("present  complete-unless-open  TP 1351") }, "\(lines)")
    }

    @Test func prefsUnsetGoesBackToTheDefault() throws {
        let container = try TestContainer()
        try container.appOK("prefs", "set", "currency", "usd")
        #expect(try container.appOK("prefs", "get", "currency") == "USD")
        let unset = try container.app("prefs", "unset", "currency")
        #expect(unset.status == 0 && unset.stdout.isEmpty && unset.stderr.isEmpty, "\(unset)")
        #expect(try container.appOK("prefs", "get", "currency") == "EUR")
        #expect(try container.appOK("prefs", "list").contains("(default)"))
        let again = try container.app("prefs", "unset", "currency")
        #expect(again.status == 0 && again.stderr.contains("currency was not set; it reads as its default, EUR"), "\(again)")
        #expect(try container.app("prefs", "unset", "colour").status == 64)
        let elsewhere = try TestContainer()
        #expect(try elsewhere.app("prefs", "unset", "currency").status == 66)
        #expect(elsewhere.files().isEmpty)
    }

    /// Through script(1)'s pseudo-terminal: the question, then only "y" or "yes" goes ahead.
    @Test(arguments: [("n\n", false), ("y\n", true)])
    func onATerminalTripDeleteAsksFirst(answer: String, deletes: Bool) throws {
        let container = try TestContainer()
        let (trip, _, _) = try container.tripWithAttachments(1)
        try container.appOK("place", "add", "--trip", trip, "--name", "Belém")
        let command = "'\(ProcessRunner.executable("app"))' trip delete \(trip)"
        let result = try ProcessRunner.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: container.environment,
                                           stdin: Array(answer.utf8))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Move trip Lisbon with 1 place, 1 booking, 1 attachment to the trash? [y/N]"), "\(result)")
        #expect(result.stdout.contains(deletes ? "moved trip Lisbon with 1 place, 1 booking, 1 attachment to the trash" : "nothing was deleted"),
                "\(result)")
        #expect(try container.trashList().count == (deletes ? 1 : 0))
    }

    @Test func withoutATerminalOrWithYesTripDeleteGoesAheadAndSaysWhatWent() throws {
        let container = try TestContainer()
        let (trip, _, _) = try container.tripWithAttachments(2)
        let result = try container.app("trip", "delete", trip)
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("moved trip Lisbon with 1 booking, 2 attachments to the trash"), "\(result)")
        let other = try container.addTrip("Porto")
        let command = "'\(ProcessRunner.executable("app"))' trip delete --yes \(other)"
        let yes = try ProcessRunner.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: container.environment, stdin: [])
        #expect(yes.status == 0 && !yes.stdout.contains("[y/N]") && yes.stdout.contains("moved trip Porto"), "\(yes)")
    }

    @Test(arguments: [("n\n", 1), ("yes\n", 0)])
    func onATerminalKeychainDeleteAllAsksFirst(answer: String, left: Int) throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "secret-token\n", environment: environment).status == 0)
        let command = "'\(ProcessRunner.executable("app"))' keychain delete-all"
        let result = try ProcessRunner.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: container.environment(environment),
                                           stdin: Array(answer.utf8))
        #expect(result.status == 0 && result.stdout.contains("Delete every keychain item this device sees? This cannot be undone. [y/N]"),
                "\(result)")
        let listed = try container.app(arguments: ["keychain", "list", "--json"], environment: environment)
        let items = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["items"] as? [Any]
        #expect(items?.count == left, "\(listed)")
        #expect(try container.app(arguments: ["keychain", "delete-all"], environment: environment).status == 0, "no terminal: it goes ahead")
    }
}
