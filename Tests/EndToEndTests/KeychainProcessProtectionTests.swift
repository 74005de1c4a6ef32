import Foundation
import Testing

/// What a keychain command does to its own process before it handles a secret: no core dump can
/// hold one.
@Suite struct KeychainProcessProtectionTests {
    /// The first line of /proc/PID/`file` that starts with `prefix`, split into its fields.
    static func procFields(_ processID: Int32, _ file: String, _ prefix: String) throws -> [Substring] {
        let text = try String(contentsOfFile: "/proc/\(processID)/\(file)", encoding: .utf8)
        let line = text.split(separator: "\n").first { $0.hasPrefix(prefix) } ?? ""
        return line.dropFirst(prefix.count).split(whereSeparator: { $0 == " " || $0 == "\t" })
    }

    /// Waits (up to 10 s) until the process sleeps in read(2) on a pipe, its standard input.
    static func waitUntilReadingAPipe(_ processID: Int32) -> String {
        let deadline = Date().addingTimeInterval(10)
        var channel = ""
        while Date() < deadline {
            channel = (try? String(contentsOfFile: "/proc/\(processID)/wchan", encoding: .utf8)) ?? ""
            if channel.contains("pipe") { break }
            usleep(10_000)
        }
        return channel
    }

    /// Timeline: `keychain set` starts with a pipe for standard input that the test keeps open, so
    /// it waits in read(2) for the secret — the moment a core would hold it — while the test
    /// reads its /proc entry; then the test writes the secret and closes the pipe.
    ///
    /// A process that is not dumpable has its /proc/PID files owned by root (proc(5)). As root,
    /// every process we start is root's anyway, so the test runs `app` as nobody (setpriv), where
    /// the owner tells the two apart.
    @Test func aCommandWaitingForASecretCanLeaveNoCoreDump() throws {
        let container = try KeychainCommandTests.makeContainer()
        var command = [ProcessRunner.executable("app"), "keychain", "set", "api", "alice"]
        if getuid() == 0 {
            #expect(chown(container.root.path, 65534, 65534) == 0)
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + command
        }
        let input = Pipe()
        let process = try ProcessRunner.start(command[0], Array(command.dropFirst()),
                                              environment: container.environment(KeychainCommandTests.deviceEnvironment(container)),
                                              stdinPipe: input)
        let channel = Self.waitUntilReadingAPipe(process.processIdentifier)
        #expect(channel.contains("pipe"), "waiting for its secret, not in \(channel)")
        let coreLimit = try Self.procFields(process.processIdentifier, "limits", "Max core file size")
        let userID = try Self.procFields(process.processIdentifier, "status", "Uid:").first
        let owner = try FileManager.default.attributesOfItem(atPath: "/proc/\(process.processIdentifier)/status")[.ownerAccountID] as? Int
        try input.fileHandleForWriting.write(contentsOf: Data("s3cret\n".utf8))
        try input.fileHandleForWriting.close()
        let result = process.wait()
        #expect(result.status == 0, "\(result)")
        #expect(coreLimit.prefix(2) == ["0", "0"], "soft and hard RLIMIT_CORE: \(coreLimit)")
        #expect(userID != "0" && owner == 0, "not dumpable: /proc entry of uid \(userID ?? "?") owned by \(owner ?? -1)")
    }
}
