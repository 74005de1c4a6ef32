import Testing
import TripBoardSodium
import TripBoardKeys

/// One hashing thread for many files: each file's digest is exactly the one-shot digest of its
/// bytes, in file order, whatever the chunking, the room in the queue and when they are taken.
@Suite struct HashingQueueTests {
    @Test(arguments: [(1, 1), (2, 1), (8, 8), (40, 3)])
    func eachFileGetsItsOwnDigestInOrder(capacity: Int, takeEvery: Int) {
        let sizes = [0, 1, 65_536, 65_537, 100_000, 0, 7, 300_000, 2, 131_072]
        let files = sizes.enumerated().map { index, size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index &* 7 &+ $0 >> 11) } }
        let queue = HashingQueue(capacity: capacity)
        var digests: [[UInt8]] = []
        for (index, file) in files.enumerated() {
            var offset = 0
            while offset < file.count {
                let end = min(offset + 65_536, file.count)
                file[offset..<end].withUnsafeBytes { queue.submit($0) }
                offset = end
            }
            queue.endFile()
            if index % takeEvery == 0 { digests += queue.takeDigests() }
        }
        digests += queue.finish()
        #expect(digests == files.map { blake2b($0) })
        #expect(queue.finish().isEmpty, "a second finish has nothing more")
    }

    /// Bytes after the last `endFile()` belong to no file: they have no digest.
    @Test func aFileNotEndedHasNoDigest() {
        let queue = HashingQueue()
        [UInt8]([1, 2, 3]).withUnsafeBytes { queue.submit($0) }
        queue.endFile()
        [UInt8]([4, 5]).withUnsafeBytes { queue.submit($0) }
        #expect(queue.finish() == [blake2b([UInt8]([1, 2, 3]))])
    }
}
