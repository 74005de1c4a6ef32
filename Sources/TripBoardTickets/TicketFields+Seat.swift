extension TicketText {
    /// The seat: `14C` on a boarding pass, `7/42` (coach 7, seat 42) on a train ticket that
    /// prints its coach, `F/12` (row F) at a venue — the first one printed, which is the first
    /// passenger's.
    ///
    /// A seat is a word of 1–3 digits, and perhaps one capital letter, right after a seat label
    /// ("SEAT 14C", "Sitzplatz 45", "Place 061", "座席 7A") on its line, or first on the next
    /// line when the label ends its own (a value printed under its label). Anything else after a
    /// label — "Place of issue", "Seat reservation" — is no seat, and the next label is tried.
    func seat() -> String? {
        var from = 0
        while let label = firstLabel(Self.seatLabels, from: from) {
            let line = tokens[label.start].line
            if let (seat, index) = seatValue(after: label.end, labelStart: label.start, labelLine: line) {
                guard let coach = coach(before: label.start, line: line, seatValueIndex: index) else { return seat }
                return coach + "/" + seat
            }
            from = label.end
        }
        return nil
    }

    /// The seat-shaped word after a label ending before `index`, and where it starts: on the
    /// label's line, or — when the label ends its line, heading a column — the word of the next
    /// line in the label's column (`Gate  Seat` over `14  12A`: the second).
    private func seatValue(after index: Int, labelStart: Int, labelLine: Int) -> (String, Int)? {
        var index = index
        while let token = token(at: index), token.line == labelLine,
              token.kind == .symbol && Self.seatFillerSymbols.contains(token.text) || Self.seatFillerWords.contains(token.folded) {
            index += 1
        }
        guard let token = token(at: index), token.isWord, token.line <= labelLine + 1 else { return nil }
        if token.line > labelLine {
            guard let column = wordStarts(onLineOf: labelStart).firstIndex(of: labelStart) else { return nil }
            let below = wordStarts(onLineOf: index)
            guard below.indices.contains(column) else { return nil }
            index = below[column]
        }
        let word = word(at: index)
        return Self.isSeatShaped(word.text) ? (word.text, index) : nil
    }

    /// Where each word of the line holding `index` starts, in order.
    private func wordStarts(onLineOf index: Int) -> [Int] {
        let line = tokens[index].line
        var start = index
        while start > 0, tokens[start - 1].line == line { start -= 1 }
        var starts: [Int] = []
        var current = start
        while let token = token(at: current), token.line == line {
            if startsWord(current) { starts.append(current) }
            current += 1
        }
        return starts
    }

    /// The coach printed before the seat label on its line (`Coach 7 Seat 42`, `Voiture 12
    /// Place 061`), or — when both labels head columns — the first word of the line under them
    /// (`Coach Seat` over `7 42`).
    private func coach(before labelStart: Int, line: Int, seatValueIndex: Int) -> String? {
        var index = labelStart - 1
        while index >= 0, tokens[index].line == line {
            if matchLabel(Self.coachLabels, endingAt: index) != nil {
                var valueIndex = index + 1
                if tokens[seatValueIndex].line > line {
                    // Columns: the coach's value is the word before the seat's on the next line.
                    let below = wordStarts(onLineOf: seatValueIndex)
                    guard let seatColumn = below.firstIndex(of: seatValueIndex), seatColumn > 0 else { return nil }
                    valueIndex = below[seatColumn - 1]
                } else {
                    while let token = token(at: valueIndex), token.kind == .symbol, Self.seatFillerSymbols.contains(token.text) { valueIndex += 1 }
                }
                // 1–3 digits (a coach), or 1–2 capitals (a row).
                guard let token = token(at: valueIndex), endsWord(valueIndex),
                      token.kind == .digits && token.text.utf8.count <= 3 || token.isUppercaseASCII && token.text.utf8.count <= 2 else { return nil }
                return token.text
            }
            index -= 1
        }
        return nil
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
        "sitzplatz", "platz", "place", "siège", "asiento", "assento", "lugar", "posto", "座席")
    /// A train's coach, or a venue's row.
    private static let coachLabels = TicketLabels(
        "coach", "carriage", "car", "wagen", "voiture", "coche", "carruagem", "carrozza", "row", "reihe", "fila", "rangée")
    private static let seatFillerSymbols: Set<String> = [":", ".", "#", "-", "№"]
    private static let seatFillerWords: Set<String> = ["no", "nr", "n"]
}
