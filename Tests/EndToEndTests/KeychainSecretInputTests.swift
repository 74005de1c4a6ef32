import TripBoardKeychain
import Foundation
import Testing

/// How the secret-taking commands (`keychain set`, `recover`, `set-recovery-passphrase`,
/// `auth login`) treat what they are given: a secret typed on the command line is never repeated,
/// and standard input is stored exactly, within a named limit.
@Suite struct KeychainSecretInputTests {
    static let secret = "Sekr3t-zqxv-0000"

    /// Every form a user might type a secret in by mistake: as an option's value, as an unknown
    /// option, as an extra word.
    @Test(arguments: [
        ["keychain", "set", "api", "alice", "--value=\(secret)"],
        ["keychain", "set", "api", "alice", "--value", secret],
        ["keychain", "set", "api", "alice", "--accessibility=\(secret)"],
        ["keychain", "set", "api", "alice", "--accessibility", secret],
        ["keychain", "set", "api", "alice", secret],
        ["keychain", "set", "api", "alice", "--", secret],
        ["keychain", "set", "--\(secret)", "api", "alice"],
        ["keychain", "recover", secret],
        ["keychain", "recover", "--passphrase=\(secret)"],
        ["keychain", "set-recovery-passphrase", secret],
        ["keychain", "set-recovery-passphrase", "--passphrase", secret],
        ["auth", "login", "--account", "a@b.c", secret],
        ["auth", "login", "--account", "a@b.c", "--token=\(secret)"],
        ["auth", "login", "--token", secret, "--account", "a@b.c"],
    ])
    func argumentsOfSecretTakingCommandsAreNeverRepeated(arguments: [String]) throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "keep", "me"], stdin: "kept", environment: environment).status == 0)
        let before = try container.app(arguments: ["keychain", "list", "--json"], environment: environment).stdout
        let result = try container.app(arguments: arguments, stdin: "access\nrefresh\n", environment: environment)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(result)")
        #expect(result.stderr.contains("not shown"), "\(result)")
        #expect(!result.stderr.contains("Sekr3t") && !result.stdout.contains("Sekr3t"), "the secret was repeated: \(result)")
        #expect(try container.app(arguments: ["keychain", "list", "--json"], environment: environment).stdout == before)
    }

    /// Commands that take no secret still name what they did not understand.
    @Test func otherCommandsStillNameTheWordTheyRefuse() throws {
        let container = try KeychainCommandTests.makeContainer()
        let result = try container.app(arguments: ["keychain", "list", "--colour"],
                                       environment: KeychainCommandTests.deviceEnvironment(container))
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown option --colour"), "\(result)")
    }

    /// From standard input exactly one final "\n" or "\r\n" is dropped: a "\r" with no "\n"
    /// after it, a second newline, a line break inside are all part of the secret.
    @Test(arguments: [
        ("abc", "abc"), ("abc\n", "abc"), ("abc\r\n", "abc"), ("abc\r", "abc\r"), ("abc\n\n", "abc\n"),
        ("abc\r\r\n", "abc\r"), ("abc\n\r", "abc\n\r"), ("a\nb", "a\nb"), (" abc \t", " abc \t"),
    ])
    func onlyOneFinalLineBreakIsDropped(input: String, stored: String) throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        let set = try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: input, environment: environment)
        #expect(set.status == 0, "\(set)")
        let get = try container.app(arguments: ["keychain", "get", "api", "alice"], environment: environment)
        #expect(Array(get.stdout.utf8) == Array(stored.utf8), "\(Array(input.utf8)) stored as \(Array(get.stdout.utf8))")
    }

    @Test func eachTokenLineLosesOnlyItsLineBreak() throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        let login = try container.app(arguments: ["auth", "login", "--account", "a@example.com"], stdin: "access\r\nrefresh\r",
                                      environment: environment)
        #expect(login.status == 0, "\(login)")
        let access = try container.app(arguments: ["keychain", "get", "tripboard.auth.access-token", "a@example.com"], environment: environment)
        let refresh = try container.app(arguments: ["keychain", "get", "tripboard.auth.refresh-token", "a@example.com"], environment: environment)
        #expect(Array(access.stdout.utf8) == Array("access".utf8))
        #expect(Array(refresh.stdout.utf8) == Array("refresh\r".utf8), "the last line has no newline: its \\r stays")
    }

    /// 64 KiB is the limit for a secret (its final line break aside); more is bad data (65) whose
    /// message names the limit, and nothing is stored.
    @Test(arguments: [
        (["keychain", "set", "api", "alice"], String(repeating: "x", count: 65_537)),
        (["keychain", "set", "api", "alice"], String(repeating: "x", count: 65_536) + "\r\ny"),
        (["keychain", "set", "api", "alice"], String(repeating: "x", count: 1 << 20)),
        (["keychain", "set-recovery-passphrase"], String(repeating: "x", count: 65_537)),
        (["keychain", "recover"], String(repeating: "x", count: 65_537)),
        (["auth", "login", "--account", "a@example.com"], "access\n" + String(repeating: "x", count: 65_537) + "\n"),
        (["auth", "login", "--account", "a@example.com"], String(repeating: "x\n", count: 70_000)),
    ])
    func aSecretOverTheLimitIsBadDataNamingTheLimit(arguments: [String], input: String) throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "keep", "me"], stdin: "kept", environment: environment).status == 0)
        let before = try container.app(arguments: ["keychain", "list", "--json"], environment: environment).stdout
        let result = try container.app(arguments: arguments, stdin: input, environment: environment)
        #expect(result.status == 65, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains("64 KiB (65536 bytes)"), "\(result)")
        #expect(try container.app(arguments: ["keychain", "list", "--json"], environment: environment).stdout == before)
    }

    @Test func aSecretOfExactlyTheLimitIsStored() throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        let value = String(repeating: "y", count: 65_536)
        let set = try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: value + "\r\n", environment: environment)
        #expect(set.status == 0, "\(set)")
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: environment).stdout == value)
    }

    /// Runs `app` with arguments written as printf(1) formats (`a\\377`), so that a test can pass
    /// bytes that are not UTF-8: Foundation's `Process` takes only strings.
    static func appWithBytes(_ container: TestContainer, _ formats: [String], stdin: String = "",
                             environment: [String: String]) throws -> ProcessResult {
        let words = formats.map { "\"$(printf -- '\($0)')\"" }.joined(separator: " ")
        return try ProcessRunner.run("/bin/sh", ["-c", "exec \"$0\" " + words, ProcessRunner.executable("app")],
                                     environment: container.environment(environment), stdin: Array(stdin.utf8))
    }

    /// Two services that differ only in bytes that are not UTF-8 used to become the same text
    /// (each invalid byte repaired to U+FFFD), so the second `set` overwrote the first. Now any
    /// argument that is not UTF-8 is refused (65) before anything is opened.
    @Test(arguments: [
        ["keychain", "set", "api\\377", "alice"],
        ["keychain", "set", "api\\376", "alice"],
        ["keychain", "set", "api", "al\\303ice"],
        ["keychain", "get", "api\\377", "alice"],
        ["trip", "add", "--name", "Lisb\\300\\257on", "--start", "2026-12-12", "--end", "2026-12-13"],
    ])
    func argumentsThatAreNotUTF8AreRefused(formats: [String]) throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        let result = try Self.appWithBytes(container, formats, stdin: "value", environment: environment)
        #expect(result.status == 65, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains("is not valid UTF-8"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: container.path), "nothing was created")
        #expect(!FileManager.default.fileExists(atPath: environment["TRIPBOARD_DEVICE_DIR"]!))
    }

    /// Names are stored as the bytes given: a precomposed and a decomposed "café" are two services.
    @Test func namesAreStoredExactlyAsGiven() throws {
        let container = try KeychainCommandTests.makeContainer()
        let environment = KeychainCommandTests.deviceEnvironment(container)
        let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(try container.app(arguments: ["keychain", "set", precomposed, "a"], stdin: "one", environment: environment).status == 0)
        #expect(try container.app(arguments: ["keychain", "set", decomposed, "a"], stdin: "two", environment: environment).status == 0)
        #expect(try Self.appWithBytes(container, ["keychain", "get", "caf\\303\\251", "a"], environment: environment).stdout == "one")
        #expect(try Self.appWithBytes(container, ["keychain", "get", "cafe\\314\\201", "a"], environment: environment).stdout == "two")
    }
}
