internal import CSodium
package import TripBoardKeys

/// Authenticated encryption with ChaCha20-Poly1305, the IETF variant of RFC 8439 (12-byte nonce):
/// the AEAD of the age format. The corresponding C functions are
/// `crypto_aead_chacha20poly1305_ietf_encrypt` and `…_decrypt`.
///
/// A 12-byte nonce is too short to pick at random safely for many messages under one key, so
/// TripBoard's own secrets use ``XChaCha20Poly1305``; age uses this one only with keys that seal
/// a single message (the wrapped file key, nonce zero) or with a counter nonce (its STREAM).
/// Internal for that reason: it is safe only with one of those two nonce disciplines.
package enum ChaCha20Poly1305 {
    /// The key length in bytes (32).
    package static var keyLength: Int { Int(crypto_aead_chacha20poly1305_ietf_keybytes()) }
    /// The nonce length in bytes (12).
    package static var nonceLength: Int { Int(crypto_aead_chacha20poly1305_ietf_npubbytes()) }
    /// The authentication tag length in bytes (16).
    package static var tagLength: Int { Int(crypto_aead_chacha20poly1305_ietf_abytes()) }

    /// Seals a secret (an age file key) under `key` and `nonce`, without associated data. The
    /// caller owns nonce uniqueness: age's wrap keys are fresh for every file, so nonce zero is safe.
    /// Deliberately like `XChaCha20Poly1305.seal`, around another C function (the IETF nonce, no
    /// associated data): one Swift wrapper per libsodium construction.
    package static func seal(_ plaintext: SecureBytes, key: SecureBytes, nonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        try checkKeyAndNonce(key: key, nonceCount: nonce.count)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        // Encrypted from the guarded bytes straight into the array: the secret is never copied
        // into unguarded memory first.
        let result = ciphertext.withUnsafeMutableBufferPointer { output in
            plaintext.withUnsafePointer { input in
                nonce.withUnsafeBufferPointer { nonce in
                    key.withUnsafePointer { key in
                        crypto_aead_chacha20poly1305_ietf_encrypt(
                            output.baseAddress!, nil, input, UInt64(plaintext.count), nil, 0, nil, nonce.baseAddress!, key)
                    }
                }
            }
        }
        precondition(result == 0, "crypto_aead_chacha20poly1305_ietf_encrypt failed")
        return ciphertext
    }

    /// Verifies and decrypts `ciphertext` straight into guarded memory; nothing is written unless
    /// the tag verifies. Throws `.authenticationFailed` for any other bytes, key or nonce.
    package static func open(_ ciphertext: [UInt8], key: SecureBytes, nonce: [UInt8]) throws(CryptoError) -> SecureBytes {
        try checkKeyAndNonce(key: key, nonceCount: nonce.count)
        guard ciphertext.count >= tagLength else { throw .authenticationFailed }
        return try SecureBytes(count: ciphertext.count - tagLength) { plaintext throws(CryptoError) in
            let verified = ciphertext.withUnsafeBytes { input in
                nonce.withUnsafeBytes { nonce in
                    decrypt(from: input, to: UnsafeMutableRawBufferPointer(plaintext), nonce: nonce, key: key)
                }
            }
            if !verified { throw .authenticationFailed }
        }
    }

    /// Encrypts the first `plaintextCount` bytes of `buffer` in place and writes the tag right
    /// after them: `buffer` must hold `plaintextCount + 16` bytes. No allocation, for the STREAM's
    /// 64 KiB chunks (libsodium XORs the key stream from input to output and then authenticates
    /// the output, so the two may be the same memory).
    package static func sealInPlace(_ buffer: UnsafeMutableRawBufferPointer, plaintextCount: Int,
                            nonce: UnsafeRawBufferPointer, key: SecureBytes) {
        precondition(buffer.count >= plaintextCount + tagLength, "no room for the tag")
        precondition(nonce.count == nonceLength && key.count == keyLength, "ChaCha20-Poly1305 key or nonce of the wrong size")
        let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let result = key.withUnsafePointer { key in
            crypto_aead_chacha20poly1305_ietf_encrypt(
                base, nil, base, UInt64(plaintextCount), nil, 0, nil,
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), key)
        }
        // Fails only past …_messagebytes_max() (about 256 GiB), far above a chunk.
        precondition(result == 0, "crypto_aead_chacha20poly1305_ietf_encrypt failed")
    }

    /// Verifies `sealed` (ciphertext then tag) and decrypts it into `output` (at least
    /// `sealed.count - 16` bytes); returns the plaintext length, or nil when the tag does not
    /// verify. Not in place on purpose: on a failed tag libsodium zeroes the output it was given,
    /// and the STREAM reader must then try the same sealed bytes again under the other flag.
    package static func open(_ sealed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                     nonce: UnsafeRawBufferPointer, key: SecureBytes) -> Int? {
        precondition(nonce.count == nonceLength && key.count == keyLength, "ChaCha20-Poly1305 key or nonce of the wrong size")
        guard sealed.count >= tagLength else { return nil }
        precondition(output.count >= sealed.count - tagLength, "output buffer too small")
        return decrypt(from: sealed, to: output, nonce: nonce, key: key) ? sealed.count - tagLength : nil
    }

    /// `crypto_aead_chacha20poly1305_ietf_decrypt`: checks the tag over the whole ciphertext
    /// before it decrypts anything (…_decrypt_detached); on failure it zeroes `output` and leaves
    /// the input alone, so no unauthenticated plaintext ever exists.
    private static func decrypt(from input: UnsafeRawBufferPointer, to output: UnsafeMutableRawBufferPointer,
                                nonce: UnsafeRawBufferPointer, key: SecureBytes) -> Bool {
        let result = key.withUnsafePointer { key in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                output.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil,
                input.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(input.count), nil, 0,
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), key)
        }
        return result == 0
    }

    private static func checkKeyAndNonce(key: SecureBytes, nonceCount: Int) throws(CryptoError) {
        try CryptoError.checkLength("key", key.count, keyLength...keyLength)
        try CryptoError.checkLength("nonce", nonceCount, nonceLength...nonceLength)
    }
}
