import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem

/// The other implementations the archive tests check TripBoard against — Debian's `age` (Go),
/// PyPI's `pyrage` (Rust), GNU `tar`, `bsdtar` (libarchive), Python's `tarfile` — run with the one
/// process runner, ``ChildProcess``: explicit environment, stdout drained while the child runs,
/// stderr into a file that a failure prints, a deadline.
enum ExternalTools {
    static let age = "/usr/bin/age"
    static let gnuTar = "/usr/bin/tar"
    static let bsdtar = "/usr/bin/bsdtar"
    /// Debian's interpreter (`tools/lib/common.sh` installs it): `tarfile`, `zlib`, `pty`.
    static let python = "/usr/bin/python3"

    static var hasAge: Bool { FileManager.default.isExecutableFile(atPath: age) }
    static var hasBSDTar: Bool { FileManager.default.isExecutableFile(atPath: bsdtar) }

    /// A Python interpreter that can `import pyrage` (PyPI, so not installed by apt): the one named by
    /// `TRIPBOARD_PYRAGE_PYTHON`, else the `python3` first on the test's own `PATH` (resolved to its
    /// real executable, so pyenv shims need no environment of theirs), else Debian's; nil when none
    /// has it, and the pyrage tests are skipped.
    static let pyragePython: String? = {
        let inherited = ProcessInfo.processInfo.environment
        var candidates = [inherited["TRIPBOARD_PYRAGE_PYTHON"]].compactMap { $0 }
        for directory in (inherited["PATH"] ?? "").split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/python3") {
            candidates.append("\(directory)/python3")
        }
        candidates.append(python)
        for candidate in candidates {
            let probe = try? ChildProcess.run(executable: candidate, arguments: ["-c", "import sys, pyrage; print(sys.executable)"],
                                              environment: inherited, timeout: 30)
            if let probe, probe.termination == .exited(0) {
                return String(decoding: probe.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return nil
    }()

    /// `Fixtures/` as copied next to the test bundle.
    static let fixtures: String = Bundle.module.resourceURL!.appendingPathComponent("Fixtures").path

    static func script(_ name: String) -> String { fixtures + "/scripts/" + name }

    /// `tools/lib/age-pty.py`, which `tools/bench` uses too: one copy for both.
    static let agePTY = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../tools/lib/age-pty.py").standardized.path

    /// What a finished tool printed and how it ended.
    struct Result: CustomStringConvertible {
        let termination: ChildProcess.Termination
        let output: [UInt8]
        let errorOutput: String

        var succeeded: Bool { termination == .exited(0) }
        var description: String {
            "\(termination)\n--- stdout\n\(String(decoding: output.prefix(4000), as: UTF8.self))\n--- stderr\n\(errorOutput)"
        }
    }

    /// Runs `executable` with `arguments` in `environment` (plus a minimal PATH, LANG and TZ).
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    timeout: Double = 120, outputLimit: Int = 64 << 20) throws -> Result {
        let errorFile = NSTemporaryDirectory() + "tripboard-tool-\(UUID().uuidString).err"
        defer { try? FileManager.default.removeItem(atPath: errorFile) }
        var fullEnvironment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "HOME": NSTemporaryDirectory()]
        fullEnvironment.merge(environment) { $1 }
        let outcome = try ChildProcess.run(executable: executable, arguments: arguments, environment: fullEnvironment,
                                           timeout: timeout, outputLimit: outputLimit, standardError: .file(path: errorFile))
        let errorOutput = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
        return Result(termination: outcome.timedOut ? .signaled(SIGKILL) : outcome.termination,
                      output: outcome.output, errorOutput: errorOutput + (outcome.timedOut ? "\n[killed after \(timeout) s]" : ""))
    }

    /// Runs `arguments` (an `age` command line, or `/bin/sh -c …`) on a pseudo-terminal that
    /// answers every passphrase prompt with `passphrase`.
    static func runOnTerminal(_ arguments: [String], passphrase: String, timeout: Double = 300) throws -> Result {
        try run(python, [agePTY] + arguments, environment: ["AGE_PASSPHRASE": passphrase], timeout: timeout)
    }

    /// Runs `pyrage-tool.py encrypt|decrypt INPUT OUTPUT`; nil when no Python has pyrage.
    static func pyrage(_ mode: String, input: String, output: String, passphrase: String) throws -> Result? {
        guard let pyragePython else { return nil }
        return try run(pyragePython, [script("pyrage-tool.py"), mode, input, output], environment: ["AGE_PASSPHRASE": passphrase])
    }

    /// `compressed` inflated with Python's `zlib`: the age test kit ships its large vectors
    /// zlib-compressed, and Foundation on Linux has no inflate.
    static func inflate(_ compressed: [UInt8]) throws -> [UInt8] {
        let input = NSTemporaryDirectory() + "tripboard-zlib-\(UUID().uuidString)"
        try Data(compressed).write(to: URL(fileURLWithPath: input))
        defer { try? FileManager.default.removeItem(atPath: input) }
        let result = try run(python, ["-c", "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], 'rb').read()))", input])
        try #require(result.succeeded, "zlib: \(result)")
        return result.output
    }
}
