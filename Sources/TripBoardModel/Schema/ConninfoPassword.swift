/// A password inside a libpq conninfo, found and taken out by the conninfo's own grammar (a
/// `password` keyword, a URI's `user:secret@`, a `password` URI parameter however it is
/// percent-encoded). `app` refuses such a conninfo before anything is stored, and store schema 10
/// takes one out of a store where an earlier build kept it. `sync-agent` checks again with
/// libpq's own parser (`PQconninfoParse`) before it connects: this reading is the first line,
/// libpq's the last.
package enum ConninfoPassword {
    /// `conninfo` without its password, or `nil` when it holds none. A conninfo this reading
    /// cannot follow and whose text, percent-decoded, names a password anywhere comes back empty:
    /// nothing of it can be kept safely.
    package static func removed(from conninfo: String) -> String? {
        let bytes = Array(conninfo.utf8)
        let result: [UInt8]?
        if let schemeEnd = uriSchemeEnd(bytes) {
            result = removedFromURI(bytes, from: schemeEnd)
        } else if let pairs = keywordPairs(bytes) {
            let kept = pairs.filter { $0.keyword != "password" }
            result = kept.count == pairs.count ? nil : Array(kept.map { String(decoding: bytes[$0.range], as: UTF8.self) }.joined(separator: " ").utf8)
        } else {
            result = mentionsPassword(bytes) ? [] : nil
        }
        return result.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `conninfo` holds a password by this reading.
    package static func isPresent(in conninfo: String) -> Bool { removed(from: conninfo) != nil }

    /// The index just past `postgresql://` or `postgres://` (libpq compares them as written).
    private static func uriSchemeEnd(_ bytes: [UInt8]) -> Int? {
        for scheme in ["postgresql://", "postgres://"] where bytes.starts(with: scheme.utf8) { return scheme.utf8.count }
        return nil
    }

    /// A URI without the `:secret` of its user part (libpq: the part before the first `@`,
    /// unless a `/` comes first) and without its `password` parameters; `nil` when it has neither.
    private static func removedFromURI(_ bytes: [UInt8], from start: Int) -> [UInt8]? {
        var output = Array(bytes[..<start])
        var index = start
        var changed = false
        if let at = bytes[start...].firstIndex(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "/") }), bytes[at] == UInt8(ascii: "@") {
            let user = bytes[start..<at]
            if let colon = user.firstIndex(of: UInt8(ascii: ":")) {
                output += bytes[start..<colon]
                changed = true
            } else {
                output += user
            }
            output.append(UInt8(ascii: "@"))
            index = at + 1
        }
        guard let question = bytes[index...].firstIndex(of: UInt8(ascii: "?")) else {
            return changed ? output + bytes[index...] : nil
        }
        output += bytes[index..<question]
        var kept: [ArraySlice<UInt8>] = []
        for parameter in bytes[(question + 1)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            let key = parameter.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            if percentDecoded(key) == Array("password".utf8) {
                changed = true
            } else {
                kept.append(parameter)
            }
        }
        guard changed else { return nil }
        if !kept.isEmpty { output += [UInt8(ascii: "?")] + Array(kept.joined(separator: [UInt8(ascii: "&")])) }
        return output
    }

    /// `keyword = value` pairs as libpq reads them (a value in single quotes, with `\` escaping
    /// the next character, or a run of characters up to white space), each with the range it
    /// spans; `nil` when the text does not follow that form.
    private static func keywordPairs(_ bytes: [UInt8]) -> [(keyword: String, range: Range<Int>)]? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0d).contains(byte) }
        var pairs: [(keyword: String, range: Range<Int>)] = []
        var index = 0
        while true {
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count else { return pairs }
            let start = index
            while index < bytes.count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: "=") { index += 1 }
            let keyword = String(decoding: bytes[start..<index], as: UTF8.self)
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "="), !keyword.isEmpty else { return nil }
            index += 1
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            if index < bytes.count, bytes[index] == UInt8(ascii: "'") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "'") { index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1 }
                guard index < bytes.count else { return nil }
                index += 1
            } else {
                while index < bytes.count, !isSpace(bytes[index]) { index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1 }
                index = min(index, bytes.count)
            }
            pairs.append((keyword, start..<index))
        }
    }

    /// Whether the text, lowercased and percent-decoded, says `password` anywhere.
    private static func mentionsPassword(_ bytes: [UInt8]) -> Bool {
        String(decoding: percentDecoded(bytes[...]), as: UTF8.self).lowercased().includes("password")
    }

    /// `%XX` sequences decoded (a malformed one kept as it is: libpq refuses it anyway).
    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }
        var output: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.endIndex, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }
}
