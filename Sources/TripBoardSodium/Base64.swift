internal import CSodium
import TripBoardKeys

/// Standard base64 (RFC 4648, section 4) without `=` padding, strict: the encoding age.md uses
/// ("decoders MUST reject non-canonical encodings and encodings ending with `=` padding
/// characters"). The corresponding C functions are `sodium_bin2base64` and `sodium_base642bin`
/// with `sodium_base64_VARIANT_ORIGINAL_NO_PADDING`, which run in constant time and refuse
/// leftover bits that are not zero (the non-canonical case).
package enum Base64 {
    /// The unpadded encoding of `bytes`.
    package static func encodeUnpadded(_ bytes: some Collection<UInt8>) -> [UInt8] {
        Sodium.initialize()
        let input = Array(bytes)
        let variant = Int32(sodium_base64_VARIANT_ORIGINAL_NO_PADDING)
        var text = [CChar](repeating: 0, count: sodium_base64_encoded_len(input.count, variant))
        _ = sodium_bin2base64(&text, text.count, input, input.count, variant)
        text.removeLast()  // the terminating NUL
        return text.map { UInt8(bitPattern: $0) }
    }

    /// The bytes of `text`, or `nil` unless it is exactly a canonical unpadded encoding: no
    /// padding, no whitespace, no character outside `A–Z a–z 0–9 + /`, no stray bits.
    package static func decodeUnpadded(_ text: some Collection<UInt8>) -> [UInt8]? {
        Sodium.initialize()
        // Read in place (one copy at most, none for an array): decoding is on the path of every
        // field a sync opens.
        let input = Array(text)
        // A length of 1 modulo 4 cannot come from any byte string.
        if input.count % 4 == 1 { return nil }
        if input.isEmpty { return [] }
        var bytes = [UInt8](repeating: 0, count: input.count * 3 / 4 + 1)
        var decodedCount = 0
        // With `b64_end` NULL, sodium_base642bin fails unless it consumed the whole input.
        let result = input.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { characters in
                sodium_base642bin(&bytes, bytes.count, characters.baseAddress, characters.count, nil, &decodedCount, nil,
                                  Int32(sodium_base64_VARIANT_ORIGINAL_NO_PADDING))
            }
        }
        guard result == 0 else { return nil }
        bytes.removeLast(bytes.count - decodedCount)
        return bytes
    }
}
