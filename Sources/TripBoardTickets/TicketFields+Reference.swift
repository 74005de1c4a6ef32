extension TicketText {
    /// The booking reference: 5–8 capitals and digits, at least one a letter, after a label.
    ///
    /// Specific labels ("booking reference", "PNR") are tried before the bare "reference" and
    /// "ref", which also introduce payment and customer references.
    ///
    /// After a specific label, the first word may also be a confirmation number as hotels and
    /// car-rental firms print them: digits (`84122394`), or groups joined by `.` or `-`
    /// (`4012.345.678`, `LX-7731`) — kept as printed, since that is how a front desk reads it.
    func bookingReference() -> String? {
        for (labels, allowsNumbers) in [(Self.specificReferenceLabels, true), (Self.genericReferenceLabels, false)] {
            var from = 0
            while let label = firstLabel(labels, from: from) {
                if let value = referenceValue(after: label.end, labelLine: tokens[label.start].line, allowsNumbers: allowsNumbers) {
                    return value
                }
                from = label.end
            }
        }
        return nil
    }

    /// The value after a label ending before `index`: the first fitting word among the next three,
    /// on the label's line or the next with text (where a value printed under its label is).
    private func referenceValue(after index: Int, labelLine: Int, allowsNumbers: Bool) -> String? {
        var index = skipReferenceFillers(from: index)
        var wordsSeen = 0
        while wordsSeen < 3, let token = token(at: index), token.line <= labelLine + 2 {
            guard token.isWord else {
                index += 1
                continue
            }
            let word = word(at: index)
            // `MEMMO-123`: a reference printed in groups is the whole of it, not its first group.
            if allowsNumbers, wordsSeen == 0, let number = confirmationNumber(at: index), number != word.text { return number }
            if Self.isReferenceShaped(word.text),
               wordsSeen == 0 || isLaterReference(word.text, at: index, labelLine: labelLine) {
                return word.text
            }
            if allowsNumbers, wordsSeen == 0, let number = confirmationNumber(at: index) { return number }
            wordsSeen += 1
            index = word.end
        }
        return nil
    }

    /// Whether a word past the first after a label is the value rather than a neighbouring column
    /// ("Booking reference   Flight" over "X7K2QP   TP1351") or prose ("Reservation details: SINGLE
    /// ROOM"): it is not a flight number, and it has a digit or sits on the line under the label.
    private func isLaterReference(_ text: String, at index: Int, labelLine: Int) -> Bool {
        guard !isFlightNumber(at: index) else { return false }
        return tokens[index].line > labelLine || text.utf8.contains { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// A confirmation number starting at `index`: 6–20 capitals and digits in one word or in
    /// groups glued together by single `.` or `-` — with at least four digits in one word, one
    /// in groups (`MEMMO-123`) — not a date (`12.12.2026`) and ending its word.
    private func confirmationNumber(at index: Int) -> String? {
        var end = index
        var groups: [String] = []
        var text = ""
        while true {
            let group = word(at: end)
            guard !group.text.isEmpty else { return nil }
            groups.append(group.text)
            text += group.text
            end = group.end
            guard isSymbol(end, [".", "-"]), let next = token(at: end + 1), next.isWord, next.touchesPrevious,
                  tokens[end].touchesPrevious else { break }
            text += tokens[end].text
            end += 1
        }
        let characters = groups.joined().utf8
        let digits = characters.filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
        guard (6...20).contains(characters.count), digits >= (groups.count > 1 ? 1 : 4),
              characters.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }),
              !(groups.count == 3 && groups.allSatisfy { $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
                && date(at: index) != nil) else { return nil }
        return text
    }

    /// Skips `:`, `#`, `no.` and further label words, as in "Booking reference (PNR): X7K2QP".
    private func skipReferenceFillers(from start: Int) -> Int {
        var index = start
        while let token = token(at: index), index - start < 8 {
            if token.kind == .symbol && Self.referenceFillerSymbols.contains(token.text)
                || Self.referenceFillerWords.contains(token.folded) {
                index += 1
            } else if let end = matchLabel(Self.specificReferenceLabels, at: index)
                        ?? matchLabel(Self.genericReferenceLabels, at: index) {
                index = end
            } else {
                break
            }
        }
        return index
    }

    /// 5–8 ASCII capitals and digits with at least one letter, and not a word a ticket prints.
    static func isReferenceShaped(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let isLetter = { (byte: UInt8) in byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        return (5...8).contains(bytes.count) && bytes.allSatisfy { isLetter($0) || isDigit($0) }
            && bytes.contains(where: isLetter) && !referenceLookalikes.contains(text)
    }

    private static let specificReferenceLabels = TicketLabels(
        "booking reference", "booking ref", "pnr", "record locator", "confirmation number", "confirmation code",
        "confirmation no", "booking code", "booking number", "booking id", "reservation number",
        "reservation code", "reservation reference",
        // The same labels on Portuguese, Spanish, French, German, Italian, Dutch and Japanese tickets.
        "código de reserva", "localizador", "référence de dossier", "référence de réservation", "réf de réservation",
        "référence dossier", "buchungscode", "buchungsnummer", "reservierungsnummer", "auftragsnummer",
        "número de reserva", "número de confirmação", "número de confirmación", "número da reserva",
        "numéro de réservation", "numéro de confirmation", "codice pnr", "codice prenotazione", "numero di prenotazione",
        "numero prenotazione",
        "boekingsnummer", "reserveringsnummer", "boekingscode", "予約番号", "確認番号")
    private static let genericReferenceLabels = TicketLabels("reference", "ref", "référence", "réf", "referência", "referencia",
                                                             "riferimento", "referentie")
    private static let referenceFillerSymbols: Set<String> = [":", ".", "#", "-", "/", "|", "(", ")", "º", "°"]
    private static let referenceFillerWords: Set<String> = ["no", "nr", "n", "number", "num", "code", "is"]
    /// Capitalised words that sit where a reference would: headings and column titles.
    private static let referenceLookalikes: Set<String> = [
        "BOOKING", "NUMBER", "RECORD", "LOCATOR", "STATUS", "TICKET", "TICKETS", "FLIGHT", "TRAIN", "HOTEL",
        "CODE", "NAME", "SEAT", "CLASS", "GATE", "FROM", "DATE", "TIME", "ISSUED", "PRINTED", "VALID",
        "ADULT", "ADULTS", "CHILD", "GUEST", "GUESTS", "ROOM", "ROOMS", "NIGHTS", "COACH", "ECONOMY",
        "BUSINESS", "FIRST", "SECOND", "TOTAL", "PRICE", "FARE", "PAID", "PASS", "DETAILS", "NONE",
        "CARRIER", "TERMINAL", "ARRIVAL", "DEPART", "ORIGIN",
    ]
}
