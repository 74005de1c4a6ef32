import Testing

/// `StringProtocol.includes`: substring search on UTF-8 bytes, without the regex runtime.
struct StringSearchTests {
    @Test(arguments: [
        ("Lisbon", "", true),
        ("", "", true),
        ("", "a", false),
        ("Lisbon", "Lis", true),
        ("Lisbon", "bon", true),
        ("Lisbon", "sbo", true),
        ("Lisbon", "Lisbon", true),
        ("Lisbon", "Lisbons", false),
        ("Lisbon", "lis", false),
        ("Lisbon", "Porto", false),
        ("aaab", "aab", true),
        ("abababc", "ababc", true),
        ("ab", "abc", false),
        ("Belém Tower", "lém", true),
        ("Belém Tower", "lem", false),
        ("cafe\u{301}", "é", false),  // bytes, not canonical equivalence
        ("🥐🥐", "🥐", true),
        ("東京 Tokyo", "京 T", true),
        ("line\nbreak", "\nb", true),
        ("x\u{0}y", "\u{0}", true),
    ])
    func includesComparesUTF8Bytes(haystack: String, needle: String, expected: Bool) {
        #expect(haystack.includes(needle) == expected)
        #expect(Substring(haystack).includes(Substring(needle)) == expected)
    }

    @Test func substringsSearchOnlyTheirOwnRange() {
        let text = "xxLisbonxx"
        let middle = text.dropFirst(2).dropLast(2)
        #expect(middle.includes("Lisbon"))
        #expect(!middle.includes("xL"))
        #expect(!middle.includes("nx"))
        #expect(text.includes(middle))
    }

    /// Every haystack up to five letters over {a, b} against every needle up to three: the
    /// standard library's byte search is the oracle.
    @Test func agreesWithTheStandardLibraryExhaustively() {
        func words(upTo length: Int) -> [String] {
            var all = [""]
            var current = [""]
            for _ in 0..<length {
                current = current.flatMap { [$0 + "a", $0 + "b"] }
                all += current
            }
            return all
        }
        var disagreements: [String] = []
        for haystack in words(upTo: 5) {
            for needle in words(upTo: 3) where haystack.includes(needle) != (haystack.utf8.firstRange(of: needle.utf8) != nil) {
                disagreements.append("\(haystack) / \(needle)")
            }
        }
        #expect(disagreements == [])
    }
}
