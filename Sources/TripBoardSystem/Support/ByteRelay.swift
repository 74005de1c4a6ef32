import Glibc

/// A fixed set of buffers handed between two threads in order: a producer fills one and passes
/// it on, a consumer empties it and gives it back. `depth` buffers of `bufferSize` bytes are all
/// the memory it ever holds, so a relay between two stages of a stream keeps memory flat while
/// the stages run on the machine's two cores at once (``WriteBehindSink``, ``ReadAheadSource``).
///
/// The first error of either side is kept and ends the relay: the other side sees it at its next
/// hand-off. A consumer sees a producer's error only after every buffer filled before it, so a
/// reader gets every good byte before the error, as it would without the relay.
package final class ByteRelay: @unchecked Sendable {
    // @unchecked: `free`, `filled`, `isClosed` and `failure` are read and written under `mutex`
    // only; a buffer's bytes belong to exactly one side at a time (the side that took its index
    // from a queue, until it puts the index into the other queue), and the mutex orders the
    // hand-over.
    package let bufferSize: Int
    private let buffers: [UnsafeMutableRawBufferPointer]
    private var free: [Int]
    /// Filled buffers in order, each with how many of its bytes count.
    private var filled: [(index: Int, count: Int)] = []
    /// No more buffers will be filled (the producer finished or gave up, or the consumer left).
    private var isClosed = false
    private var failure: (any Error)?
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init(bufferSize: Int = 256 << 10, depth: Int = 4) {
        precondition(bufferSize > 0 && depth > 0, "a relay needs at least one buffer")
        self.bufferSize = bufferSize
        buffers = (0..<depth).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64) }
        free = Array(0..<depth)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        // The user's plaintext passes through these buffers: wiped, like AgeWriter's chunk.
        for buffer in buffers {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    package func buffer(_ index: Int) -> UnsafeMutableRawBufferPointer { buffers[index] }

    // MARK: - Producer

    /// A free buffer to fill; waits while every buffer is filled. Throws the consumer's error, or
    /// `ByteRelayClosed` when the consumer has left.
    package func takeFree() throws -> Int {
        try locked {
            while free.isEmpty && failure == nil && !isClosed { pthread_cond_wait(changed, mutex) }
            if let failure { throw failure }
            guard !isClosed else { throw ByteRelayClosed() }
            return free.removeLast()
        }
    }

    /// Passes buffer `index`, of which `count` bytes count, to the consumer.
    package func passFilled(_ index: Int, count: Int) {
        locked {
            filled.append((index, count))
            pthread_cond_broadcast(changed)
        }
    }

    // MARK: - Consumer

    /// The next filled buffer, or `nil` once the relay is closed and every filled buffer was
    /// taken. Throws the first error either side reported, after the buffers filled before it.
    package func takeFilled() throws -> (index: Int, count: Int)? {
        try locked {
            while filled.isEmpty && failure == nil && !isClosed { pthread_cond_wait(changed, mutex) }
            if !filled.isEmpty { return filled.removeFirst() }
            if let failure { throw failure }
            return nil
        }
    }

    /// Gives buffer `index` back to the producer.
    package func giveBack(_ index: Int) {
        locked {
            free.append(index)
            pthread_cond_broadcast(changed)
        }
    }

    // MARK: - Either side

    /// Ends the relay: no buffer will be filled any more (what was filled can still be taken).
    package func close() {
        locked {
            isClosed = true
            pthread_cond_broadcast(changed)
        }
    }

    /// Ends the relay with `error`, unless an earlier error ended it already.
    package func fail(_ error: any Error) {
        locked {
            if failure == nil { failure = error }
            isClosed = true
            pthread_cond_broadcast(changed)
        }
    }

    /// Ends the relay because one side is going away: the other side stops at its next hand-off
    /// and what was filled but not taken is dropped.
    package func abandon() {
        locked {
            if failure == nil { failure = ByteRelayClosed() }
            isClosed = true
            free += filled.map(\.index)
            filled = []
            pthread_cond_broadcast(changed)
        }
    }

    /// The error the relay ended with, if any.
    package var error: (any Error)? { locked { failure } }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// What a producer is told when the consumer left without an error (it will take no more).
package struct ByteRelayClosed: Error {}

/// A second thread of the process, started with `pthread_create` and joined exactly once.
/// `body` runs on it; `start` returns `nil` when no thread can be made (EAGAIN), so the caller
/// does the work itself.
package struct RelayThread {
    private var thread: pthread_t

    package static func start(_ body: @escaping @Sendable () -> Void) -> RelayThread? {
        final class Work: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            return nil
        }
        return RelayThread(thread: thread)
    }

    package func join() { pthread_join(thread, nil) }
}

