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
}
