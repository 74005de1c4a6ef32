internal import CSystem
import Glibc

/// Sleeps until something may have changed in watched directories, a termination signal arrives,
/// or a fallback period passes — using no CPU in between.
///
/// inotify is only a hint (docs/storage.md §7): the caller confirms with `PRAGMA data_version`.
/// SIGINT and SIGTERM are blocked and read through a signalfd, so they end the wait cleanly
/// instead of killing the process mid-read.
public final class ChangeWatcher {
    /// Why `wait` returned.
    public enum Wake: Sendable, Equatable {
        case changed
        case timedOut
        case terminated
        /// The extra descriptor `wait` was given became readable (or was closed at the other end).
        case input
    }

    private let inotify: FileDescriptor
    private let signals: FileDescriptor
    private var watches: [String: Int32] = [:]

    public init() throws {
        let inotifyDescriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if inotifyDescriptor < 0 { throw FileSystemError.fromErrno("inotify_init1", path: "inotify") }
        inotify = FileDescriptor(rawValue: inotifyDescriptor, path: "inotify")
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGINT)
        sigaddset(&mask, SIGTERM)
        sigprocmask(SIG_BLOCK, &mask, nil)
        let signalDescriptor = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        if signalDescriptor < 0 { throw FileSystemError.fromErrno("signalfd", path: "signals") }
        signals = FileDescriptor(rawValue: signalDescriptor, path: "signals")
    }

    /// Watches `path` (a directory) for files created, written, renamed or deleted in it. A path
    /// that does not exist yet is skipped; call again later to pick it up. Returns whether it is watched.
    @discardableResult
    public func watch(directory path: String) -> Bool {
        if watches[path] != nil { return true }
        let events = UInt32(IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB)
        let descriptor = inotify_add_watch(inotify.rawValue, path, events | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW))
        guard descriptor >= 0 else { return false }
        watches[path] = descriptor
        return true
    }

    /// Stops watching `path` and every directory below it (their inodes are no longer what the
    /// path names: a restore put another container there); `watch` sets them up again.
    public func forget(directoriesUnder path: String) {
        for (watched, descriptor) in watches where watched == path || watched.hasPrefix(path + "/") {
            _ = inotify_rm_watch(inotify.rawValue, descriptor)
            watches[watched] = nil
        }
    }

    /// Waits up to `timeout` seconds, and for `input` to become readable too when it is given
    /// (a helper's answer: `sync watch` waits on its listener this way). After a change, waits a
    /// few milliseconds more so that a burst of writes (one commit touches -wal several times)
    /// wakes the caller once. A signal comes first, then input, then a change.
    public func wait(timeout: Double, orInputOn input: Int32? = nil) -> Wake {
        var descriptors = [pollfd(fd: inotify.rawValue, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: signals.rawValue, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: input ?? -1, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&descriptors, 3, Int32(max(0, min(timeout, 86_400)) * 1000))
        if ready <= 0 { return .timedOut }
        if descriptors[1].revents != 0 { return .terminated }
        if descriptors[2].revents != 0 { return .input }
        MonotonicClock.sleep(seconds: 0.005)
        drain()
        return .changed
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify.rawValue, $0.baseAddress, $0.count) }
            if count <= 0 { return }
        }
    }
}
