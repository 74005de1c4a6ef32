import TripBoardStorage

/// A cursor over the command line: options are taken by name wherever they stand, then the
/// positional words in order; whatever is left at the end is an error, never silently ignored.
public struct Arguments {
    private(set) var words: [String]
    /// Set by commands that take a secret (on standard input): their errors then repeat no
    /// argument, since a word such a command did not expect is most likely the secret itself.
    var redactsArguments = false
    /// What a redacted error says instead of the argument.
    static let redactionNote = "not shown: secrets are read only from standard input, never from the command line"

    public init(_ words: [String]) { self.words = words }

    /// True (and consumed) when `--help` or `-h` is present.
    mutating func wantsHelp() -> Bool {
        let before = words.count
        words.removeAll { $0 == "--help" || $0 == "-h" }
        return words.count != before
    }

    /// Takes `--name VALUE` or `--name=VALUE`; the last occurrence wins. A VALUE that looks like
    /// an option (`--start`, `--`) is refused — `trip add --name --start D` means a forgotten
    /// name, not a trip called "--start" — while `--name=--start` passes it as it is.
    mutating func option(_ name: String) throws -> String? {
        var value: String?
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == name {
                guard index + 1 < words.count, !Self.looksLikeOption(words[index + 1]) else {
                    throw CommandLineError.usage("\(name) needs a value")
                }
                value = words[index + 1]
                words.removeSubrange(index...(index + 1))
            } else if word.hasPrefix(name + "=") {
                value = String(word.dropFirst(name.count + 1))
                words.remove(at: index)
            } else if word == "--" {
                break
            } else {
                index += 1
            }
        }
        return value
    }

    /// `--` or `--word` (letters, digits and `-` after the dashes): what an option looks like.
    static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("--") else { return false }
        let rest = word.utf8.dropFirst(2)
        guard let first = rest.first else { return true }
        let isLetter = { (byte: UInt8) in (0x61...0x7a).contains(byte) || (0x41...0x5a).contains(byte) }
        return isLetter(first) && rest.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }
    }

    /// Takes a boolean `--name` (every occurrence before `--`).
    mutating func flag(_ name: String) -> Bool {
        let end = words.firstIndex(of: "--") ?? words.count
        let before = words.count
        words = words[..<end].filter { $0 != name } + words[end...]
        return words.count != before
    }

    /// Takes the next positional word, or `nil` when there is none.
    mutating func nextPositional() -> String? {
        if let first = words.first, first == "--" { words.removeFirst() }
        guard let index = words.firstIndex(where: { !$0.hasPrefix("--") || $0 == "--" }) else { return nil }
        if words[index] == "--" {
            guard index + 1 < words.count else { return nil }
            return words.remove(at: index + 1)
        }
        return words.remove(at: index)
    }

    /// Takes the next positional word, which must be there.
    mutating func positional(_ what: String) throws -> String {
        guard let word = nextPositional() else { throw CommandLineError.usage("missing \(what)") }
        return word
    }

    /// Fails on anything not consumed.
    func finish() throws {
        guard let first = words.first(where: { $0 != "--" }) else { return }
        let isOption = first.hasPrefix("-") && first != "-"
        if redactsArguments {
            throw CommandLineError.usage("\(isOption ? "unknown option" : "unexpected argument") (\(Self.redactionNote))")
        }
        if isOption {
            throw CommandLineError.usage("unknown option \(first.prefix(60))")
        }
        throw CommandLineError.usage("unexpected argument '\(first.prefix(60))'")
    }

    // MARK: - Typed values

    /// Takes the next positional word as the id (or id prefix) of a `kind` record. Its form is
    /// checked here, with the rest of the command line, so that a command refused for its
    /// arguments never reaches the disk (the store then finds the record).
    mutating func recordID(_ kind: String) throws -> String {
        try Self.checkedRecordID(try positional("\(kind) ID"), kind)
    }

    /// `--name ID` (optional) holding the id or id prefix of a `kind` record, checked as `recordID`.
    mutating func recordIDOption(_ name: String, _ kind: String) throws -> String? {
        try option(name).map { try Self.checkedRecordID($0, kind) }
    }

    /// `--name ID`, required, checked as `recordID`.
    mutating func requiredRecordIDOption(_ name: String, _ kind: String) throws -> String {
        try Self.checkedRecordID(try requiredOption(name), kind)
    }

    static func checkedRecordID(_ text: String, _ kind: String) throws -> String {
        guard Identifier.normalizedPrefix(text) != nil else {
            throw CommandLineError.usage("'\(text.prefix(40))' is not a \(kind) id (a UUID or a prefix of one)")
        }
        return text
    }

    mutating func date(_ name: String) throws -> CivilDate? {
        guard let text = try option(name) else { return nil }
        guard let date = CivilDate(text) else {
            throw CommandLineError.usage("\(name) '\(text.prefix(40))' is not a date: use YYYY-MM-DD, e.g. 2026-12-12")
        }
        return date
    }

    /// `--limit N`: a whole number from 1 on, or `nil` when absent.
    mutating func limit() throws -> Int? {
        guard let text = try option("--limit") else { return nil }
        guard let limit = Int(text), limit >= 1 else {
            throw CommandLineError.usage("--limit '\(text.prefix(40))' is not a whole number from 1 on")
        }
        return limit
    }

    mutating func requiredOption(_ name: String) throws -> String {
        guard let value = try option(name) else { throw CommandLineError.usage("missing \(name)") }
        return value
    }

    mutating func requiredDate(_ name: String) throws -> CivilDate {
        guard let date = try date(name) else { throw CommandLineError.usage("missing \(name) YYYY-MM-DD") }
        return date
    }
}