/// Hands what is written to it to a second thread, which writes it to `downstream`: the caller
/// goes on producing (reading and hashing attachment files) while the thread encrypts and
/// writes, so an `app backup` uses both cores as `tar c | age -p` does. Memory: the relay's
/// buffers (1 MiB) and nothing else.
///
///     let sink = WriteBehindSink(downstream: ageWriter)
///     try sink.write(all: bytes)   // returns once the bytes are in a relay buffer
///     try sink.finish()            // everything written downstream (or its error thrown)
///     try ageWriter.finish()       // downstream is the caller's again
///
/// An error of `downstream` comes back from a later `write` or from `finish()`. A sink dropped
/// without `finish()` stops its thread and drops what it had not yet written.
package final class WriteBehindSink: ByteSink {
    private let relay: ByteRelay
    private let downstream: any ByteSink
    private var thread: RelayThread?
    /// The buffer being filled, and how much of it is.
    private var current: Int?
    private var currentCount = 0
    private var isFinished = false

    // Deliberately like `ReadAheadSource`'s init and deinit: the same relay and thread, the
    // other way round (this one drains to its sink; that one fills from its source).
    package init(downstream: any ByteSink, bufferSize: Int = 256 << 10, depth: Int = 4) {
        relay = ByteRelay(bufferSize: bufferSize, depth: depth)
        self.downstream = downstream
        let transfer = UncheckedTransfer((relay, downstream))
        thread = RelayThread.start {
            let (relay, downstream) = transfer.value
            Self.drain(relay, into: downstream)
        }
    }

    deinit {
        guard !isFinished, let thread else { return }
        relay.abandon()
        thread.join()
    }

    package func write(all bytes: UnsafeRawBufferPointer) throws {
        precondition(!isFinished, "WriteBehindSink.write after finish")
        guard thread != nil else { return try downstream.write(all: bytes) }
        var offset = 0
        while offset < bytes.count {
            let index: Int
            if let current { index = current } else { index = try relay.takeFree(); current = index }
            let buffer = relay.buffer(index)
            let count = min(bytes.count - offset, buffer.count - currentCount)
            UnsafeMutableRawBufferPointer(rebasing: buffer[currentCount..<(currentCount + count)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
            currentCount += count
            offset += count
            if currentCount == buffer.count { passCurrent() }
        }
    }

    /// Waits until everything written reached `downstream`; throws its error if it failed.
    package func finish() throws {
        precondition(!isFinished, "WriteBehindSink.finish called twice")
        isFinished = true
        guard let thread else { return }
        if current != nil { passCurrent() }
        relay.close()
        thread.join()
        if let error = relay.error { throw error }
    }

    private func passCurrent() {
        relay.passFilled(current!, count: currentCount)
        current = nil
        currentCount = 0
    }

    private static func drain(_ relay: ByteRelay, into downstream: any ByteSink) {
        do {
            while let (index, count) = try relay.takeFilled() {
                try downstream.write(all: UnsafeRawBufferPointer(rebasing: relay.buffer(index)[0..<count]))
                relay.giveBack(index)
            }
        } catch {
            relay.fail(error)
        }
    }
}

// Mutable state (the buffer being filled): one sink belongs to one producing thread.
@available(*, unavailable)
extension WriteBehindSink: Sendable {}

/// Reads `upstream` ahead on a second thread: while the caller takes bytes (unpacking a tar,
/// writing and hashing files), the thread reads and decrypts the next ones, so an `app restore`
/// uses both cores as `age -d | tar x` does. Memory: the relay's buffers (1 MiB).
///
/// `upstream` is read by the thread only, until the source is dropped. An error of `upstream`
/// comes from the read that reaches it: every byte before it is read first.
package final class ReadAheadSource: ByteSource {
    private let relay: ByteRelay
    private let upstream: any ByteSource
    private var thread: RelayThread?
    /// The buffer being read from, how many bytes it holds, and how many were taken.
    private var current: (index: Int, count: Int)?
    private var taken = 0
    private var isAtEnd = false

    // Deliberately like `WriteBehindSink`'s init and deinit, the other way round.
    package init(upstream: any ByteSource, bufferSize: Int = 256 << 10, depth: Int = 4) {
        relay = ByteRelay(bufferSize: bufferSize, depth: depth)
        self.upstream = upstream
        let transfer = UncheckedTransfer((relay, upstream))
        thread = RelayThread.start {
            let (relay, upstream) = transfer.value
            Self.fill(relay, from: upstream)
        }
    }

    deinit {
        guard let thread else { return }
        relay.abandon()
        thread.join()
    }

    package func read(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        guard thread != nil else { return try upstream.read(into: destination) }
        guard destination.count > 0, !isAtEnd else { return 0 }
        if current == nil {
            guard let next = try relay.takeFilled() else {
                isAtEnd = true
                return 0
            }
            current = next
            taken = 0
        }
        let (index, count) = current!
        let piece = min(destination.count, count - taken)
        destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: relay.buffer(index)[taken..<(taken + piece)]))
        taken += piece
        if taken == count {
            relay.giveBack(index)
            current = nil
        }
        return piece
    }

    private static func fill(_ relay: ByteRelay, from upstream: any ByteSource) {
        do {
            while true {
                let index = try relay.takeFree()
                let buffer = relay.buffer(index)
                var count = 0
                do {
                    while count < buffer.count {
                        let piece = try upstream.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
                        if piece == 0 { break }
                        count += piece
                    }
                } catch {
                    // The bytes before the error are the reader's too.
                    if count > 0 { relay.passFilled(index, count: count) }
                    throw error
                }
                if count > 0 { relay.passFilled(index, count: count) } else { relay.giveBack(index) }
                if count < buffer.count {
                    relay.close()
                    return
                }
            }
        } catch is ByteRelayClosed {
            return
        } catch {
            relay.fail(error)
        }
    }
}

