import Testing
import TripBoardSodium
import TripBoardKeys

/// The hashing thread gives exactly the digest of the bytes, whatever the chunking and the queue.
@Suite struct BackgroundHasherTests {
    @Test(arguments: [(0, 1), (1, 1), (1000, 7), (300_000, 65_536), (1 << 20, 4096)])
    func matchesTheOneShotDigest(size: Int, chunk: Int) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let hasher = BackgroundHasher(capacity: 2)
        var offset = 0
        while offset < bytes.count {
            hasher.submit(Array(bytes[offset..<min(offset + chunk, bytes.count)]))
            offset += chunk
        }
        #expect(hasher.finish() == blake2b(bytes))
        #expect(hasher.finish() == blake2b(bytes), "a second finish returns the same digest")
    }

    /// Lent buffers: the bytes are hashed where they were read, whatever the number of chunks,
    /// the room in the queue and a last chunk shorter than the buffer; a buffer handed back
    /// empty (`submitFilled(0)`, the end of the file) hashes nothing.
    @Test(arguments: [(0, 1), (1, 1), (2, 4), (9, 1), (40, 4), (40, 2)])
    func lentBuffersGiveTheDigestOfWhatWasReadIntoThem(chunks: Int, capacity: Int) {
        let chunkBytes = 4096
        let bytes = (0..<(chunks * chunkBytes + (chunks > 0 ? 123 : 0))).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9) }
        let hasher = BackgroundHasher(capacity: capacity, bufferBytes: chunkBytes)
        var seen = Set<UnsafeMutableRawPointer>()
        var offset = 0
        while true {
            let buffer = hasher.nextBuffer()
            seen.insert(buffer.baseAddress!)
            let count = min(chunkBytes, bytes.count - offset)
            buffer.copyBytes(from: bytes[offset..<offset + count])
            hasher.submitFilled(count)
            offset += count
            if count == 0 { break }
        }
        #expect(hasher.finish() == blake2b(bytes))
        #expect(seen.count <= capacity + 1, "the buffers are reused, never more than the ring holds")
    }

    @Test func manyHashersAtOnce() async {
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let bytes = [UInt8](repeating: UInt8(index), count: 100_000 + index)
                    let hasher = BackgroundHasher()
                    for start in stride(from: 0, to: bytes.count, by: 10_000) {
                        hasher.submit(Array(bytes[start..<min(start + 10_000, bytes.count)]))
                    }
                    return hasher.finish() == blake2b(bytes)
                }
            }
            for await matched in group { #expect(matched) }
        }
    }
}
