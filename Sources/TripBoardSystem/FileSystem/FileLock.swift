import Glibc

/// An advisory `flock(2)` lock on one open file, owned by this process.
///
/// There is no timed `flock`, so waiting is polling `LOCK_NB` with exponential backoff up to a
/// deadline; a stopped (SIGSTOP) holder would otherwise block every other process forever.
/// The kernel releases the lock when its holder dies, even by SIGKILL, so there are no stale locks.
public final class FileLock: @unchecked Sendable {
    // @unchecked: `mode` is mutated only by lock/unlock, which callers serialize (one lock object
    // per process, used from the thread that opened the container).

    /// How the lock is held.
    public enum Mode: Sendable, CustomStringConvertible {
        case shared, exclusive
        public var description: String { self == .shared ? "shared" : "exclusive" }
    }

    package let descriptor: FileDescriptor
    public private(set) var mode: Mode?

    public init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Takes the lock in `mode`, waiting up to `timeout` seconds. Converting an existing lock is not
    /// atomic (flock(2): "the existing lock is first removed"), so callers unlock first and re-check
    /// whatever they decided under the old lock.
    public func lock(_ mode: Mode, timeout: Double) throws(LockBusyError) {
        precondition(self.mode == nil, "convert a flock by unlocking first")
        let operation = (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB
        let deadline = MonotonicClock.now() + timeout
        var pause = 0.001
        while true {
            if flock(descriptor.rawValue, operation) == 0 {
                self.mode = mode
                return
            }
            let failure = errno
            if failure != EWOULDBLOCK && failure != EINTR {
                // Not contention (e.g. ENOLCK): waiting cannot help; report it as busy with the cause.
                throw LockBusyError(path: descriptor.path, wanted: mode, waited: 0,
                                    holders: [], cause: String(cString: strerror(failure)))
            }
            let now = MonotonicClock.now()
            if now >= deadline {
                throw LockBusyError(path: descriptor.path, wanted: mode, waited: timeout,
                                    holders: LockHolders.find(for: descriptor), cause: nil)
            }
            MonotonicClock.sleep(seconds: min(pause, deadline - now))
            pause = min(pause * 2, 0.05)
        }
    }

    /// Releases the lock (closing the descriptor would too).
    public func unlock() {
        if mode != nil {
            _ = flock(descriptor.rawValue, LOCK_UN)
            mode = nil
        }
    }
}

/// The lock could not be had before the deadline: another process holds it.
public struct LockBusyError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let wanted: FileLock.Mode
    public let waited: Double
    /// Processes seen holding a lock on the file (from `/proc/locks`), when they could be found.
    public let holders: [LockHolder]
    /// Set when flock failed for a reason other than contention.
    public let cause: String?

    public var description: String {
        if let cause { return "cannot lock \(path): \(cause)" }
        let waitedText = waited < 1 ? "\(Int(waited * 1000)) ms" : "\(Int(waited.rounded())) s"
        var text = "container is busy: could not take the \(wanted) lock on \(path) within \(waitedText)"
        if !holders.isEmpty {
            text += "; held by " + holders.map(\.description).joined(separator: ", ")
        }
        return text
    }
}

/// A process holding a `flock` on a file, as listed in `/proc/locks`.
public struct LockHolder: Sendable, Equatable, CustomStringConvertible {
    public let processID: Int32
    public let command: String?
    public let isExclusive: Bool
    public var description: String {
        "\(command ?? "process") (pid \(processID), \(isExclusive ? "exclusive" : "shared"))"
    }
}

package enum LockHolders {
    /// Reads `/proc/locks` for FLOCK entries on the descriptor's inode. Best effort: an empty list
    /// only means the holder could not be named (another PID namespace, no /proc).
    package static func find(for descriptor: FileDescriptor) -> [LockHolder] {
        guard let info = try? descriptor.status(),
              let locks = try? Directory.open(path: "/proc").openFileForReading("locks").readToEnd(limit: 4 << 20)
        else { return [] }
        let me = getpid()
        // /proc/locks names the file as MAJOR:MINOR:INODE, the device numbers in hex (glibc's
        // major()/minor() encoding of st_dev).
        let major = ((info.device >> 8) & 0xfff) | ((info.device >> 32) & ~UInt64(0xfff))
        let minor = (info.device & 0xff) | ((info.device >> 12) & ~UInt64(0xff))
        let fileID = String(major, radix: 16) + ":" + String(minor, radix: 16) + ":\(info.inode)"
        var holders: [LockHolder] = []
        for line in String(decoding: locks, as: UTF8.self).split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF" (blocked waiters have "->").
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", Self.sameFile(String(fields[5]), fileID),
                  let pid = Int32(fields[4]), pid != me
            else { continue }
            let command = try? Directory.open(path: "/proc/\(pid)").openFileForReading("comm").readToEnd(limit: 256)
            let name = command.map { String(decoding: $0, as: UTF8.self).trimmingTrailingNewlines() }
            holders.append(LockHolder(processID: pid, command: name, isExclusive: fields[3] == "WRITE"))
        }
        return holders
    }
}

extension LockHolders {
    /// Compares /proc/locks file ids, whose device numbers may be zero-padded ("00:2a:17").
    package static func sameFile(_ listed: String, _ expected: String) -> Bool {
        let a = listed.split(separator: ":"), b = expected.split(separator: ":")
        guard a.count == 3, b.count == 3 else { return false }
        return UInt64(a[0], radix: 16) == UInt64(b[0], radix: 16) && UInt64(a[1], radix: 16) == UInt64(b[1], radix: 16)
            && a[2] == b[2]
    }
}

extension String {
    package func trimmingTrailingNewlines() -> String {
        var text = self
        while text.last == "\n" || text.last == "\r" { text.removeLast() }
        return text
    }
}

/// Monotonic time, immune to wall-clock changes.
public enum MonotonicClock {
    /// Seconds on `CLOCK_MONOTONIC`.
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    package static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