// Mutable state (the buffer being read): one source belongs to one consuming thread.
@available(*, unavailable)
extension ReadAheadSource: Sendable {}

/// A value made on a second thread while the caller does something else (the age header's scrypt
/// beside the backup's snapshot). `value()` waits for it; a result never asked for is still
/// waited for when it is dropped, so no thread outlives what it works on.
package final class BackgroundResult<Value> {
    private let box = ResultBox()
    private var thread: RelayThread?

    /// Where the thread leaves the result; read only after `join` (which orders the two).
    private final class ResultBox: @unchecked Sendable {
        package var result: Result<Value, any Error>?
    }

    /// Starts `work` on a second thread, or runs it now if no thread can be made. `work` and
    /// what it captures belong to that thread until ``value()`` returns.
    package init(_ work: @escaping () throws -> Value) {
        let transfer = UncheckedTransfer(work)
        let box = box
        thread = RelayThread.start { box.result = Result { try transfer.value() } }
        if thread == nil { box.result = Result { try work() } }
    }

    deinit { thread?.join() }

    /// Waits for the work and returns what it made, or throws what it threw.
    package func value() throws -> Value {
        if let thread {
            thread.join()
            self.thread = nil
        }
        return try box.result!.get()
    }
}

// One waiting thread owns it.
@available(*, unavailable)
extension BackgroundResult: Sendable {}

/// Moves a value that is not `Sendable` to the one thread that uses it from then on.
private struct UncheckedTransfer<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
