import Testing
import TripBoardSync

/// The written form of a hybrid-clock stamp is sealed into every field's associated data and
/// kept in the shadow: it must not change, and text order must stay stamp order.
@Suite struct HybridStampTests {
    @Test(arguments: [
        (Int64(0), 0, "a1", "0000000000000-0000-a1"),
        (1_764_547_200_123, 0x2a, "0f3e", "1764547200123-002a-0f3e"),
        (9_999_999_999_999, 0xffff, String(repeating: "f", count: 32), "9999999999999-ffff-" + String(repeating: "f", count: 32)),
    ])
    func aStampIsWrittenInFixedWidthsAndReadBack(milliseconds: Int64, counter: Int, node: String, text: String) {
        let stamp = HybridStamp(milliseconds: milliseconds, counter: counter, node: node)
        #expect(stamp.description == text)
        #expect(HybridStamp(text) == stamp)
    }

    @Test func outsideTheWidthsTheTextIsPaddedNotCut() {
        #expect(HybridStamp(milliseconds: 12_345_678_901_234, counter: 0x1_0000, node: "b").description == "12345678901234-10000-b")
        #expect(HybridStamp(milliseconds: 5, counter: 1, node: "c").description == "0000000000005-0001-c")
    }

    @Test func textOrderIsStampOrder() {
        let stamps = [HybridStamp(milliseconds: 99, counter: 0xffff, node: "ff"), HybridStamp(milliseconds: 100, counter: 0, node: "00"),
                      HybridStamp(milliseconds: 100, counter: 1, node: "00"), HybridStamp(milliseconds: 100, counter: 1, node: "01")]
        #expect(stamps.map(\.description).sorted() == stamps.map(\.description))
        #expect(stamps.sorted() == stamps)
    }

    /// The reading `HybridStamp.init?(_:)` has always had (split on `-`, then each part by
    /// Swift's integer parsing), as the reference its byte-by-byte reading of the written form
    /// must agree with.
    static func reference(_ text: String) -> HybridStamp? {
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 13, parts[1].utf8.count == 4, !parts[2].isEmpty, parts[2].utf8.count <= 32,
              let milliseconds = Int64(parts[0]), let counter = Int(parts[1], radix: 16),
              parts[2].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return HybridStamp(milliseconds: milliseconds, counter: counter, node: String(parts[2]))
    }

    @Test(arguments: [
        "1764547200123-002a-0f3e", "1764547200123-002A-0f3e", "1764547200123-002a-0F3E", "+764547200123-002a-0f3e",
        "1764547200123-+02a-0f3e", "1764547200123-002a-", "1764547200123-002a-0f3e-1", "176454720012-002a-0f3e",
        "17645472001234-002a-0f3e", "1764547200123_002a-0f3e", "1764547200123-002g-0f3e", "1764547200123-002a-" + String(repeating: "a", count: 33),
        "1764547200123-002a-" + String(repeating: "a", count: 32), "١٧٦٤٥٤٧٢٠٠١٢٣-002a-0f3e", "", "-", "--",
    ])
    func theWrittenFormIsReadAsEver(text: String) {
        #expect(HybridStamp(text) == Self.reference(text))
    }

    /// Every text one edit away from a stamp (each byte replaced by, or each gap given, a digit,
    /// a hex letter in either case, `-`, `+`, a stray byte; each byte removed): the two readings
    /// agree on every one.
    @Test func everyTextOneEditFromAStampIsReadAsTheReferenceReadsIt() {
        let stamp = Array("1764547200123-002a-0f3e")
        let alphabet = Array("0123456789abcdefABCDEF-+x ")
        var candidates: [[Character]] = []
        for index in stamp.indices {
            var removed = stamp
            removed.remove(at: index)
            candidates.append(removed)
            for character in alphabet {
                var replaced = stamp
                replaced[index] = character
                candidates.append(replaced)
            }
        }
        for index in 0...stamp.count {
            for character in alphabet {
                var inserted = stamp
                inserted.insert(character, at: index)
                candidates.append(inserted)
            }
        }
        for candidate in candidates.map({ String($0) }) {
            #expect(HybridStamp(candidate) == Self.reference(candidate), "\(candidate)")
        }
    }
}
