import Foundation
import Testing

/// A fresh, empty directory under the system temp directory, removed with everything in it when
/// released. Every test makes its own, so tests run in parallel. (The same helper as in
/// TripBoardStorageTests: test targets cannot share code.)
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var base = NSTemporaryDirectory()
        while base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/tripboard-pdf-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        try #require(created, "mkdtemp failed: errno \(errno)")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The absolute path of `relative` inside this directory.
    func child(_ relative: String) -> String { path + "/" + relative }

    func write(_ bytes: [UInt8], to relative: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: child(relative)))
    }

    func bytes(_ relative: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: child(relative))))
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: child(relative)) }

    /// Permission bits of `relative`.
    func permissions(_ relative: String) throws -> UInt32 {
        var info = stat()
        try #require(lstat(child(relative), &info) == 0, "lstat \(relative): errno \(errno)")
        return UInt32(info.st_mode & 0o7777)
    }
}
