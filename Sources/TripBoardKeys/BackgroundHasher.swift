import Glibc

/// BLAKE2b-256 computed on a second thread while the caller copies the bytes, so that a large
/// import costs max(copy, hash) instead of their sum (on a 100 MB ticket the hash, 122–128 ms
/// here, takes longer than the copy). At most `capacity` chunks wait in the queue: memory stays
/// flat. The first chunk is hashed on the caller's thread and the thread starts with the second:
/// a file of one chunk (most attachments) never pays for a thread.
///
///     let hasher = BackgroundHasher()
///     hasher.submit(chunk)          // blocks only while the queue is full
///     let digest = hasher.finish()  // waits for the thread; later calls return the same digest
///
/// A copier that reads into memory anyway can lend the hasher its buffers instead of copying
/// each chunk into the queue (`init(capacity:bufferBytes:)`): `nextBuffer()` hands out one the
/// thread is not reading, `submitFilled(_:)` queues it, and the thread gives it back once hashed.
/// A buffer handed out and never submitted (the file ended, the read failed) hashes nothing.
///
///     let buffer = hasher.nextBuffer()              // waits while every buffer is queued
///     let count = try file.read(into: buffer)
///     hasher.submitFilled(count)                    // the caller may still read the buffer
///     try output.write(all: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
///
/// The thread holds a reference to the hasher until `finish()` closes the queue: a hasher that
/// is abandoned without `finish()` keeps its thread waiting, so callers `defer` it.
/// Used from one thread (the copier) besides its own; the queue is a `WaitingQueue`.
package final class BackgroundHasher: @unchecked Sendable {
    // @unchecked: `idle` is read and written only in `queue`'s lock; `hasher` is touched by the
    // caller only before the thread starts (pthread_create orders it) or after `finish()` has
    // joined it, and by the thread in between.
    private let queue: WaitingQueue<Chunk>
    /// The lent buffers (`init(capacity:bufferBytes:)`), one more than the queue holds: the
    /// caller fills one while the others wait or are hashed.
    private let ring: [UnsafeMutableRawBufferPointer]
    /// Indexes into `ring` that neither the caller nor the thread holds. Under `queue`'s lock.
    private var idle: [Int]
    /// The buffer `nextBuffer()` last handed out, until `submitFilled(_:)`. Caller's thread only.
    private var lent: Int?
    private var thread = pthread_t()
    private var state = State.first
    private var digest: [UInt8]?
    private let hasher = Blake2bHasher()

    /// Bytes to hash: a copy the queue owns, or the first `count` bytes of a lent buffer.
    private enum Chunk {
        case owned([UInt8])
        case lent(index: Int, count: Int)
    }

    private enum State: Equatable {
        /// Nothing submitted yet: the first chunk is hashed on the caller's thread.
        case first
        /// One chunk hashed; the next starts the thread.
        case second
        /// The thread hashes what is queued.
        case threaded
        /// The caller hashes: pthread_create failed (EAGAIN: out of threads), or `finish()` ran.
        case onCallersThread
    }

    package init(capacity: Int = 4) {
        queue = WaitingQueue(capacity: capacity)
        ring = []
        idle = []
    }

    /// A hasher that lends `capacity + 1` buffers of `bufferBytes` (`nextBuffer()`), allocated
    /// once, uninitialised: memory stays flat and no chunk is copied.
    package init(capacity: Int = 4, bufferBytes: Int) {
        precondition(capacity > 0 && bufferBytes > 0, "a ring needs a buffer and room in the queue")
        queue = WaitingQueue(capacity: capacity)
        ring = (0...capacity).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: bufferBytes, alignment: 64) }
        idle = Array(ring.indices.reversed())
    }

    deinit {
        for buffer in ring { buffer.deallocate() }
    }

    /// A lent buffer that nothing else reads, to fill and pass to `submitFilled(_:)`; waits
    /// while all the others are queued. One handed out before and not submitted is taken back,
    /// unhashed. Only for a hasher made with `init(capacity:bufferBytes:)`.
    package func nextBuffer() -> UnsafeMutableRawBufferPointer {
        precondition(!ring.isEmpty, "nextBuffer() needs a hasher made with bufferBytes")
        if let unused = lent { queue.locked { idle.append(unused) } }
        let index = queue.wait(until: { !idle.isEmpty }, then: { idle.removeLast() })
        lent = index
        return ring[index]
    }

    /// Hashes the first `count` bytes of the buffer `nextBuffer()` handed out (0: nothing, the
    /// buffer goes back). The caller may go on reading the buffer (to write it out) until its
    /// next `nextBuffer()`, never write to it.
    package func submitFilled(_ count: Int) {
        guard let index = lent else { preconditionFailure("submitFilled(_:) without nextBuffer()") }
        lent = nil
        precondition(count >= 0 && count <= ring[index].count, "more bytes than the buffer holds")
        guard count > 0, startThreadIfNeeded() else {
            if count > 0 {
                UnsafeRawBufferPointer(rebasing: ring[index][..<count]).withMemoryRebound(to: UInt8.self) { hasher.update($0) }
            }
            queue.locked { idle.append(index) }
            return
        }
        queue.put(.lent(index: index, count: count))
    }

    /// Queues `chunk` for hashing; waits while `capacity` chunks are already waiting.
    package func submit(_ chunk: [UInt8]) {
        guard startThreadIfNeeded() else { return hasher.update(chunk) }
        queue.put(.owned(chunk))
    }

    /// Waits for every queued chunk to be hashed and returns the digest.
    @discardableResult
    package func finish() -> [UInt8] {
        if let digest { return digest }
        if state == .threaded {
            queue.close()
            pthread_join(thread, nil)
        }
        state = .onCallersThread
        let digest = hasher.finalize()
        self.digest = digest
        return digest
    }

    /// True when the chunk being submitted goes to the thread, started now if this is the second.
    private func startThreadIfNeeded() -> Bool {
        precondition(digest == nil, "BackgroundHasher.submit after finish")
        switch state {
        case .threaded:
            return true
        case .onCallersThread:
            return false
        case .first:
            state = .second
            return false
        case .second:
            let context = Unmanaged.passRetained(self).toOpaque()
            let created = pthread_create(&thread, nil, { context in
                let hasher = Unmanaged<BackgroundHasher>.fromOpaque(context!).takeRetainedValue()
                hasher.hashUntilClosed()
                return nil
            }, context)
            guard created == 0 else {
                Unmanaged<BackgroundHasher>.fromOpaque(context).release()
                state = .onCallersThread
                return false
            }
            state = .threaded
            return true
        }
    }

    private func hashUntilClosed() {
        while let chunk = queue.take() {
            switch chunk {
            case .owned(let bytes):
                hasher.update(bytes)
            case .lent(let index, let count):
                UnsafeRawBufferPointer(rebasing: ring[index][..<count]).withMemoryRebound(to: UInt8.self) { hasher.update($0) }
                queue.locked { idle.append(index) }
            }
        }
    }
}
