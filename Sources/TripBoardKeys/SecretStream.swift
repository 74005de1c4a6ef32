internal import CSodium

/// A stream of authenticated messages under one key (libsodium's
/// `crypto_secretstream_xchacha20poly1305`): each message is encrypted and tagged, the state
/// moves on after each, so messages cannot be reordered, dropped or replayed without the next
/// one failing. The stream does not detect that it was cut short by itself: the sender tags its
/// last message `final`, and a reader must require that tag (docs/pitfalls).
/// The corresponding C functions are `crypto_secretstream_xchacha20poly1305_init_push`,
/// `…_push`, `…_init_pull` and `…_pull`.
///
/// Holds mutable state, so it is not `Sendable`: one stream belongs to one task.
public final class SecretStream {
    /// The header length in bytes (24): written first, read first.
    public static var headerLength: Int { Int(crypto_secretstream_xchacha20poly1305_headerbytes()) }
    /// How much longer each message's ciphertext is than its plaintext (17).
    public static var overhead: Int { Int(crypto_secretstream_xchacha20poly1305_abytes()) }
    /// The key length in bytes (32).
    public static var keyLength: Int { Int(crypto_secretstream_xchacha20poly1305_keybytes()) }

    /// The state is allocated by size (`…_statebytes()`, 52 bytes) and handed to C as an opaque
    /// pointer. It holds the stream's working key, so it lives where keys do: a slot of a locked,
    /// guarded page (`SecureSlots`), wiped when the stream goes.
    private let state: UnsafeMutableRawPointer
    private let isLocked: Bool
    private var isFinished = false

    private init() throws(CryptoError) {
        Sodium.initialize()
        precondition(crypto_secretstream_xchacha20poly1305_statebytes() <= SecureSlots.slotBytes, "secretstream state larger than a slot")
        (state, isLocked) = try SecureSlots.take()
    }

    deinit { SecureSlots.give(state, locked: isLocked) }

    private var typedState: UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state> {
        state.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self)
    }

    /// A stream to write under `key`, and its header (send it before the first message).
    public static func encrypting(key: SecureBytes) throws(CryptoError) -> (stream: SecretStream, header: [UInt8]) {
        try CryptoError.checkLength("secretstream key", key.count, keyLength...keyLength)
        let stream = try SecretStream()
        var header = [UInt8](repeating: 0, count: headerLength)
        let result = header.withUnsafeMutableBufferPointer { header in
            key.withUnsafePointer { key in crypto_secretstream_xchacha20poly1305_init_push(stream.typedState, header.baseAddress!, key) }
        }
        guard result == 0 else { throw .invalidParameter(what: "secretstream", reason: "init_push failed") }
        return (stream, header)
    }

    /// A stream to read under `key`, from its `header`. A header of the wrong length or that
    /// libsodium refuses is `.authenticationFailed`.
    public static func decrypting(key: SecureBytes, header: [UInt8]) throws(CryptoError) -> SecretStream {
        try CryptoError.checkLength("secretstream key", key.count, keyLength...keyLength)
        guard header.count == headerLength else { throw .authenticationFailed }
        let stream = try SecretStream()
        let result = header.withUnsafeBufferPointer { header in
            key.withUnsafePointer { key in crypto_secretstream_xchacha20poly1305_init_pull(stream.typedState, header.baseAddress!, key) }
        }
        guard result == 0 else { throw .authenticationFailed }
        return stream
    }

    /// The next message: `plaintext` encrypted, `associatedData` authenticated with it, tagged
    /// final when `isFinal` (nothing may follow it).
    public func push(_ plaintext: UnsafeRawBufferPointer, associatedData: [UInt8], isFinal: Bool) throws(CryptoError) -> [UInt8] {
        precondition(!isFinished, "SecretStream.push after the final message")
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + Self.overhead)
        let tag = isFinal ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
        let result = ciphertext.withUnsafeMutableBufferPointer { output in
            associatedData.withUnsafeBufferPointer { ad in
                crypto_secretstream_xchacha20poly1305_push(typedState, output.baseAddress!, nil,
                                                           plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                                                           ad.baseAddress, UInt64(ad.count), tag)
            }
        }
        guard result == 0 else { throw .invalidParameter(what: "secretstream", reason: "push failed") }
        if isFinal { isFinished = true }
        return ciphertext
    }

    /// `push`, writing the message into `output` (at least `plaintext.count + overhead` bytes)
    /// instead of a new array: a stream of many messages (a sealed file) allocates nothing per
    /// message, and no copy of the plaintext is left in memory that nobody wipes. Returns the
    /// message's length.
    public func push(_ plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                     associatedData: UnsafeRawBufferPointer, isFinal: Bool) throws(CryptoError) -> Int {
        precondition(!isFinished, "SecretStream.push after the final message")
        precondition(output.count >= plaintext.count + Self.overhead, "SecretStream.push: output too small")
        let tag = isFinal ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
        let result = crypto_secretstream_xchacha20poly1305_push(
            typedState, output.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
            associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count), tag)
        guard result == 0 else { throw .invalidParameter(what: "secretstream", reason: "push failed") }
        if isFinal { isFinished = true }
        return plaintext.count + Self.overhead
    }

    /// `pull`, writing the plaintext into `output` (at least `ciphertext.count - overhead`
    /// bytes): the count written and whether the message was tagged final.
    public func pull(_ ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                     associatedData: UnsafeRawBufferPointer) throws(CryptoError) -> (count: Int, isFinal: Bool) {
        guard !isFinished, ciphertext.count >= Self.overhead else { throw .authenticationFailed }
        precondition(output.count >= ciphertext.count - Self.overhead, "SecretStream.pull: output too small")
        var tag: UInt8 = 0
        var length: UInt64 = 0
        let result = crypto_secretstream_xchacha20poly1305_pull(
            typedState, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, &tag,
            ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
            associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count))
        guard result == 0 else { throw .authenticationFailed }
        let isFinal = tag == crypto_secretstream_xchacha20poly1305_tag_final()
        if isFinal { isFinished = true }
        return (Int(length), isFinal)
    }

    /// The plaintext of the next message and whether it was tagged final. Anything altered,
    /// moved, or under other associated data is `.authenticationFailed`; so is a message after the final one.
    public func pull(_ ciphertext: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> (plaintext: [UInt8], isFinal: Bool) {
        guard !isFinished, ciphertext.count >= Self.overhead else { throw .authenticationFailed }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count - Self.overhead)
        var tag: UInt8 = 0
        var length: UInt64 = 0
        let result = plaintext.withUnsafeMutableBufferPointer { output in
            ciphertext.withUnsafeBufferPointer { input in
                associatedData.withUnsafeBufferPointer { ad in
                    crypto_secretstream_xchacha20poly1305_pull(typedState, output.baseAddress, &length, &tag,
                                                               input.baseAddress!, UInt64(input.count), ad.baseAddress, UInt64(ad.count))
                }
            }
        }
        guard result == 0 else { throw .authenticationFailed }
        let isFinal = tag == crypto_secretstream_xchacha20poly1305_tag_final()
        if isFinal { isFinished = true }
        return (Array(plaintext.prefix(Int(length))), isFinal)
    }
}

// Mutable state behind a pointer: one stream belongs to one task. Stated, not left to inference.
@available(*, unavailable)
extension SecretStream: Sendable {}
