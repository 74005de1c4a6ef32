internal import CSodium
public import TripBoardKeys

/// scrypt (RFC 7914), the memory-hard password hash of the age format's passphrase recipient.
/// TripBoard's own secrets use ``Argon2id``; scrypt is here because age.md fixes it.
public enum Scrypt {
    /// The key of `length` bytes for `passphrase` and `salt`, with cost N = 2^`logN`, block size
    /// `r` and parallelism `p`. Memory is about 128 · r · N bytes (256 MiB for age's default
    /// N = 2^18, r = 8) and time grows the same way: synchronous, call it off the cooperative pool.
    /// The corresponding C function is `crypto_pwhash_scryptsalsa208sha256_ll`, the "low-level"
    /// form that takes N, r and p as they are (the high-level one picks them from limits).
    ///
    /// Throws `.invalidParameter` for `logN` outside 1…63 or `r`, `p` outside what RFC 7914
    /// allows here, `.invalidLength` for an empty or oversized `length`, and
    /// `.passwordHashingFailed` when libsodium could not get the memory.
    public static func deriveKey(
        passphrase: SecureBytes, salt: [UInt8], logN: Int, r: Int = 8, p: Int = 1, length: Int = 32
    ) throws(CryptoError) -> SecureBytes {
        guard (1...63).contains(logN) else { throw .invalidParameter(what: "scrypt work factor", reason: "log2(N) must be 1…63") }
        // RFC 7914: "p ≤ ((2^32-1) * hLen) / MFLen"; libsodium further needs r · p < 2^30.
        guard r >= 1, p >= 1, r * p < 1 << 30 else {
            throw .invalidParameter(what: "scrypt block size and parallelism", reason: "r · p must be below 2^30")
        }
        try CryptoError.checkLength("scrypt output", length, 1...(1 << 20))
        return try SecureBytes(count: length) { key throws(CryptoError) in
            // An empty salt (RFC 7914's first test vector) may have a nil base address.
            let saltBytes = salt.isEmpty ? [0] : salt
            let result = saltBytes.withUnsafeBufferPointer { saltPointer in
                passphrase.withUnsafePointer { passphraseBytes in
                    crypto_pwhash_scryptsalsa208sha256_ll(
                        passphraseBytes, passphrase.count, saltPointer.baseAddress!, salt.count,
                        UInt64(1) << UInt64(logN), UInt32(r), UInt32(p), key.baseAddress!, length)
                }
            }
            if result != 0 { throw .passwordHashingFailed }
        }
    }
}
