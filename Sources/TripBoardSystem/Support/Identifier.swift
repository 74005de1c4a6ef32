/// Record ids: lowercase UUID strings, accepted on the command line by unique prefix.
public enum Identifier {
    /// A new random (version 4, RFC 9562) id, from the system's CSPRNG (getrandom).
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes = (0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? high : low) >> (8 * UInt64($0 % 8))) }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// True for a UUID string in the 8-4-4-4-12 form, any case, any version.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte) else { return false }
            }
        }
        return true
    }

    /// Normalizes a user-typed id or prefix: lowercase hex digits and dashes, 1…36 characters.
    public static func normalizedPrefix(_ text: String) -> String? {
        let lowered = text.lowercased()
        guard (1...36).contains(lowered.utf8.count),
              lowered.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || $0 == 0x2d })
        else { return nil }
        return lowered
    }
}
