import TripBoardKeychain
import Foundation
import Testing

/// An older copy of `keychain/` put back (by hand, by a backup tool) would silently bring back old
/// and deleted secrets. This device records the generation each keychain has reached; a keychain
/// behind its record is refused until `keychain accept-rollback`.
@Suite struct KeychainRollbackTests {
    static func generation(_ container: TestContainer) throws -> String {
        try container.sqlite("SELECT generation FROM keychain_state", readOnly: true, database: container.keychainPath,
                             environment: KeychainCommandTests.deviceEnvironment(container)).trimmedStdout
    }

    /// This device's record of the container's keychain (the only one in its device directory).
    static func record(_ container: TestContainer, device: String = "device") throws -> String? {
        let directory = container.root.appendingPathComponent(device)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".generation") }
        guard let name = names.first else { return nil }
        #expect(names.count == 1)
        return try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    /// Copies or moves with cp/mv, as a user restoring a directory would, while no process runs.
    static func shell(_ container: TestContainer, _ command: String) throws {
        let result = try ProcessRunner.run("/bin/sh", ["-c", command], environment: container.environment)
        #expect(result.status == 0, "\(result)")
    }

    /// Timeline: a value is stored and the keychain copied; the value is changed and another item
    /// deleted; the old copy is put back. Every command then refuses it (65, one line) instead of
    /// serving the old value and the deleted item — until `accept-rollback`, after which the copy
    /// is the keychain (and a copy older still is refused again).
    @Test func anOlderCopyPutBackIsRefusedUntilAccepted() throws {
        let container = try KeychainCommandTests.makeContainer()
        let device = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "old-value", environment: device).status == 0)
        #expect(try container.app(arguments: ["keychain", "set", "api", "bob"], stdin: "deleted-later", environment: device).status == 0)
        try Self.shell(container, "cp -a '\(container.path)/keychain' '\(container.root.path)/keychain-copy'")
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "new-value", environment: device).status == 0)
        #expect(try container.app(arguments: ["keychain", "delete", "api", "bob"], environment: device).status == 0)
        try Self.shell(container, "rm -r '\(container.path)/keychain' && cp -a '\(container.root.path)/keychain-copy' '\(container.path)/keychain'")

        for command in [["keychain", "get", "api", "alice"], ["keychain", "get", "api", "bob"], ["keychain", "list"],
                        ["auth", "status"], ["keychain", "delete", "api", "bob"]] {
            let refused = try container.app(arguments: command, environment: device)
            #expect(refused.status == 65 && refused.stdout.isEmpty, "\(command): \(refused)")
            #expect(refused.stderrLines.count == 1 && refused.stderr.contains("older than this device last saw it (generation 2, this device recorded 4)")
                    && refused.stderr.contains("app keychain accept-rollback"), "\(refused)")
        }
        let set = try container.app(arguments: ["keychain", "set", "api", "carol"], stdin: "x", environment: device)
        #expect(set.status == 65, "writes are refused too: \(set)")
        #expect(try Self.generation(container) == "2", "nothing was written")

        let accepted = try container.app(arguments: ["keychain", "accept-rollback"], environment: device)
        #expect(accepted.status == 0 && accepted.stderr.contains("accepted the keychain as it is, at generation 2"), "\(accepted)")
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: device).stdout == "old-value")
        let again = try container.app(arguments: ["keychain", "accept-rollback"], environment: device)
        #expect(again.stderr.contains("not rolled back; nothing to accept"), "\(again)")

        // The copy of the copy, before its acceptance, is older than what this device has seen.
        try Self.shell(container, "rm -r '\(container.path)/keychain' && cp -a '\(container.root.path)/keychain-copy' '\(container.path)/keychain'")
        #expect(try container.app(arguments: ["keychain", "list"], environment: device).status == 65)
    }

    /// Timeline: `keychain set` is killed (SIGKILL, `TRIPBOARD_CRASH_AT=keychain.committed`) after
    /// its commit and before it updates this device's record. The record lags one generation
    /// behind — which is not a rollback: the next read serves the committed value, and the next
    /// write brings the record up to date.
    @Test func aKillBetweenTheCommitAndTheRecordIsNotARollback() throws {
        let container = try KeychainCommandTests.makeContainer()
        let device = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "first", environment: device).status == 0)
        let killed = try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "second",
                                       environment: device.merging(["TRIPBOARD_CRASH_AT": "keychain.committed"]) { $1 })
        #expect(killed.wasSignaled && killed.status == SIGKILL, "\(killed)")
        #expect(try Self.generation(container) == "2")
        #expect(try Self.record(container) == "1\n", "the record lags")
        let get = try container.app(arguments: ["keychain", "get", "api", "alice"], environment: device)
        #expect(get.status == 0 && get.stdout == "second", "\(get)")
        #expect(try container.app(arguments: ["keychain", "set", "api", "bob"], stdin: "x", environment: device).status == 0)
        #expect(try Self.record(container) == "3\n")
    }

    /// Timeline: ten `keychain set` processes write at once; each raises the record under the
    /// device directory's lock, to the highest generation — never down to its own, when a later
    /// writer recorded first.
    @Test func writersAtOnceLeaveTheRecordAtTheLastGeneration() throws {
        let container = try KeychainCommandTests.makeContainer()
        let device = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "api", "first"], stdin: "x", environment: device).status == 0)
        let processes = try (0..<10).map { index in
            try ProcessRunner.start("app", ["keychain", "set", "api", "account-\(index)"], environment: container.environment(device),
                                    stdin: Array("value-\(index)".utf8))
        }
        for process in processes {
            let result = process.wait()
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        }
        #expect(try Self.generation(container) == "11")
        #expect(try Self.record(container) == "11\n")
    }

    /// A damaged record is refused like a rollback (65) and replaced by `accept-rollback`.
    @Test func aDamagedRecordIsRefusedUntilAccepted() throws {
        let container = try KeychainCommandTests.makeContainer()
        let device = KeychainCommandTests.deviceEnvironment(container)
        #expect(try container.app(arguments: ["keychain", "set", "api", "alice"], stdin: "x", environment: device).status == 0)
        try Self.shell(container, "for f in '\(container.root.path)'/device/*.generation; do printf 'seven\\n' > \"$f\"; done")
        let refused = try container.app(arguments: ["keychain", "get", "api", "alice"], environment: device)
        #expect(refused.status == 65 && refused.stderr.contains("is damaged") && refused.stderrLines.count == 1, "\(refused)")
        let accepted = try container.app(arguments: ["keychain", "accept-rollback"], environment: device)
        #expect(accepted.status == 0 && accepted.stderr.contains("record of it was damaged"), "\(accepted)")
        #expect(try container.app(arguments: ["keychain", "get", "api", "alice"], environment: device).stdout == "x")
    }
}
