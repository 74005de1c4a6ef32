internal import CSystem
import Glibc

/// Why a write to a standard stream failed.
public struct StreamWriteFailure: Error, Sendable, CustomStringConvertible {
    public let errorNumber: Int32
    /// The reader has gone (`app trip list | head`): nothing is wrong with what was written.
    public var readerGone: Bool { errorNumber == EPIPE }
    public var description: String { String(cString: strerror(errorNumber)) }
}

/// The standard streams and the few process-level calls the executables need, so that the CLI
/// layer never touches Glibc itself.
public enum StandardStream: Sendable {
    case input, output, error

    package var rawValue: Int32 {
        switch self {
        case .input: 0
        case .output: 1
        case .error: 2
        }
    }

    /// Writes all of `bytes`; returns false when the reader has gone (EPIPE) or the write failed.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool { writeAll(bytes) == nil }

    /// Writes all of `bytes`; returns nil, or why the write failed (`StreamWriteFailure`).
    public func writeAll(_ bytes: [UInt8]) -> StreamWriteFailure? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                retryingOnInterrupt { Glibc.write(rawValue, buffer.baseAddress! + offset, buffer.count - offset) }
            }
            if written < 0 { return StreamWriteFailure(errorNumber: errno) }
            if written == 0 { return StreamWriteFailure(errorNumber: EIO) }
            offset += written
        }
        return nil
    }

    /// Writes raw bytes (a secret's buffer) without copying them into a Swift array.
    @discardableResult
    public func write(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let written = retryingOnInterrupt { Glibc.write(rawValue, buffer.baseAddress! + offset, buffer.count - offset) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Reads a secret to the end of the stream into one buffer allocated up front (so no
    /// reallocation leaves copies behind); the caller wipes it (`SecureBytes(wiping:)`). Stops
    /// after `limit + 1` bytes, leaving the rest unread: a result longer than `limit` means the
    /// stream holds more than `limit` bytes, for the caller to refuse as too long.
    public func readSecret(limit: Int) throws(FileSystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let read = buffer.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { Glibc.read(rawValue, raw.baseAddress! + count, raw.count - count) }
            }
            if read < 0 {
                let error = FileSystemError.fromErrno("read", path: "standard input")
                for index in buffer.indices { buffer[index] = 0 }
                throw error
            }
            if read == 0 { break }
            count += read
        }
        buffer.removeLast(buffer.count - count)  // shrinks in place: no copy
        return buffer
    }

    /// Reads the stream to its end, refusing more than `limit` bytes.
    public func readToEnd(limit: Int) throws(FileSystemError) -> [UInt8] {
        let borrowed = FileDescriptor(rawValue: dup(rawValue), path: "standard input")
        return try borrowed.readToEnd(limit: limit)
    }

    /// True when the stream is a terminal.
    public var isTerminal: Bool { isatty(rawValue) == 1 }
}

/// Process-wide settings every TripBoard executable applies first.
public enum ProcessSetup {
    /// Files this process creates are private (0600/0700) whatever the caller's umask, and a
    /// closed pipe on stdout is an EPIPE to handle, not a signal that kills us mid-transaction.
    public static func applyDefaults() {
        umask(0o077)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Keeps secrets out of core dumps, for a command about to handle secret material (the device
    /// key, a token, a passphrase): no core file (`RLIMIT_CORE` 0, soft and hard, so nothing this
    /// process runs can raise it again) and not dumpable (`prctl(PR_SET_DUMPABLE, 0)`), which also
    /// keeps other processes of the same user from attaching a debugger or reading
    /// /proc/PID/mem. Lasts until the process exits; an `exec` resets the dumpable flag only.
    public static func protectSecretsFromCoreDumps() throws(FileSystemError) {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) != 0 {
            throw .fromErrno("setrlimit", path: "RLIMIT_CORE")
        }
        if tripboard_set_dumpable(0) != 0 { throw .fromErrno("prctl", path: "PR_SET_DUMPABLE") }
    }

    /// Ends the process with `status`.
    public static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

    /// The command line's arguments, without the program name, as the bytes the kernel passed:
    /// `CommandLine.arguments` has already replaced invalid UTF-8 with U+FFFD, which would make
    /// two different arguments the same text.
    public static func rawArguments() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
        }
    }

    /// The values of just `names` from the environment (cheaper than the whole of it at start-up).
    public static func environment(_ names: [String]) -> [String: String] {
        // Sized once: each growth of a new dictionary rehashes and looks its storage type up again
        // (about 20,000 instructions a time, a measurable part of the widget's start).
        var result = [String: String](minimumCapacity: names.count)
        for name in names {
            if let value = getenv(name) { result[name] = String(cString: value) }
        }
        return result
    }

    /// The environment as a dictionary.
    public static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// Runs `command` through `/bin/sh -c` with `argument` as `$1`, sharing our terminal, and
    /// returns its exit status (128 + signal when killed). Used for `$EDITOR`, which may carry its
    /// own arguments (`code --wait`).
    public static func runShellCommand(_ command: String, argument: String) throws -> Int32 {
        let arguments = ["/bin/sh", "-c", command + " \"$1\"", "sh", argument]
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &cArguments, environ)
        if spawned != 0 {
            throw FileSystemError(systemCall: "posix_spawn", path: "/bin/sh", errorNumber: spawned)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { throw FileSystemError.fromErrno("waitpid", path: "/bin/sh") }
        }
        let signalNumber = status & 0x7f
        return signalNumber == 0 ? (status >> 8) & 0xff : 128 + signalNumber
    }
}

extension ProcessSetup {
    /// The running kernel's release (`uname -r`), for diagnostics.
    public static func kernelRelease() -> String {
        var name = utsname()
        uname(&name)
        return withUnsafePointer(to: name.release) { $0.withMemoryRebound(to: CChar.self, capacity: 65) { String(cString: $0) } }
    }
}
