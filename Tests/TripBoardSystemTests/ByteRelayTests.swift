import Testing
import TripBoardSystem

/// The two-thread stages of `app backup` and `app restore`: bytes arrive whole and in order
/// whatever the sizes of the writes and reads, errors arrive after every byte before them, and a
/// stage dropped half-way stops its thread.
struct ByteRelayTests {
    /// A deterministic stream of `count` bytes.
    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) } }

    struct Broken: Error, Equatable { let after: Int }

    /// A source that yields `bytes` in reads of at most `step`, then (optionally) fails.
    final class SteppedSource: ByteSource {
        let bytes: [UInt8]
        let step: Int
        let failure: Broken?
        var offset = 0

        init(_ bytes: [UInt8], step: Int, failure: Broken? = nil) {
            self.bytes = bytes
            self.step = step
            self.failure = failure
        }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if offset == bytes.count, let failure { throw failure }
            let count = min(step, buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
            offset += count
            return count
        }
    }

    /// A sink that keeps what it is given and fails once it holds more than `limit` bytes.
    final class LimitedSink: ByteSink {
        var bytes: [UInt8] = []
        let limit: Int

        init(limit: Int = .max) { self.limit = limit }

        func write(all buffer: UnsafeRawBufferPointer) throws {
            bytes.append(contentsOf: buffer)
            if bytes.count > limit { throw Broken(after: limit) }
        }
    }

    @Test(arguments: [(0, 1), (1, 7), (4_095, 1_000), (4_096, 4_096), (100_003, 333), (100_003, 70_000)])
    func writeBehindDeliversEveryByteInOrder(count: Int, writeSize: Int) throws {
        let bytes = Self.pattern(count)
        let sink = LimitedSink()
        let relay = WriteBehindSink(downstream: sink, bufferSize: 4_096, depth: 3)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + writeSize)
            try bytes[offset..<end].withUnsafeBytes { try relay.write(all: $0) }
            offset = end
        }
        try relay.finish()
        #expect(sink.bytes == bytes)
    }

    @Test func aDownstreamErrorComesBackFromTheProducer() throws {
        let sink = LimitedSink(limit: 10_000)
        let relay = WriteBehindSink(downstream: sink, bufferSize: 1_024, depth: 2)
        let chunk = Self.pattern(1_000)
        #expect(throws: Broken(after: 10_000)) {
            for _ in 0..<1_000 { try chunk.withUnsafeBytes { try relay.write(all: $0) } }
            try relay.finish()
        }
    }

    @Test func aWriteBehindSinkDroppedHalfWayStopsItsThread() throws {
        let sink = LimitedSink()
        do {
            let relay = WriteBehindSink(downstream: sink, bufferSize: 512, depth: 2)
            try Self.pattern(5_000).withUnsafeBytes { try relay.write(all: $0) }
        }
        // The thread has been joined: nothing is written after the sink is gone.
        let written = sink.bytes.count
        #expect(written <= 5_000)
        #expect(sink.bytes == Array(Self.pattern(5_000).prefix(written)))
    }

    @Test(arguments: [(0, 1, 10), (1, 1, 1), (9_999, 13, 4_096), (100_000, 65_536, 100), (100_000, 4_096, 100_000)])
    func readAheadDeliversEveryByteInOrder(count: Int, upstreamStep: Int, readSize: Int) throws {
        let bytes = Self.pattern(count)
        let source = ReadAheadSource(upstream: SteppedSource(bytes, step: upstreamStep), bufferSize: 4_096, depth: 3)
        var read: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: readSize)
        while case let n = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { read += buffer[0..<n] }
        #expect(read == bytes)
        #expect(try buffer.withUnsafeMutableBytes { try source.read(into: $0) } == 0)
    }

    @Test func anUpstreamErrorComesAfterEveryByteBeforeIt() throws {
        let bytes = Self.pattern(50_000)
        let source = ReadAheadSource(upstream: SteppedSource(bytes, step: 3_000, failure: Broken(after: 50_000)), bufferSize: 4_096, depth: 2)
        var read: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1_000)
        #expect(throws: Broken(after: 50_000)) {
            while case let n = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { read += buffer[0..<n] }
        }
        #expect(read == bytes)
    }

    @Test func aReadAheadSourceDroppedHalfWayStopsItsThread() throws {
        let upstream = SteppedSource(Self.pattern(1_000_000), step: 512)
        do {
            let source = ReadAheadSource(upstream: upstream, bufferSize: 1_024, depth: 2)
            var buffer = [UInt8](repeating: 0, count: 100)
            _ = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        }
        // Joined: the upstream is read no further than the relay's buffers reach.
        let offset = upstream.offset
        #expect(offset <= 4 * 1_024)
        #expect(upstream.offset == offset)
    }
}
