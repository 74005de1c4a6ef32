import TripBoardKeychain
import Foundation
import Testing

/// `app keychain …` and `app auth …` as processes: secrets in on stdin, out on stdout, and
/// nowhere else.
@Suite struct KeychainCommandTests {
    /// A container plus its own device directory and machine id.
    static func makeContainer() throws -> TestContainer {
        let probe = try TestContainer()
        try Data("machine-one\n".utf8).write(to: probe.root.appendingPathComponent("machine-id"))
        return probe
    }

    static func deviceEnvironment(_ container: TestContainer, device: String = "device", machineID: String = "machine-id") -> [String: String] {
        ["TRIPBOARD_DEVICE_DIR": container.root.appendingPathComponent(device).path,
         "TRIPBOARD_MACHINE_ID_FILE": container.root.appendingPathComponent(machineID).path]
    }

    static func randomToken() -> String { (0..<4).map { _ in String(UInt64.random(in: 0 ... .max), radix: 36) }.joined() }

    @Test func secretsGoInOnStdinAndComeOutExactly() throws {
        let container = try Self.makeContainer()
        let environment = Self.deviceEnvironment(container)
        let token = Self.randomToken()
        let set = try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: token + "\n", environment: environment)
        #expect(set.status == 0, "\(set)")
        let get = try container.app(arguments: ["keychain", "get", "api", "alice"], environment: environment)
        #expect(get.status == 0)
        #expect(get.stdout == token, "no newline when stdout is not a terminal")
        let list = try container.app(arguments: ["keychain", "list", "--json"], environment: environment)
        #expect(list.stdout.contains("\"accessibility\" : \"after-first-unlock-this-device-only\""), "the default, by its name")
        #expect(!list.stdout.contains(token))
    }

    @Test func noPlaintextAnywhereOnDiskOrInOutputs() throws {
        let container = try Self.makeContainer()
        let environment = Self.deviceEnvironment(container)
        let token = Self.randomToken()
        try container.addTrip()
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: token, environment: environment).status == 0)
        #expect(try container.app(arguments: ["keychain", "set", "sync", "bob", "--accessibility", "migratable"], stdin: token,
                                  environment: environment).status == 0)
        #expect(try container.app(arguments: ["auth", "login", "--account", "a@example.com"], stdin: token + "\n" + token + "r\n",
                                  environment: environment).status == 0)
        let export = try container.app(arguments: ["export"], environment: environment)
        #expect(!export.stdout.contains(token))
        let needle = Data(token.utf8)
        var searched = 0
        let enumerator = try #require(FileManager.default.enumerator(atPath: container.root.path))
        while let relative = enumerator.nextObject() as? String {
            let path = container.root.path + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: needle) == nil, "the token is in plain text in \(relative)")
            searched += 1
        }
        #expect(searched >= 8, "searched the store, keychain, preferences, device key and their -wal files")
    }

    /// Timeline: device A fills a container and sets a recovery passphrase; the container is
    /// copied (as a backup restored onto new hardware) and opened by device B.
    @Test func aCopiedContainerOnAnotherDevice() throws {
        let container = try Self.makeContainer()
        let deviceA = Self.deviceEnvironment(container, device: "device-a")
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "device-secret", environment: deviceA).status == 0)
        #expect(try container.app(arguments: ["keychain", "set", "sync", "bob", "--accessibility", "migratable"], stdin: "shared-secret",
                                  environment: deviceA).status == 0)
        let passphrase = try container.app(arguments: ["keychain", "set-recovery-passphrase"], stdin: "correct horse battery staple\n",
                                           environment: deviceA)
        #expect(passphrase.status == 0, "\(passphrase)")

        // A container whose databases are in the clear (a build's before sealed stores): a sealed
        // one opens on its own device only (`KeychainDeviceScopeTests`).
        try container.unsealDatabases(environment: deviceA)
        let copy = container.root.appendingPathComponent("copy").path
        #expect(try ProcessRunner.run("/bin/cp", ["-a", container.path, copy], environment: container.environment).status == 0)
        let deviceB = Self.deviceEnvironment(container, device: "device-b").merging(["TRIPBOARD_CONTAINER": copy]) { $1 }
        let gone = try container.app(arguments: ["keychain", "get", "api", "alice"], environment: deviceB)
        #expect(gone.status == 66, "\(gone)")
        let locked = try container.app(arguments: ["keychain", "get", "sync", "bob"], environment: deviceB)
        #expect(locked.status == 69, "\(locked)")
        #expect(locked.stderr.contains("keychain recover"))
        let wrong = try container.app(arguments: ["keychain", "recover"], stdin: "not the passphrase", environment: deviceB)
        #expect(wrong.status == 65)
        let recovered = try container.app(arguments: ["keychain", "recover"], stdin: "correct horse battery staple", environment: deviceB)
        #expect(recovered.status == 0, "\(recovered)")
        #expect(try container.app(arguments: ["keychain", "get", "sync", "bob"], environment: deviceB).stdout == "shared-secret")

        // The original device, on the original container, still reads everything.
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: deviceA).stdout == "device-secret")
        #expect(try container.app(arguments: ["keychain", "get", "sync", "bob"], environment: deviceA).stdout == "shared-secret")
    }

    @Test func tenProcessesCreatingTheDeviceKeyAtOnceShareOne() throws {
        let container = try Self.makeContainer()
        try container.addTrip()
        let environment = container.environment(Self.deviceEnvironment(container))
        let processes = try (0..<10).map { index in
            try ProcessRunner.start("app", ["keychain", "set", "api", "account-\(index)"], environment: environment,
                                    stdin: Array("value-\(index)".utf8))
        }
        for process in processes {
            let result = process.wait()
            #expect(result.status == 0, "\(result)")
        }
        let list = try container.app(arguments: ["keychain", "list", "--json"], environment: Self.deviceEnvironment(container))
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let items = try #require(listing["items"] as? [[String: Any]])
        #expect(items.count == 10, "every process sealed under the same device key: \(list)")
        #expect(listing["otherDeviceItems"] as? Int == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: container.root.appendingPathComponent("device").path)
        // One keybag too (the class keys of a device without a passcode), made once under its lock.
        #expect(Array(files.sorted().prefix(4)) == ["device.key", "device.lock", "keybag.json", "keybag.made"] && files.count == 5
                    && files.sorted()[4].hasSuffix(".generation"),
                "the key, the keybag and the keychain's generation record, no temporary files left: \(files)")
        for index in 0..<10 {
            let get = try container.app(arguments: ["keychain", "get", "api", "account-\(index)"], environment: Self.deviceEnvironment(container))
            #expect(get.stdout == "value-\(index)", "\(get)")
        }
    }

    @Test(arguments: [
        (["keychain", "set", "api", "alice"], "", 64, "is empty"),
        (["keychain", "set", "api", "alice", "--accessibility", "everywhere"], "x", 64, "unknown accessibility"),
        (["keychain", "set", "api", "alice", "hunter2-secret"], "x", 64, "never from the command line"),
        (["keychain", "get", "api", "nobody"], "", 66, "no keychain item"),
        (["keychain", "delete", "api", "nobody"], "", 66, "no keychain item"),
        (["keychain", "recover"], "some passphrase", 69, "no recovery passphrase"),
        (["keychain", "set-recovery-passphrase"], "short", 64, "at least 8 bytes"),
        (["auth", "login", "--account", "a@example.com"], "only-one-line\n", 64, "two lines"),
        (["auth", "login", "--account", "not an email"], "a\nb\n", 64, "email"),
    ])
    func badKeychainInputIsRefusedAndWritesNothing(arguments: [String], stdin: String, status: Int32, message: String) throws {
        let container = try Self.makeContainer()
        let environment = Self.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "keep", "me"], stdin: "kept", environment: environment).status == 0)
        let before = try container.app(arguments: ["keychain", "list", "--json"], environment: environment).stdout
        let result = try container.app(arguments: arguments, stdin: stdin, environment: environment)
        #expect(result.status == status, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains(message), "\(result)")
        #expect(!result.stderr.contains("hunter2"), "a secret is never echoed")
        #expect(try container.app(arguments: ["keychain", "list", "--json"], environment: environment).stdout == before)
    }

    @Test func insecureOrDamagedDeviceKeysAreRefused() throws {
        let container = try Self.makeContainer()
        let environment = Self.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "x", environment: environment).status == 0)
        let keyPath = container.root.appendingPathComponent("device/device.key").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)
        let readable = try container.app(arguments: ["keychain", "list"], environment: environment)
        #expect(readable.status == 73, "\(readable)")
        #expect(readable.stderr.contains("group or others"))
        try Data(repeating: 1, count: 40).write(to: URL(fileURLWithPath: keyPath))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        let wrongSize = try container.app(arguments: ["keychain", "list"], environment: environment)
        #expect(wrongSize.status == 65, "\(wrongSize)")
        #expect(wrongSize.stderr.contains("longer than 32 bytes"))
    }

    @Test func authLoginStatusLogout() throws {
        let container = try Self.makeContainer()
        let environment = Self.deviceEnvironment(container)
        try container.appOK("container", "init")
        #expect(try container.app(arguments: ["auth", "status"], environment: environment).trimmedStdout == "Not signed in")
        let login = try container.app(arguments: ["auth", "login", "--account", "ana@example.com"], stdin: "access-1\nrefresh-1\n",
                                      environment: environment)
        #expect(login.status == 0, "\(login)")
        let status = try container.app(arguments: ["auth", "status", "--json"], environment: environment)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(json["signedIn"] as? Bool == true)
        #expect(json["account"] as? String == "ana@example.com")
        #expect(json["hasRefreshToken"] as? Bool == true)
        #expect(try container.app(arguments: ["keychain", "get", "tripboard.auth.access-token", "ana@example.com"],
                                  environment: environment).stdout == "access-1")
        #expect(try container.app(arguments: ["auth", "logout"], environment: environment).status == 0)
        #expect(try container.app(arguments: ["auth", "status"], environment: environment).trimmedStdout == "Not signed in")
    }

    /// On a terminal the secret is asked for without echo: the transcript of a real pty (made by
    /// `script`) holds the prompts but never what was typed. The typing waits until the prompt is
    /// up, since a terminal echoes at input time.
    @Test func terminalInputIsNotEchoed() throws {
        let container = try Self.makeContainer()
        let environment = container.environment(Self.deviceEnvironment(container))
        let app = ProcessRunner.executable("app")
        let session = """
            (sleep 0.5; printf 'typed-passphrase-1\r'; sleep 0.3; printf 'typed-passphrase-1\r') \
              | script -qec "'\(app)' keychain set-recovery-passphrase" /dev/null
            """
        let result = try ProcessRunner.run("/bin/sh", ["-c", session], environment: environment)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("recovery passphrase:") && result.stdout.contains("recovery passphrase again:"), "\(result)")
        #expect(!result.stdout.contains("typed-passphrase"), "the passphrase was echoed: \(result)")
        let listed = try container.app(arguments: ["keychain", "list"], environment: Self.deviceEnvironment(container))
        #expect(listed.status == 0)
        // The passphrase took: recovery on another device works with it (a copy in the clear).
        try container.unsealDatabases(environment: Self.deviceEnvironment(container))
        let copy = container.root.appendingPathComponent("copy").path
        #expect(try ProcessRunner.run("/bin/cp", ["-a", container.path, copy], environment: environment).status == 0)
        let other = Self.deviceEnvironment(container, device: "other").merging(["TRIPBOARD_CONTAINER": copy]) { $1 }
        #expect(try container.app(arguments: ["keychain", "recover"], stdin: "typed-passphrase-1\n", environment: other).status == 0)
    }

    @Test func theWidgetNeverOpensTheKeychain() throws {
        let container = try Self.makeContainer()
        let environment = Self.deviceEnvironment(container)
        #expect(try container.app(arguments: ["trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15"],
                                  environment: environment).status == 0)
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "x", environment: environment).status == 0)
        let traced = try ProcessRunner.run("/usr/bin/strace", ["-f", "-e", "trace=open,openat", ProcessRunner.executable("widget")],
                                           environment: container.environment(environment))
        #expect(traced.status == 0, "\(traced)")
        #expect(traced.stderr.contains("TripBoard.sqlite"), "the trace saw the store being opened")
        // The container's keychain/ by its path: the executables' own path may contain "keychain"
        // (a checkout in a directory named for it), and the dynamic loader opens files there.
        #expect(!traced.stderr.contains(container.path + "/keychain") && !traced.stderr.contains("Keychain.sqlite"))
        // It reads the device's key and keybag: they open the sealed store's key file.
        #expect(traced.stderr.contains("TripBoard.sqlite-key") && traced.stderr.contains("device.key"), "\(traced)")
    }
}
