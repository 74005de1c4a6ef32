import Glibc

/// An operating-system error with the call that failed and the path it failed on.
///
/// Modelled on swift-nio's `FileSystemError`: one type for every I/O failure, carrying what a user
/// needs to act (the path), what a maintainer needs to debug (the system call and its errno), and
/// never any file *contents*.
public struct FileSystemError: Error, Sendable, CustomStringConvertible {
    /// The broad class of the failure; extensible, so switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public static let notFound = Code(name: "not found")
        public static let permissionDenied = Code(name: "permission denied")
        public static let alreadyExists = Code(name: "already exists")
        public static let notADirectory = Code(name: "not a directory")
        public static let isADirectory = Code(name: "is a directory")
        public static let symbolicLink = Code(name: "refusing to follow a symbolic link")
        /// A FIFO, socket, device or directory where TripBoard expects a regular file.
        public static let notRegularFile = Code(name: "not a regular file")
        public static let noSpace = Code(name: "no space left on device")
        public static let crossDevice = Code(name: "cross-device link")
        public static let wouldBlock = Code(name: "would block")
        public static let readOnlyFileSystem = Code(name: "read-only file system")
        public static let invalid = Code(name: "invalid")
        /// More bytes than the reader allows (`FileDescriptor.readToEnd(limit:)`): bad input, not an I/O failure.
        public static let tooLarge = Code(name: "too large")
        public static let io = Code(name: "input/output error")
        /// A file that the kernel will not run as a program (ENOEXEC).
        public static let notExecutable = Code(name: "not an executable program")
        public var description: String { name }
    }

    public let code: Code
    /// The system call that failed, e.g. `"openat"` (the corresponding C function).
    public let systemCall: String
    /// The path involved, as the user would recognise it.
    public let path: String
    /// The errno value; 0 when the error did not come from the kernel.
    public let errorNumber: Int32
    /// Extra context, e.g. "owned by another user"; never file contents.
    public let detail: String?

    package init(systemCall: String, path: String, errorNumber: Int32, detail: String? = nil) {
        self.systemCall = systemCall
        self.path = path
        self.errorNumber = errorNumber
        self.detail = detail
        self.code = Self.code(for: errorNumber)
    }

    package init(code: Code, systemCall: String, path: String, detail: String? = nil) {
        self.code = code
        self.systemCall = systemCall
        self.path = path
        self.errorNumber = 0
        self.detail = detail
    }

    /// Captures the current `errno` for `systemCall` on `path`.
    package static func fromErrno(_ systemCall: String, path: String) -> FileSystemError {
        FileSystemError(systemCall: systemCall, path: path, errorNumber: errno)
    }

    private static func code(for errorNumber: Int32) -> Code {
        switch errorNumber {
        case ENOENT: .notFound
        case EACCES, EPERM: .permissionDenied
        case EEXIST, ENOTEMPTY: .alreadyExists
        case ENOTDIR: .notADirectory
        case EISDIR: .isADirectory
        case ELOOP: .symbolicLink
        case ENOSPC, EDQUOT: .noSpace
        case EXDEV: .crossDevice
        case EWOULDBLOCK: .wouldBlock
        case EROFS: .readOnlyFileSystem
        case EINVAL: .invalid
        case ENOEXEC: .notExecutable
        default: .io
        }
    }

    /// What went wrong, in the system's words (`strerror(3)`: "No such file or directory"), or
    /// the code's name when no system call failed.
    public var reason: String { errorNumber != 0 ? String(cString: strerror(errorNumber)) : code.name }

    public var description: String {
        var text = "\(path): " + reason
        if errorNumber == ELOOP { text += " (symbolic links are not followed inside the container)" }
        if let detail { text += " (\(detail))" }
        if code == .notRegularFile { text += "; TripBoard reads only regular files there: move it away" }
        text += " [\(systemCall)]"
        if code == .noSpace { return "the disk is full (\(text)); free some space and try again" }
        return text
    }
}

/// Retries `body` while it fails with `EINTR`. Not for `close(2)`: Linux always releases the
/// descriptor, so retrying could close a descriptor another thread has just been given.
@inline(__always)
package func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
    while true {
        let result = body()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}
