/// A hybrid logical clock stamp (Kulkarni et al., 2014): wall-clock milliseconds, a counter that
/// orders events within one millisecond (or while the wall clock lags what was seen), and the
/// node (device) that made it, as the last tie-break. Stamps compare in that order, the same on
/// every device, so a field-level merge picks the same winner whatever the order of pushes.
/// Written `PPPPPPPPPPPPP-CCCC-NODE` (13 decimal digits, 4 hex digits): text order is stamp order.
public struct HybridStamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let milliseconds: Int64
    public let counter: Int
    public let node: String

    public init(milliseconds: Int64, counter: Int, node: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.node = node
    }

    public init?(_ text: String) {
        // The written form (all a build writes), read byte by byte: a pull reads one per field.
        var text = text
        if let stamp = text.withUTF8(Self.writtenForm) {
            self = stamp
            return
        }
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 13, parts[1].utf8.count == 4, !parts[2].isEmpty, parts[2].utf8.count <= 32,
              let milliseconds = Int64(parts[0]), let counter = Int(parts[1], radix: 16),
              parts[2].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        self.init(milliseconds: milliseconds, counter: counter, node: String(parts[2]))
    }

    /// `PPPPPPPPPPPPP-CCCC-NODE` exactly (13 decimal digits, 4 hex digits, 1 to 32 lowercase hex
    /// digits), or nil: then `init?(_:)` reads it as it always has (which also takes, for
    /// example, a `+` before the digits).
    private static func writtenForm(_ bytes: UnsafeBufferPointer<UInt8>) -> HybridStamp? {
        guard bytes.count >= 20, bytes.count <= 51, bytes[13] == UInt8(ascii: "-"), bytes[18] == UInt8(ascii: "-") else { return nil }
        var milliseconds: Int64 = 0
        for index in 0..<13 {
            let digit = bytes[index] &- 0x30
            guard digit < 10 else { return nil }
            milliseconds = milliseconds * 10 + Int64(digit)
        }
        var counter = 0
        for index in 14..<18 {
            guard let digit = hexDigit(bytes[index], uppercase: true) else { return nil }
            counter = counter << 4 | digit
        }
        for index in 19..<bytes.count where hexDigit(bytes[index], uppercase: false) == nil { return nil }
        return HybridStamp(milliseconds: milliseconds, counter: counter, node: String(decoding: UnsafeBufferPointer(rebasing: bytes[19...]), as: UTF8.self))
    }

    private static func hexDigit(_ byte: UInt8, uppercase: Bool) -> Int? {
        switch byte {
        case 0x30...0x39: Int(byte - 0x30)
        case 0x61...0x66: Int(byte - 0x61 + 10)
        case 0x41...0x46 where uppercase: Int(byte - 0x41 + 10)
        default: nil
        }
    }

    public var description: String {
        guard (0...9_999_999_999_999).contains(milliseconds), (0...0xffff).contains(counter) else {
            // Outside the written form's widths (no stamp this build makes): padded, not cut.
            let digits = String(milliseconds)
            let hex = String(counter, radix: 16)
            return String(repeating: "0", count: max(0, 13 - digits.utf8.count)) + digits + "-"
                + String(repeating: "0", count: max(0, 4 - hex.utf8.count)) + hex + "-" + node
        }
        // Written digit by digit into the string's own storage: a push writes one per field.
        var node = node
        return node.withUTF8 { nodeBytes in
            String(unsafeUninitializedCapacity: 19 + nodeBytes.count) { out in
                var rest = milliseconds
                for index in stride(from: 12, through: 0, by: -1) {
                    out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                out[13] = UInt8(ascii: "-")
                let hexDigits: StaticString = "0123456789abcdef"
                for index in 0..<4 {
                    out[14 + index] = hexDigits.utf8Start[(counter >> (12 - 4 * index)) & 0xf]
                }
                out[18] = UInt8(ascii: "-")
                for (index, byte) in nodeBytes.enumerated() { out[19 + index] = byte }
                return 19 + nodeBytes.count
            }
        }
    }

    public static func < (lhs: HybridStamp, rhs: HybridStamp) -> Bool {
        (lhs.milliseconds, lhs.counter, lhs.node) < (rhs.milliseconds, rhs.counter, rhs.node)
    }

    /// The stamp of a local edit made at wall-clock `wall` (milliseconds) on `node`, after `seen`
    /// (the stamp of the value it replaced): later than `seen` whatever the clocks say, so an
    /// edit made after seeing a change always wins over it.
    public static func edit(at wall: Int64, node: String, after seen: HybridStamp?) -> HybridStamp {
        guard let seen, wall <= seen.milliseconds else { return HybridStamp(milliseconds: wall, counter: 0, node: node) }
        return HybridStamp(milliseconds: seen.milliseconds, counter: min(seen.counter + 1, 0xffff), node: node)
    }

    /// How far ahead of the server's clock a device's clock may be: beyond, it is clamped, so one
    /// device with a clock set to next year does not win every merge until then.
    public static let maximumSkewMilliseconds: Int64 = 5 * 60 * 1000
}
