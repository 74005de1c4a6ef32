/// One piece of ticket text: a run of letters, a run of ASCII digits, or a single other character.
///
/// Letters and digits are separate tokens even when they touch, so `TP1351`, `12DEC2026` and
/// `2027-01-05T10:31` read the same way as their spaced forms; `touchesPrevious` keeps the
/// difference where it matters (a seat `12A` is one word, `12 A` is two).
struct TicketToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case letters, digits, symbol }

    let kind: Kind
    let text: String
    /// `text` lowercased, for matching labels printed in any case.
    let folded: String
    /// Zero-based line number: a value is looked for on its label's line or the next one.
    let line: Int
    /// Where on its line it starts, in characters (Unicode scalars) from the line's start: what
    /// puts a value under its label when poppler lays a table out in columns.
    let column: Int
    /// True when no whitespace separates this token from the previous one.
    let touchesPrevious: Bool

    var isWord: Bool { kind != .symbol }

    /// Only ASCII capitals: IATA codes and references are printed that way, and `Ä` is not one.
    var isUppercaseASCII: Bool {
        kind == .letters && text.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }

    /// The value of a digits token (nil for others, or past nine digits, which no field needs).
    var number: Int? {
        guard kind == .digits, text.utf8.count <= 9 else { return nil }
        return Int(text)
    }
}

/// Ticket text cut into tokens, with the look-around helpers the field scanners share.
struct TicketText: Sendable {
    let tokens: [TicketToken]
    /// Whether the journey departs from the United States (month-first numeric dates), when the
    /// place it departs from is known: it decides a slashed date both readings fit.
    var departsFromTheUnitedStates: Bool?

    /// How much text is read: a ticket's facts are on its first page, and a bound keeps a
    /// document with hundreds of pages of text from costing seconds.
    static let maximumScalars = 100_000

    init(_ text: String) {
        var scanner = Tokenizer()
        for scalar in text.unicodeScalars.prefix(Self.maximumScalars) { scanner.consume(scalar) }
        scanner.flush()
        tokens = scanner.tokens
    }

    func token(at index: Int) -> TicketToken? {
        tokens.indices.contains(index) ? tokens[index] : nil
    }

    /// True when `index` begins a word: a letters or digits token not glued to a previous one.
    func startsWord(_ index: Int) -> Bool {
        guard let token = token(at: index), token.isWord else { return false }
        guard token.touchesPrevious, let previous = self.token(at: index - 1) else { return true }
        return !previous.isWord
    }

    /// True when the token at `index` is the last letters/digits token of its word.
    func endsWord(_ index: Int) -> Bool {
        guard let next = token(at: index + 1) else { return true }
        return !(next.touchesPrevious && next.isWord)
    }

    /// True when `index` is a symbol token whose text is one of `symbols`.
    func isSymbol(_ index: Int, _ symbols: Set<String>) -> Bool {
        guard let token = token(at: index), token.kind == .symbol else { return false }
        return symbols.contains(token.text)
    }

    /// The letters and digits glued together from `index` (`X7K2QP`), and the index after them.
    func word(at index: Int) -> (text: String, end: Int) {
        var end = index
        var text = ""
        while let token = token(at: end), token.isWord, end == index || token.touchesPrevious {
            text += token.text
            end += 1
        }
        return (text, end)
    }

    /// The tokens in `range` as printed: a space where the text had whitespace, none otherwise.
    func joined(_ range: Range<Int>) -> String {
        var text = ""
        for index in range {
            if index > range.lowerBound, !tokens[index].touchesPrevious { text += " " }
            text += tokens[index].text
        }
        return text
    }
}

// MARK: - Labels

/// A set of labels, each written as plain text (`"booking reference"`, `"check-in"`) and matched
/// token by token in any case, across any whitespace, and only as whole words.
struct TicketLabels: Sendable {
    let phrases: [[String]]
    /// The phrases' first and last tokens, to pass over most of the text with one lookup.
    let firstPieces: Set<String>
    let lastPieces: Set<String>

    init(_ phrases: String...) {
        // Longest first, so "booking date" wins over "date" where both end at the same token.
        self.phrases = phrases.map { TicketText($0).tokens.map(\.folded) }.sorted { $0.count > $1.count }
        firstPieces = Set(self.phrases.compactMap(\.first))
        lastPieces = Set(self.phrases.compactMap(\.last))
    }
}

