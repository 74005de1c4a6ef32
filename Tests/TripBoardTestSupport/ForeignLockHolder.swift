package import Foundation
import TripBoardStorage
import TripBoardSystem

/// `flock(1)` from util-linux holding a lock on a file from another process until released: the
/// child runs `cat` on a pipe, so closing our end (or this test process dying) ends it.
package final class ForeignLockHolder {
    package static let executable = "/usr/bin/flock"
    package static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    package let process = Process()
    private let input = Pipe()
    private var released = false

    /// Starts `flock -x|-s PATH cat` and returns once the lock is held.
    package init(path: String, exclusive: Bool) throws {
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = [exclusive ? "-x" : "-s", path, "cat"]
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C"]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Held once an exclusive attempt from a descriptor of our own fails.
        let probe = FileLock(descriptor: try Directory.open(path: (path as NSString).deletingLastPathComponent)
            .openFile((path as NSString).lastPathComponent, .readWrite, creating: .ifAbsent))
        let deadline = Date().addingTimeInterval(10)
        while true {
            do {
                try probe.lock(.exclusive, timeout: 0)
                probe.unlock()
            } catch {
                return
            }
            guard process.isRunning, Date() < deadline else {
                release()
                throw LockHolderDidNotStart(status: process.isRunning ? nil : process.terminationStatus)
            }
            usleep(5_000)
        }
    }

    package var processID: Int32 { process.processIdentifier }

    /// Ends the child (EOF on `cat`), which releases the lock; waits for it to exit.
    package func release() {
        guard !released else { return }
        released = true
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { release() }
}

package struct LockHolderDidNotStart: Error { package let status: Int32? }
