import CSystem
import Glibc

/// Files that live in memory only (memfd_create(2)): a ticket being shared is staged in one, so
/// its plaintext never reaches a disk, and the PDF worker reads it through an inherited descriptor.
extension FileDescriptor {
    /// A new, empty file in memory (close-on-exec, sealable), gone when the last descriptor of it
    /// closes. `name` shows only in `/proc/PID/fd` (as `memfd:NAME`).
    public static func memoryFile(name: String) throws(FileSystemError) -> FileDescriptor {
        let fd = tripboard_memfd_create(name)
        if fd < 0 { throw .fromErrno("memfd_create", path: "memfd:\(name)") }
        return FileDescriptor(rawValue: fd, path: "memfd:\(name)")
    }

    /// Seals a memory file against any change (no write, no shrinking or growing, no new seal), so
    /// that what a reader in another process sees is what this one hashed.
    public func sealContents() throws(FileSystemError) {
        if tripboard_seal_contents(rawValue) != 0 { throw .fromErrno("fcntl(F_ADD_SEALS)", path: path) }
    }

    /// Up to `buffer.count` bytes from `offset` into `buffer` (`pread`: the descriptor's own offset,
    /// which another process may share, is left alone); 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer, atOffset offset: Int64) throws(FileSystemError) -> Int {
        while true {
            let count = pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 { return count }
            if errno != EINTR { throw .fromErrno("pread", path: path) }
        }
    }

    /// Opens for writing a file the user named that is there already and is not a regular file
    /// nor a directory — a device (`/dev/null`), a FIFO, a terminal, `/dev/stdout` — as a shell's
    /// redirection does: links followed, nothing created, truncated or replaced.
    public static func openExistingForWriting(path: String) throws(FileSystemError) -> FileDescriptor {
        // Without waiting for a reader (a FIFO with none is ENXIO at once, not a hang).
        let fd = retryingOnInterrupt { Glibc.open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }
        if fd < 0 { throw .fromErrno("open", path: path) }
        let file = FileDescriptor(rawValue: fd, path: path)
        try file.setBlocking()
        return file
    }

    /// Moves the offset to `offset` from the start (`lseek(SEEK_SET)`).
    public func seek(to offset: Int64) throws(FileSystemError) {
        if lseek(rawValue, off_t(offset), SEEK_SET) < 0 { throw .fromErrno("lseek", path: path) }
    }
}
