import TripBoardKeychain
import Foundation
import Testing

/// The keychain as one device sees it, run as processes: a read with another device directory or
/// machine id (a cron job with the wrong `$HOME`) destroys nothing and creates nothing; other
/// devices' items are reported, kept, and removed only by `forget-other-devices`.
@Suite struct KeychainDeviceScopeTests {
    /// A container where device A has stored an item and signed in: three this-device-only items.
    static func containerFilledByDeviceA() throws -> TestContainer {
        let container = try KeychainCommandTests.makeContainer()
        let deviceA = KeychainCommandTests.deviceEnvironment(container, device: "device-a")
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "a-secret", environment: deviceA).status == 0)
        #expect(try container.app(arguments: ["auth", "login", "--account", "ana@example.com"], stdin: "access\nrefresh\n",
                                  environment: deviceA).status == 0)
        // A container two devices open is one whose databases are in the clear (a sealed one
        // opens on its own device only: `aSealedContainerOpensOnItsOwnDeviceOnly`).
        try container.unsealDatabases(environment: deviceA)
        return container
    }

    /// A sealed container (any container this build made, or protected) opened as another
    /// device: every command is refused, 66 and one line, and nothing is destroyed or created.
    @Test(arguments: Stranger.allCases)
    func aSealedContainerOpensOnItsOwnDeviceOnly(stranger: Stranger) throws {
        let container = try KeychainCommandTests.makeContainer()
        let deviceA = KeychainCommandTests.deviceEnvironment(container, device: "device-a")
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "a-secret", environment: deviceA).status == 0)
        #expect(try container.app(arguments: ["trip", "add", "--name", "Kyoto", "--start", "2027-01-01", "--end", "2027-01-02"],
                                  environment: deviceA).status == 0)
        let environment = try Self.strangerEnvironment(container, stranger)
        let strangerDirectory = try #require(environment["TRIPBOARD_DEVICE_DIR"])
        let deviceDirectoryBefore = Self.entries(strangerDirectory)
        let filesBefore = container.files()
        for command in Self.reads + [["trip", "list"], ["keychain", "set", "api", "bob"]] {
            let result = try container.app(arguments: command, stdin: "x", environment: environment)
            #expect(result.status == 66 && result.stderrLines.count == 1 && result.stderr.contains("sealed on another device"), "\(command): \(result)")
        }
        #expect(Self.entries(strangerDirectory) == deviceDirectoryBefore, "nothing created in \(strangerDirectory)")
        #expect(container.files() == filesBefore, "nothing in the container changed")
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: deviceA).stdout == "a-secret")
    }

    static func entries(_ path: String) -> [String]? { try? FileManager.default.contentsOfDirectory(atPath: path).sorted() }

    /// The three ways to be another device: no device directory at all, an empty one, or device
    /// A's own directory with another machine id.
    enum Stranger: String, CaseIterable { case noDirectory, emptyDirectory, otherMachineID }

    static func strangerEnvironment(_ container: TestContainer, _ stranger: Stranger) throws -> [String: String] {
        switch stranger {
        case .noDirectory:
            return KeychainCommandTests.deviceEnvironment(container, device: "device-b")
        case .emptyDirectory:
            let path = container.root.appendingPathComponent("device-b")
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            return KeychainCommandTests.deviceEnvironment(container, device: "device-b")
        case .otherMachineID:
            try Data("machine-two\n".utf8).write(to: container.root.appendingPathComponent("machine-id-2"))
            return KeychainCommandTests.deviceEnvironment(container, device: "device-a", machineID: "machine-id-2")
        }
    }

    static let reads: [[String]] = [["keychain", "list"], ["keychain", "list", "--json"], ["keychain", "get", "api", "alice"],
                                    ["auth", "status"], ["auth", "status", "--json"]]

    /// Before, each of these purged device A's items (and made a device key for the stranger).
    @Test(arguments: Stranger.allCases, reads)
    func aReadAsAnotherDeviceDestroysNothingAndCreatesNothing(stranger: Stranger, command: [String]) throws {
        let container = try Self.containerFilledByDeviceA()
        let environment = try Self.strangerEnvironment(container, stranger)
        let strangerDirectory = try #require(environment["TRIPBOARD_DEVICE_DIR"])
        let deviceDirectoryBefore = Self.entries(strangerDirectory)
        let keychainBefore = try container.sqlite("SELECT service, account, key_id, hex(ciphertext) FROM items ORDER BY id",
                                                  database: container.keychainPath).stdout
        let result = try container.app(arguments: command, environment: environment)
        #expect(Self.entries(strangerDirectory) == deviceDirectoryBefore, "the read created nothing in \(strangerDirectory)")
        #expect(try container.sqlite("SELECT service, account, key_id, hex(ciphertext) FROM items ORDER BY id",
                                     database: container.keychainPath).stdout == keychainBefore, "nothing deleted or rewritten")
        let deviceA = KeychainCommandTests.deviceEnvironment(container, device: "device-a")
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: deviceA).stdout == "a-secret")
        #expect(try container.app(arguments: ["auth", "status"], environment: deviceA).trimmedStdout == "Signed in as ana@example.com")
        try Self.expectTheStrangerIsTold(command, result)
    }

    /// What the other device hears: not found *on this device*, a count, not signed in here.
    static func expectTheStrangerIsTold(_ command: [String], _ result: ProcessResult) throws {
        switch command {
        case ["keychain", "get", "api", "alice"]:
            #expect(result.status == 66 && result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.contains("not found on this device: it was sealed on another device"), "\(result)")
        case ["keychain", "list"]:
            #expect(result.status == 0 && result.trimmedStdout == "No items on this device.", "\(result)")
            #expect(result.stderr.contains("3 items belong to another device"), "\(result)")
        case ["keychain", "list", "--json"]:
            let listing = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect((listing["items"] as? [Any])?.isEmpty == true && listing["otherDeviceItems"] as? Int == 3, "\(result)")
        case ["auth", "status"]:
            #expect(result.trimmedStdout == "Not signed in on this device (the keychain holds a sign-in sealed on another device)")
        default:
            let status = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(status["signedIn"] as? Bool == false && status["signedInOnAnotherDevice"] as? Bool == true, "\(result)")
        }
    }

    /// Timeline: device A fills the keychain; device B (no key yet) writes, which creates its key
    /// and says so; B's delete-all and logout leave A's items; only B's forget-other-devices
    /// removes them; a device with no key cannot forget anything.
    @Test func onlyForgetOtherDevicesRemovesThem() throws {
        let container = try Self.containerFilledByDeviceA()
        let deviceB = KeychainCommandTests.deviceEnvironment(container, device: "device-b")
        let noKey = try container.app(arguments: ["keychain", "forget-other-devices"], environment: deviceB)
        #expect(noKey.status == 66 && noKey.stderr.contains("no device key yet"), "\(noKey)")
        #expect(Self.entries(container.root.appendingPathComponent("device-b").path) == nil)

        let set = try container.app(arguments: ["keychain", "set", "mine", "bob"], stdin: "b-secret", environment: deviceB)
        #expect(set.status == 0 && set.stderrLines.count == 1, "\(set)")
        #expect(set.stderr.contains("warning: created a new device key") && set.stderr.contains("beside 3 items sealed on another device"), "\(set)")
        #expect(try container.app(arguments: ["keychain", "set", "mine", "carol"], stdin: "c", environment: deviceB).stderr.isEmpty,
                "said once, when the key is created")
        let logout = try container.app(arguments: ["auth", "logout"], environment: deviceB)
        #expect(logout.stderr.contains("not signed in"), "A's tokens are not B's to remove: \(logout)")
        let deleted = try container.app(arguments: ["keychain", "delete-all"], environment: deviceB)
        #expect(deleted.stderr.contains("deleted 2 items"), "\(deleted)")

        let forgot = try container.app(arguments: ["keychain", "forget-other-devices"], environment: deviceB)
        #expect(forgot.status == 0 && forgot.stderr.contains("forgot 3 items"), "\(forgot)")
        let deviceA = KeychainCommandTests.deviceEnvironment(container, device: "device-a")
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: deviceA).status == 66)
        #expect(try container.sqlite("SELECT count(*) FROM items", database: container.keychainPath).trimmedStdout == "0")
    }

    /// `keychain set` of an identity another device sealed replaces it (the name is explicit) and
    /// says so; a delete of it is refused, since it is not this device's.
    @Test func explicitNamesOfAnotherDevicesItem() throws {
        let container = try Self.containerFilledByDeviceA()
        let deviceB = KeychainCommandTests.deviceEnvironment(container, device: "device-b")
        let delete = try container.app(arguments: ["keychain", "delete", "api", "alice"], environment: deviceB)
        #expect(delete.status == 66 && delete.stderr.contains("sealed on another device"), "\(delete)")
        let set = try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "b-value", environment: deviceB)
        #expect(set.status == 0 && set.stderr.contains("this device's value replaced it"), "\(set)")
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: deviceB).stdout == "b-value")
    }

    /// A write refused for its input creates no device key either: the key is made only when
    /// something is about to be sealed with it.
    @Test(arguments: [
        (["keychain", "set", "api", "bob"], "", 64),
        (["keychain", "set", "api", "bob"], String(repeating: "x", count: 70_000), 65),
        (["keychain", "set-recovery-passphrase"], "short", 64),
        (["keychain", "recover"], "not the passphrase", 65),
        (["auth", "login", "--account", "b@example.com"], "one line only\n", 64),
    ] as [([String], String, Int32)])
    func aRefusedWriteCreatesNoDeviceKey(command: [String], stdin: String, status: Int32) throws {
        let container = try Self.containerFilledByDeviceA()
        let deviceA = KeychainCommandTests.deviceEnvironment(container, device: "device-a")
        #expect(try container.app(arguments: ["keychain", "set-recovery-passphrase"], stdin: "correct horse battery",
                                  environment: deviceA).status == 0)
        let deviceB = KeychainCommandTests.deviceEnvironment(container, device: "device-b")
        let result = try container.app(arguments: command, stdin: stdin, environment: deviceB)
        #expect(result.status == status && result.stderrLines.count == 1, "\(result)")
        #expect(Self.entries(container.root.appendingPathComponent("device-b").path) == nil, "no device directory")
    }
}
