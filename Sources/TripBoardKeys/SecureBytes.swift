internal import CSodium
import Synchronization

/// Key material (keys, passphrases, decrypted secrets) in memory that libsodium guards, modelled
/// on swift-crypto's `SecureBytes`.
///
/// The bytes live in `sodium_malloc`'d pages: guard pages on both sides (an overrun of them
/// faults instead of reading the rest of the heap), locked in RAM where the system allows it so
/// they are not written to swap, and excluded from core dumps. They are wiped when the last
/// reference goes. Equality is constant-time, and the value never prints: `description`,
/// `debugDescription` and `dump` show only the length.
///
/// Secrets of up to ``slotBytes`` bytes (keys, and short passphrases or decrypted values) take a
/// slot of a shared guarded page (``SecureSlots``), as OpenSSL's secure heap does: a slot is wiped
/// when released and reused, so a run that opens 10,000 sealed files maps no page per key — each
/// `sodium_malloc` costs some ten system calls and, when freed, a TLB shootdown of the other
/// cores. Slots of one page are not guarded from each other: an overrun of one slot, or a use
/// after release, reaches another key, never the ordinary heap (no pointer to the bytes outlives
/// the `withUnsafeBytes` call that lends it). Longer secrets get a `sodium_malloc` region of
/// their own, with its canary checked when freed.
public final class SecureBytes: @unchecked Sendable {
    // @unchecked Sendable without a lock, because the bytes are immutable: they are written only
    // inside an initialiser, before any other reference to the instance exists, and the public API
    // only reads them. Concurrent reads of unchanging memory need no lock, and `sodium_free` runs
    // in deinit, when no reference (and so no reader) is left. Adding any mutating method would
    // make this conformance false.
    //
    // The pages are deliberately not toggled with `sodium_mprotect_noaccess` between uses: the
    // toggle is process-wide state for the region, so two threads reading the same key would
    // race to protect and unprotect it, and that would break the Sendable reasoning above.

    private let bytes: UnsafeMutablePointer<UInt8>
    /// The number of bytes.
    public let count: Int
    /// The longest secret that takes a shared slot.
    public static let slotBytes = SecureSlots.slotBytes
    /// Whether the system agreed to lock the bytes in RAM (`mlock`), keeping them out of swap.
    /// False when `RLIMIT_MEMLOCK` is exhausted; the bytes are still guarded and wiped.
    public let isLockedInMemory: Bool

    /// Allocates `count` guarded bytes and lets `initialize` write all of them before the instance
    /// exists, so no other reference can ever observe them changing. If `initialize` throws, the
    /// region is wiped and freed and the error is rethrown.
    package init(count: Int, initializingWith initialize: (UnsafeMutableBufferPointer<UInt8>) throws(CryptoError) -> Void)
        throws(CryptoError)
    {
        precondition(count >= 0, "negative byte count")
        Sodium.initialize()
        let raw: UnsafeMutableRawPointer
        let locked: Bool
        if count <= SecureSlots.slotBytes {
            // A zero-byte secret takes a slot too: every pointer stays non-NULL for libsodium.
            (raw, locked) = try SecureSlots.take()
        } else {
            guard let region = sodium_malloc(count) else { throw .outOfMemory }
            raw = region
            // sodium_malloc already tries to mlock the region but ignores the result; asking
            // again is harmless (Linux locks do not nest) and tells whether it really is locked.
            locked = sodium_mlock(region, count) == 0
        }
        let bytes = raw.bindMemory(to: UInt8.self, capacity: count)
        do {
            try initialize(UnsafeMutableBufferPointer(start: bytes, count: count))
        } catch {
            Self.release(raw, count: count, locked: locked)
            throw error
        }
        self.bytes = bytes
        self.count = count
        self.isLockedInMemory = locked
    }

