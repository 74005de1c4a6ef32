internal import CSodium

/// A streaming BLAKE2b hash (RFC 7693), optionally keyed: feed bytes with `update(_:)` as they
/// arrive, then ``finalize()`` once. The corresponding C functions are
/// `crypto_generichash_init`, `…_update` and `…_final`.
///
/// Holds mutable state, so it is not `Sendable`: use one hasher from one task at a time.
public final class Blake2bHasher {
    /// The default digest length in bytes (32, BLAKE2b-256).
    public static var defaultOutputLength: Int { Int(crypto_generichash_bytes()) }
    /// The accepted digest lengths in bytes (16…64).
    public static var outputLengths: ClosedRange<Int> {
        Int(crypto_generichash_bytes_min())...Int(crypto_generichash_bytes_max())
    }
    /// The accepted key lengths in bytes (16…64).
    public static var keyLengths: ClosedRange<Int> {
        Int(crypto_generichash_keybytes_min())...Int(crypto_generichash_keybytes_max())
    }

    /// `crypto_generichash_state` does not import into Swift (it is a packed struct with 64-byte
    /// alignment), so its storage is allocated by size and alignment and handed to C as an opaque
    /// pointer. `crypto_generichash_statebytes()` is the size rounded up for that alignment.
    private let state: UnsafeMutableRawPointer
    private let stateByteCount: Int
    /// The length of the digest that ``finalize()`` returns.
    public let outputLength: Int
    private var isFinalized = false

    /// A hasher for an unkeyed 32-byte digest.
    public convenience init() {
        self.init(validatedOutputLength: Self.defaultOutputLength, key: nil)
    }

    /// A hasher for a digest of `outputLength` bytes (16…64), keyed (a MAC) when `key` is given
    /// (16…64 bytes). Throws `.invalidLength` for a length out of range.
    public convenience init(outputLength: Int, key: SecureBytes? = nil) throws(CryptoError) {
        try CryptoError.checkLength("BLAKE2b output", outputLength, Self.outputLengths)
        if let key { try CryptoError.checkLength("BLAKE2b key", key.count, Self.keyLengths) }
        self.init(validatedOutputLength: outputLength, key: key)
    }

    private init(validatedOutputLength outputLength: Int, key: SecureBytes?) {
        Sodium.initialize()
        stateByteCount = crypto_generichash_statebytes()
        state = UnsafeMutableRawPointer.allocate(byteCount: stateByteCount, alignment: 64)
        assert(Int(bitPattern: state) % 64 == 0, "BLAKE2b state must be 64-byte aligned")
        self.outputLength = outputLength
        let result: Int32
        if let key {
            result = key.withUnsafePointer { keyBytes in
                crypto_generichash_init(OpaquePointer(state), keyBytes, key.count, outputLength)
            }
        } else {
            result = crypto_generichash_init(OpaquePointer(state), nil, 0, outputLength)
        }
        // Fails only for lengths out of range, which both initialisers rule out.
        precondition(result == 0, "crypto_generichash_init failed")
    }

    deinit {
        // With a key, the state holds key-derived material; wipe it before giving the memory back.
        sodium_memzero(state, stateByteCount)
        state.deallocate()
    }

    /// Adds `bytes` to the hash. Traps after ``finalize()``: a finished hasher cannot continue.
    public func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update($0) }
        if handled == nil { Array(bytes).withUnsafeBufferPointer { update($0) } }
    }

    /// Adds the bytes in `buffer` to the hash, without copying them.
    public func update(_ buffer: UnsafeBufferPointer<UInt8>) {
        precondition(!isFinalized, "Blake2bHasher.update after finalize")
        let result = crypto_generichash_update(OpaquePointer(state), buffer.baseAddress, UInt64(buffer.count))
        precondition(result == 0, "crypto_generichash_update failed")
    }

    /// The digest of everything added, ``outputLength`` bytes long. Call once: traps if called again.
    public func finalize() -> [UInt8] {
        precondition(!isFinalized, "Blake2bHasher.finalize called twice")
        isFinalized = true
        var digest = [UInt8](repeating: 0, count: outputLength)
        let result = digest.withUnsafeMutableBufferPointer { digest in
            crypto_generichash_final(OpaquePointer(state), digest.baseAddress!, digest.count)
        }
        precondition(result == 0, "crypto_generichash_final failed")
        return digest
    }
}

// Mutable state behind a pointer: one hasher belongs to one task. Stated, not left to inference.
@available(*, unavailable)
extension Blake2bHasher: Sendable {}

/// The BLAKE2b-256 digest (32 bytes, unkeyed) of `bytes`.
public func blake2b<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
    let hasher = Blake2bHasher()
    hasher.update(bytes)
    return hasher.finalize()
}

/// The BLAKE2b digest of `bytes` with `outputLength` bytes (16…64), keyed when `key` is given
/// (16…64 bytes). Throws `.invalidLength` for a length out of range.
public func blake2b<Bytes: Collection<UInt8>>(
    _ bytes: Bytes, outputLength: Int, key: SecureBytes? = nil
) throws(CryptoError) -> [UInt8] {
    let hasher = try Blake2bHasher(outputLength: outputLength, key: key)
    hasher.update(bytes)
    return hasher.finalize()
}
