import Foundation
import Testing
import TripBoardSystem

/// `JSONValue.serialized`: the one writer of every JSON file and of `--json` output.
struct JSONWritingTests {
    static let nested = JSONValue.object([
        ("z", .bool(true)),
        ("a", .array([.number("1"), .object([("b", .null)]), .array([]), .object([])])),
        ("m", .string("x")),
    ])

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func prettyIndentsByTwoSpacesWithSpacedColonsAndSortedKeys() {
        #expect(text(Self.nested.serialized()) == """
            {
              "a" : [
                1,
                {
                  "b" : null
                },
                [],
                {}
              ],
              "m" : "x",
              "z" : true
            }
            """)
    }

    @Test func compactHasNoWhiteSpaceAtAll() {
        #expect(text(Self.nested.serialized(pretty: false)) == #"{"a":[1,{"b":null},[],{}],"m":"x","z":true}"#)
    }

    @Test func unsortedKeepsDocumentOrder() {
        #expect(text(Self.nested.serialized(pretty: false, sortedKeys: false)) == #"{"z":true,"a":[1,{"b":null},[],{}],"m":"x"}"#)
    }

    @Test func keysAreSortedByTheirUTF8Bytes() {
        let value = JSONValue.object(["b", "é", "aa", "B", "a", "Z"].map { (key: $0, value: .null) })
        #expect(text(value.serialized(pretty: false)) == #"{"B":null,"Z":null,"a":null,"aa":null,"b":null,"é":null}"#)
    }

    @Test(arguments: [
        (JSONValue.null, "null"),
        (.bool(false), "false"),
        (.number("-0"), "-0"),
        (.number("1e10"), "1e10"),
        (.number("0.5"), "0.5"),
        (.string(""), #""""#),
        (.array([]), "[]"),
        (.object([]), "{}"),
    ])
    func scalarsAndEmptyContainersAreWrittenAsIs(value: JSONValue, expected: String) {
        #expect(text(value.serialized()) == expected)
        #expect(text(value.serialized(pretty: false)) == expected)
    }

    @Test(arguments: [
        ("say \"hi\"", #""say \"hi\"""#),
        ("C:\\temp", #""C:\\temp""#),
        ("a/b", #""a/b""#),
        ("line\nnext\r\ttab", #""line\nnext\r\ttab""#),
        ("\u{0}\u{1}\u{8}\u{c}\u{1f}", #""\u0000\u0001\u0008\u000c\u001f""#),
        ("\u{7f}", "\"\u{7f}\""),
        ("pastéis 🥐 東京", "\"pastéis 🥐 東京\""),
        ("\u{2028}", "\"\u{2028}\""),
    ])
    func stringsEscapeOnlyQuotesBackslashesAndControls(string: String, expected: String) throws {
        let written = JSONValue.string(string).serialized()
        #expect(text(written) == expected)
        #expect(try JSONValue.parse(written) == .string(string))
        let foundation = try JSONSerialization.jsonObject(with: Data(written), options: .fragmentsAllowed) as? String
        #expect(foundation == string, "Foundation reads back the same string")
    }

    @Test func everyControlCharacterRoundTrips() throws {
        var string = ""
        for byte in UInt8(0)..<0x20 { string.unicodeScalars.append(Unicode.Scalar(byte)) }
        string += "end"
        let written = JSONValue.object([(string, .string(string))]).serialized(pretty: false)
        #expect(!written.contains { $0 < 0x20 }, "no raw control byte")
        #expect(try JSONValue.parse(written) == .object([(string, .string(string))]))
        let foundation = try #require(try JSONSerialization.jsonObject(with: Data(written)) as? [String: String])
        #expect(foundation == [string: string])
    }

    @Test(arguments: [
        #"{"trip": {"name": "Lisbon", "days": [12, 13, 14], "booked": true, "notes": null}}"#,
        #"["\ud83e\udd50", "\u00e9", "\"\\\/\b\f\n\r\t", 1e10, -0, 0.5, {"": []}]"#,
        "\"\u{7f}\"",
    ])
    func parsingWhatWasWrittenGivesTheSameValue(document: String) throws {
        let value = try JSONValue.parse(Array(document.utf8))
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(try JSONValue.parse(value.serialized(pretty: false, sortedKeys: false)) == value)
        #expect(value.serialized(pretty: false) == (try JSONValue.parse(value.serialized())).serialized(pretty: false),
                "stable: writing twice gives the same bytes")
    }
}