extension TicketText {
    /// The index after the label from `labels` that starts at `index`, if one does.
    func matchLabel(_ labels: TicketLabels, at index: Int) -> Int? {
        guard let token = token(at: index), labels.firstPieces.contains(token.folded), startsWord(index) else { return nil }
        for phrase in labels.phrases where matches(phrase, at: index) { return index + phrase.count }
        return nil
    }

    /// The index where a label from `labels` ending at `last` (inclusive) starts, if one does.
    func matchLabel(_ labels: TicketLabels, endingAt last: Int) -> Int? {
        guard let token = token(at: last), labels.lastPieces.contains(token.folded) else { return nil }
        for phrase in labels.phrases where last - phrase.count + 1 >= 0 {
            let start = last - phrase.count + 1
            if startsWord(start), matches(phrase, at: start) { return start }
        }
        return nil
    }

    /// The first label from `labels` at or after `index`: where it starts and the index after it.
    func firstLabel(_ labels: TicketLabels, from index: Int = 0) -> (start: Int, end: Int)? {
        var start = index
        while start < tokens.count {
            if let end = matchLabel(labels, at: start) { return (start, end) }
            start += 1
        }
        return nil
    }

    private func matches(_ phrase: [String], at start: Int) -> Bool {
        guard start >= 0, start + phrase.count <= tokens.count else { return false }
        for (offset, piece) in phrase.enumerated() where tokens[start + offset].folded != piece { return false }
        // "ref" must not match the start of "REF123" nor "pnr" the end of "XPNR".
        let last = start + phrase.count - 1
        return tokens[last].kind == .symbol || endsWord(last)
    }
}

// MARK: - Tokenizer

private struct Tokenizer {
    private enum Class { case letter, digit, space, lineBreak, symbol }

    var tokens: [TicketToken] = []
    private var pending = String.UnicodeScalarView()
    private var pendingKind: TicketToken.Kind?
    private var line = 0
    /// Scalars read on the current line, and where the pending token started.
    private var offset = 0
    private var pendingColumn = 0
    /// Whether the next token follows the previous one without whitespace.
    private var touching = false

    mutating func consume(_ scalar: Unicode.Scalar) {
        defer { offset += 1 }
        switch Self.classify(scalar) {
        case .space:
            flush()
            touching = false
        case .lineBreak:
            flush()
            line += 1
            offset = -1
            touching = false
        case .letter:
            append(scalar, as: .letters)
        case .digit:
            append(scalar, as: .digits)
        case .symbol:
            flush()
            emit(String(Character(scalar)), kind: .symbol, column: offset)
        }
    }

    mutating func flush() {
        guard let kind = pendingKind else { return }
        emit(String(pending), kind: kind, column: pendingColumn)
        pending = String.UnicodeScalarView()
        pendingKind = nil
    }

    private mutating func append(_ scalar: Unicode.Scalar, as kind: TicketToken.Kind) {
        if pendingKind != kind { flush() }
        if pendingKind == nil { pendingColumn = offset }
        pending.append(scalar)
        pendingKind = kind
    }

    private mutating func emit(_ text: String, kind: TicketToken.Kind, column: Int) {
        tokens.append(TicketToken(kind: kind, text: text, folded: text.lowercased(), line: line, column: column,
                                  touchesPrevious: touching && !tokens.isEmpty))
        touching = true
    }

    private static func classify(_ scalar: Unicode.Scalar) -> Class {
        if scalar.isASCII {
            switch UInt8(scalar.value) {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return .digit
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): return .letter
            // \r counts as a space so that \r\n is one line break, not two.
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): return .space
            // Poppler separates pages with a form feed.
            case UInt8(ascii: "\n"), 0x0B, 0x0C: return .lineBreak
            default: return .symbol
            }
        }
        if scalar == "\u{85}" || scalar == "\u{2028}" || scalar == "\u{2029}" { return .lineBreak }
        let properties = scalar.properties
        if properties.isWhitespace { return .space }  // no-break spaces included
        // Marks belong to their letter, so a decomposed "é" stays inside "Apolónia".
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return .letter
        default: return properties.isAlphabetic ? .letter : .symbol
        }
    }
}
