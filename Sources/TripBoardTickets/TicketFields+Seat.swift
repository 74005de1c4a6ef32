extension TicketText {
    /// The seat: `14C` on a boarding pass, `7/42` (coach 7, seat 42) on a train ticket that
    /// prints its coach, `F/12` (row F) at a venue — the first one printed, which is the first
    /// passenger's.
    ///
    /// A seat is a word of 1–3 digits, and perhaps one capital letter, right after a seat label
    /// ("SEAT 14C", "Sitzplatz 45", "Place 061", "座席 7A") on its line, or — when the label ends
    /// its line, heading a column — the word of the next line with text nearest under it. Anything else
    /// after a label ("Place of issue", "Seat reservation") is no seat, and the next label is
    /// tried. The words that also name streets and squares ("Platz", "Place", "Lugar", "Posto")
    /// count only where a seat label stands: first on their line, after a separator, or after a
    /// coach ("Potsdamer Platz 1" is an address).
    func seat() -> String? {
        var from = 0
        while let label = firstLabel(Self.seatLabels, from: from) {
            from = label.end
            let line = tokens[label.start].line
            guard !isQualifiedAway(label.start),
                  isStrongSeatLabel(label) || standsAlone(label.start) || coachValue(before: label.start, line: line) != nil,
                  let (seat, index) = seatValue(after: label.end, labelStart: label.start, labelLine: line) else { continue }
            let coach = tokens[index].line > line ? coachInColumn(before: label.start, line: line, nextLine: index)
                                                  : coachValue(before: label.start, line: line)
            return coach.map { $0 + "/" + seat } ?? seat
        }
        return nil
    }

    /// The seat-shaped word after a label ending before `index`, and where it starts: on the
    /// label's line, or the word of the next line nearest under the label.
    private func seatValue(after index: Int, labelStart: Int, labelLine: Int) -> (String, Int)? {
        var index = index
        while let token = token(at: index), token.line == labelLine,
              token.kind == .symbol && Self.seatFillerSymbols.contains(token.text) || Self.seatFillerWords.contains(token.folded) {
            index += 1
        }
        // The next line with text: a producer that spaces its lines leaves a blank one between.
        guard let token = token(at: index), token.isWord, token.line <= labelLine + 2 else { return nil }
        if token.line > labelLine {
            guard let under = wordNearest(column: tokens[labelStart].column, onLineOf: index) else { return nil }
            index = under
        }
        let word = word(at: index)
        return Self.isSeatShaped(word.text) ? (word.text, index) : nil
    }

    /// The coach (or row) printed before the seat label on its line: `Coach 7 Seat 42`,
    /// `Voiture 12 Place 061`, `Wagen 7, Platz 45`, `Row F Seat 12`.
    private func coachValue(before labelStart: Int, line: Int) -> String? {
        var index = labelStart - 1
        while index >= 0, tokens[index].line == line {
            if matchLabel(Self.coachLabels, endingAt: index) != nil {
                var valueIndex = index + 1
                while let token = token(at: valueIndex), token.kind == .symbol, Self.seatFillerSymbols.contains(token.text) { valueIndex += 1 }
                return valueIndex < labelStart ? coachShaped(valueIndex) : nil
            }
            index -= 1
        }
        return nil
    }

    /// The coach when a coach label heads a column beside the seat's (`Coach  Seat` over
    /// `7      42`): the word of the seat's line nearest under the coach label.
    private func coachInColumn(before labelStart: Int, line: Int, nextLine: Int) -> String? {
        var index = labelStart - 1
        while index >= 0, tokens[index].line == line {
            if let start = matchLabel(Self.coachLabels, endingAt: index) {
                return wordNearest(column: tokens[start].column, onLineOf: nextLine).flatMap(coachShaped)
            }
            index -= 1
        }
        return nil
    }

    /// 1–3 digits (a coach) or 1–2 capitals (a row), ending its word at `index`.
    private func coachShaped(_ index: Int) -> String? {
        guard let token = token(at: index), endsWord(index),
              token.kind == .digits && token.text.utf8.count <= 3 || token.isUppercaseASCII && token.text.utf8.count <= 2 else { return nil }
        return token.text
    }

    /// The start of the word on the line of `index` whose first character is nearest `column`.
    private func wordNearest(column: Int, onLineOf index: Int) -> Int? {
        let line = tokens[index].line
        var start = index
        while start > 0, tokens[start - 1].line == line { start -= 1 }
        var best: Int?
        var current = start
        while let token = token(at: current), token.line == line {
            if startsWord(current), best.map({ abs(token.column - column) < abs(tokens[$0].column - column) }) ?? true { best = current }
            current += 1
        }
        return best
    }

    /// True when the word before the label makes it something else: a child seat, a booster seat.
    private func isQualifiedAway(_ index: Int) -> Bool {
        guard index > 0, tokens[index - 1].line == tokens[index].line else { return false }
        return Self.otherSeats.contains(tokens[index - 1].folded)
    }

    private func isStrongSeatLabel(_ label: (start: Int, end: Int)) -> Bool {
        !(label.end - label.start == 1 && Self.weakSeatLabels.contains(tokens[label.start].folded))
    }

    /// True when the token at `index` is first on its line or follows a separator set off by a space.
    private func standsAlone(_ index: Int) -> Bool {
        guard index > 0, tokens[index - 1].line == tokens[index].line else { return true }
        let previous = tokens[index - 1]
        return previous.kind == .symbol && Self.separators.contains(previous.text) && !tokens[index].touchesPrevious
    }

    /// 1–3 digits and perhaps one capital letter: `14C`, `061`, `7A`.
    static func isSeatShaped(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let digits = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
        guard (1...3).contains(digits) else { return false }
        let rest = bytes.dropFirst(digits)
        return rest.isEmpty || (rest.count == 1 && rest.first.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } == true)
    }

    private static let seatLabels = TicketLabels(
        "seat", "seat no", "seat number", "seat nr",
        // German, French, Spanish, Portuguese, Italian and Japanese tickets.
        "sitzplatz", "platz", "place", "siège", "asiento", "assento", "lugar", "posto", "plaza", "plaats", "zitplaats", "座席")
    /// Seat labels that are also words of addresses.
    private static let weakSeatLabels: Set<String> = ["platz", "place", "lugar", "posto", "plaza", "plaats"]
    /// A train's coach, or a venue's row.
    private static let coachLabels = TicketLabels(
        "coach", "carriage", "car", "wagen", "voiture", "coche", "carruagem", "carrozza", "rijtuig", "row", "reihe", "fila",
        "rangée", "号車")
    private static let seatFillerSymbols: Set<String> = [":", ".", "#", "-", "№"]
    private static let seatFillerWords: Set<String> = ["no", "nr", "n"]
    private static let separators: Set<String> = [",", "|", "/", ";", "·", "•"]
    private static let otherSeats: Set<String> = ["child", "baby", "booster", "infant", "kinder", "enfant"]
}
