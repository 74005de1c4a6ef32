import Glibc

/// BLAKE2b-256 of many files, one after the other, on one thread of its own for the whole run:
/// the copier submits each file's chunks and then `endFile()`, and goes on with the next file
/// while the thread hashes; the digests come back in file order. A backup of 10,000 tickets of
/// two chunks each pays for one thread, not for 10,000 (`BackgroundHasher` is one digest's, and
/// hashes a file's first chunk on the caller's thread). At most `capacity` chunks wait: memory
/// stays flat.
///
///     let queue = HashingQueue()
///     queue.submit(chunk)           // copies the bytes; blocks only while the queue is full
///     queue.endFile()               // the file's digest is the next one in `digests`
///     queue.takeDigests()           // those finished since the last take, without waiting
///     let rest = queue.finish()     // waits for the thread; the digests not taken yet
///
/// Used from one thread (the copier) besides its own; the queue is guarded by a pthread mutex.
/// When no thread can be started, every chunk is hashed on the caller's thread.
package final class HashingQueue: @unchecked Sendable {
    // @unchecked: `queue`, `digests`, `taken` and `closed` are read and written under `mutex`; `hasher` is
    // the thread's while it runs (the caller's only when no thread could start, or after the join).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [Item] = []
    private var digests: [[UInt8]] = []
    /// How many of `digests` the caller has taken.
    private var taken = 0
    private var closed = false
    private var thread = pthread_t()
    private var threaded = false
    private var finished = false
    private var hasher = Blake2bHasher()
    private let capacity: Int

    private enum Item {
        case bytes([UInt8])
        case end
    }

    package init(capacity: Int = 8) {
        precondition(capacity > 0, "a queue needs room for a chunk")
        self.capacity = capacity
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let queue = Unmanaged<HashingQueue>.fromOpaque(context!).takeRetainedValue()
            queue.hashUntilClosed()
            return nil
        }, context)
        if created == 0 {
            threaded = true
        } else {
            Unmanaged<HashingQueue>.fromOpaque(context).release()
        }
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Adds a copy of `bytes` to the current file's hash.
    package func submit(_ bytes: UnsafeRawBufferPointer) {
        precondition(!finished, "HashingQueue.submit after finish")
        guard threaded else { return bytes.withMemoryRebound(to: UInt8.self) { hasher.update($0) } }
        enqueue(.bytes(Array(bytes)))
    }

    /// Ends the current file: its digest is the next in order, and the next chunk starts another.
    package func endFile() {
        precondition(!finished, "HashingQueue.endFile after finish")
        guard threaded else {
            digests.append(hasher.finalize())
            hasher = Blake2bHasher()
            return
        }
        enqueue(.end)
    }

    /// The digests of the files finished since the last call (or since the start), in order,
    /// without waiting.
    package func takeDigests() -> [[UInt8]] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return take()
    }

    /// Waits for everything queued to be hashed, then returns the digests not taken yet, in order
    /// (a file not ended has none). The queue takes nothing after it; a second call returns [].
    @discardableResult
    package func finish() -> [[UInt8]] {
        if !finished && threaded {
            pthread_mutex_lock(mutex)
            closed = true
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
            pthread_join(thread, nil)
        }
        finished = true
        return take()
    }

    /// Under `mutex` (or once the thread is joined): the digests after `taken`.
    private func take() -> [[UInt8]] {
        let new = Array(digests[taken...])
        taken = digests.count
        return new
    }

    private func hashUntilClosed() {
        while true {
            pthread_mutex_lock(mutex)
            while queue.isEmpty && !closed { pthread_cond_wait(changed, mutex) }
            if queue.isEmpty {
                pthread_mutex_unlock(mutex)
                return
            }
            let item = queue.removeFirst()
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
            switch item {
            case .bytes(let bytes):
                hasher.update(bytes)
            case .end:
                let digest = hasher.finalize()
                hasher = Blake2bHasher()
                pthread_mutex_lock(mutex)
                digests.append(digest)
                pthread_mutex_unlock(mutex)
            }
        }
    }

    private func enqueue(_ item: Item) {
        pthread_mutex_lock(mutex)
        while queue.count >= capacity { pthread_cond_wait(changed, mutex) }
        queue.append(item)
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }
}
