import Foundation
import Testing
import TripBoardStorage
import TripBoardSystem
import TripBoardTestSupport

/// The process plumbing under `PDFWorker`, with `/bin/sh` as the child: what the child inherits,
/// how its output is drained, how deadlines and limits end it.
struct ChildProcessTests {
    static func shell(_ script: String, environment: [String: String] = ["PATH": "/usr/bin:/bin"], timeout: Double = 20,
                      outputLimit: Int = 16 << 20, standardError: ChildProcess.ErrorDestination = .discarded) throws -> ChildProcess.Outcome {
        try ChildProcess.run(executable: "/bin/sh", arguments: ["-c", script], environment: environment,
                             timeout: timeout, outputLimit: outputLimit, standardError: standardError)
    }

    static func text(_ outcome: ChildProcess.Outcome) -> String { String(decoding: outcome.output, as: UTF8.self) }

    @Test func returnsStdoutAndTheExitStatus() throws {
        let outcome = try Self.shell("printf 'hello\\n'; exit 7")

        #expect(Self.text(outcome) == "hello\n")
        #expect(outcome.termination == .exited(7))
        #expect(!outcome.timedOut && !outcome.exceededOutputLimit)
    }

    @Test func drainsOutputLargerThanAPipeBufferWhileTheChildRuns() throws {
        // 4 MiB: a child writing into a full 64 KiB pipe would block forever if we only read after it exits.
        let outcome = try Self.shell("head -c 4194304 /dev/zero")

        #expect(outcome.termination == .exited(0))
        #expect(outcome.output.count == 4 << 20)
    }

    @Test func killsAChildThatPrintsMoreThanTheLimit() throws {
        let outcome = try Self.shell("cat /dev/zero", outputLimit: 100_000)

        #expect(outcome.exceededOutputLimit)
        #expect(outcome.output.count == 100_000)
        #expect(outcome.termination == .signaled(SIGKILL))
    }

    @Test func killsAChildAtTheDeadline() throws {
        let outcome = try Self.shell("sleep 30", timeout: 0.2)

        #expect(outcome.timedOut)
        #expect(outcome.termination == .signaled(SIGKILL))
        #expect(outcome.elapsedSeconds < 2)
    }

    @Test func keepsTheDeadlineWhenTheChildClosesStdoutButRunsOn() throws {
        let outcome = try Self.shell("printf early; exec >&-; sleep 30", timeout: 0.3)

        #expect(Self.text(outcome) == "early")
        #expect(outcome.timedOut)
        #expect(outcome.termination == .signaled(SIGKILL))
        #expect(outcome.elapsedSeconds < 2)
    }

    @Test func passesExactlyTheEnvironmentGiven() throws {
        let outcome = try ChildProcess.run(executable: "/usr/bin/env", arguments: [], environment: ["B": "two words", "A": "1"], timeout: 20)

        #expect(Self.text(outcome) == "A=1\nB=two words\n")
    }

    @Test func theChildInheritsNoDescriptorButTheStandardThree() throws {
        // A descriptor opened without O_CLOEXEC, as a careless library might: closefrom(3) in the child drops it.
        let leaky = open("/dev/null", O_RDONLY)
        try #require(leaky > 2)
        defer { close(leaky) }

        let outcome = try Self.shell("ls /proc/self/fd")

        let descriptors = Self.text(outcome).split(separator: "\n").compactMap { Int($0) }.sorted()
        // 3 is the directory `ls` itself opened to list it; an inherited descriptor would add one more.
        #expect(descriptors == [0, 1, 2, 3])
    }

    @Test func stdinIsDevNullAndStderrIsDiscardedOrCaptured() throws {
        let discarded = try Self.shell("readlink /proc/self/fd/0; readlink /proc/self/fd/2; echo noise >&2")
        #expect(Self.text(discarded) == "/dev/null\n/dev/null\n")

        let directory = try TemporaryDirectory()
        let captured = try Self.shell("echo noise >&2", standardError: .file(path: directory.child("stderr.txt")))
        #expect(captured.output == [])
        #expect(try directory.bytes("stderr.txt") == Array("noise\n".utf8))
        #expect(try directory.permissions("stderr.txt") == 0o600)
    }

    @Test func theChildStartsWithDefaultSignalsAndAnEmptyMask() throws {
        // Our processes ignore SIGPIPE (ProcessSetup) and the widget blocks SIGINT and SIGTERM:
        // exec would hand both on.
        signal(SIGPIPE, SIG_IGN)
        let outcome = try Self.shell("grep -E '^Sig(Blk|Ign):' /proc/self/status")

        // The standard signals, 1–31: glibc keeps its internal real-time signals 32 and 33 to itself.
        let masks = Self.text(outcome).split(separator: "\n").compactMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        #expect(masks.count == 2)
        #expect(masks.map { $0 & 0x7fff_ffff } == [0, 0], "blocked, ignored: \(Self.text(outcome))")
    }

    @Test func reportsDeathBySignalAndCPUTime() throws {
        let outcome = try Self.shell("i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; kill -ABRT $$")

        #expect(outcome.termination == .signaled(SIGABRT))
        #expect(outcome.cpuSeconds > 0)
        #expect(outcome.peakResidentBytes > 0)
    }

    @Test func aMissingExecutableIsNotFound() throws {
        let error = try #require(throws: FileSystemError.self) {
            try ChildProcess.run(executable: "/nonexistent/pdf-worker", arguments: [], environment: [:], timeout: 5)
        }

        #expect(error.code == .notFound)
        #expect(error.systemCall == "posix_spawn")
    }
}
