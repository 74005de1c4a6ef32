package import TripBoardSystem

/// A command line parsed against its `Grammar`: options are taken by name wherever they stand
/// (before or after the command words), then the positional words in order; whatever positional
/// word is left at the end is an error, never silently ignored.
///
/// The rules (docs/cli.md, Conventions): `--name VALUE` and `--name=VALUE` are the same; the last
/// of a repeated option wins and a repeated flag counts once; `-h`/`--help` anywhere asks for
/// help; short options may be grouped (`-qh` is `-q -h`); options of a one-of group
/// (`ExclusiveGroup`) exclude each other; after `--` every word is positional. A value is taken
/// as it is, even when it starts with `-` — except `--` or a word that is itself an option of the
/// command (a group of its short options included): `trip add --name --start D` is a forgotten
/// name ("--name needs a value"), not a trip called "--start"; `--name=--start` passes such a value.
public struct Arguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    private var positionals: [String] = []
    /// `-h` or `--help` was given.
    package private(set) var wantsHelp = false
    /// The first mistake met while parsing (reported before anything is run).
    package private(set) var mistake: CommandLineError?
    /// The grammar the words were parsed against (nil: an empty command line made in code).
    private let grammar: Grammar?
    /// Set for commands that take a secret (on standard input): their errors then repeat no
    /// argument, since a word such a command did not expect is most likely the secret itself.
    package let redactsArguments: Bool
    /// What a redacted error says instead of the argument.
    package static let redactionNote = "not shown: secrets are read only from standard input, never from the command line"

    /// No arguments at all: for a context made in code.
    public init() {
        grammar = nil
        redactsArguments = false
    }

    /// Parses `words` against `grammar`. Never throws: the first mistake is kept in `mistake`
    /// (and thrown by `checked()`), so that the words can still be looked at — to find which
    /// command was meant, or to print its help.
    package init(_ words: [String], grammar: Grammar, redacting: Bool = false) {
        self.grammar = grammar
        redactsArguments = redacting
        var index = 0
        var afterSeparator = false
        var pending: [String] = []
        while !pending.isEmpty || index < words.count {
            let word: String
            if pending.isEmpty {
                word = words[index]
                index += 1
                if afterSeparator || word == "-" || !word.hasPrefix("-") {
                    positionals.append(word)
                    continue
                }
                if word == "--" {
                    afterSeparator = true
                    continue
                }
                if let group = Self.shortGroup(word, grammar: grammar) {
                    pending = group
                    continue
                }
            } else {
                word = pending.removeFirst()
            }
            if word == CommonOptions.help.name || word == CommonOptions.help.short {
                wantsHelp = true
                continue
            }
            let (name, inlineValue) = Self.split(word)
            guard let option = grammar.option(named: name) else {
                note(unknownOption(name))
                continue
            }
            guard option.takesValue else {
                if inlineValue != nil { note(.usage("\(option.name) takes no value")) }
                flags.insert(option.name)
                continue
            }
            if let inlineValue {
                values[option.name] = inlineValue
            } else if !pending.isEmpty {
                // `-xVALUE` in a group: the rest of the group is the value (POSIX).
                values[option.name] = pending.map { String($0.dropFirst()) }.joined()
                pending = []
            } else if index < words.count, !isOption(words[index]) {
                values[option.name] = words[index]
                index += 1
            } else {
                note(.usage("\(option.name) needs a value"))
            }
        }
        let given = flags.union(values.keys)
        for group in grammar.exclusiveGroups {
            if let conflict = group.conflict(among: given) { note(.usage(conflict)) }
        }
    }

    /// `-qh` → ["-q", "-h"]: a word of several short options grouped POSIX-style, when every
    /// letter up to the first one that takes a value is a short option of `grammar` (or `-h`);
    /// the letters after an option that takes a value are that value (`-xVALUE`). `nil` for
    /// anything else (a long option, a single short option, a word with a letter that is none).
    static func shortGroup(_ word: String, grammar: Grammar) -> [String]? {
        guard word.count > 2, word.hasPrefix("-"), !word.hasPrefix("--") else { return nil }
        var group: [String] = []
        var inValue = false
        for letter in word.dropFirst() {
            let short = "-" + String(letter)
            group.append(short)
            if inValue { continue }
            guard short == CommonOptions.help.short || grammar.option(named: short) != nil else { return nil }
            inValue = grammar.option(named: short)?.takesValue ?? false
        }
        return group
    }

    /// For a word that reads as a group of short options but holds a letter that is none of
    /// `grammar`'s: that letter (`-x` in `-qx`). Nil when its first letter is no short option either.
    static func unknownLetterInGroup(_ word: String, grammar: Grammar) -> String? {
        guard word.count > 2, word.hasPrefix("-"), !word.hasPrefix("--") else { return nil }
        let shorts = word.dropFirst().map { "-" + String($0) }
        let known = { (short: String) in short == CommonOptions.help.short || grammar.option(named: short) != nil }
        guard let first = shorts.first, known(first) else { return nil }
        return shorts.first { !known($0) }
    }

    /// `--name=VALUE` → ("--name", "VALUE"); anything else → (word, nil).
    private static func split(_ word: String) -> (String, String?) {
        guard word.hasPrefix("--"), let equals = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }

    /// Whether `word`, standing where a value is expected, is an option instead: `--`, the help
    /// flags, or an option of this grammar (`--start`, `--start=D`, `-q`).
    private func isOption(_ word: String) -> Bool {
        if word == "--" || word == CommonOptions.help.name || word == CommonOptions.help.short { return true }
        guard let grammar else { return false }
        return grammar.option(named: Self.split(word).0) != nil || Self.shortGroup(word, grammar: grammar) != nil
    }

    private mutating func note(_ error: CommandLineError) {
        if mistake == nil { mistake = error }
    }

    private func unknownOption(_ name: String) -> CommandLineError {
        if redactsArguments { return .usage("unknown option (\(Self.redactionNote))") }
        var message = "unknown option \(terminalSafe(String(name.prefix(60))))"
        let suggestion = grammar.flatMap { grammar in
            Suggestion.closest(to: name, among: grammar.options.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) })
        }
        if let grammar, suggestion?.hasPrefix("--") != true, let letter = Self.unknownLetterInGroup(name, grammar: grammar) {
            // `-qx`: short options may be grouped, and this group holds one that is none.
            return .usage("unknown option \(terminalSafe(letter)) in \(terminalSafe(String(name.prefix(60))))")
        }
        if let suggestion { message += " (did you mean \(suggestion)?)" }
        return .usage(message)
    }

    /// The positional words not taken yet (command selection reads them).
    package var remainingPositionals: [String] { positionals }

    /// Drops the first `count` positional words (the command's own words).
    package mutating func dropCommandWords(_ count: Int) { positionals.removeFirst(min(count, positionals.count)) }

    /// Throws the first mistake met while parsing, if any.
    package func checked() throws {
        if let mistake { throw mistake }
    }

    // MARK: - What commands take

    /// The value of `--name`, or `nil` when it was not given.
    package func option(_ name: String) throws -> String? {
        assert(grammar?.option(named: name)?.takesValue ?? true, "\(name) is not declared as an option with a value")
        return values[name]
    }

    /// Whether the flag `--name` was given.
    package func flag(_ name: String) -> Bool {
        assert(grammar.map { $0.option(named: name)?.takesValue == false } ?? true, "\(name) is not declared as a flag")
        return flags.contains(name)
    }

    /// Takes the next positional word, or `nil` when there is none.
    package mutating func nextPositional() -> String? {
        positionals.isEmpty ? nil : positionals.removeFirst()
    }

    /// Takes the next positional word, which must be there.
    package mutating func positional(_ what: String) throws -> String {
        guard let word = nextPositional() else { throw CommandLineError.usage("missing \(what)") }
        return word
    }

    /// Fails on a positional word not taken (options were checked when parsed).
    package func finish() throws {
        try checked()
        guard let first = positionals.first else { return }
        if redactsArguments { throw CommandLineError.usage("unexpected argument (\(Self.redactionNote))") }
        throw CommandLineError.usage("unexpected argument '\(terminalSafe(String(first.prefix(60))))'")
    }

    // MARK: - Typed values

    /// Takes the next positional word as the id (or id prefix) of a `kind` record. Its form is
    /// checked here, with the rest of the command line, so that a command refused for its
    /// arguments never reaches the disk (the store then finds the record).
    package mutating func recordID(_ kind: String) throws -> String {
        try Self.checkedRecordID(try positional("\(kind) ID"), kind)
    }

    /// `--name ID` (optional) holding the id or id prefix of a `kind` record, checked as `recordID`.
    package func recordIDOption(_ name: String, _ kind: String) throws -> String? {
        try option(name).map { try Self.checkedRecordID($0, kind) }
    }

    /// `--name ID`, required, checked as `recordID`.
    package func requiredRecordIDOption(_ name: String, _ kind: String) throws -> String {
        try Self.checkedRecordID(try requiredOption(name), kind)
    }

    /// The zone `--zone NAME` names — one a booking can keep and sync
    /// (`TimeZoneRules.isPortableZoneName`) — or the usage error saying why not.
    package static func checkedZone(_ name: String, option: String = "--zone") throws -> TimeZoneRules {
        guard TimeZoneRules.isPortableZoneName(name) || !TimeZoneRules.isZoneName(name) else {
            throw CommandLineError.usage("""
                \(option) '\(name.prefix(40))' is not a zone a booking can keep (it means something else on each \
                computer); give an IANA name such as Europe/Lisbon
                """)
        }
        do { return try TimeZoneRules.named(name) } catch { throw CommandLineError.usage("\(option) \(error)") }
    }

    package static func checkedRecordID(_ text: String, _ kind: String) throws -> String {
        guard Identifier.normalizedPrefix(text) != nil else {
            let article = kind.first.map { "aeiou".contains($0) } == true ? "an" : "a"
            throw CommandLineError.usage("'\(text.prefix(40))\(text.count > 40 ? "…" : "")' is not \(article) \(kind) id (a UUID or a prefix of one)")
        }
        return text
    }

    package func date(_ name: String) throws -> CivilDate? {
        guard let text = try option(name) else { return nil }
        guard let date = CivilDate(text) else {
            if let missing = Self.missingDay(text) { throw CommandLineError.usage("\(name) '\(text)' \(missing)") }
            throw CommandLineError.usage("\(name) '\(text.prefix(40))' is not a date: use YYYY-MM-DD, e.g. 2026-12-12")
        }
        return date
    }

    /// For text in the form YYYY-MM-DD that names no day (`2027-02-30`, `2027-13-01`), what is
    /// wrong with it; nil for anything else.
    package static func missingDay(_ text: String) -> String? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts.map(\.utf8.count) == [4, 2, 2],
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        guard (1...12).contains(month) else { return "does not exist: there is no month \(parts[1])" }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard !(1...days).contains(day) else { return nil }
        return "does not exist: \(parts[0])-\(parts[1]) has \(days) days"
    }

    /// `--limit N`: a whole number from 1 on, or `nil` when absent.
    package func limit() throws -> Int? {
        guard let text = try option("--limit") else { return nil }
        guard let limit = Int(text), limit >= 1 else {
            throw CommandLineError.usage("--limit '\(text.prefix(40))' is not a whole number from 1 on")
        }
        return limit
    }

    package func requiredOption(_ name: String) throws -> String {
        guard let value = try option(name) else { throw CommandLineError.usage("missing \(name)") }
        return value
    }

    package func requiredDate(_ name: String) throws -> CivilDate {
        guard let date = try date(name) else { throw CommandLineError.usage("missing \(name) YYYY-MM-DD") }
        return date
    }
}

/// Did-you-mean: the known word closest to a mistyped one, if it is close enough to be meant.
package enum Suggestion {
    /// The candidate at the smallest edit distance (insertions, deletions, substitutions and
    /// swaps of neighbours) from `word`, when that distance is at most a third of the word's length
    /// (at least 1, at most 3); ties go to the first candidate.
    package static func closest(to word: String, among candidates: [String]) -> String? {
        let limit = min(3, max(1, word.count / 3))
        var best: (String, Int)?
        for candidate in candidates where candidate != word {
            let distance = editDistance(word, candidate)
            if distance <= limit, distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    /// Optimal string alignment distance over characters.
    package static func editDistance(_ left: String, _ right: String) -> Int {
        let a = Array(left), b = Array(right)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            var next = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                next[j] = min(row[j] + 1, next[j - 1] + 1, row[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    next[j] = min(next[j], previousRow[j - 2] + 1)
                }
            }
            previousRow = row
            row = next
        }
        return row[b.count]
    }
}
