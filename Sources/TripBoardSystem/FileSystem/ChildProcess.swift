internal import CSystem
import Glibc

/// Runs a helper executable to completion under a wall-clock deadline and returns what it printed
/// on stdout: spawn, drain the pipe while the child runs, kill it with SIGKILL at the deadline,
/// reap it. Synchronous on purpose (a blocking wait stays visible, never hidden in an `async`
/// function on the cooperative pool): the caller blocks for at most `timeout` seconds
/// plus the time the kernel takes to deliver SIGKILL.
///
/// The child gets stdin from `/dev/null` (or a descriptor given, e.g. an in-memory file), stdout into a pipe, stderr discarded (or into a file, for
/// tests that prove a helper is quiet), the default disposition and an empty mask for every
/// signal (we ignore SIGPIPE and may block SIGINT/SIGTERM; exec would pass both on), and no other
/// descriptor: TripBoard opens everything `O_CLOEXEC`, and `closefrom(3)` in the child makes sure
/// of it for descriptors a library opened.
public enum ChildProcess {
    /// How the child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(Int32)
        /// A signal ended it (ours at the deadline, the kernel's for a resource limit, or its own abort).
        case signaled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): ProcessSignal(rawValue: signal).description
            }
        }
    }

    /// Where the child's stderr goes.
    public enum ErrorDestination: Sendable, Equatable {
        /// `/dev/null`.
        case discarded
        /// A file, created or truncated (mode 0600).
        case file(path: String)
    }

    /// What a finished child left behind.
    public struct Outcome: Sendable {
        /// How it ended.
        public let termination: Termination
        /// Everything it wrote to stdout (up to the output limit).
        public let output: [UInt8]
        /// True when we killed it because the deadline passed.
        public let timedOut: Bool
        /// True when we killed it because it wrote more than the output limit.
        public let exceededOutputLimit: Bool
        /// User plus system CPU time it consumed, in seconds (from `wait4`).
        public let cpuSeconds: Double
        /// Its peak resident set size in bytes (from `wait4`).
        public let peakResidentBytes: Int
        /// Wall-clock time from spawn to reaping, in seconds.
        public let elapsedSeconds: Double
    }

    /// Runs `executable` (an absolute path: no `PATH` search) with `arguments` (not including
    /// argv[0], which is `executable`) and exactly `environment`.
    ///
    /// Throws only when the child could not be started (`posix_spawn` failed: `ENOENT` when the
    /// executable is missing, `EACCES` when it is not executable) or the pipe failed; a child that
    /// crashes, times out or prints too much is an `Outcome`.
    ///
    /// `whileRunning` runs in this process right after the child starts, before its output is
    /// read (work that overlaps the child's, such as an fsync); `timeout` counts from its end. If
    /// it throws, the child is killed and reaped and the error rethrown.
    public static func run(
        executable: String,
        arguments: [String],
        environment: [String: String],
        timeout: Double,
        outputLimit: Int = 16 << 20,
        standardError: ErrorDestination = .discarded,
        standardInput: FileDescriptor? = nil,
        whileRunning: () throws(FileSystemError) -> Void = {}
    ) throws(FileSystemError) -> Outcome {
        var start = MonotonicClock.now()
        var pipeEnds: [Int32] = [-1, -1]
        if pipe2(&pipeEnds, O_CLOEXEC) != 0 { throw .fromErrno("pipe2", path: executable) }
        let readEnd = FileDescriptor(rawValue: pipeEnds[0], path: "\(executable) (stdout)")
        let pid: pid_t
        do {
            // Only the child may hold the write end once it runs, or we would never see end-of-file.
            defer { _ = Glibc.close(pipeEnds[1]) }
            pid = try spawn(executable: executable, arguments: arguments, environment: environment,
                            standardOutput: pipeEnds[1], standardError: standardError, standardInput: standardInput?.rawValue)
        }
        do {
            try whileRunning()
        } catch {
            _ = kill(pid, SIGKILL)
            _ = try? reap(pid, executable: executable)
            throw error
        }
        start = MonotonicClock.now()

        let deadline = start + max(0, timeout)
        let drained = drain(readEnd, until: deadline, limit: outputLimit)
        var timedOut = drained.stop == .deadline
        let killed = drained.stop != .endOfFile
        if killed { _ = kill(pid, SIGKILL) }
        // End of file on stdout does not mean the child has exited: keep to the deadline.
        let exitedInTime = killed ? nil : try reap(pid, before: deadline, executable: executable)
        if exitedInTime == nil && !killed {
            timedOut = true
            _ = kill(pid, SIGKILL)
        }
        let ended: (Int32, rusage)
        if let exitedInTime { ended = exitedInTime } else { ended = try reap(pid, executable: executable) }
        let (status, usage) = ended
        if case .failed(let error) = drained.stop { throw error }
        return Outcome(
            termination: status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f),
            output: drained.output, timedOut: timedOut, exceededOutputLimit: drained.stop == .outputLimit,
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            peakResidentBytes: Int(usage.ru_maxrss) * 1024,
            elapsedSeconds: MonotonicClock.now() - start)
    }

    /// The absolute path of the running executable (`readlink("/proc/self/exe")`), so that helpers
    /// installed next to it are found wherever the installation was moved.
    public static func currentExecutablePath() throws(FileSystemError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count < 0 { throw .fromErrno("readlink", path: "/proc/self/exe") }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The directory of the running executable, where its helpers are installed beside it
    /// (`pdf-worker`, `sync-agent`, the sealed-page extension).
    public static func currentExecutableDirectory() throws(FileSystemError) -> String {
        try currentExecutablePath().split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }

    // MARK: - Private

    /// Starts the child; `standardInput`, when given, becomes its fd 0 instead of `/dev/null`.
    static func spawn(
        executable: String, arguments: [String], environment: [String: String],
        standardOutput: Int32, standardError: ErrorDestination, standardInput: Int32? = nil
    ) throws(FileSystemError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 first: if our own stdin or stderr was closed, the pipe may have landed on 0 or 2.
        // posix_spawn_file_actions_adddup2(3): when both descriptors are equal, the close-on-exec
        // flag is cleared instead (glibc ≥ 2.29), so a pipe that landed on 1 still works.
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        switch standardError {
        case .discarded:
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 2, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argumentVector = ([executable] + arguments).map { strdup($0) } + [nil]
        let environmentVector = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argumentVector { free(pointer) }
            for pointer in environmentVector { free(pointer) }
        }
        var pid: pid_t = 0
        // posix_spawn(3): returns the error number instead of setting errno; glibc reports a
        // failed exec (ENOENT, EACCES, ENOEXEC) here too.
        let failure = posix_spawn(&pid, executable, &actions, &attributes, argumentVector, environmentVector)
        if failure != 0 { throw FileSystemError(systemCall: "posix_spawn", path: executable, errorNumber: failure) }
        return pid
    }

    private enum DrainStop: Equatable {
        case endOfFile, deadline, outputLimit
        case failed(FileSystemError)

        package static func == (lhs: DrainStop, rhs: DrainStop) -> Bool {
            switch (lhs, rhs) {
            case (.endOfFile, .endOfFile), (.deadline, .deadline), (.outputLimit, .outputLimit), (.failed, .failed): true
            default: false
            }
        }
    }

    /// Reads `readEnd` while the child runs, until end of file, the deadline, more than `limit`
    /// bytes, or a failure. Reading only after the child exits would deadlock as soon as it
    /// filled the pipe (64 KiB) and blocked in write.
    private static func drain(_ readEnd: FileDescriptor, until deadline: Double, limit: Int) -> (output: [UInt8], stop: DrainStop) {
        var output: [UInt8] = []
        while true {
            let remaining = deadline - MonotonicClock.now()
            if remaining <= 0 { return (output, .deadline) }
            do {
                guard try readEnd.waitForInput(milliseconds: Int32(min(remaining * 1000 + 1, 60_000))) else { continue }
                let chunk = try readEnd.read(upTo: 64 << 10)
                if chunk.isEmpty { return (output, .endOfFile) }
                output += chunk
                if output.count > limit {
                    output.removeLast(output.count - limit)
                    return (output, .outputLimit)
                }
            } catch {
                return (output, .failed(error))
            }
        }
    }

    /// Waits for `pid` to end; gives up at `deadline` and returns nil then.
    static func reap(_ pid: pid_t, before deadline: Double, executable: String) throws(FileSystemError) -> (Int32, rusage)? {
        var pause = 0.001
        while true {
            if let ended = try wait(pid, blocking: false, executable: executable) { return ended }
            let remaining = deadline - MonotonicClock.now()
            if remaining <= 0 { return nil }
            MonotonicClock.sleep(seconds: min(pause, remaining))
            pause = min(pause * 2, 0.02)
        }
    }

    /// Waits for `pid` to end, however long it takes (after SIGKILL: as long as the kernel needs).
    static func reap(_ pid: pid_t, executable: String) throws(FileSystemError) -> (Int32, rusage) {
        while true {
            if let ended = try wait(pid, blocking: true, executable: executable) { return ended }
        }
    }

    /// One `wait4` call, retried on EINTR: the wait status and resource usage, or nil if still running.
    private static func wait(_ pid: pid_t, blocking: Bool, executable: String) throws(FileSystemError) -> (Int32, rusage)? {
        var status: Int32 = 0
        var usage = rusage()
        let result = retryingOnInterrupt { wait4(pid, &status, blocking ? 0 : WNOHANG, &usage) }
        if result < 0 { throw .fromErrno("wait4", path: executable) }
        return result == pid ? (status, usage) : nil
    }

    private static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
}
