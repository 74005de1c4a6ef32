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

/// `JSONWriter` called directly, as the lists, exports and sync frames do: the same bytes as
/// the value tree written through it, whatever mix of calls makes them.
struct JSONWriterTests {
    /// `nested` of `JSONWritingTests`, written call by call with its keys in sorted order.
    private func writeNested(_ writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("a")
        writer.beginArray()
        writer.integer(1)
        writer.beginObject()
        writer.key("b")
        writer.null()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.beginObject()
        writer.endObject()
        writer.endArray()
        writer.key("m")
        "x".utf8.withContiguousStorageIfAvailable { writer.string(utf8: UnsafeRawBufferPointer($0)) }
        writer.key(escaping: "z")
        writer.bool(true)
        writer.endObject()
    }

    @Test(arguments: [true, false])
    func callsMakeTheBytesOfTheTreeTheyDescribe(pretty: Bool) {
        var writer = JSONWriter(pretty: pretty)
        writeNested(&writer)
        #expect(writer.bytes == JSONWritingTests.nested.serialized(pretty: pretty))
    }

    /// Bytes handed out between values, then the rest: together, the document.
    @Test(arguments: [true, false])
    func bytesTakenBetweenValuesJoinIntoTheDocument(pretty: Bool) {
        var writer = JSONWriter(pretty: pretty)
        var pieces: [UInt8] = []
        writer.beginArray()
        for value in [JSONWritingTests.nested, .string("é\n"), .array([])] {
            value.write(to: &writer)
            pieces += writer.bytes
            writer.bytes.removeAll()
        }
        writer.endArray()
        pieces += writer.bytes
        let whole = JSONValue.array([JSONWritingTests.nested, .string("é\n"), .array([])]).serialized(pretty: pretty)
        #expect(pieces == whole)
    }

    /// Text bytes that are not UTF-8 are written as the `String` made of them would be.
    @Test func textBytesAreWrittenAsTheirString() {
        for bytes: [UInt8] in [[0x61, 0xff, 0x62], [0xc3, 0xa9, 0x22], [0x0a, 0x5c], []] {
            var fromBytes = JSONWriter(pretty: false)
            bytes.withUnsafeBytes { fromBytes.string(utf8: $0) }
            var fromString = JSONWriter(pretty: false)
            fromString.string(String(decoding: bytes, as: UTF8.self))
            #expect(fromBytes.bytes == fromString.bytes)
        }
    }

    /// Integers are written digit by digit, as `String` writes them, at both ends of the range.
    @Test func integersAreTheirDecimalText() {
        let values: [Int64] = [0, 7, -7, 10, 99, 100, 4_503_599_627_370_495, .max, .min, .min + 1]
        var writer = JSONWriter(pretty: false)
        writer.beginArray()
        for value in values { writer.integer(value) }
        writer.integer(-42 as Int)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[" + (values.map(String.init) + ["-42"]).joined(separator: ",") + "]")
    }

    /// A value that is JSON already is copied as it is, in its place among the others.
    @Test func jsonTextIsCopiedInPlace() {
        var writer = JSONWriter(pretty: false)
        writer.beginArray()
        writer.json(Array(#"{"k":[1,2]}"#.utf8))
        writer.string(ascii: "word")
        writer.date(CivilDate("2027-03-28")!)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"[{"k":[1,2]},"word","2027-03-28"]"#)
    }
}
