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
}
