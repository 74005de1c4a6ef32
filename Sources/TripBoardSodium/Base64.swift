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
        // libsodium reads a byte as a signed `char`: one from 0x80 up passed for a character of
        // the alphabet (the random comparison with `decodePublicUnpadded` found it).
        if input.contains(where: { $0 >= 0x80 }) { return nil }
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

    /// `decodeUnpadded` for bytes that are no secret — a sealed field's nonce and ciphertext, a
    /// sealed blob chunk, as a server holds them: the same strict rules, table-driven, not in
    /// constant time. Every field a sync opens decodes two; libsodium's constant-time decoder
    /// took about 3,100 instructions for a field's 32 characters, 6% of a first sync.
    package static func decodePublicUnpadded(_ text: [UInt8]) -> [UInt8]? {
        let count = text.count
        if count % 4 == 1 { return nil }
        if count == 0 { return [] }
        let table = decodingTable
        return text.withUnsafeBufferPointer { input -> [UInt8]? in
            var failed = false
            let decoded = [UInt8](unsafeUninitializedCapacity: count * 3 / 4) { output, initialized in
                var written = 0
                var index = 0
                while index + 4 <= count {
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                    if (a | b | c | d) & 0x80 != 0 { failed = true; return }
                    output[written] = a << 2 | b >> 4
                    output[written + 1] = b << 4 | c >> 2
                    output[written + 2] = c << 6 | d
                    written += 3
                    index += 4
                }
                // The last group: two characters (one byte) or three (two bytes); the bits past
                // the last byte must be zero (canonical).
                let left = count - index
                if left >= 2 {
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    let c = left == 3 ? table[Int(input[index + 2])] : 0
                    if (a | b | c) & 0x80 != 0 { failed = true; return }
                    output[written] = a << 2 | b >> 4
                    written += 1
                    if left == 3 {
                        if c & 0x03 != 0 { failed = true; return }
                        output[written] = b << 4 | c >> 2
                        written += 1
                    } else if b & 0x0f != 0 {
                        failed = true
                        return
                    }
                }
                initialized = written
            }
            return failed ? nil : decoded
        }
    }

    /// `encodeUnpadded` of bytes that are no secret (a sealed field's nonce and ciphertext), as
    /// text: table-driven, not in constant time. libsodium's constant-time encoder took about
    /// 4,000 instructions a field, 8% of a push.
    package static func encodePublicUnpadded(_ bytes: [UInt8]) -> String {
        let count = bytes.count
        let length = count / 3 * 4 + [0, 2, 3][count % 3]
        guard length > 0 else { return "" }
        return bytes.withUnsafeBufferPointer { input in
            String(unsafeUninitializedCapacity: length) { output in
                let alphabet = encodingAlphabet
                var index = 0, written = 0
                while index + 3 <= count {
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[written] = alphabet[Int(group >> 18)]
                    output[written + 1] = alphabet[Int(group >> 12 & 0x3f)]
                    output[written + 2] = alphabet[Int(group >> 6 & 0x3f)]
                    output[written + 3] = alphabet[Int(group & 0x3f)]
                    index += 3
                    written += 4
                }
                if count - index == 1 {
                    let group = UInt32(input[index]) << 16
                    output[written] = alphabet[Int(group >> 18)]
                    output[written + 1] = alphabet[Int(group >> 12 & 0x3f)]
                    written += 2
                } else if count - index == 2 {
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                    output[written] = alphabet[Int(group >> 18)]
                    output[written + 1] = alphabet[Int(group >> 12 & 0x3f)]
                    output[written + 2] = alphabet[Int(group >> 6 & 0x3f)]
                    written += 3
                }
                return written
            }
        }
    }

    private static let encodingAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Each byte's six bits in the standard alphabet, 0xff for a byte outside it.
    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (value, character) in encodingAlphabet.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()
}
