import TripBoardKeychain
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

    /// Drives `app` on a pseudo-terminal (python3's os.openpty: the child's stdin and stderr are
    /// the terminal, which is not its controlling one, so only `kill` sends it signals). Prints
    /// how the child ended and whether the terminal echoes afterwards.
    static let promptDriver = """
        import os, select, signal, subprocess, sys, termios, time
        app, number = sys.argv[1], int(sys.argv[2])
        master, terminal = os.openpty()
        # As from a shell: no signal blocked (the test runner's children inherit a mask blocking some).
        child = subprocess.Popen([app, "keychain", "set-recovery-passphrase"], stdin=terminal, stderr=terminal,
                                 stdout=subprocess.DEVNULL, preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, []))
        deadline, seen = time.time() + 10, b""
        # Up is the prompt, then echo goes off: wait for both before signalling.
        while time.time() < deadline and (b"passphrase:" not in seen or termios.tcgetattr(terminal)[3] & termios.ECHO):
            if select.select([master], [], [], 0.02)[0]:
                seen += os.read(master, 1024)
        echo_off_at_prompt = not termios.tcgetattr(terminal)[3] & termios.ECHO
        os.write(master, b"half a passph")
        time.sleep(0.1)
        os.kill(child.pid, number)
        status = child.wait(timeout=10)
        echo_after = bool(termios.tcgetattr(terminal)[3] & termios.ECHO)
        print(f"status={status} echo_off_at_prompt={echo_off_at_prompt} echo_after={echo_after}")
        """

    /// A passphrase prompt killed by a signal used to leave the terminal without echo (the shell
    /// then showed nothing the user typed). Now the settings come back, and the process still
    /// dies of that signal.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP, SIGQUIT])
    func aSignalAtTheSecretPromptLeavesTheTerminalEchoing(signalNumber: Int32) throws {
        let container = try KeychainCommandTests.makeContainer()
        let result = try ProcessRunner.run("/usr/bin/python3", ["-c", Self.promptDriver, ProcessRunner.executable("app"), "\(signalNumber)"],
                                           environment: container.environment(KeychainCommandTests.deviceEnvironment(container)))
        #expect(result.status == 0, "\(result)")
        #expect(result.trimmedStdout == "status=-\(signalNumber) echo_off_at_prompt=True echo_after=True", "\(result)")
    }
}
