import Glibc

/// A resource limit of this process, so that code above the basement never spells `RLIMIT_*`.
/// The corresponding C functions are `getrlimit` and `setrlimit`.
public struct ResourceLimit: Sendable {
    private let resource: __rlimit_resource_t
    private let name: StaticString

    private init(_ resource: __rlimit_resource, _ name: StaticString) {
        self.resource = __rlimit_resource_t(resource.rawValue)
        self.name = name
    }

    /// The address space, in bytes (`RLIMIT_AS`): an allocation beyond it fails.
    public static let addressSpaceBytes = ResourceLimit(RLIMIT_AS, "RLIMIT_AS")
    /// CPU time, in seconds (`RLIMIT_CPU`): SIGXCPU at the soft limit, SIGKILL at the hard one.
    public static let cpuSeconds = ResourceLimit(RLIMIT_CPU, "RLIMIT_CPU")
    /// The largest file this process may write, in bytes (`RLIMIT_FSIZE`): SIGXFSZ beyond it.
    public static let writtenFileBytes = ResourceLimit(RLIMIT_FSIZE, "RLIMIT_FSIZE")
    /// The largest core dump, in bytes (`RLIMIT_CORE`); 0 writes none.
    public static let coreFileBytes = ResourceLimit(RLIMIT_CORE, "RLIMIT_CORE")

    /// Lowers the limit to `limit`, soft and hard.
    public func lower(to limit: UInt64) { lower(soft: limit, hard: limit) }

    /// Lowers the soft and hard limits, never raising one an administrator set lower.
    ///
    /// setrlimit(2): "An unprivileged process may … irreversibly lower its hard limit." Lowering
    /// cannot fail, so a failure is a programmer error (a wrong resource), and traps.
    public func lower(soft: UInt64, hard: UInt64) {
        var current = rlimit()
        precondition(getrlimit(resource, &current) == 0, "getrlimit(\(name)) failed")
        var limit = rlimit(rlim_cur: min(rlim_t(soft), current.rlim_max), rlim_max: min(rlim_t(hard), current.rlim_max))
        precondition(setrlimit(resource, &limit) == 0, "setrlimit(\(name)) failed")
    }
}

extension ProcessSignal {
    /// RLIMIT_FSIZE's limit was reached by a write.
    public static let fileSizeLimit = ProcessSignal(rawValue: SIGXFSZ)

    /// From now on this process ignores the signal (`SIG_IGN`), e.g. SIGXFSZ, so that an
    /// oversized write fails with EFBIG instead of killing the process.
    public func ignore() { signal(rawValue, SIG_IGN) }

    /// Sends this process SIGALRM in `seconds` (`alarm(2)`), whose default action ends it: a
    /// bound on its lifetime, whatever it is waiting for.
    public static func scheduleAlarm(inSeconds seconds: UInt32) { alarm(seconds) }
}

extension StandardStream {
    /// Points the stream at /dev/null for the rest of the process (`dup2`), so that what C
    /// libraries print on it directly goes nowhere. Best effort: if /dev/null cannot be opened
    /// the stream is left as it was.
    public func discard() {
        let null = open("/dev/null", (self == .input ? O_RDONLY : O_WRONLY) | O_CLOEXEC)
        guard null >= 0 else { return }
        _ = dup2(null, rawValue)
        if null != rawValue { _ = close(null) }
    }
}

extension ProcessSetup {
    /// The current working directory; `nil` when it cannot be named (removed, or unreachable).
    public static func currentDirectory() -> String? {
        // getcwd(3): "As an extension to the POSIX.1-2001 standard, glibc's getcwd() allocates
        // the buffer dynamically using malloc(3) if buf is NULL."
        guard let pointer = getcwd(nil, 0) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

/// C strings that live as long as this object (copied with `strdup`, freed in `deinit`), for C
/// calls that take an array of them (`const char *const *`); a `nil` element is a NULL pointer
/// (the terminator some calls want, or SQL NULL for libpq's parameter values).
package final class CStringArray {
    private let pointers: [UnsafeMutablePointer<CChar>?]

    package init(_ strings: [String?]) {
        pointers = strings.map { $0.map { strdup($0) } ?? nil }
    }

    deinit {
        for pointer in pointers { free(pointer) }
    }

    /// Runs `body` with the array's address (valid only inside `body`).
    package func withPointers<Result>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws -> Result) rethrows -> Result {
        let constant = pointers.map { $0.map { UnsafePointer($0) } }
        return try constant.withUnsafeBufferPointer { try body($0.baseAddress) }
    }
}

extension FileDescriptor {
    /// Waits at most `milliseconds` for input on `descriptor` (or for its other end to close):
    /// `poll(2)` with `POLLIN`. False at the deadline, and when a signal interrupted the wait
    /// (`EINTR`): the caller, which knows its own deadline, waits again or gives up. For a
    /// descriptor another library owns (libpq's socket); TripBoard's own descriptors use the instance form.
    package static func waitForInput(onDescriptor descriptor: Int32, milliseconds: Int32, path: String) throws(FileSystemError) -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&request, 1, milliseconds)
        if ready < 0 {
            if errno == EINTR { return false }
            throw .fromErrno("poll", path: path)
        }
        return ready > 0
    }

    /// Waits at most `milliseconds` for input on this descriptor (see the static form).
    package func waitForInput(milliseconds: Int32) throws(FileSystemError) -> Bool {
        try Self.waitForInput(onDescriptor: rawValue, milliseconds: milliseconds, path: path)
    }
}
