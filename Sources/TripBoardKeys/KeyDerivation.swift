internal import CSodium

/// Derives independent subkeys from one master key (libsodium's `crypto_kdf`, BLAKE2b-based).
///
/// One master key can serve several purposes without one use ever weakening another: each
/// purpose gets its own 8-character context (e.g. `"keychain"`, `"filesign"`), and each key within
/// a purpose its own 64-bit id. Knowing a subkey reveals neither the master key nor any other
/// subkey. libsodium 1.0.18 has no HKDF; this is its designed replacement.
public enum KeyDerivation {
    /// The master key length in bytes (32).
    public static var masterKeyLength: Int { Int(crypto_kdf_keybytes()) }
    /// The context length in bytes (8).
    public static var contextLength: Int { Int(crypto_kdf_contextbytes()) }
    /// The accepted subkey lengths in bytes (16…64).
    public static var subkeyLengths: ClosedRange<Int> { Int(crypto_kdf_bytes_min())...Int(crypto_kdf_bytes_max()) }

    /// The subkey number `subkeyID` of `length` bytes for `context`, from `masterKey`.
    /// The corresponding C function is `crypto_kdf_derive_from_key`.
    ///
    /// `context` must be exactly 8 printable ASCII characters: a fixed label written in the code,
    /// never user input. Throws `.invalidLength` for a master key, context or subkey length of the
    /// wrong size and `.invalidParameter` for a context that is not printable ASCII.
    public static func deriveSubkey(
        from masterKey: SecureBytes, subkeyID: UInt64, context: String, length: Int = 32
    ) throws(CryptoError) -> SecureBytes {
        try CryptoError.checkLength("master key", masterKey.count, masterKeyLength...masterKeyLength)
        try CryptoError.checkLength("subkey", length, subkeyLengths)
        let contextBytes = Array(context.utf8)
        try CryptoError.checkLength("key derivation context", contextBytes.count, contextLength...contextLength)
        // ASCII only, so that the 8 bytes are the 8 characters a reader sees in the source, with no
        // Unicode normalisation question; printable, so that no NUL can hint at C-string handling.
        guard contextBytes.allSatisfy({ (0x20...0x7e).contains($0) }) else {
            throw .invalidParameter(what: "key derivation context", reason: "must be printable ASCII")
        }
        return try SecureBytes(count: length) { subkey throws(CryptoError) in
            let result = contextBytes.withUnsafeBufferPointer { context in
                context.withMemoryRebound(to: CChar.self) { context in
                    masterKey.withUnsafePointer { masterKey in
                        crypto_kdf_derive_from_key(subkey.baseAddress!, subkey.count, subkeyID, context.baseAddress!, masterKey)
                    }
                }
            }
            // Fails only for a subkey length outside 16…64, checked above.
            if result != 0 { throw .invalidLength(what: "subkey", expected: subkeyLengths, actual: length) }
        }
    }
}

extension KeyDerivation {
    /// `BLAKE2b-256(label || secret, key = key)`: one 32-byte key that needs both `key` and
    /// `secret` (a class key and the device key, a passcode's key and the device's). The secret is
    /// fed to the hash where it lies, and the digest wiped once copied out.
    public static func combine(_ key: SecureBytes, with secret: SecureBytes, label: String) throws(CryptoError) -> SecureBytes {
        let hasher = try Blake2bHasher(outputLength: 32, key: key)
        hasher.update(Array(label.utf8))
        secret.withUnsafePointer { hasher.update(UnsafeBufferPointer(start: $0, count: secret.count)) }
        var digest = hasher.finalize()
        defer { for index in digest.indices { digest[index] = 0 } }
        return try SecureBytes(count: 32) { output throws(CryptoError) in
            for index in digest.indices { output[index] = digest[index] }
        }
    }
}
