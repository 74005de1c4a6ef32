internal import CSystem
import Glibc

/// A helper executable kept running for a conversation: requests go to its stdin, answers come
/// from its stdout, each one a frame (a 4-byte big-endian length, then that many bytes). Every
/// read has a deadline; a helper that misses it, writes a frame larger than `frameLimit` or a
/// malformed one is killed (SIGKILL) and the session is over. Ending the session closes the
/// helper's stdin (its cue to exit), waits briefly, then kills it: a helper never outlives it.
///
/// Synchronous on purpose, like `ChildProcess.run`: blocking stays synchronous and visible, with a deadline on every wait.
public final class HelperSession {
    /// The largest frame either side may send (32 MiB: a page of sealed records, with room).
    public static let frameLimit = 32 << 20

    package let executable: String
    private let pid: pid_t
    private var requests: FileDescriptor?
    private let answers: FileDescriptor
    private var ended = false

    /// Starts `executable` with `arguments` and exactly `environment`; its stderr goes where
    /// `standardError` says.
    public init(executable: String, arguments: [String], environment: [String: String],
                standardError: ChildProcess.ErrorDestination = .discarded) throws(FileSystemError) {
        self.executable = executable
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        if pipe2(&toChild, O_CLOEXEC) != 0 { throw .fromErrno("pipe2", path: executable) }
        if pipe2(&fromChild, O_CLOEXEC) != 0 {
            _ = Glibc.close(toChild[0]); _ = Glibc.close(toChild[1])
            throw .fromErrno("pipe2", path: executable)
        }
        requests = FileDescriptor(rawValue: toChild[1], path: "\(executable) (stdin)")
        answers = FileDescriptor(rawValue: fromChild[0], path: "\(executable) (stdout)")
        // Only the child may hold its ends once it runs, or neither side would see end-of-file.
        defer { _ = Glibc.close(toChild[0]); _ = Glibc.close(fromChild[1]) }
        pid = try ChildProcess.spawn(executable: executable, arguments: arguments, environment: environment,
                                     standardOutput: fromChild[1], standardError: standardError, standardInput: toChild[0])
    }

    deinit { end() }

    /// The descriptor answers arrive on, to wait on with others (`poll`) before `receive`.
    package var answerDescriptor: Int32 { answers.rawValue }

    /// Sends one frame and waits at most `timeout` seconds for the answering frame.
    public func exchange(_ request: [UInt8], timeout: Double) throws(HelperSessionError) -> [UInt8] {
        try post(request)
        return try receive(timeout: timeout)
    }

    /// Sends one frame without waiting for its answer: the caller collects it with `receive`
    /// before anything else is sent (one request, one answer, in turn, as ever — the helper
    /// simply works on it meanwhile).
    public func post(_ request: [UInt8]) throws(HelperSessionError) {
        guard !ended, let requests else { throw .ended }
        guard request.count <= Self.frameLimit else { throw .frameTooLarge(request.count) }
        do {
            try requests.write(all: Self.header(request.count) + request)
        } catch {
            kill()
            throw .helperGone(detail: error.description)
        }
    }

    /// The answer to the request last posted, waited for at most `timeout` seconds.
    public func receive(timeout: Double) throws(HelperSessionError) -> [UInt8] {
        guard !ended else { throw .ended }
        let deadline = MonotonicClock.now() + timeout
        do throws(HelperSessionError) {
            let header = try read(4, until: deadline)
            let count = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            guard count <= Self.frameLimit else {
                kill()
                throw HelperSessionError.frameTooLarge(count)
            }
            return try read(count, until: deadline)
        } catch {
            kill()
            throw error
        }
    }

    /// Closes the helper's stdin, gives it `grace` seconds to exit, then kills it; reaps it.
    public func end(grace: Double = 2) {
        guard !ended else { return }
        ended = true
        requests = nil
        if (try? ChildProcess.reap(pid, before: MonotonicClock.now() + grace, executable: executable)) == nil {
            _ = Glibc.kill(pid, SIGKILL)
            _ = try? ChildProcess.reap(pid, executable: executable)
        }
    }

    private func kill() {
        guard !ended else { return }
        ended = true
        requests = nil
        _ = Glibc.kill(pid, SIGKILL)
        _ = try? ChildProcess.reap(pid, executable: executable)
    }

    /// The 4-byte big-endian length of a frame.
    public static func header(_ count: Int) -> [UInt8] {
        [UInt8(count >> 24 & 0xff), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)]
    }

    /// Exactly `count` bytes of the helper's stdout, before `deadline`.
    private func read(_ count: Int, until deadline: Double) throws(HelperSessionError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            let remaining = deadline - MonotonicClock.now()
            if remaining <= 0 { throw .timedOut }
            let chunk: [UInt8]
            do {
                guard try answers.waitForInput(milliseconds: Int32(min(remaining * 1000 + 1, 60_000))) else { continue }
                chunk = try answers.read(upTo: min(count - bytes.count, 1 << 20))
            } catch {
                throw .helperGone(detail: error.description)
            }
            if chunk.isEmpty { throw .helperGone(detail: "it ended without answering") }
            bytes += chunk
        }
        return bytes
    }
}

/// Why a conversation with a helper ended.
public enum HelperSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// It did not answer in time, and was killed.
    case timedOut
    /// It exited, crashed or closed its stdout.
    case helperGone(detail: String)
    /// A frame larger than `HelperSession.frameLimit`.
    case frameTooLarge(Int)
    /// The session is over (after a failure, or `end`).
    case ended

    public var description: String {
        switch self {
        case .timedOut: "it did not answer in time and was stopped"
        case .helperGone(let detail): "it stopped: \(detail)"
        case .frameTooLarge(let count): "a message of \(count) bytes is larger than the \(HelperSession.frameLimit >> 20) MiB limit"
        case .ended: "the conversation with it is over"
        }
    }
}
