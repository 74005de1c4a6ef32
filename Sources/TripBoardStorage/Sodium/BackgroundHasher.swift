import Glibc

/// BLAKE2b-256 computed on a second thread while the caller copies the bytes, so that a large
/// import costs max(copy, hash) instead of their sum (on a 100 MB ticket the hash alone is about
/// half the copy's time). At most `capacity` chunks wait in the queue: memory stays flat.
///
///     let hasher = BackgroundHasher()
///     hasher.submit(chunk)          // blocks only while the queue is full
///     let digest = hasher.finish()  // waits for the thread; later calls return the same digest
///
/// The thread holds a reference to the hasher until `finish()` closes the queue: a hasher that
/// is abandoned without `finish()` keeps its thread waiting, so callers `defer` it.
/// Used from one thread (the copier) besides its own; the queue is guarded by a pthread mutex.
final class BackgroundHasher: @unchecked Sendable {
    // @unchecked: every field the two threads share is read and written under `mutex`; `hasher`
    // is touched only by the hashing thread until `finish()` has joined it.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [[UInt8]] = []
    private var closed = false
    private var thread = pthread_t()
    private var joined = false
    private var digest: [UInt8]?
    private let hasher = Blake2bHasher()
    private let capacity: Int

    init(capacity: Int = 4) {
        self.capacity = capacity
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let hasher = Unmanaged<BackgroundHasher>.fromOpaque(context!).takeRetainedValue()
            hasher.hashUntilClosed()
            return nil
        }, context)
        // Without a thread (EAGAIN: out of threads), hash on the caller's thread instead.
        if created != 0 {
            Unmanaged<BackgroundHasher>.fromOpaque(context).release()
            joined = true
        }
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Queues `chunk` for hashing; waits while `capacity` chunks are already waiting.
    func submit(_ chunk: [UInt8]) {
        if joined { return hasher.update(chunk) }
        pthread_mutex_lock(mutex)
        while queue.count >= capacity { pthread_cond_wait(changed, mutex) }
        queue.append(chunk)
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Waits for every queued chunk to be hashed and returns the digest.
    @discardableResult
    func finish() -> [UInt8] {
        if let digest { return digest }
        if !joined {
            pthread_mutex_lock(mutex)
            closed = true
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
            pthread_join(thread, nil)
            joined = true
        }
        let digest = hasher.finalize()
        self.digest = digest
        return digest
    }

    private func hashUntilClosed() {
        while true {
            pthread_mutex_lock(mutex)
            while queue.isEmpty && !closed { pthread_cond_wait(changed, mutex) }
            if queue.isEmpty {
                pthread_mutex_unlock(mutex)
                return
            }
            let chunk = queue.removeFirst()
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
            hasher.update(chunk)
        }
    }
}
