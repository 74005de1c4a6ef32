import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
import TripBoardSodium
import TripBoardKeys

/// The text header of an age v1 file (age.md, "Header"): the version line, one or more recipient
/// stanzas, and the MAC line.
///
///     age-encryption.org/v1
///     -> scrypt ajMFur+EJLGaohv/dLRGnw 18
///     8SHBz/ldWnjyGFQqfjat6uNBarWqqEMDS7W8X7+Xq5Q
///     --- HK2NmOBN9Dpq0Gw6xMCuhFcQlQLvZ/wQUi/2scLG75s
///
/// Parsing is strict, rule by rule from the ABNF in age.md: LF line ends only, arguments of
/// visible ASCII separated by single spaces, bodies in canonical unpadded base64 wrapped at
/// exactly 64 columns and ended by a shorter line, a MAC of exactly 43 base64 characters.
struct AgeHeader: Equatable {
    /// One recipient stanza: its arguments (the first names its type) and its decoded body.
    struct Stanza: Equatable {
        var arguments: [String]
        var body: [UInt8]
    }

    /// The recipient stanzas, in file order.
    var stanzas: [Stanza]
    /// The header MAC from the `---` line (32 bytes).
    var mac: [UInt8]
    /// How many bytes of the file the MAC covers: the header up to and including `---`
    /// (age.md: "over the whole header up to and including the `---` mark (excluding the space
    /// following it)").
    var macInputLength: Int
    /// The header's length in bytes, through the LF that ends the MAC line; the payload follows.
    var length: Int

    static let versionLine = Array("age-encryption.org/v1".utf8)
    private static let versionPrefix = Array("age-encryption.org/".utf8)
    private static let armorPrefix = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    /// Body lines are wrapped at 64 columns (age.md: "a base64-encoded body wrapped at 64 columns").
    static let columns = 64

    // MARK: - Writing

    /// The bytes the MAC covers for `stanzas`: the version line, each stanza, then `---`.
    static func encodeUpToMAC(stanzas: [Stanza]) -> [UInt8] {
        var text = versionLine + [0x0A]
        for stanza in stanzas {
            text += Array(("-> " + stanza.arguments.joined(separator: " ")).utf8) + [0x0A]
            let body = Base64.encodeUnpadded(stanza.body)
            // Full 64-column lines, then the final shorter line, which is empty when the body
            // fills its last line exactly (age.md: "The body MUST end with a line shorter than
            // 64 characters, which MAY be empty").
            var offset = 0
            while body.count - offset >= columns {
                text += body[offset..<(offset + columns)] + [0x0A]
                offset += columns
            }
            text += body[offset...] + [0x0A]
        }
        return text + Array("---".utf8)
    }

    /// The complete MAC line that follows `encodeUpToMAC`: " " + base64(mac) + LF.
    static func encodeMACLine(_ mac: [UInt8]) -> [UInt8] {
        [0x20] + Base64.encodeUnpadded(mac) + [0x0A]
    }

    // MARK: - Reading

    /// Parses the header at the start of `bytes`. Throws `.truncated(.header)` when `bytes` ends
    /// before the MAC line does (the caller knows whether that is the end of the file).
    static func parse(_ bytes: [UInt8]) throws(AgeError) -> AgeHeader {
        try checkVersion(bytes)
        var lines = LineCursor(bytes: bytes)
        _ = try lines.next()  // the version line, checked above
        var stanzas: [Stanza] = []
        while true {
            let lineStart = lines.offset
            let line = try lines.next()
            if line.starts(with: Array("---".utf8)) {
                guard !stanzas.isEmpty else { throw .malformedHeader("no recipient stanza before the MAC line") }
                let mac = try parseMACLine(line)
                return AgeHeader(stanzas: stanzas, mac: mac, macInputLength: lineStart + 3, length: lines.offset)
            }
            guard line.starts(with: Array("-> ".utf8)) else {
                throw .malformedHeader("a line that is neither a stanza (\"-> \") nor the MAC line (\"---\")")
            }
            stanzas.append(Stanza(arguments: try parseArguments(line.dropFirst(3)), body: try parseBody(&lines)))
        }
    }

    private static func checkVersion(_ bytes: [UInt8]) throws(AgeError) {
        let expected = versionLine + [0x0A]
        if bytes.starts(with: expected) { return }
        // A prefix of a valid start: the file stops before the version line is complete.
        if bytes.count < expected.count && expected.starts(with: bytes) { throw .truncated(.header) }
        if bytes.starts(with: armorPrefix) { throw .armored }
        guard bytes.starts(with: versionPrefix) else { throw .notAnAgeFile }
        guard let end = bytes.firstIndex(of: 0x0A) else { throw .truncated(.header) }
        if Array(bytes[..<end]) == versionLine + [0x0D] { throw .malformedHeader("lines end with CR LF instead of LF") }
        throw .unsupportedVersion
    }

    /// `arg-line = "-> " argument *(SP argument) LF`, `argument = 1*VCHAR`.
    private static func parseArguments(_ text: ArraySlice<UInt8>) throws(AgeError) -> [String] {
        let arguments = text.split(separator: 0x20, omittingEmptySubsequences: false)
        guard !text.isEmpty else { throw .malformedHeader("a stanza without arguments") }
        var result: [String] = []
        for argument in arguments {
            guard !argument.isEmpty else { throw .malformedHeader("an empty stanza argument (two spaces in a row, or a space at the end)") }
            guard argument.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw .malformedHeader("a stanza argument with a character that is not visible ASCII")
            }
            result.append(String(decoding: argument, as: UTF8.self))
        }
        return result
    }

    /// `*full-line final-line`: lines of exactly 64 base64 characters, then one shorter line.
    private static func parseBody(_ lines: inout LineCursor) throws(AgeError) -> [UInt8] {
        var text: [UInt8] = []
        while true {
            let line = try lines.next()
            guard line.allSatisfy(isBase64Character) else {
                throw .malformedHeader("a stanza body line with a character outside base64 (or a missing final body line)")
            }
            guard line.count <= columns else { throw .malformedHeader("a stanza body line longer than 64 columns") }
            text += line
            if line.count < columns { break }
        }
        guard let body = Base64.decodeUnpadded(text) else { throw .malformedHeader("a stanza body that is not canonical base64") }
        return body
    }

    /// `end = "--- " 43base64char LF`.
    private static func parseMACLine(_ line: ArraySlice<UInt8>) throws(AgeError) -> [UInt8] {
        let encoded = line.dropFirst(4)
        guard line.count == 4 + 43, line[line.startIndex + 3] == 0x20, encoded.allSatisfy(isBase64Character),
              let mac = Base64.decodeUnpadded(encoded), mac.count == 32
        else { throw .malformedHeader("the MAC line is not \"--- \" and 43 characters of canonical base64") }
        return mac
    }

    /// `base64char = ALPHA / DIGIT / "+" / "/"`.
    private static func isBase64Character(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == 0x2B || byte == 0x2F
    }
}

/// Lines of a byte array, each without its LF; a line with no LF ends the header too early.
private struct LineCursor {
    let bytes: [UInt8]
    var offset = 0

    mutating func next() throws(AgeError) -> ArraySlice<UInt8> {
        guard let end = bytes[offset...].firstIndex(of: 0x0A) else { throw .truncated(.header) }
        let line = bytes[offset..<end]
        offset = end + 1
        return line
    }
}
