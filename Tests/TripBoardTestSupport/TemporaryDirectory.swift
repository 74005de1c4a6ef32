import Foundation
import Testing
import TripBoardStorage

/// A fresh, empty directory under the system temp directory, removed (with everything in it) when
/// released. Every test that touches the disk makes its own, so tests can run in parallel. (A
/// trimmed copy is in PDFReaderTests/Support/TemporaryDirectory.swift: test targets cannot share code.)
package final class TemporaryDirectory: Sendable {
    package let path: String

    package init() throws {
        var base = NSTemporaryDirectory()
        while base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/tripboard-unit-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        try #require(created, "mkdtemp failed: errno \(errno)")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit {
        // A test may leave read-only or private directories behind; restore access so removal works.
        if let enumerator = FileManager.default.enumerator(atPath: path) {
            while let relative = enumerator.nextObject() as? String {
                chmod(path + "/" + relative, 0o700)
            }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The absolute path of `relative` inside this directory.
    package func child(_ relative: String) -> String { path + "/" + relative }

    /// Writes `bytes` to `relative` (plain Foundation: only for setting up fixtures).
    package func write(_ bytes: [UInt8], to relative: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: child(relative)))
    }

    package func write(_ text: String, to relative: String) throws { try write(Array(text.utf8), to: relative) }

    /// The bytes of `relative`.
    package func bytes(_ relative: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: child(relative))))
    }

    package func exists(_ relative: String) -> Bool {
        var info = stat()
        return lstat(child(relative), &info) == 0
    }

    /// Permission bits of `relative`, not following a symbolic link.
    package func permissions(_ relative: String) throws -> UInt32 {
        var info = stat()
        try #require(lstat(child(relative), &info) == 0, "lstat \(relative): errno \(errno)")
        return UInt32(info.st_mode & 0o7777)
    }

    /// The names in `relative` (sorted, without `.` and `..`).
    package func entries(_ relative: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: relative.isEmpty ? path : child(relative)).sorted()
    }

    package func makeDirectory(_ relative: String) throws {
        try FileManager.default.createDirectory(atPath: child(relative), withIntermediateDirectories: true)
    }

    package func makeSymbolicLink(_ relative: String, to destination: String) throws {
        try #require(symlink(destination, child(relative)) == 0, "symlink \(relative): errno \(errno)")
    }
}

/// The process umask, read without changing it (`umask(2)` can only set; /proc shows it).
package func currentUmask() -> UInt32? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") })
    else { return nil }
    return UInt32(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
}
