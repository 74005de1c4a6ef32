import Glibc

/// A bounded first-in, first-out queue between two threads (a copier and a hashing thread),
/// guarded by a pthread mutex and one condition: `put` waits while it is full, `take` while it is
/// empty and open. State a user keeps beside it (buffers lent and given back) is read and written
/// in `locked` and waited for with `wait(until:then:)`, under the same mutex.
package final class WaitingQueue<Item: Sendable>: @unchecked Sendable {
    // @unchecked: `items` and `closed` are touched only under `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var items: [Item] = []
    private var closed = false
    private let capacity: Int

    package init(capacity: Int) {
        precondition(capacity > 0, "a queue needs room for an item")
        self.capacity = capacity
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Adds `item` at the end; waits while `capacity` items are queued.
    package func put(_ item: Item) {
        wait(until: { items.count < capacity }, then: { items.append(item) })
    }

    /// The first item, waiting for one while the queue is open; nil once it is closed and empty.
    package func take() -> Item? {
        wait(until: { !items.isEmpty || closed }, then: { items.isEmpty ? nil : items.removeFirst() })
    }

    /// No more items: `take` returns what is left, then nil.
    package func close() {
        locked { closed = true }
    }

    /// `body` under the mutex; the other thread is woken afterwards (it may wait for what changed).
    package func locked<T>(_ body: () -> T) -> T {
        wait(until: { true }, then: body)
    }

    /// Waits under the mutex until `condition` holds, then runs `body` before letting go.
    package func wait<T>(until condition: () -> Bool, then body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        while !condition() { pthread_cond_wait(changed, mutex) }
        let result = body()
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        return result
    }
}
