internal import CSodium

/// Authenticated encryption with associated data: XChaCha20-Poly1305 (IETF variant), as in
/// draft-irtf-cfrg-xchacha-03. The corresponding C functions are
/// `crypto_aead_xchacha20poly1305_ietf_encrypt` and `…_decrypt`.
///
/// The 24-byte nonce is random for every seal: at that size random nonces do not collide in
/// practice (unlike the 12-byte nonce of plain ChaCha20-Poly1305), so no counter has to be kept
/// in step across TripBoard's processes. The associated data is authenticated but not encrypted:
/// bind each ciphertext to where it belongs (item name, record id, format version) so a sealed
/// value cannot be moved to another place and still open.
public enum XChaCha20Poly1305 {
    /// The key length in bytes (32). The macros do not import into Swift; the functions do.
    public static var keyLength: Int { Int(crypto_aead_xchacha20poly1305_ietf_keybytes()) }
    /// The nonce length in bytes (24).
    public static var nonceLength: Int { Int(crypto_aead_xchacha20poly1305_ietf_npubbytes()) }
    /// The authentication tag length in bytes (16); every ciphertext is this much longer than its plaintext.
    public static var tagLength: Int { Int(crypto_aead_xchacha20poly1305_ietf_abytes()) }

    /// A new random key.
    public static func makeKey() throws(CryptoError) -> SecureBytes {
        try SecureBytes(randomCount: keyLength)
    }

    /// Encrypts and authenticates `plaintext` and authenticates `associatedData`, under a fresh
    /// random nonce. Store the nonce next to the ciphertext (it is not secret); `ciphertext` ends
    /// with the 16-byte tag.
    public static func seal(
        plaintext: [UInt8], key: SecureBytes, associatedData: [UInt8]
    ) throws(CryptoError) -> (nonce: [UInt8], ciphertext: [UInt8]) {
        try seal(plaintext: plaintext, key: key, associatedData: associatedData, nonce: Sodium.randomBytes(count: nonceLength))
    }

    /// `seal(plaintext:key:associatedData:)` under the next nonce of `nonces`: for many values
    /// sealed in a row (a push's fields), without a system call each.
    public static func seal(
        plaintext: [UInt8], key: SecureBytes, associatedData: [UInt8], nonces: inout NonceBuffer
    ) throws(CryptoError) -> (nonce: [UInt8], ciphertext: [UInt8]) {
        try seal(plaintext: plaintext, key: key, associatedData: associatedData, nonce: nonces.next())
    }

    private static func seal(
        plaintext: [UInt8], key: SecureBytes, associatedData: [UInt8], nonce: [UInt8]
    ) throws(CryptoError) -> (nonce: [UInt8], ciphertext: [UInt8]) {
        let ciphertext = try plaintext.withUnsafeBufferPointer { plaintext throws(CryptoError) in
            try seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
        }
        return (nonce, ciphertext)
    }

    /// Encrypts and authenticates a secret held in guarded memory, under a fresh random nonce, as the
    /// `[UInt8]` overload does; the plaintext is read in place, never copied into an array.
    public static func seal(
        plaintext: SecureBytes, key: SecureBytes, associatedData: [UInt8]
    ) throws(CryptoError) -> (nonce: [UInt8], ciphertext: [UInt8]) {
        let nonce = Sodium.randomBytes(count: nonceLength)
        let ciphertext = try plaintext.withUnsafeBytes { plaintext throws(CryptoError) in
            try seal(plaintext.assumingMemoryBound(to: UInt8.self), key: key, nonce: nonce, associatedData: associatedData)
        }
        return (nonce, ciphertext)
    }

    /// Seals under a caller-chosen nonce, for known-answer tests only: reusing a nonce with the
    /// same key reveals the XOR of the two plaintexts and allows forgeries.
    package static func seal(
        plaintext: [UInt8], key: SecureBytes, nonce: [UInt8], associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        try plaintext.withUnsafeBufferPointer { plaintext throws(CryptoError) in
            try seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
        }
    }

