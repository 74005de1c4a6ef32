import CSystem
import Glibc

/// The one owner of an open file descriptor; closes it when released.
///
/// Every descriptor TripBoard opens is `O_CLOEXEC`, so a child process (an `$EDITOR`, a PDF parser)
/// never inherits a lock or a file.
public final class FileDescriptor: Sendable {
    package let rawValue: Int32
    /// The path the descriptor was opened with, for error messages.
    public let path: String

    package init(rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
    }

    /// Opens a file the user named, outside any container, for reading (symbolic links followed).
    /// A FIFO is accepted — `share-extension <(…)` reads one — but by default opened without waiting for a writer
    /// (`O_NONBLOCK`, cleared once open): with no writer, reading it finds the end of the input at
    /// once instead of hanging a process that may hold the container lock. `waitingForAWriter`
    /// opens it as `cat` does (for `app import`, which reads its document before it takes any
    /// lock). A directory opens, and reading it fails with `EISDIR`.
    public static func openForReading(path: String, waitingForAWriter: Bool = false) throws(FileSystemError) -> FileDescriptor {
        let fd = retryingOnInterrupt { Glibc.open(path, O_RDONLY | O_CLOEXEC | (waitingForAWriter ? 0 : O_NONBLOCK)) }
        if fd < 0 { throw .fromErrno("open", path: path) }
        let file = FileDescriptor(rawValue: fd, path: path)
        try file.setBlocking()
        return file
    }

    /// Clears `O_NONBLOCK` (set to open a file without waiting on a FIFO), so reads wait for data.
    package func setBlocking() throws(FileSystemError) {
        let flags = fcntl(rawValue, F_GETFL)
        if flags < 0 || fcntl(rawValue, F_SETFL, flags & ~O_NONBLOCK) < 0 { throw .fromErrno("fcntl", path: path) }
    }

