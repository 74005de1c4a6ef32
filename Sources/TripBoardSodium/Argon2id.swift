internal import CSodium
public import TripBoardKeys

/// Argon2id (RFC 9106), the memory-hard password hash: turns a passphrase into a key that is
/// expensive to guess, with the cost chosen in ``PasswordHashParameters``.
public enum Argon2id {
    /// The accepted derived key lengths in bytes (16 and up; capped at 1 KiB here, far more than
    /// any key needs).
    public static var keyLengths: ClosedRange<Int> { crypto_pwhash_argon2id_bytes_min()...1024 }

    /// The key of `length` bytes for `passphrase` under `parameters`: the same inputs always give
    /// the same key. Runs for as long as the parameters ask, synchronously (about 0.8 s on the
    /// development machine for ``PasswordHashParameters/moderate()``): call it off the cooperative pool.
    /// The corresponding C function is `crypto_pwhash` with `crypto_pwhash_alg_argon2id13()`.
    ///
    /// Throws `.invalidLength` for a key length out of range and `.passwordHashingFailed` when
    /// the computation could not complete (usually the memory was refused).
    public static func deriveKey(
        passphrase: SecureBytes, parameters: PasswordHashParameters, length: Int = 32
    ) throws(CryptoError) -> SecureBytes {
        try CryptoError.checkLength("derived key", length, keyLengths)
        return try SecureBytes(count: length) { key throws(CryptoError) in
            let result = parameters.salt.withUnsafeBufferPointer { salt in
                passphrase.withUnsafePointer { passphraseBytes in
                    passphraseBytes.withMemoryRebound(to: CChar.self, capacity: passphrase.count) { passphraseCharacters in
                        crypto_pwhash(key.baseAddress!, UInt64(length),
                                      passphraseCharacters, UInt64(passphrase.count),
                                      salt.baseAddress!,
                                      parameters.operationsLimit, parameters.memoryLimit,
                                      crypto_pwhash_alg_argon2id13())
                    }
                }
            }
            if result != 0 { throw .passwordHashingFailed }
        }
    }
}
