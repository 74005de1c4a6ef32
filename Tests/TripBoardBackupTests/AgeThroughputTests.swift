@testable import TripBoardBackup
import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem

/// Not a timed unit test: a measurement run by hand, skipped unless `TRIPBOARD_AGE_THROUGHPUT` names
/// a plaintext file. It encrypts that file to `<file>.age` at age's work factor 2^18, then
/// decrypts `<file>.age` to nothing, and prints the MB/s of each (scrypt included, as in `age`).
/// docs/backup-format.md gives the command and the figures next to `age`'s.
struct AgeThroughputTests {
    static let variable = "TRIPBOARD_AGE_THROUGHPUT"

    @Test(.enabled(if: ProcessInfo.processInfo.environment[variable] != nil))
    func measureEncryptAndDecrypt() throws {
        let input = try #require(ProcessInfo.processInfo.environment[Self.variable])
        let passphrase = try SecureBytes(copying: Array("throughput".utf8))
        let size = try FileDescriptor.openForReading(path: input).status().size
        var buffer = [UInt8](repeating: 0, count: 1 << 20)

        var start = MonotonicClock.now()
        let source = try FileDescriptor.openForReading(path: input)
        let directory = try Directory.open(path: (input as NSString).deletingLastPathComponent)
        let name = (input as NSString).lastPathComponent + ".age"
        try? directory.removeFile(name)
        let output = try directory.openFile(name, .writeOnly, creating: .newFile)
        let writer = try AgeWriter(passphrase: passphrase, output: output)
        while case let count = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), count > 0 {
            try buffer.withUnsafeBytes { try writer.write(all: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        try writer.finish()
        let encryptSeconds = MonotonicClock.now() - start

        start = MonotonicClock.now()
        let reader = try AgeReader(passphrase: passphrase, input: try directory.openFileForReading(name))
        var total: Int64 = 0
        while let count = try reader.withNextChunk({ $0.count }) { total += Int64(count) }
        let decryptSeconds = MonotonicClock.now() - start
        #expect(total == size)
        let megabytes = Double(size) / 1e6
        print("age throughput, \(Int(megabytes)) MB, work factor 2^18: encrypt \(Int(megabytes / encryptSeconds)) MB/s "
              + "(\(String(format: "%.2f", encryptSeconds)) s), decrypt \(Int(megabytes / decryptSeconds)) MB/s (\(String(format: "%.2f", decryptSeconds)) s)")
    }
}
