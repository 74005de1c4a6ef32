import Glibc

/// Reading a document twice (`app import` checks it, then inserts it) without holding it.
extension FileDescriptor {
    /// Moves the file offset back to the start, to read a regular file again. The
    /// corresponding C function is `lseek`.
    public func rewind() throws(FileSystemError) {
        if lseek(rawValue, 0, SEEK_SET) < 0 { throw .fromErrno("lseek", path: path) }
    }

    /// A temporary file with no name, open for reading and writing: made with `mkstemp` in
    /// `$TMPDIR` (else `/tmp`), mode 0600, and unlinked at once, so nothing is left behind
    /// whatever happens to the process. For input that can be read only once (a pipe).
    public static func unnamedTemporaryFile() throws(FileSystemError) -> FileDescriptor {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/tripboard-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if fd < 0 { throw .fromErrno("mkstemp", path: path) }
        let file = FileDescriptor(rawValue: fd, path: path)
        if fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 { throw .fromErrno("fcntl", path: path) }
        if unlink(path) != 0 { throw .fromErrno("unlink", path: path) }
        return file
    }
}
