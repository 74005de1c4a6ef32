extension TicketText {
    /// The hotel's (or hostel's, inn's, guest house's) name on a confirmation, as printed:
    /// `Hotel Avenida Palace`, `Lisbon Marriott Hotel`, `Pestana Palace Lisboa`.
    ///
    /// Tried in order of how plainly the text says it: a label (`Hotel: Casa do Bairro`,
    /// `Property name: …`); a title-cased line that names a kind of lodging (`… Hotel`, `Pousada …`)
    /// and nothing else; a phrase that introduces it (`Your stay at Lost Inn Lisbon Hostel`); the
    /// title-cased line under a `Booking confirmation` heading (where Booking.com prints it). Nil
    /// when none fits: a wrong name is worse than the plain "Hotel".
    func lodgingName() -> String? {
        let lines = lineRanges()
        return labelledLodgingName(lines) ?? namingLine(lines) ?? introducedLodgingName(lines) ?? nameUnderHeading(lines)
    }

    /// A hotel's address, from its label (`Address:`, `Adresse`, `Morada`, `Dirección`,
    /// `Indirizzo`, `Adres`, `Anschrift`, `住所`): the rest of the label's line, and the next line
    /// too when the label's line holds no more than the street (an address ends with its city).
    /// Without a label, the lines under `name`, the hotel's name as `lodgingName` read it.
    func lodgingAddress(under name: String?) -> String? { labelledAddress() ?? name.flatMap(addressUnder) }

    private func labelledAddress() -> String? {
        let lines = lineRanges()
        guard let label = firstLabel(Self.addressLabels) else { return nil }
        var end = label.end
        while isSymbol(end, [":"]) { end += 1 }
        let line = tokens[label.start].line
        var text = joined(end..<lines[line].upperBound)
        if line + 1 < lines.count, !lines[line + 1].isEmpty { text += ", " + joined(lines[line + 1]) }
        return text.isEmpty ? nil : text
    }

    /// An address printed without a label, as a letterhead prints it: the lines under the hotel's
    /// name (`Hotel Sonne` over `Hohe Straße 12`, `50667 Köln`, `Deutschland`), up to four, with no
    /// more than two blank lines before each (a producer that spaces its lines prints one between
    /// every two), until a line with a label (`Check-in:`); nil unless they name a place the tables
    /// know.
    private func addressUnder(_ name: String) -> String? {
        let lines = lineRanges()
        guard let nameLine = lines.prefix(Self.headLines).firstIndex(where: { !$0.isEmpty && joined($0).hasSuffix(name) }) else { return nil }
        var parts: [String] = []
        var blanks = 0
        for range in lines.dropFirst(nameLine + 1) {
            if range.isEmpty {
                blanks += 1
                if blanks > 2 { break }
                continue
            }
            guard parts.count < 4, !range.contains(where: { isSymbol($0, [":"]) }) else { break }
            parts.append(joined(range))
            blanks = 0
        }
        let address = parts.joined(separator: ", ")
        return PlaceZones.place(in: address, fromRight: true) == nil ? nil : address
    }

    private static let addressLabels = TicketLabels(
        "address", "hotel address", "property address", "adresse", "anschrift", "morada", "endereço", "dirección", "direccion",
        "indirizzo", "adres", "住所")

    /// `Hotel: Casa do Bairro`: the rest of the label's line (or the next line, for a value printed
    /// under its label). The bare labels need their colon, so `Hotel Avenida Palace` is not read
    /// as the label `Hotel` and the value `Avenida Palace`.
    private func labelledLodgingName(_ lines: [Range<Int>]) -> String? {
        var from = 0
        while let label = firstLabel(Self.lodgingLabels, from: from) {
            from = label.end
            guard isSymbol(label.end, [":"]), startsLine(label.start, lines) else { continue }
            let line = tokens[label.start].line
            let rest = (label.end + 1)..<lines[line].upperBound
            if let name = lodgingName(in: rest, requiringTitleCase: false) { return name }
            if line + 1 < lines.count, let name = lodgingName(in: lines[line + 1], requiringTitleCase: true) { return name }
        }
        return nil
    }

    /// A line among the first ones that is a name and says what kind of place it is: every word
    /// title-cased (or a connector: `do`, `de la`, `&`), a lodging word among them, no digit,
    /// no colon, none of the words of a heading or a label (`Hotel confirmation`, `Hotel address`).
    private func namingLine(_ lines: [Range<Int>]) -> String? {
        for range in lines.prefix(Self.headLines) {
            guard range.contains(where: { Self.lodgingWords.contains(tokens[$0].folded) || isBedAndBreakfast(at: $0) }) else { continue }
            if let name = lodgingName(in: range, requiringTitleCase: true), joined(range) == name { return name }
        }
        return nil
    }

    /// `B&B` (and `B & B`), a kind of lodging spelled in three tokens.
    private func isBedAndBreakfast(at index: Int) -> Bool {
        token(at: index)?.folded == "b" && isSymbol(index + 1, ["&"]) && token(at: index + 2)?.folded == "b"
    }

    /// `Your stay at Lost Inn Lisbon Hostel`, `Welcome to Pestana Palace!`: the title-cased words
    /// after the phrase, up to the first that is not part of a name.
    private func introducedLodgingName(_ lines: [Range<Int>]) -> String? {
        var from = 0
        while let phrase = firstLabel(Self.introducingPhrases, from: from) {
            from = phrase.end
            let line = tokens[phrase.start].line
            if let name = lodgingName(in: phrase.end..<lines[line].upperBound, requiringTitleCase: true, prefixOnly: true) {
                return name
            }
        }
        return nil
    }

    /// The line right under a line that is only a confirmation heading, when it reads as a name.
    private func nameUnderHeading(_ lines: [Range<Int>]) -> String? {
        for (number, range) in lines.prefix(Self.headLines).enumerated() where number + 1 < lines.count {
            guard let end = matchLabel(Self.confirmationHeadings, at: range.lowerBound), end == range.upperBound else { continue }
            let next = lines[number + 1]
            if let name = lodgingName(in: next, requiringTitleCase: true), joined(next) == name { return name }
        }
        return nil
    }

    /// The name the tokens in `range` spell: trimmed of symbols at either end, two to eight words
    /// (one is enough after a label), within 80 characters, with no word of a label or a heading.
    /// With `requiringTitleCase`, every word must start with a capital or be a connector; with
    /// `prefixOnly`, the name ends before the first word that does not (`… Hostel in Lisbon`).
    private func lodgingName(in range: Range<Int>, requiringTitleCase: Bool, prefixOnly: Bool = false) -> String? {
        var start = range.lowerBound
        while start < range.upperBound, tokens[start].kind == .symbol { start += 1 }
        var end = start
        var words = 0
        while end < range.upperBound {
            let token = tokens[end]
            if token.kind == .symbol {
                if Self.nameEndingSymbols.contains(token.text) { break }
                if token.text == ":" { return nil }
            } else if startsWord(end) {
                let isNameWord = Self.isTitleCased(token) || Self.nameConnectors.contains(token.folded)
                if requiringTitleCase, !isNameWord {
                    if prefixOnly { break }
                    return nil
                }
                if token.kind == .digits, requiringTitleCase { return nil }
                if Self.notNameWords.contains(token.folded) { return nil }
                words += 1
            }
            end += 1
        }
        while end > start, tokens[end - 1].kind == .symbol { end -= 1 }
        // A connector never ends a name ("Pestana Palace in" stops before "in" as lowercase already).
        while end > start, Self.nameConnectors.contains(tokens[end - 1].folded) {
            end -= 1
            words -= 1
        }
        let minimumWords = requiringTitleCase ? 2 : 1
        guard end > start, words >= minimumWords, words <= 8 else { return nil }
        let name = joined(start..<end)
        guard name.count <= 80, tokens[start..<end].contains(where: { $0.kind == .letters }) else { return nil }
        return name
    }

    /// The token ranges of each line, in order (a line without tokens is an empty range).
    func lineRanges() -> [Range<Int>] {
        guard let last = tokens.last else { return [] }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(last.line + 1)
        var index = 0
        for line in 0...last.line {
            let start = index
            while index < tokens.count, tokens[index].line == line { index += 1 }
            ranges.append(start..<index)
        }
        return ranges
    }

    private func startsLine(_ index: Int, _ lines: [Range<Int>]) -> Bool {
        lines[tokens[index].line].lowerBound == index
    }

    /// A word printed with a capital first: `Avenida`, `Lisboa`, `Hôtel`, and capitals throughout
    /// (`PESTANA PALACE`); not `do`, not `shuttle`.
    private static func isTitleCased(_ token: TicketToken) -> Bool {
        guard token.kind == .letters, let first = token.text.unicodeScalars.first else { return false }
        return first.properties.isUppercase
    }

    /// How far down a confirmation its name is looked for without a label.
    private static let headLines = 20

    private static let lodgingLabels = TicketLabels(
        "hotel", "hôtel", "hotel name", "property", "property name", "name of property", "accommodation",
        "accommodation name", "lodging", "unterkunft", "alojamento", "alojamiento", "établissement", "hébergement")
    private static let introducingPhrases = TicketLabels(
        "your stay at", "your stay in", "stay at", "welcome to", "thank you for choosing", "thank you for booking",
        "thanks for booking", "you're staying at", "you are staying at", "your reservation at", "your booking at")
    private static let confirmationHeadings = TicketLabels(
        "booking confirmation", "reservation confirmation", "confirmation", "confirmation of booking",
        "your booking is confirmed", "booking confirmed", "reservation confirmed", "buchungsbestätigung",
        "confirmação de reserva", "confirmación de reserva", "confirmation de réservation")
    /// Words that name a kind of lodging.
    private static let lodgingWords: Set<String> = [
        "hotel", "hôtel", "hotels", "hostel", "inn", "resort", "pousada", "suites", "lodge", "motel", "guesthouse",
        "aparthotel", "residence", "residencial", "albergue", "pension", "gasthof", "gasthaus", "hostal", "parador",
        "auberge", "albergo", "pensão", "pensao", "pensión", "pensione", "palace", "palácio", "palacio", "palazzo",
        "ryokan", "minshuku", "apartment", "apartments", "apartamento", "apartamentos", "appartement", "appartamento",
        "旅館", "ホテル",
    ]
    /// Lowercase words inside names: `Casa do Bairro`, `Hotel de la Paix`, `Bed & Breakfast`.
    private static let nameConnectors: Set<String> = [
        "do", "da", "dos", "das", "de", "del", "della", "di", "du", "des", "la", "le", "les", "el", "los", "las",
        "the", "of", "and", "am", "an", "im", "zum", "zur", "y", "e", "et", "&",
    ]
    /// Words of headings, labels and prose that are never part of a hotel's name.
    private static let notNameWords: Set<String> = [
        "confirmation", "confirmed", "booking", "reservation", "receipt", "invoice", "voucher", "details", "summary",
        "check", "checkin", "checkout", "address", "number", "policy", "total", "price", "your", "our", "guest",
        "guests", "name", "arrival", "departure", "nights", "night", "room", "rooms", "phone", "email", "reference",
        "cancellation", "payment", "bill", "thank", "thanks", "dear", "welcome", "itinerary", "code", "pin",
    ]
    private static let nameEndingSymbols: Set<String> = [",", "!", "(", ";", "|", "\u{2013}", "\u{2014}", "\u{2022}", "?"]
}