    /// Verifies and decrypts into an ordinary array, for values that are no secret once opened
    /// (a synchronised record's fields, written to the store as they are): no guarded pages to map,
    /// lock and unlock for each one. Throws as `open(ciphertext:nonce:key:associatedData:)` does.
    public static func openPublic(
        ciphertext: [UInt8], nonce: [UInt8], key: SecureBytes, associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        try CryptoError.checkLength("key", key.count, keyLength...keyLength)
        try CryptoError.checkLength("nonce", nonce.count, nonceLength...nonceLength)
        guard ciphertext.count >= tagLength else { throw .authenticationFailed }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count - tagLength)
        let result = plaintext.withUnsafeMutableBufferPointer { plaintext in
            ciphertext.withUnsafeBufferPointer { ciphertext in
                nonce.withUnsafeBufferPointer { nonce in
                    associatedData.withUnsafeBufferPointer { associatedData in
                        key.withUnsafePointer { key in
                            crypto_aead_xchacha20poly1305_ietf_decrypt(
                                plaintext.baseAddress, nil, nil, ciphertext.baseAddress!, UInt64(ciphertext.count),
                                associatedData.baseAddress, UInt64(associatedData.count), nonce.baseAddress!, key)
                        }
                    }
                }
            }
        }
        guard result == 0 else { throw .authenticationFailed }
        return plaintext
    }

    /// Verifies and decrypts. The plaintext is written straight into guarded memory; nothing is
    /// written anywhere unless the tag verifies.
    ///
    /// Throws `.authenticationFailed` for any ciphertext that is not exactly what was sealed with
    /// this key, nonce and associated data, including one too short to hold a tag; throws
    /// `.invalidLength` for a key or nonce of the wrong size.
    public static func open(
        ciphertext: [UInt8], nonce: [UInt8], key: SecureBytes, associatedData: [UInt8]
    ) throws(CryptoError) -> SecureBytes {
        try CryptoError.checkLength("key", key.count, keyLength...keyLength)
        try CryptoError.checkLength("nonce", nonce.count, nonceLength...nonceLength)
        // Shorter than a tag cannot be authentic. Reported like any other damage, so callers need
        // one answer for "these are not the bytes that were sealed", however they were cut.
        guard ciphertext.count >= tagLength else { throw .authenticationFailed }
        return try SecureBytes(count: ciphertext.count - tagLength) { plaintext throws(CryptoError) in
            let result = ciphertext.withUnsafeBufferPointer { ciphertext in
                nonce.withUnsafeBufferPointer { nonce in
                    associatedData.withUnsafeBufferPointer { associatedData in
                        key.withUnsafePointer { key in
                            // Verifies the tag before decrypting anything (…_decrypt_detached).
                            crypto_aead_xchacha20poly1305_ietf_decrypt(
                                plaintext.baseAddress, nil, nil,
                                ciphertext.baseAddress!, UInt64(ciphertext.count),
                                associatedData.baseAddress, UInt64(associatedData.count),
                                nonce.baseAddress!, key)
                        }
                    }
                }
            }
            if result != 0 { throw .authenticationFailed }
        }
    }

    // Deliberately like `ChaCha20Poly1305.seal`, around another C function: one Swift wrapper per
    // libsodium construction.
    private static func seal(
        _ plaintext: UnsafeBufferPointer<UInt8>, key: SecureBytes, nonce: [UInt8], associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        try CryptoError.checkLength("key", key.count, keyLength...keyLength)
        try CryptoError.checkLength("nonce", nonce.count, nonceLength...nonceLength)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        let result = ciphertext.withUnsafeMutableBufferPointer { ciphertext in
            nonce.withUnsafeBufferPointer { nonce in
                associatedData.withUnsafeBufferPointer { associatedData in
                    key.withUnsafePointer { key in
                        crypto_aead_xchacha20poly1305_ietf_encrypt(
                            ciphertext.baseAddress!, nil,
                            plaintext.baseAddress, UInt64(plaintext.count),
                            associatedData.baseAddress, UInt64(associatedData.count),
                            nil, nonce.baseAddress!, key)
                    }
                }
            }
        }
        // Encryption fails only for a message longer than …_messagebytes_max() (about 256 GiB),
        // which no array on this machine can be.
        precondition(result == 0, "crypto_aead_xchacha20poly1305_ietf_encrypt failed")
        return ciphertext
    }
}

/// Random nonces for many seals in a row: 24 bytes each, cut from a buffer libsodium's CSPRNG
/// fills 4,080 bytes at a time — one `getrandom` for 170 nonces, where a nonce each cost a push
/// a system call a field (47,500 of them for 10,000 records). They are as random as nonces drawn
/// one by one; the buffer holds nothing secret (a nonce is stored beside its ciphertext).
/// Not copyable: two copies would hand out the same nonces.
public struct NonceBuffer: ~Copyable {
    private var bytes: [UInt8] = []
    private var offset = 0
    private static let refill = 170

    public init() {}

    /// The next nonce, never one handed out before.
    public mutating func next() -> [UInt8] {
        let length = XChaCha20Poly1305.nonceLength
        if offset + length > bytes.count {
            bytes = Sodium.randomBytes(count: length * Self.refill)
            offset = 0
        }
        defer { offset += length }
        return Array(bytes[offset..<offset + length])
    }
}
