@testable import TripBoardBackup
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardTestSupport

/// Memory stays flat in the size of what is archived: age(tar(one file)) written to disk and read
/// back, at 20 MB and at 200 MB, in a child process each (this test binary, running only the
/// probe below), which reports its own peak RSS (`VmHWM` of /proc/self/status). In-process
/// measurement would count whatever the tests running in parallel allocate; so would `wait4`'s
/// `ru_maxrss`, since `posix_spawn` starts the child in the parent's address space (a vfork),
/// and the kernel carries that address space's high-water mark into the child's at `exec`.
///
/// Timeline: parent runs child(20 MB) to completion, then child(200 MB); compares their peaks.
struct ArchiveMemoryTests {
    static let probeVariable = "TRIPBOARD_ARCHIVE_MEMORY_PROBE"

    /// The probe's peak RSS in bytes for a stream of `byteCount` bytes.
    static func peakResidentBytes(streaming byteCount: Int, in directory: TemporaryDirectory) throws -> Int {
        // Swift Testing reports on stderr.
        let report = directory.child("probe-\(byteCount).log")
        let outcome = try ChildProcess.run(
            executable: try ChildProcess.currentExecutablePath(),
            arguments: ["--testing-library", "swift-testing", "--filter", "ArchiveMemoryTests/probe"],
            environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path, probeVariable: "\(byteCount):\(directory.path)"],
            timeout: 300, standardError: .file(path: report))
        let output = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        try #require(outcome.termination == .exited(0) && output.contains("Test probe() passed"), "\(outcome.termination)\n\(output)")
        let highWater = try String(contentsOfFile: directory.child("probe-\(byteCount).hwm"), encoding: .utf8)
        return try #require(Int(highWater.trimmingCharacters(in: .whitespacesAndNewlines))) * 1024
    }

    @Test func peakMemoryDoesNotGrowWithTheArchiveSize() throws {
        let directory = try TemporaryDirectory()
        let small = try Self.peakResidentBytes(streaming: 20_000_000, in: directory)
        let large = try Self.peakResidentBytes(streaming: 200_000_000, in: directory)
        // Ten times the data; the buffers are the same few chunks. The margin covers allocator
        // noise, not a buffer that grows with the stream (which would add 180 MB).
        #expect(large - small < 8 << 20, "peak RSS \(small >> 20) MiB for 20 MB, \(large >> 20) MiB for 200 MB")
    }

    /// Runs only inside the child that `peakResidentBytes` starts.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[probeVariable] != nil))
    func probe() throws {
        let setting = try #require(ProcessInfo.processInfo.environment[Self.probeVariable]?.split(separator: ":", maxSplits: 1))
        let byteCount = try #require(Int(setting[0]))
        let directory = try Directory.open(path: String(setting[1]))
        let name = "probe-\(byteCount).age"
        let passphrase = try SecureBytes(copying: Array("memory".utf8))
        do {
            let file = try directory.openFile(name, .writeOnly, creating: .newFile)
            let age = try AgeWriter(passphrase: passphrase, output: file, workFactor: 10)
            let tar = TarWriter(output: age)
            try tar.addFile("store/TripBoard.sqlite", size: Int64(byteCount), modificationTime: 0, contents: PatternSource(count: byteCount))
            try tar.finish()
            try age.finish()
        }
        let tar = TarReader(input: try AgeReader(passphrase: passphrase, input: try directory.openFileForReading(name)))
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var total = 0
        while try tar.nextEntry() != nil {
            while case let count = try buffer.withUnsafeMutableBytes({ try tar.readContent(into: $0) }), count > 0 { total += count }
        }
        #expect(total == byteCount)
        try directory.removeFile(name)
        // The peak of this process's own address space, in kB: `VmHWM:   12345 kB`.
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(line.split(separator: " ").dropFirst().first)
        try String(kilobytes).write(toFile: setting[1] + "/probe-\(byteCount).hwm", atomically: false, encoding: .utf8)
    }
}

/// `count` bytes of a repeating pattern, made as they are read (no buffer of the whole).
final class PatternSource: ByteSource {
    private var remaining: Int
    private let block: [UInt8] = AgeTests.pattern(64 << 10)

    init(count: Int) { remaining = count }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, remaining, block.count)
        block.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        remaining -= count
        return count
    }
}