    /// A descriptor of its own for standard input (a duplicate, so closing it leaves fd 0 alone).
    public static func standardInput() throws(FileSystemError) -> FileDescriptor {
        let fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3)
        if fd < 0 { throw .fromErrno("dup", path: "standard input") }
        return FileDescriptor(rawValue: fd, path: "standard input")
    }

    /// A descriptor of its own for standard output, e.g. to stream a backup to a pipe (a
    /// duplicate, so closing it leaves fd 1 alone).
    public static func standardOutput() throws(FileSystemError) -> FileDescriptor {
        let fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        if fd < 0 { throw .fromErrno("dup", path: "standard output") }
        return FileDescriptor(rawValue: fd, path: "standard output")
    }

    deinit {
        // close(2): "the file descriptor is released early in close() ... retrying after EINTR
        // is the wrong thing to do on Linux".
        _ = Glibc.close(rawValue)
    }

    /// Writes every byte of `bytes`, retrying short writes and `EINTR`.
    public func write<Bytes: Collection<UInt8>>(all bytes: Bytes) throws(FileSystemError) {
        let contiguous = Array(bytes)
        var failure: FileSystemError?
        contiguous.withUnsafeBytes { buffer in
            do throws(FileSystemError) { try write(all: buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Writes every byte of `buffer` without copying it, retrying short writes and `EINTR`.
    public func write(all buffer: UnsafeRawBufferPointer) throws(FileSystemError) {
        var offset = 0
        while offset < buffer.count {
            let written = retryingOnInterrupt { Glibc.write(rawValue, buffer.baseAddress! + offset, buffer.count - offset) }
            if written < 0 { throw .fromErrno("write", path: path) }
            offset += written
        }
    }

    /// Reads up to `maximumCount` bytes; an empty result means end of file.
    public func read(upTo maximumCount: Int) throws(FileSystemError) -> [UInt8] {
        // Not zeroed first: only the bytes read are kept (a large `maximumCount` cost a memset of
        // all of it per read).
        var count = 0
        let buffer = [UInt8](unsafeUninitializedCapacity: maximumCount) { raw, initialized in
            count = retryingOnInterrupt { Glibc.read(rawValue, raw.baseAddress, maximumCount) }
            initialized = max(count, 0)
        }
        if count < 0 { throw .fromErrno("read", path: path) }
        return buffer
    }

    /// Reads up to `buffer.count` bytes into `buffer` (no allocation: for streaming large files);
    /// returns how many, 0 at the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FileSystemError) -> Int {
        let count = retryingOnInterrupt { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
        if count < 0 { throw .fromErrno("read", path: path) }
        return count
    }

    /// Reads to the end of the file; refuses input larger than `limit` bytes (`.tooLarge`): a
    /// regular file by its size, before a byte is read; anything else (a pipe, a device such as
    /// `/dev/zero`) as soon as the running count passes the limit, so it never buffers more.
    public func readToEnd(limit: Int = 64 << 20) throws(FileSystemError) -> [UInt8] {
        let tooLarge = FileSystemError(code: .tooLarge, systemCall: "read", path: path, detail: "larger than \(limit) bytes")
        let status = try status()
        if status.kind == .regular && status.size > limit { throw tooLarge }
        var result: [UInt8] = []
        if status.kind == .regular { result.reserveCapacity(Int(status.size) + 1) }
        // A regular file in reads of about its size (one byte over, so the second read sees the
        // end), not of 64 KiB: each read allocates and clears its buffer, and two 64 KiB buffers
        // were most of what the widget spent on its 114-byte zone file (docs/performance.md).
        // At least a page, for files that report no size (/proc).
        let chunkSize = status.kind == .regular ? min(max(Int(status.size) + 1, 4096), 64 << 10) : 64 << 10
        while true {
            let chunk = try read(upTo: chunkSize)
            if chunk.isEmpty { return result }
            result += chunk
            if result.count > limit { throw tooLarge }
        }
    }

    /// Flushes the file's data and metadata to stable storage. A failure is final for this write:
    /// after a failed `fsync` the kernel may have dropped the dirty pages, so retrying proves nothing.
    public func synchronize() throws(FileSystemError) {
        if retryingOnInterrupt({ fsync(rawValue) }) != 0 { throw .fromErrno("fsync", path: path) }
    }

    /// Starts writing back `count` bytes from `offset` without waiting (`sync_file_range` with
    /// `SYNC_FILE_RANGE_WRITE`): a long copy calls it as it goes, so the disk works while the copy
    /// continues and the closing `synchronize()` has little left to do. It guarantees nothing on
    /// its own (no metadata, no cache flush); a failure is left to that `synchronize()` to report.
    public func startWriteBack(offset: Int64, count: Int64) {
        _ = CSystem.sync_file_range(rawValue, offset, count, 2)
    }

    /// Copies this file from its current offset to its end into `destination` (at its offset),
    /// refusing more than `maximumBytes` (`.tooLarge`, detected one byte past it); returns the
    /// bytes copied. In the kernel where it can: `copy_file_range(2)` (no pass through user space;
    /// on one filesystem it may share extents), falling back to `read`/`write` through `buffer`
    /// when the kernel refuses it for this pair of files — `EXDEV` (two filesystems of different
    /// types), `ENOSYS`, `EINVAL`, `EOPNOTSUPP` — before any byte was copied that way.
    public func copyContents(to destination: FileDescriptor, maximumBytes: Int64,
                             buffer: UnsafeMutableRawBufferPointer) throws(FileSystemError) -> Int64 {
        let tooLarge = FileSystemError(code: .tooLarge, systemCall: "copy_file_range", path: path,
                                       detail: "larger than \(maximumBytes) bytes")
        var total: Int64 = 0
        var inKernel = true
        while inKernel {
            let wanted = Int(min(Int64(1 << 30), max(0, maximumBytes - total) + 1))
            let copied = retryingOnInterrupt { CSystem.copy_file_range(rawValue, nil, destination.rawValue, nil, wanted, 0) }
            if copied < 0 {
                guard total == 0, [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP].contains(errno) else {
                    throw .fromErrno("copy_file_range", path: path)
                }
                inKernel = false
                break
            }
            if copied == 0 { return total }
            total += Int64(copied)
            if total > maximumBytes { throw tooLarge }
        }
        while true {
            let count = try read(into: buffer)
            if count == 0 { return total }
            total += Int64(count)
            if total > maximumBytes { throw tooLarge }
            try destination.write(all: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The file's metadata (`fstat`).
    public func status() throws(FileSystemError) -> FileStatus {
        var info = stat()
        if fstat(rawValue, &info) != 0 { throw .fromErrno("fstat", path: path) }
        return FileStatus(info)
    }

    /// Shortens or extends the file (`ftruncate`).
    public func truncate(to size: Int64) throws(FileSystemError) {
        if retryingOnInterrupt({ ftruncate(rawValue, off_t(size)) }) != 0 {
            throw .fromErrno("ftruncate", path: path)
        }
    }
}

/// The parts of `struct stat` TripBoard looks at.
public struct FileStatus: Sendable, Equatable {
    public enum Kind: Sendable { case regular, directory, symbolicLink, fifo, socket, device, other }
    public let kind: Kind
    public let size: Int64
    /// Permission bits only (`st_mode & 0o7777`).
    public let permissions: UInt32
    public let ownerUserID: UInt32
    public let inode: UInt64
    public let device: UInt64
    /// Modification time, whole seconds since 1970.
    public let modificationTime: Int64
    /// Modification time in nanoseconds since 1970: with device, inode and size, a file's
    /// identity (the container migration recognises a file it planned by these, never reading it).
    public let modificationNanoseconds: Int64

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        case S_IFCHR, S_IFBLK: kind = .device
        default: kind = .other
        }
        size = Int64(info.st_size)
        permissions = UInt32(info.st_mode & 0o7777)
        ownerUserID = UInt32(info.st_uid)
        inode = UInt64(info.st_ino)
        device = UInt64(info.st_dev)
        modificationTime = Int64(info.st_mtim.tv_sec)
        modificationNanoseconds = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
    }

    /// What the file is, in words for a message: "a FIFO", "a directory", ….
    public var kindDescription: String {
        switch kind {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .symbolicLink: "a symbolic link"
        case .fifo: "a FIFO"
        case .socket: "a socket"
        case .device: "a device"
        case .other: "not a regular file"
        }
    }
}

extension FileStatus {
    /// The metadata of the file at `path`, symbolic links followed (`stat`): for a file the user
    /// named, outside any container, looked at before it is opened.
    public static func of(path: String) throws(FileSystemError) -> FileStatus {
        var info = stat()
        if stat(path, &info) != 0 { throw .fromErrno("stat", path: path) }
        return FileStatus(info)
    }

    /// Whether the effective user of this process owns the file: a container or device directory
    /// that someone else owns is refused, whatever its mode says.
    public var isOwnedByCurrentUser: Bool { ownerUserID == geteuid() }
}
