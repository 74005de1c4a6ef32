import Glibc
internal import CSystem

/// An open directory; every operation is relative to it (`openat`, `renameat`, …) and refuses to
/// follow a symbolic link in the final component, so nothing planted inside the container can
/// redirect a read or a write elsewhere.
public final class Directory: Sendable {
    package let descriptor: FileDescriptor
    /// The directory's path, for messages and for composing child paths.
    public var path: String { descriptor.path }

    package init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Opens an existing directory at an absolute or relative `path` (the path itself may be a
    /// symbolic link: that is the user's choice of location, not something inside the container).
    public static func open(path: String) throws(FileSystemError) -> Directory {
        let fd = retryingOnInterrupt { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if fd < 0 { throw .fromErrno("open", path: path) }
        return Directory(descriptor: FileDescriptor(rawValue: fd, path: path))
    }

    /// Like `open(path:)`, but `nil` when nothing is at `path` (any other failure is thrown).
    public static func openIfPresent(path: String) throws(FileSystemError) -> Directory? {
        do {
            return try open(path: path)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
    }

    /// Opens an existing directory like `open(path:)`, and names it by its canonical absolute path
    /// (`realpath`: no symbolic link, `.` or `..` anywhere in it), so that every path composed
    /// from it can be handed to code that refuses links in *any* component — SQLite's
    /// `SQLITE_OPEN_NOFOLLOW` does — and stays right if the current directory changes.
    /// The corresponding C function is `realpath`.
    public static func openResolvingLinks(path: String) throws(FileSystemError) -> Directory {
        guard let resolved = realpath(path, nil) else { throw .fromErrno("realpath", path: path) }
        let canonical = String(cString: resolved)
        free(resolved)
        // The canonical path has no link in it: O_NOFOLLOW refuses one swapped in since.
        let fd = retryingOnInterrupt { Glibc.open(canonical, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        if fd < 0 { throw .fromErrno("open", path: path) }
        return Directory(descriptor: FileDescriptor(rawValue: fd, path: canonical))
    }

    /// Creates `path` and any missing parents with `mode`, then opens it.
    public static func create(path: String, mode: UInt32 = 0o700) throws(FileSystemError) -> Directory {
        _ = try createIfAbsent(path: path, mode: mode)
        return try open(path: path)
    }

    /// Creates `path` and any missing parents with `mode`; true when `path` itself was created
    /// by this call (false when it existed already).
    public static func createIfAbsent(path: String, mode: UInt32 = 0o700) throws(FileSystemError) -> Bool {
        var prefix = path.hasPrefix("/") ? "/" : ""
        var createdLast = false
        for component in path.split(separator: "/") {
            prefix += component
            createdLast = Glibc.mkdir(prefix, mode_t(mode)) == 0
            if !createdLast && errno != EEXIST { throw .fromErrno("mkdir", path: prefix) }
            prefix += "/"
        }
        return createdLast
    }

    /// The path of `name` inside this directory.
    public func childPath(_ name: String) -> String {
        path.hasSuffix("/") ? path + name : path + "/" + name
    }

    /// Opens the subdirectory `name`, refusing symbolic links; creates it with mode 0700 first when
    /// `create` is set.
    public func openDirectory(_ name: String, create: Bool = false) throws(FileSystemError) -> Directory {
        if create && mkdirat(descriptor.rawValue, name, 0o700) != 0 && errno != EEXIST {
            throw .fromErrno("mkdirat", path: childPath(name))
        }
        let fd = retryingOnInterrupt {
            openat(descriptor.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        if fd < 0 {
            // O_NOFOLLOW with O_DIRECTORY reports a symbolic link as ENOTDIR: say what it really is.
            let failure = errno
            if failure == ENOTDIR, (try? status(of: name))?.kind == .symbolicLink {
                throw FileSystemError(systemCall: "openat", path: childPath(name), errorNumber: ELOOP)
            }
            throw FileSystemError(systemCall: "openat", path: childPath(name), errorNumber: failure)
        }
        return Directory(descriptor: FileDescriptor(rawValue: fd, path: childPath(name)))
    }

    /// Opens the file `name` for reading, refusing symbolic links.
    public func openFileForReading(_ name: String) throws(FileSystemError) -> FileDescriptor {
        try openFile(name, .readOnly)
    }

    /// Like `openFileForReading`, but `nil` when there is no file of that name (any other failure
    /// is thrown).
    public func openFileForReadingIfPresent(_ name: String) throws(FileSystemError) -> FileDescriptor? {
        do {
            return try openFile(name, .readOnly)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
    }

    /// The whole file `name` (at most `limit` bytes, `.fileTooLarge` beyond), or `nil` when there
    /// is none.
    public func readFileIfPresent(_ name: String, limit: Int) throws(FileSystemError) -> [UInt8]? {
        try openFileForReadingIfPresent(name)?.readToEnd(limit: limit)
    }

    /// Opens the regular file `name` for `access`, creating it as `creation` says (never following
    /// a symbolic link: `O_NOFOLLOW | O_CLOEXEC` always); new files get `mode`. Anything but a regular file is refused (`.notRegularFile`) without
    /// waiting: the file is opened `O_NONBLOCK`, which clear again once `fstat` has shown a
    /// regular file — open(2) of a FIFO for reading otherwise blocks until a writer appears, so a
    /// FIFO planted in the container would hang every process that reads that name.
    public func openFile(_ name: String, _ access: FileAccess, creating creation: FileCreation = .never,
                         mode: UInt32 = 0o600) throws(FileSystemError) -> FileDescriptor {
        let fd = retryingOnInterrupt {
            openat(descriptor.rawValue, name, access.flags | creation.flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode_t(mode))
        }
        if fd < 0 {
            let failure = errno
            // O_NOFOLLOW reports a symbolic link as ELOOP; a socket gives ENXIO: say what it is.
            if failure == ENXIO, let status = try? status(of: name), status.kind != .regular {
                throw FileSystemError(code: .notRegularFile, systemCall: "openat", path: childPath(name), detail: status.kindDescription)
            }
            throw FileSystemError(systemCall: "openat", path: childPath(name), errorNumber: failure)
        }
        let file = FileDescriptor(rawValue: fd, path: childPath(name))
        let status = try file.status()
        guard status.kind == .regular else {
            throw FileSystemError(code: .notRegularFile, systemCall: "openat", path: file.path, detail: status.kindDescription)
        }
        try file.setBlocking()
        return file
    }

    /// The status of `name` without following a symbolic link; `nil` when it does not exist.
    public func status(of name: String) throws(FileSystemError) -> FileStatus? {
        var info = stat()
        if fstatat(descriptor.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            if errno == ENOENT { return nil }
            throw .fromErrno("fstatat", path: childPath(name))
        }
        return FileStatus(info)
    }

    /// The status of this directory itself.
    public func status() throws(FileSystemError) -> FileStatus { try descriptor.status() }

    /// Atomically replaces (or creates) `name` in `destination` with this directory's `name`.
    public func rename(_ name: String, to destination: Directory, as newName: String) throws(FileSystemError) {
        // rename(2): "If newpath already exists, it will be atomically replaced, so that there is
        // no point at which another process attempting to access newpath will find it missing."
        if renameat(descriptor.rawValue, name, destination.descriptor.rawValue, newName) != 0 {
            throw .fromErrno("renameat", path: destination.childPath(newName))
        }
    }

    /// Swaps `name` here and `otherName` in `other` in one atomic step: each path names what the
    /// other did, and at no instant is either missing. The corresponding C function is
    /// `renameat2` with `RENAME_EXCHANGE`.
    public func exchange(_ name: String, with other: Directory, _ otherName: String) throws(FileSystemError) {
        if CSystem.renameat2(descriptor.rawValue, name, other.descriptor.rawValue, otherName, 2) != 0 {
            throw .fromErrno("renameat2", path: other.childPath(otherName))
        }
    }

    /// Moves `name` (a file, a directory, a link itself — nothing is followed) to `destination`
    /// as `newName` unless `newName` exists there: `false` then, and nothing moved.
    /// The corresponding C function is `renameat2` with `RENAME_NOREPLACE`.
    public func renameUnlessExists(_ name: String, to destination: Directory, as newName: String) throws(FileSystemError) -> Bool {
        if CSystem.renameat2(descriptor.rawValue, name, destination.descriptor.rawValue, newName, 1) != 0 {
            if errno == EEXIST { return false }
            throw .fromErrno("renameat2", path: destination.childPath(newName))
        }
        return true
    }

    /// Gives the file `name` a second name, `newName`, unless `newName` exists: `false` then.
    /// link(2) never replaces its target, which makes it a race-free "create if absent" for a
    /// file written completely under a temporary name first.
    public func linkUnlessExists(_ name: String, as newName: String) throws(FileSystemError) -> Bool {
        try link(name, into: self, as: newName)
    }

    /// Gives the file `name` a second name, `newName` in `destination` (same filesystem), unless
    /// that exists: `false` then. The file itself is not touched — a hard link keeps its bytes
    /// under both names — which is how a file SQLite may still hold is set aside without opening it.
    public func link(_ name: String, into destination: Directory, as newName: String) throws(FileSystemError) -> Bool {
        if linkat(descriptor.rawValue, name, destination.descriptor.rawValue, newName, 0) != 0 {
            if errno == EEXIST { return false }
            throw .fromErrno("linkat", path: destination.childPath(newName))
        }
        return true
    }

    /// Sets this directory's own mode through its descriptor (no path, so no link is followed).
    public func setOwnPermissions(_ mode: UInt32) throws(FileSystemError) {
        guard fchmod(descriptor.rawValue, mode_t(mode)) == 0 else { throw FileSystemError.fromErrno("fchmod", path: path) }
    }

    /// Sets the permission bits of the file `name` (not following a symbolic link: the file is
    /// opened `O_NOFOLLOW` and changed through its descriptor).
    public func setPermissions(of name: String, to mode: UInt32) throws(FileSystemError) {
        let file = try openFile(name, .readOnly)
        if fchmod(file.rawValue, mode_t(mode)) != 0 { throw .fromErrno("fchmod", path: childPath(name)) }
    }

    /// Sets the modification time of `name` to now (without following a symbolic link): the
    /// "last used" mark of a least-recently-used cache (access times are unreliable with relatime).
    public func touch(_ name: String) throws(FileSystemError) {
        if utimensat(descriptor.rawValue, name, nil, AT_SYMLINK_NOFOLLOW) != 0 {
            throw .fromErrno("utimensat", path: childPath(name))
        }
    }

    /// Removes the file `name`; a missing file is not an error when `missingIsFine`.
    public func removeFile(_ name: String, missingIsFine: Bool = true) throws(FileSystemError) {
        if unlinkat(descriptor.rawValue, name, 0) != 0 {
            if errno == ENOENT && missingIsFine { return }
            throw .fromErrno("unlinkat", path: childPath(name))
        }
    }

    /// Removes the empty subdirectory `name`.
    public func removeDirectory(_ name: String, missingIsFine: Bool = true) throws(FileSystemError) {
        if unlinkat(descriptor.rawValue, name, AT_REMOVEDIR) != 0 {
            if errno == ENOENT && missingIsFine { return }
            throw .fromErrno("unlinkat", path: childPath(name))
        }
    }

    /// Removes `name` and, if it is a directory, everything in it, never following a link (a link
    /// is removed itself). Only for a tree TripBoard made itself from start to end — a restore's
    /// staging directory — or for what the user asked to have deleted (`container check --repair
    /// --purge-recovered`); never on TripBoard's own initiative for anything that may hold the
    /// user's files.
    public func removeTree(_ name: String) throws(FileSystemError) {
        guard let status = try status(of: name) else { return }
        guard status.kind == .directory else { return try removeFile(name) }
        let directory = try openDirectory(name)
        for entry in try directory.entries() { try directory.removeTree(entry) }
        try removeDirectory(name)
    }

    /// Bytes an unprivileged writer may still use on this directory's filesystem (`f_bavail` ×
    /// `f_frsize`). The corresponding C function is `fstatvfs`.
    public func availableBytes() throws(FileSystemError) -> Int64 {
        var info = statvfs()
        if fstatvfs(descriptor.rawValue, &info) != 0 { throw .fromErrno("fstatvfs", path: path) }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Persists this directory's entries: `fsync` of a file does not persist its name.
    public func synchronize() throws(FileSystemError) { try descriptor.synchronize() }

    /// Persists everything written to this directory's filesystem (`syncfs`): one journal commit
    /// instead of one per directory, for work that renamed files in hundreds of directories.
    public func synchronizeFileSystem() throws(FileSystemError) {
        if syncfs(descriptor.rawValue) != 0 { throw .fromErrno("syncfs", path: path) }
    }

    /// Whether this directory is `ancestor` or lies anywhere under it, decided by identity
    /// (device and inode) up the `..` chain: whatever the spelling of either path — symbolic
    /// links, `..`, a bind mount of the same tree.
    public func isInside(_ ancestor: Directory) throws(FileSystemError) -> Bool {
        let target = try ancestor.descriptor.status()
        var current = self
        var status = try current.descriptor.status()
        while true {
            if status.device == target.device && status.inode == target.inode { return true }
            let parent = try current.openDirectory("..")
            let parentStatus = try parent.descriptor.status()
            if parentStatus.device == status.device && parentStatus.inode == status.inode { return false }  // the root
            (current, status) = (parent, parentStatus)
        }
    }

    /// The names in this directory, without `.` and `..`.
    public func entries() throws(FileSystemError) -> [String] {
        let fd = retryingOnInterrupt { openat(descriptor.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if fd < 0 { throw .fromErrno("openat", path: path) }
        guard let stream = fdopendir(fd) else {
            let error = FileSystemError.fromErrno("fdopendir", path: path)
            _ = Glibc.close(fd)
            throw error
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Writes `bytes` to `name` so that a reader sees either the old file or the whole new one,
    /// and the new one survives a crash once this returns: temp file in `staging` (same
    /// filesystem), write, `fsync`, `rename` over `name`, `fsync` this directory.
    public func writeAtomically(_ bytes: [UInt8], to name: String, staging: Directory) throws(FileSystemError) {
        try writeAtomically(to: name, staging: staging) { output throws(FileSystemError) in try output.append(bytes) }
    }

    /// `writeAtomically(_:to:staging:)` for a document produced piece by piece: `produce` appends
    /// to a 64 KiB buffer that is written out whenever it fills, so a large document is never
    /// whole in memory.
    package func writeAtomically(to name: String, staging: Directory,
                         _ produce: (inout BufferedOutput) throws(FileSystemError) -> Void) throws(FileSystemError) {
        let temporaryName = Self.uniqueTemporaryName(for: name)
        do {
            let file = try staging.openFile(temporaryName, .writeOnly, creating: .newFile, mode: 0o600)
            var output = BufferedOutput(file: file)
            try produce(&output)
            try output.flush()
            try file.synchronize()
            try staging.rename(temporaryName, to: self, as: name)
            try synchronize()
        } catch {
            try? staging.removeFile(temporaryName)
            throw error
        }
    }

    /// `writeAtomically(to:staging:_:)` for a producer that may fail for reasons of its own (the
    /// queries of an export): `produce` hands its bytes to `write` as it makes them. Whatever
    /// fails, the temp file is removed and `name` is left as it was; the producer's error is
    /// thrown as it is.
    public func writeAtomically(to name: String, staging: Directory,
                                producing produce: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws {
        var producerError: (any Error)?
        do {
            try writeAtomically(to: name, staging: staging) { output throws(FileSystemError) in
                do {
                    try produce { bytes in try output.append(bytes) }
                } catch let error as FileSystemError {
                    throw error
                } catch {
                    // Carried out through the typed-throws body, which then throws anything.
                    producerError = error
                    throw FileSystemError(code: .invalid, systemCall: "write", path: childPath(name))
                }
            }
        } catch {
            throw producerError ?? error
        }
    }

    /// A name no other process will pick: the process id, a counter and random bits.
    package static func uniqueTemporaryName(for name: String) -> String {
        "\(name).\(getpid()).\(UInt64.random(in: 0 ... .max) & 0xffff_ffff).tmp"
    }
}

/// Bytes on their way to a file, written out 64 KiB at a time (`Directory.writeAtomically`).
/// The buffer grows as it is filled: a small document (most are) costs no 64 KiB allocation.
package struct BufferedOutput {
    package let file: FileDescriptor
    private var buffer: [UInt8] = []
    package static let capacity = 64 << 10

    package init(file: FileDescriptor) { self.file = file }

    package mutating func append(_ bytes: [UInt8]) throws(FileSystemError) {
        if buffer.count + bytes.count > Self.capacity {
            try flush()
            // Bigger than the buffer: written as it is rather than copied into it.
            if bytes.count >= Self.capacity { return try file.write(all: bytes) }
        }
        buffer += bytes
    }

    package mutating func flush() throws(FileSystemError) {
        guard !buffer.isEmpty else { return }
        try file.write(all: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// What a file is opened for (open(2)'s access mode).
public enum FileAccess: Sendable {
    case readOnly, writeOnly, readWrite

    var flags: Int32 {
        switch self {
        case .readOnly: O_RDONLY
        case .writeOnly: O_WRONLY
        case .readWrite: O_RDWR
        }
    }
}

/// Whether opening a file may create it.
public enum FileCreation: Sendable {
    /// The file must exist (`.notFound` otherwise).
    case never
    /// Created when absent, opened when present (`O_CREAT`).
    case ifAbsent
    /// Created, and refused (`.alreadyExists`) if the name is taken (`O_CREAT | O_EXCL`): how a
    /// writer claims a staging name.
    case newFile

    var flags: Int32 {
        switch self {
        case .never: 0
        case .ifAbsent: O_CREAT
        case .newFile: O_CREAT | O_EXCL
        }
    }
}
