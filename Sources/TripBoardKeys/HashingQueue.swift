import TripBoardSystem

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
/// The thread holds a reference to the queue until `finish()` closes it: a queue abandoned
/// without `finish()` keeps its thread waiting, so callers `defer` it.
/// Used from one thread (the copier) besides its own; the queue is a `WaitingQueue`. When no
/// thread can be started, every chunk is hashed on the caller's thread.
package final class HashingQueue: @unchecked Sendable {
    // @unchecked: `digests` and `taken` are read and written in `queue`'s lock; `hasher` is the
    // thread's while it runs (the caller's only when no thread could start, or after the join).
    private let queue: WaitingQueue<Item>
    private var digests: [[UInt8]] = []
    /// How many of `digests` the caller has taken.
    private var taken = 0
    private var thread: RelayThread?
    private var threaded = false
    private var finished = false
    private var hasher = Blake2bHasher()

    private enum Item {
        case bytes([UInt8])
        case end
    }

    package init(capacity: Int = 8) {
        queue = WaitingQueue(capacity: capacity)
        thread = RelayThread.start { [self] in hashUntilClosed() }
        threaded = thread != nil
    }

    /// Adds a copy of `bytes` to the current file's hash.
    package func submit(_ bytes: UnsafeRawBufferPointer) {
        precondition(!finished, "HashingQueue.submit after finish")
        guard threaded else { return bytes.withMemoryRebound(to: UInt8.self) { hasher.update($0) } }
        queue.put(.bytes(Array(bytes)))
    }

    /// Ends the current file: its digest is the next in order, and the next chunk starts another.
    package func endFile() {
        precondition(!finished, "HashingQueue.endFile after finish")
        guard threaded else {
            digests.append(hasher.finalize())
            hasher = Blake2bHasher()
            return
        }
        queue.put(.end)
    }

    /// The digests of the files finished since the last call (or since the start), in order,
    /// without waiting.
    package func takeDigests() -> [[UInt8]] {
        queue.locked { take() }
    }

    /// Waits for everything queued to be hashed, then returns the digests not taken yet, in order
    /// (a file not ended has none). The queue takes nothing after it; a second call returns [].
    @discardableResult
    package func finish() -> [[UInt8]] {
        if !finished && threaded {
            queue.close()
            thread?.join()
        }
        finished = true
        return take()
    }

    /// In `queue`'s lock (or once the thread is joined): the digests after `taken`.
    private func take() -> [[UInt8]] {
        let new = Array(digests[taken...])
        taken = digests.count
        return new
    }

    private func hashUntilClosed() {
        while let item = queue.take() {
            switch item {
            case .bytes(let bytes):
                hasher.update(bytes)
            case .end:
                let digest = hasher.finalize()
                hasher = Blake2bHasher()
                queue.locked { digests.append(digest) }
            }
        }
    }
}
