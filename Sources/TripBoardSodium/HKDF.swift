internal import CSodium
public import TripBoardKeys

/// HKDF with SHA-256 (RFC 5869): turns input key material that is already strong (a random file
/// key) into independent keys, one per `info` label. libsodium 1.0.18 has no HKDF; it is two
/// HMAC-SHA-256 steps (``HMACSHA256``), written here once.
///
/// age uses it for the header MAC key and the payload key (age.md: "Keys derived with HKDF-SHA-256
/// are produced by applying HKDF-Extract with the specified salt followed by HKDF-Expand with the
/// specified info according to RFC 5869").
public enum HKDF {
    /// The longest output HKDF-SHA-256 can give: 255 blocks of 32 bytes (RFC 5869, section 2.3).
    public static var maximumLength: Int { 255 * HMACSHA256.outputLength }

    /// `length` bytes (default 32) derived from `inputKeyMaterial`, `salt` (public; empty means
    /// 32 zero bytes, as the RFC says) and `info` (the purpose label). Throws `.invalidLength` for
    /// a length outside 1…8160.
    public static func deriveKey(
        inputKeyMaterial: SecureBytes, salt: [UInt8], info: [UInt8], length: Int = 32
    ) throws(CryptoError) -> SecureBytes {
        try CryptoError.checkLength("HKDF output", length, 1...maximumLength)
        let pseudorandomKey = try extract(inputKeyMaterial: inputKeyMaterial, salt: salt)
        return try expand(pseudorandomKey: pseudorandomKey, info: info, length: length)
    }

    /// HKDF-Extract: PRK = HMAC-SHA-256(key = salt, message = IKM).
    package static func extract(inputKeyMaterial: SecureBytes, salt: [UInt8]) throws(CryptoError) -> SecureBytes {
        let hmac = salt.withUnsafeBytes { HMACSHA256(keyBytes: $0) }
        inputKeyMaterial.withUnsafeBytes { hmac.update($0) }
        return try SecureBytes(count: HMACSHA256.outputLength) { prk in hmac.finalize(into: UnsafeMutableRawBufferPointer(prk)) }
    }

    /// HKDF-Expand: T(i) = HMAC-SHA-256(PRK, T(i-1) || info || i), output T(1) || T(2) || … cut
    /// to `length`. Every block is written straight into guarded memory; the one block that may
    /// be cut short goes through a scratch buffer that is wiped.
    package static func expand(pseudorandomKey: SecureBytes, info: [UInt8], length: Int) throws(CryptoError) -> SecureBytes {
        let blockLength = HMACSHA256.outputLength
        return try SecureBytes(count: length) { output in
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: blockLength, alignment: 16)
            defer {
                sodium_memzero(scratch.baseAddress, blockLength)
                scratch.deallocate()
            }
            var offset = 0
            var counter: UInt8 = 1
            while offset < length {
                let hmac = HMACSHA256(key: pseudorandomKey)
                if counter > 1 { hmac.update(UnsafeRawBufferPointer(scratch)) }
                hmac.update(info)
                hmac.update(CollectionOfOne(counter))
                hmac.finalize(into: scratch)
                let count = min(blockLength, length - offset)
                UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(output)[offset..<(offset + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                offset += count
                counter &+= 1
            }
        }
    }
}
