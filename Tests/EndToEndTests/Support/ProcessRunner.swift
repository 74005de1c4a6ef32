import Foundation
import Testing

/// The one way tests run a process: explicit environment, stdin from bytes, stdout and stderr
/// redirected to files while it runs (a pipe read only after exit deadlocks once it fills), and a
/// deadline after which the child is killed and the test fails.
struct ProcessResult: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    /// True when the child died of a signal (then `status` is the signal number).
    let wasSignaled: Bool

    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    var trimmedStdout: String { stdout.trimmingCharacters(in: .whitespacesAndNewlines) }

    var description: String {
        "status \(status)\(wasSignaled ? " (signal)" : "")\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
    }
}

/// A child started with `ProcessRunner.start`, for tests that run several at once or kill one.
final class RunningProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched through Foundation's thread-safe Process API.
    let process: Process
    let outputURL: URL
    let errorURL: URL

    init(process: Process, outputURL: URL, errorURL: URL) {
        self.process = process
        self.outputURL = outputURL
        self.errorURL = errorURL
    }

    var processIdentifier: Int32 { process.processIdentifier }

    func kill(signal: Int32 = SIGKILL) { Foundation.kill(process.processIdentifier, signal) }

    /// True once the child is stopped (state `T` in /proc: a crash point's `:stop`), polling
    /// every 10 ms for up to `seconds`; false if it never was.
    func waitUntilStopped(within seconds: Double = 30) -> Bool {
        func stopped() -> Bool {
            ((try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8)) ?? "").split(separator: ")").last?.dropFirst().first == "T"
        }
        let deadline = Date().addingTimeInterval(seconds)
        while !stopped() && Date() < deadline { usleep(10_000) }
        return stopped()
    }

    /// Waits for the child, killing it after `timeout` seconds.
    func wait(timeout: Double = 60) -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        var timedOut = false
        if process.isRunning {
            timedOut = true
            kill()
        }
        process.waitUntilExit()
        let stdout = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        var stderr = (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
        if timedOut { stderr += "\n[test harness: killed after \(timeout) s]" }
        try? FileManager.default.removeItem(at: outputURL)
        try? FileManager.default.removeItem(at: errorURL)
        return ProcessResult(status: process.terminationStatus, stdout: stdout, stderr: stderr,
                             wasSignaled: process.terminationReason == .uncaughtSignal)
    }
}

enum ProcessRunner {
    /// Where the built executables are: `TRIPBOARD_BIN_DIR`, else the products directory that
    /// `swift test` built them into (the test bundle sits there).
    static let binDirectory: URL = {
        if let override = ProcessInfo.processInfo.environment["TRIPBOARD_BIN_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        var url = Bundle.main.bundleURL
        if !FileManager.default.fileExists(atPath: url.appendingPathComponent("app").path) {
            url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        }
        return url
    }()

    static func executable(_ name: String) -> String { binDirectory.appendingPathComponent(name).path }

    /// A minimal, explicit environment: nothing from the developer's shell leaks into a test.
    static func environment(container: String?, extra: [String: String] = [:]) -> [String: String] {
        // A device's unlocked keys go to the run's session keyring (tools/test gives the run its own).
        var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "LANG": "C.UTF-8", "TZ": "UTC",
                           "TRIPBOARD_KEYRING": "session"]
        if let container { environment["TRIPBOARD_CONTAINER"] = container }
        // A clock sweep (libfaketime: `FAKETIME=@2027-06-01 LD_PRELOAD=… swift test`) reaches the
        // executables too, so that a test written against today's date is caught before that day.
        for (name, value) in ProcessInfo.processInfo.environment where name == "LD_PRELOAD" || name.hasPrefix("FAKETIME") || name == "NO_FAKE_STAT" {
            environment[name] = value
        }
        environment.merge(extra) { $1 }
        return environment
    }

    /// `stdinPipe`, when given, is the child's standard input instead of `stdin`'s bytes: the test
    /// writes to it (and closes it) while the child runs, e.g. to look at a child waiting for input.
    static func start(_ executable: String, _ arguments: [String], environment: [String: String],
                      stdin: [UInt8]? = nil, stdinPipe: Pipe? = nil) throws -> RunningProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : Self.executable(executable))
        process.arguments = arguments
        process.environment = environment
        let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("out-\(UUID().uuidString)")
        let errorURL = FileManager.default.temporaryDirectory.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        if let stdinPipe {
            process.standardInput = stdinPipe
        } else if let stdin {
            let inputURL = FileManager.default.temporaryDirectory.appendingPathComponent("in-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: inputURL.path, contents: Data(stdin))
            process.standardInput = try FileHandle(forReadingFrom: inputURL)
            try? FileManager.default.removeItem(at: inputURL)  // the open handle keeps the bytes
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        return RunningProcess(process: process, outputURL: outputURL, errorURL: errorURL)
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    stdin: [UInt8]? = nil, timeout: Double = 60) throws -> ProcessResult {
        try start(executable, arguments, environment: environment, stdin: stdin).wait(timeout: timeout)
    }
}

/// Polls every `polling` microseconds until `path` exists or `seconds` have passed (the caller's
/// next expectation then fails on what is missing).
func waitUntilFileExists(_ path: String, within seconds: Double, polling: UInt32) {
    let deadline = Date().addingTimeInterval(seconds)
    while !FileManager.default.fileExists(atPath: path) && Date() < deadline { usleep(polling) }
}
