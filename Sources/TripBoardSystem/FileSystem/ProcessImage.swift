internal import CSystem
import Glibc

/// This process's program image: replaced by another (execve(2)) for a command that hands the
/// terminal to a tool (`app container sqlite` runs the sqlite3 shell in its place).
public enum ProcessImage {
    /// Replaces this process with `executable`, run with `arguments` (its own name first) and
    /// exactly `environment`. `payload`, when given, is written into a pipe whose read end the new
    /// program inherits, its descriptor number in the environment as `descriptorVariable`: a
    /// secret handed over that way is in neither argv nor the environment. Returns only by
    /// throwing. Every descriptor opened close-on-exec (all of TripBoard's: the container lock
    /// among them) closes at the exec.
    public static func replace(executable: String, arguments: [String], environment: [String: String],
                               payload: UnsafeRawBufferPointer? = nil, descriptorVariable: String = "") throws(FileSystemError) -> Never {
        var environment = environment
        if let payload {
            var ends: [Int32] = [-1, -1]
            // pipe2(2) without O_CLOEXEC for the read end alone: the write end closes below, and
            // the payload (48 bytes) fits the pipe's buffer, so the write does not block.
            if pipe2(&ends, O_CLOEXEC) != 0 { throw .fromErrno("pipe2", path: executable) }
            var written = 0
            while written < payload.count {
                let count = write(ends[1], payload.baseAddress! + written, payload.count - written)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    let error = FileSystemError.fromErrno("write", path: executable)
                    _ = close(ends[0]); _ = close(ends[1])
                    throw error
                }
                written += count
            }
            _ = close(ends[1])
            _ = fcntl(ends[0], F_SETFD, 0)
            environment[descriptorVariable] = String(ends[0])
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        execve(executable, argv, envp)
        let error = FileSystemError.fromErrno("execve", path: executable)
        for pointer in argv + envp { free(pointer) }
        throw error
    }

    /// The first executable file named `name` in the directories of `searchPath` (`PATH`'s
    /// format), or nil.
    public static func find(_ name: String, searchPath: String) -> String? {
        for directory in searchPath.split(separator: ":") where !directory.isEmpty {
            let candidate = directory + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
