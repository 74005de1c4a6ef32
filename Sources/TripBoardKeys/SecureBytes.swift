internal import CSodium

/// Key material (keys, passphrases, decrypted secrets) in memory that libsodium guards, modelled
/// on swift-crypto's `SecureBytes`.
///
/// The bytes live in a `sodium_malloc` region: guard pages on both sides (an overrun faults instead
/// of reading a neighbour), a canary checked on free, locked in RAM where the system allows it so
/// they are not written to swap, and excluded from core dumps. They are wiped and released with
/// `sodium_free` when the last reference goes. Equality is constant-time, and the value never
/// prints: `description`, `debugDescription` and `dump` show only the length.
///
/// Each instance costs three or four pages of address space and a few system calls: meant for
/// keys and short secrets, not for bulk data.
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
        // sodium_malloc(0) is valid: it returns a pointer to zero usable bytes just before the
        // trailing guard page, which keeps every pointer non-NULL for the C functions below.
        guard let raw = sodium_malloc(count) else { throw .outOfMemory }
        let bytes = raw.bindMemory(to: UInt8.self, capacity: count)
        do {
            try initialize(UnsafeMutableBufferPointer(start: bytes, count: count))
        } catch {
            sodium_memzero(raw, count)
            sodium_free(raw)
            throw error
        }
        self.bytes = bytes
        self.count = count
        // sodium_malloc already tries to mlock the region but ignores the result; asking again is
        // harmless (Linux locks do not nest) and tells us whether the bytes really are locked.
        self.isLockedInMemory = count == 0 || sodium_mlock(raw, count) == 0
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

    deinit {
        // sodium_free also zeroes the region (through sodium_munlock) before unmapping it; the
        // explicit wipe states the intent and does not depend on that detail.
        sodium_memzero(bytes, count)
        sodium_free(bytes)
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
