internal import CSodium
public import TripBoardKeys

/// A streaming HMAC-SHA-256 (RFC 2104 over FIPS 180-4 SHA-256): feed the message with
/// `update(_:)` as it arrives, then ``finalize()`` once. The corresponding C functions are
/// `crypto_auth_hmacsha256_init`, `…_update` and `…_final`.
///
/// The age format authenticates its header with it, and HKDF (``HKDF``) is built from it.
/// Holds mutable state, so it is not `Sendable`: use one instance from one task at a time.
public final class HMACSHA256 {
    /// The length of an authentication code in bytes (32).
    public static var outputLength: Int { Int(crypto_auth_hmacsha256_bytes()) }

    /// The state is allocated by size (`crypto_auth_hmacsha256_statebytes()`) rather than as the
    /// imported struct, the way ``Blake2bHasher`` does: the header does not promise the struct's
    /// layout, the function does. 64-byte alignment covers any SIMD code behind it.
    private let state: UnsafeMutableRawPointer
    private let stateByteCount: Int
    private var isFinalized = false

    /// An HMAC keyed with `key` (any length: RFC 2104 hashes a key longer than the 64-byte block
    /// and pads a shorter one with zeros, so an empty key equals 32 zero bytes).
    public convenience init(key: SecureBytes) {
        let (state, byteCount) = key.withUnsafeBytes { Self.makeState(key: $0) }
        self.init(state: state, stateByteCount: byteCount)
    }

    /// An HMAC keyed with public bytes, e.g. the salt of HKDF-Extract.
    package convenience init(keyBytes: UnsafeRawBufferPointer) {
        let (state, byteCount) = Self.makeState(key: keyBytes)
        self.init(state: state, stateByteCount: byteCount)
    }

    private init(state: UnsafeMutableRawPointer, stateByteCount: Int) {
        self.state = state
        self.stateByteCount = stateByteCount
    }

    /// A state keyed with `key`, which is read only during the call.
    private static func makeState(key: UnsafeRawBufferPointer) -> (UnsafeMutableRawPointer, Int) {
        Sodium.initialize()
        let byteCount = crypto_auth_hmacsha256_statebytes()
        let state = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        let typed = state.bindMemory(to: crypto_auth_hmacsha256_state.self, capacity: 1)
        // An empty key may come with a nil base address; C wants a pointer even for 0 bytes.
        var empty: UInt8 = 0
        let result = withUnsafePointer(to: &empty) { empty in
            crypto_auth_hmacsha256_init(typed, key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? empty, key.count)
        }
        // Cannot fail for any key length (it hashes long keys first).
        precondition(result == 0, "crypto_auth_hmacsha256_init failed")
        return (state, byteCount)
    }

    deinit {
        // The state holds the key XORed with the pads: key material, wiped before release.
        sodium_memzero(state, stateByteCount)
        state.deallocate()
    }

    private var typedState: UnsafeMutablePointer<crypto_auth_hmacsha256_state> {
        state.assumingMemoryBound(to: crypto_auth_hmacsha256_state.self)
    }

    /// Adds the bytes in `buffer` to the message, without copying them. Traps after finalizing.
    public func update(_ buffer: UnsafeRawBufferPointer) {
        precondition(!isFinalized, "HMACSHA256.update after finalize")
        let result = crypto_auth_hmacsha256_update(
            typedState, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count))
        precondition(result == 0, "crypto_auth_hmacsha256_update failed")
    }

    /// Adds `bytes` to the message.
    public func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if handled == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// The authentication code of everything added (32 bytes), for a public value such as the
    /// MAC stored in an age header. Call once: traps if called again.
    public func finalize() -> [UInt8] {
        var code = [UInt8](repeating: 0, count: Self.outputLength)
        code.withUnsafeMutableBytes { finalize(into: $0) }
        return code
    }

    /// Writes the authentication code into the first 32 bytes of `output` (which may be guarded
    /// memory, for a code that is itself a key: HKDF's PRK and output blocks).
    package func finalize(into output: UnsafeMutableRawBufferPointer) {
        precondition(!isFinalized, "HMACSHA256.finalize called twice")
        precondition(output.count >= Self.outputLength, "HMAC output buffer too small")
        isFinalized = true
        let result = crypto_auth_hmacsha256_final(typedState, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
        precondition(result == 0, "crypto_auth_hmacsha256_final failed")
    }

    /// True when two authentication codes are equal, compared in constant time (`crypto_verify_32`)
    /// so that a forger learns nothing from how long a rejection took.
    public static func codesMatch(_ code: [UInt8], _ expected: [UInt8]) -> Bool {
        guard code.count == outputLength, expected.count == outputLength else { return false }
        return crypto_verify_32(code, expected) == 0
    }
}

// Mutable state behind a pointer: one instance belongs to one task. Stated, not left to inference.
@available(*, unavailable)
extension HMACSHA256: Sendable {}

/// The SHA-256 digest (32 bytes) of `bytes`. The corresponding C function is `crypto_hash_sha256`.
/// Internal: TripBoard hashes with BLAKE2b; this is here for published test vectors that name
/// SHA-256 digests (the age test kit's `payload:` lines).
package func sha256<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
    Sodium.initialize()
    let message = Array(bytes)
    var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
    _ = crypto_hash_sha256(&digest, message, UInt64(message.count))
    return digest
}