    /// `count` secret random bytes, e.g. a new key. The corresponding C function is `randombytes_buf`.
    public convenience init(randomCount count: Int) throws(CryptoError) {
        try self.init(count: count) { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
    }

    /// A copy of `bytes`. The source stays as it is: prefer ``init(wiping:)`` when the caller
    /// holds the only copy of a secret in an array.
    public convenience init<Bytes: Collection<UInt8>>(copying source: Bytes) throws(CryptoError) {
        try self.init(count: source.count) { buffer in
            _ = buffer.initialize(from: source)
        }
    }

    /// Takes the secret out of `source`: copies it into guarded memory, then zeroes every byte of
    /// `source` with `sodium_memzero` (which the compiler may not optimise away). `source` keeps
    /// its length and is zeroed even when this initialiser throws.
    ///
    /// Only the array storage that `source` refers to is wiped: copies the caller made earlier
    /// (copy-on-write shares storage until one side writes, then they are separate) are not.
    public convenience init(wiping source: inout [UInt8]) throws(CryptoError) {
        defer {
            source.withUnsafeMutableBytes { buffer in sodium_memzero(buffer.baseAddress, buffer.count) }
        }
        try self.init(copying: source)
    }

    deinit { Self.release(bytes, count: count, locked: isLockedInMemory) }

    /// Wipes the bytes and gives them back: to ``SecureSlots`` when `count` made them a slot.
    private static func release(_ bytes: UnsafeMutableRawPointer, count: Int, locked: Bool) {
        if count <= SecureSlots.slotBytes {
            SecureSlots.give(bytes, locked: locked)
        } else {
            // sodium_free also zeroes the region (through sodium_munlock) before unmapping it;
            // the explicit wipe states the intent and does not depend on that detail.
            sodium_memzero(bytes, count)
            sodium_free(bytes)
        }
    }

    /// Calls `body` with a read-only view of the bytes, valid only during the call. Do not copy
    /// them into an array or a string that outlives it: that copy would be neither guarded nor wiped.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The bytes as a C `const unsigned char *`, for the Sodium layer's calls into libsodium; never
    /// NULL, even for zero bytes.
    package func withUnsafePointer<Result>(_ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        body(UnsafePointer(bytes))
    }
}

// MARK: - Equatable

extension SecureBytes: Equatable {
    /// True when both hold the same bytes. For equal lengths the comparison takes the same time
    /// whatever the contents (`sodium_memcmp`), so it reveals nothing about where they differ;
    /// lengths are not secret and are compared first.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return sodium_memcmp(lhs.bytes, rhs.bytes, lhs.count) == 0
    }
}

// MARK: - Never printable

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `<secure bytes: N>`: the length only, never the contents.
    public var description: String { "<secure bytes: \(count)>" }

    /// `<secure bytes: N>`: the length only, never the contents.
    public var debugDescription: String { description }

    /// A mirror with no children, so `dump` and debuggers that use `Mirror` show no stored
    /// property (not even the address of the bytes).
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

// MARK: - Shared slots

/// The slots short secrets live in: pages of ``slotBytes``-byte slots, each page one
/// `sodium_malloc` region (guarded on both sides, locked in RAM, out of core dumps) that stays
/// mapped for the life of the process. A slot is wiped whole when it is given back and goes on a
/// free list, from which the next short secret takes it; a page is mapped only when the list is
/// empty, so memory is one locked page per 63 secrets alive at once, at the most.
package enum SecureSlots {
    package static let slotBytes = 64
    /// What each page's region asks of `sodium_malloc`: one page less a slot, which is where
    /// libsodium puts its 16-byte canary, so that the region is one page (4 KiB locked) and the
    /// slots, from offset 64, are 64-byte aligned.
    static let regionBytes = 4096 - slotBytes

    /// Free slots, as addresses (a pointer is not `Sendable`), each with whether its page is
    /// locked in RAM.
    private static let free = Mutex<[(address: UInt, locked: Bool)]>([])

    /// A wiped slot, and whether it is locked in RAM.
    static func take() throws(CryptoError) -> (UnsafeMutableRawPointer, Bool) {
        if let slot = free.withLock({ $0.popLast() }) { return (UnsafeMutableRawPointer(bitPattern: slot.address)!, slot.locked) }
        // A new page (sodium_malloc zeroes nothing: the slots are wiped here). Mapped outside
        // the lock: two threads that both find the list empty map a page each.
        guard let page = sodium_malloc(regionBytes) else { throw .outOfMemory }
        sodium_memzero(page, regionBytes)
        let locked = sodium_mlock(page, regionBytes) == 0
        let base = UInt(bitPattern: page)
        free.withLock { list in
            for index in 1..<(regionBytes / slotBytes) { list.append((base + UInt(index * slotBytes), locked)) }
        }
        return (page, locked)
    }

    /// Wipes `slot` whole and makes it free again; `locked` is what ``take()`` said of it.
    static func give(_ slot: UnsafeMutableRawPointer, locked: Bool) {
        sodium_memzero(slot, slotBytes)
        let address = UInt(bitPattern: slot)
        free.withLock { $0.append((address, locked)) }
    }
}
