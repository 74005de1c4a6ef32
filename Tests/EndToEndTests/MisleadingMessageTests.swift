import TripBoardKeychain
import Foundation
import Testing
import TripBoardStorage

/// Messages that used to mislead, each now saying what happened.
@Suite struct MisleadingMessageTests {
    @Test func exportingIntoADirectoryThatIsNotThereSaysSoAndWritesNothing() throws {
        let container = try TestContainer()
        let (_, _, files) = try container.tripWithAttachments(1)
        let attachment = try #require(files.keys.first.map { String($0.split(separator: "/").last!.prefix(36)) })
        let before = try container.state()
        for (destination, message) in [(container.root.path + "/missing-dir/", "there is no directory \(container.root.path)/missing-dir/;"),
                                       (container.root.path + "/missing-dir/t.pdf", "there is no directory \(container.root.path)/missing-dir to write t.pdf in")] {
            let result = try container.app("attachment", "export", attachment, destination)
            #expect(result.status == 66 && result.stderr.contains(message), "\(result)")
        }
        #expect(try container.state() == before)
    }

    @Test func exportingToADashWritesTheVerifiedBytesToStandardOutput() throws {
        let container = try TestContainer()
        let (_, _, files) = try container.tripWithAttachments(1)
        let (relative, bytes) = try #require(files.first)
        let attachment = String(relative.split(separator: "/").last!.prefix(36))
        let result = try container.app("attachment", "export", attachment, "-")
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/-"))
        let piped = try ProcessRunner.run("/bin/sh", ["-c", "'\(ProcessRunner.executable("app"))' attachment export \(attachment) - | cmp - '\(container.path)/\(relative)'"],
                                          environment: container.environment)
        #expect(piped.status == 0, "byte for byte: \(piped)")

        // A damaged file is called what it is, and nothing reaches standard output.
        var damaged = bytes
        damaged[damaged.count - 1] ^= 0xff
        try damaged.write(to: URL(fileURLWithPath: container.path + "/" + relative))
        let refused = try container.app("attachment", "export", attachment, "-")
        #expect(refused.status == 65 && refused.stdout.isEmpty, "\(refused)")
        #expect(refused.stderr.contains("the attachment file \(container.path)/\(relative) does not match its recorded size and hash (it is damaged)"), "\(refused)")
        #expect(refused.stderr.contains("an export holds no attachment") && !refused.stderr.contains("the store"), "\(refused)")
        let toAFile = try container.app("attachment", "export", attachment, container.root.path + "/out.pdf")
        #expect(toAFile.status == 65 && toAFile.stderr.contains("(it is damaged)"), "\(toAFile)")
        #expect(!FileManager.default.fileExists(atPath: container.root.path + "/out.pdf"))
    }

    @Test func anUnknownOptionOfTheShareExtensionIsNamedFirst() throws {
        let container = try TestContainer()
        let result = try ProcessRunner.run("share-extension", ["--bogus"], environment: container.environment)
        #expect(result.status == 64 && result.stderr.contains("unknown option --bogus"), "\(result)")
        let missing = try ProcessRunner.run("share-extension", [], environment: container.environment)
        #expect(missing.status == 64 && missing.stderr.contains("missing FILE"), "\(missing)")
    }

    @Test func anOptionNeverSwallowsTheNextOption() throws {
        let container = try TestContainer()
        let result = try container.app("trip", "add", "--name", "--start", "2026-12-12", "--end", "2026-12-15")
        #expect(result.status == 64 && result.stderr.contains("error: --name needs a value"), "\(result)")
        #expect(container.files().isEmpty)
        let trip = try container.appOK("trip", "add", "--name=--start", "--start", "2026-12-12", "--end", "2026-12-15")
        #expect(try container.appOK("trip", "show", trip).hasPrefix("--start\n"), "--name=VALUE passes any value")
        #expect(try container.appOK("trip", "add", "--name", "-5 °C", "--start", "2026-12-12", "--end", "2026-12-15").count == 36)
    }

    @Test func containerInfoAndSyncPendingCountTheSamePendingChanges() throws {
        let container = try TestContainer()
        let (trip, booking, _) = try container.tripWithAttachments(2)
        try container.appOK("sync", "ack", trip, "--version", "1")
        try container.appOK("sync", "ack", booking, "--version", "1")
        let pending = try #require(try container.appJSON("sync", "pending") as? [[String: Any]])
        #expect(pending.count == 2, "the two attachments")
        let info = try #require(try container.appJSON("container", "info") as? [String: Any])
        #expect((info["counts"] as? [String: Any])?["pendingChanges"] as? Int == pending.count)
        #expect(try container.appOK("container", "info").contains("sync:        2 pending"))
    }

    @Test func keychainAccessibilityIsShownAsItIsTyped() throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "api", "ana", "--accessibility", "this-device-only"], stdin: "token-1\n",
                                  environment: environment).status == 0)
        let table = try container.app(arguments: ["keychain", "list"], environment: environment)
        // The earlier name is taken and shown by its name now.
        #expect(table.stdout.contains("api      ana      after-first-unlock-this-device-only  available"), "\(table)")
        #expect(!table.stdout.contains("thisDeviceOnly"))
        #expect(try container.sqlite("SELECT accessibility FROM items", database: container.keychainPath, environment: environment).trimmedStdout == "thisDeviceOnly",
                "the stored value, which the seal binds, stays")
    }

    @Test(arguments: [("theme", "Dark", "dark"), ("mapStyle", "HYBRID", "hybrid"), ("currency", "usd", "USD"), ("showsVisitedPlaces", "No", "false")])
    func preferenceNamesAreReadInAnyCase(key: String, typed: String, stored: String) throws {
        let container = try TestContainer()
        try container.appOK("prefs", "set", key, typed)
        #expect(try container.appOK("prefs", "get", key) == stored)
    }
}
