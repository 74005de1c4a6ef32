import Foundation
import Testing
import TripBoardSystem

/// `JSONValue.parse`: RFC 8259 without Foundation. Foundation's `JSONSerialization` is the oracle
/// where the two are meant to agree.
struct JSONParsingTests {
    /// Parses `bytes` with Foundation, or `nil` when it refuses them.
    private func foundationParse(_ bytes: [UInt8]) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
    }

    /// The text of a number value, or `nil` for anything else.
    private func numberText(_ value: JSONValue) -> String? {
        guard case .number(let text) = value else { return nil }
        return text
    }

    // MARK: - Valid documents

    @Test(arguments: [
        (#"{"trip": {"name": "Lisbon", "days": [12, 13, 14], "booked": true, "notes": null}}"#,
         JSONValue.object([("trip", .object([
             ("name", .string("Lisbon")), ("days", .array([.number("12"), .number("13"), .number("14")])),
             ("booked", .bool(true)), ("notes", .null),
         ]))])),
        (#"[[], {}, [[]], {"a": {"b": {"c": [false]}}}]"#,
         .array([.array([]), .object([]), .array([.array([])]),
                 .object([("a", .object([("b", .object([("c", .array([.bool(false)]))]))]))])])),
        (#""Lisboa — pastéis de nata 🥐 東京""#, .string("Lisboa — pastéis de nata 🥐 東京")),
        (#""\u00e9\u20AC\u0041""#, .string("é€A")),
        (#""\ud83e\udd50 and \uD834\uDD1E""#, .string("🥐 and 𝄞")),
        (#""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{8}\u{c}\n\r\t")),
        (#""\u0000 inside""#, .string("\u{0} inside")),
        ("\"\u{7f}\"", .string("\u{7f}")),
        (#""""#, .string("")),
        ("-0", .number("-0")),
        ("1e10", .number("1e10")),
        ("0.5", .number("0.5")),
        ("-1.5E-3", .number("-1.5E-3")),
        ("1E+2", .number("1E+2")),
        ("0", .number("0")),
        ("true", .bool(true)),
        ("null", .null),
        (" \t\r\n[ 1 ,\n 2 ]\n ", .array([.number("1"), .number("2")])),
    ])
    func validDocumentParses(text: String, expected: JSONValue) throws {
        let parsed = try JSONValue.parse(Array(text.utf8))
        #expect(parsed == expected)
        if let expectedNumber = numberText(expected) {
            #expect(numberText(parsed) == expectedNumber, "kept exactly as written")
        }
        #expect(foundationParse(Array(text.utf8)) != nil, "Foundation accepts it too")
    }

    @Test func validDocumentsMeanWhatFoundationReads() throws {
        let documents = [
            #"{"trip": {"name": "Lisbon", "days": [12, 13, 14], "booked": true, "notes": null}}"#,
            #"["\ud83e\udd50", "\u00e9", "\"\\\/\b\f\n\r\t", "東京", 1e10, 0.5, -2]"#,
        ]
        for document in documents {
            let ours = try JSONValue.parse(Array(document.utf8)).serialized(pretty: false)
            let expected = try #require(foundationParse(Array(document.utf8)) as? NSObject)
            let reread = try #require(foundationParse(ours) as? NSObject)
            #expect(reread == expected, "\(String(decoding: ours, as: UTF8.self))")
        }
    }

    @Test func nestingIsAllowedUpTo512Levels() throws {
        let deepest = Array(String(repeating: "[", count: 512).utf8) + Array(String(repeating: "]", count: 512).utf8)
        var value = try JSONValue.parse(deepest)
        var depth = 0
        while case .array(let elements) = value, let first = elements.first {
            value = first
            depth += 1
        }
        #expect(depth == 511)
        #expect(value == .array([]))
    }

    @Test func repeatedKeyReadsAsTheLastOne() throws {
        let value = try JSONValue.parse(Array(#"{"a": 1, "b": 2, "a": 3}"#.utf8))
        #expect(value["a"] == .number("3"))
        #expect(value["b"] == .number("2"))
        #expect(value["c"] == nil)
        #expect(JSONValue.array([])["a"] == nil, "not an object")
    }

    @Test func equalityIgnoresMemberOrderAndNumberSpelling() {
        #expect(JSONValue.object([("a", .null), ("b", .bool(true))]) == .object([("b", .bool(true)), ("a", .null)]))
        #expect(JSONValue.number("1.0") == .number("1"))
        #expect(JSONValue.number("1e2") == .number("100"))
        #expect(JSONValue.number("1") != .number("2"))
        #expect(JSONValue.string("1") != .number("1"))
        #expect(JSONValue.array([.null]) != .array([.null, .null]))
        #expect(JSONValue.object([("a", .null)]) != .object([("b", .null)]))
    }

    // MARK: - Invalid documents

    @Test(arguments: [
        ("[1,2,]", "unexpected character", 1, 6),
        (#"{"a":1,}"#, "expected a string key", 1, 8),
        ("01", "leading zero", 1, 3),
        ("-01", "leading zero", 1, 4),
        ("[01]", "leading zero", 1, 4),
        (#""\ud800""#, "unpaired surrogate", 1, 8),
        (#""\udc00""#, "unpaired surrogate", 1, 8),
        (#""\ud800\u0041""#, "unpaired surrogate", 1, 14),
        ("\"a\tb\"", "control character in a string", 1, 3),
        ("\"a\u{0}b\"", "control character in a string", 1, 3),
        ("{} x", "unexpected text after the JSON value", 1, 4),
        ("1 2", "unexpected text after the JSON value", 1, 3),
        ("\"abc", "unterminated string", 1, 5),
        ("\"abc\\", "unexpected end of input", 1, 6),
        ("[1, 2", "unexpected end of input", 1, 6),
        (#"{"a":"#, "unexpected end of input", 1, 6),
        ("", "unexpected end of input", 1, 1),
        ("   ", "unexpected end of input", 1, 4),
        ("tru", "unexpected end of input", 1, 1),
        ("{\n  \"a\": 1,\n  \"b\": tru\n}", "unexpected character", 3, 8),
        ("[\n1,\n\n  x]", "unexpected character", 4, 3),
        (#""\x""#, "invalid escape", 1, 4),
        (#""\u12G4""#, "invalid \\u escape", 1, 6),
        ("1.", "invalid number", 1, 3),
        ("-", "invalid number", 1, 2),
        ("1e", "invalid number", 1, 3),
        (".5", "unexpected character", 1, 1),
        ("+1", "unexpected character", 1, 1),
        ("NaN", "unexpected character", 1, 1),
        ("{'a': 1}", "expected a string key", 1, 2),
        (#"{"a" 1}"#, "expected ':'", 1, 6),
        ("[1 2]", "expected ',' or ']'", 1, 4),
        (String(repeating: "[", count: 513) + String(repeating: "]", count: 513), "nested too deeply", 1, 513),
    ])
    func invalidDocumentIsRefusedWithItsPosition(text: String, message: String, line: Int, column: Int) throws {
        let error = try #require(throws: JSONSyntaxError.self) { try JSONValue.parse(Array(text.utf8)) }
        #expect(error.message.contains(message), "\(error)")
        #expect(error.line == line)
        #expect(error.column == column)
        #expect(error.description == "\(error.message) at line \(line), column \(column)")
    }

    /// Foundation (as shipped here) accepts a trailing comma; everything else above it refuses too.
    @Test(arguments: ["01", #""\ud800""#, "\"a\tb\"", "{} x", "\"abc", "[1, 2", "", "NaN",
                      String(repeating: "[", count: 513) + String(repeating: "]", count: 513)])
    func foundationRefusesTheSameDocuments(text: String) {
        #expect(foundationParse(Array(text.utf8)) == nil)
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Array(text.utf8)) }
    }

    @Test(arguments: [
        [0x22, 0xff, 0x22],  // a byte that never occurs in UTF-8
        [0x22, 0x61, 0xc3, 0x22],  // a sequence cut short
        [0x22, 0xc0, 0xaf, 0x22],  // overlong "/"
        [0x22, 0xed, 0xa0, 0x80, 0x22],  // a surrogate encoded directly
        [0x22, 0x5c, 0x6e, 0xfe, 0x22],  // after an escape (the slow path)
    ] as [[UInt8]])
    func invalidUTF8InAStringIsRefused(bytes: [UInt8]) throws {
        let error = try #require(throws: JSONSyntaxError.self) { try JSONValue.parse(bytes) }
        #expect(error.message == "invalid UTF-8 in a string")
        #expect(error.line == 1)
        #expect((2...bytes.count).contains(error.column), "inside the string: \(error.column)")
        #expect(foundationParse(bytes) == nil)
    }

    @Test func invalidUTF8OutsideAStringIsAnUnexpectedCharacter() throws {
        let error = try #require(throws: JSONSyntaxError.self) { try JSONValue.parse([0x5b, 0xff, 0x5d]) }
        #expect(error.message == "unexpected character")
        #expect(error.column == 2)
    }
}
