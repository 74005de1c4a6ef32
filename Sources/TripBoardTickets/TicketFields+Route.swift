extension TicketText {
    /// Where the journey starts and ends: `LIS → CDG`, `Lisbon (LIS) → Paris (CDG)`,
    /// `From: Lisbon To: Paris`. IATA codes win over the names printed beside them.
    func route() -> (origin: String, destination: String)? {
        separatedRoute() ?? labelledRoute()
    }

    /// Where the journey starts when no route is printed: the first place a departure label
    /// introduces that the tables know (`Partida 02/06/2027 09:09 Lisboa Santa Apolónia`).
    func labelledDeparture() -> String? {
        var search = 0
        while let label = firstLabel(Self.departureStationLabels, from: search) {
            search = label.end
            if let place = labelledPlace(after: label), PlaceZones.place(in: place.name) != nil { return place.name }
        }
        return nil
    }

    // MARK: - Two places around a separator

    /// The first `A → B`. Arrows may join names; hyphens, dashes and "to" join IATA codes, and
    /// names only when both are places the tables know (`NEW YORK (PENN STATION), NY - WASHINGTON,
    /// DC`), because between other names they join headings ("Booking – Confirmation", "Welcome to Paris").
    private func separatedRoute() -> (origin: String, destination: String)? {
        for index in tokens.indices {
            guard let (separatorEnd, allowsNames) = separator(at: index) else { continue }
            // "Lisboa Oriente 08:39 → 11:45 Faro": the times beside the arrow are not part of the route.
            let before = index >= 3 && time(at: index - 3, afterDate: false)?.end == index ? index - 3 : index
            let after = time(at: separatorEnd, afterDate: false)?.end ?? separatorEnd
            if let route = places(around: index, before: before, after: after, allowsNames: allowsNames) { return route }
            if !allowsNames, let route = places(around: index, before: before, after: after, allowsNames: true),
               PlaceZones.place(in: route.origin) != nil, PlaceZones.place(in: route.destination) != nil {
                return route
            }
        }
        return nil
    }

    /// The places ending at `before` and starting at `after`, on the line of the separator at `index`.
    private func places(around index: Int, before: Int, after: Int, allowsNames: Bool) -> (origin: String, destination: String)? {
        guard let origin = place(endingBefore: before, allowsNames: allowsNames),
              let destination = place(startingAt: after, allowsNames: allowsNames),
              tokens[before - 1].line == tokens[index].line, tokens[after].line == tokens[index].line,
              origin.name != destination.name
        else { return nil }
        return (origin.name, destination.name)
    }

    /// The separator at `index`: the index after it, and whether it may stand between names.
    private func separator(at index: Int) -> (end: Int, allowsNames: Bool)? {
        let token = tokens[index]
        if token.kind == .letters { return token.folded == "to" ? (index + 1, false) : nil }
        guard token.kind == .symbol else { return nil }
        if Self.arrows.contains(token.text) { return (index + 1, true) }
        // "->" and "=>" are two tokens.
        if token.text == "-" || token.text == "=", isSymbol(index + 1, [">"]), tokens[index + 1].touchesPrevious {
            return (index + 2, true)
        }
        return Self.dashes.contains(token.text) ? (index + 1, false) : nil
    }

    /// The place just before `index`: `LIS`, `Lisbon (LIS)` (as `LIS`), or a name like `Lisbon`,
    /// `Frankfurt(Main)Hbf`, read backwards on one line up to a label, digit or symbol.
    private func place(endingBefore index: Int, allowsNames: Bool) -> (name: String, start: Int)? {
        if isSymbol(index - 1, [")"]), isAirportCode(index - 2), isSymbol(index - 3, ["("]) {
            return (tokens[index - 2].text, index - 3)
        }
        if isAirportCode(index - 1) { return (tokens[index - 1].text, index - 1) }
        var index = index
        // `NEW YORK (PENN STATION), NY`: a state's or country's two capitals after a comma end the name.
        if let last = token(at: index - 1), last.isUppercaseASCII, last.text.utf8.count == 2, isSymbol(index - 2, [","]) { index -= 2 }
        guard allowsNames, let last = token(at: index - 1) else { return nil }
        var start = index
        var words = 0
        var cursor = index - 1
        while cursor >= 0, tokens[cursor].line == last.line, words < Self.maximumWordsInName {
            if tokens[cursor].kind == .letters {
                if startsNameWord(cursor) { words += 1 }
            } else if let open = parenthesisGroup(closingAt: cursor) {
                cursor = open
            } else if !isConnector(cursor) {
                break
            }
            start = cursor
            cursor -= 1
        }
        return placeName(start..<index).map { ($0, start) }
    }

    /// The place starting at `index`, read forwards on one line up to a label, digit or symbol.
    private func place(startingAt index: Int, allowsNames: Bool) -> (name: String, end: Int)? {
        if isAirportCode(index) { return (tokens[index].text, index + 1) }
        guard let first = token(at: index), first.kind == .letters else { return nil }
        var end = index
        var words = 0
        while let token = token(at: end), token.line == first.line {
            if token.kind == .letters {
                if startsNameWord(end) {
                    // "To:" ends "From: Lisbon", and so does a bare "to" in "from Lisbon to Paris".
                    let isLabel = isSymbol(end + 1, [":"])
                    guard words < Self.maximumWordsInName, !isLabel, !Self.nameStopWords.contains(token.folded) else { break }
                    words += 1
                }
            } else if isSymbol(end, ["("]), isAirportCode(end + 1), isSymbol(end + 2, [")"]) {
                // Even where names are not allowed, "Paris Beauvais (BVA)" is the code BVA.
                return (tokens[end + 1].text, end + 3)
            } else if let close = parenthesisGroup(openingAt: end) {
                end = close
            } else if !isConnector(end) {
                break
            }
            end += 1
        }
        guard allowsNames else { return nil }
        return placeName(index..<end).map { ($0, end) }
    }

    /// The `(` of a group of one to three words ending at the `)` at `close`: `(Main)`, `(Estación Sur)`.
    private func parenthesisGroup(closingAt close: Int) -> Int? {
        guard isSymbol(close, [")"]) else { return nil }
        var open = close - 1
        while open > close - 5, let token = token(at: open), token.line == tokens[close].line {
            if isSymbol(open, ["("]) { return open < close - 1 ? open : nil }
            guard token.kind == .letters || isConnector(open) else { return nil }
            open -= 1
        }
        return nil
    }

    /// The `)` of a group of one to three words starting at the `(` at `open`.
    private func parenthesisGroup(openingAt open: Int) -> Int? {
        guard isSymbol(open, ["("]) else { return nil }
        var close = open + 1
        while close < open + 5, let token = token(at: close), token.line == tokens[open].line {
            if isSymbol(close, [")"]) { return close > open + 1 ? close : nil }
            guard token.kind == .letters || isConnector(close) else { return nil }
            close += 1
        }
        return nil
    }

    // MARK: - From: … To: …

    /// `From: Lisbon To: Paris`, `Origin LIS Destination CDG`, with values on the label's line or the next.
    private func labelledRoute() -> (origin: String, destination: String)? {
        for (fromLabels, toLabels) in Self.routeLabelPairs {
            var search = 0
            while let from = firstLabel(fromLabels, from: search) {
                search = from.end
                // "To" follows within a few tokens ("From: Lisbon (LIS) Terminal 1 To: …"); looking
                // further would make a text with many "from"s and no "to" quadratic.
                guard let origin = labelledPlace(after: from),
                      let toStart = (origin.end..<(origin.end + 8)).first(where: { matchLabel(toLabels, at: $0) != nil }),
                      let toEnd = matchLabel(toLabels, at: toStart),
                      let destination = labelledPlace(after: (toStart, toEnd)), origin.name != destination.name
                else { continue }
                return (origin.name, destination.name)
            }
        }
        return nil
    }

    private func labelledPlace(after label: (start: Int, end: Int)) -> (name: String, end: Int)? {
        var index = label.end
        while isSymbol(index, [":", "-", "–"]) { index += 1 }
        // A weekday before the date: `Abfahrt So, 14.03.2027 09:13 Frankfurt(Main)Hbf`.
        while let token = token(at: index), Self.weekdayWords.contains(token.folded) || isSymbol(index, [",", "."]) { index += 1 }
        // A date or a time between the label and the place: `Départ 07h43 Paris Gare de Lyon`.
        if let date = date(at: index) {
            index = date.end
        } else if let (_, end) = time(at: index, afterDate: false) {
            index = end
        }
        while isSymbol(index, [":", "-", "–", ","]) { index += 1 }
        guard let token = token(at: index), token.line <= tokens[label.start].line + 2 else { return nil }
        return place(startingAt: index, allowsNames: true)
    }

    // MARK: - Pieces

    /// Three capitals standing alone that are not a month, weekday, currency or common word, nor
    /// the first word of a place's name in capitals (`NEW YORK`, `SAN SEBASTIÁN`).
    func isAirportCode(_ index: Int) -> Bool {
        guard let token = token(at: index), token.isUppercaseASCII, token.text.utf8.count == 3,
              startsWord(index), endsWord(index), !Self.airportCodeLookalikes.contains(token.text)
        else { return false }
        guard let next = self.token(at: index + 1), next.line == token.line, next.kind == .letters else { return true }
        return PlaceZones.named(token.text + " " + next.text) == nil
    }

    /// True when a word of a name starts at `index`: "Dieu" in "Part-Dieu" and "l" in "Int'l" do not.
    private func startsNameWord(_ index: Int) -> Bool {
        guard tokens[index].kind == .letters, startsWord(index) else { return false }
        return !(tokens[index].touchesPrevious && isConnector(index - 1))
    }

    /// A hyphen, apostrophe or abbreviation dot inside a name: `Part-Dieu`, `Land's End`, `St. Pancras`.
    private func isConnector(_ index: Int) -> Bool {
        guard let token = token(at: index), token.kind == .symbol, token.touchesPrevious,
              let previous = self.token(at: index - 1), previous.kind == .letters
        else { return false }
        if token.text == "." { return true }
        guard Self.nameConnectors.contains(token.text), let next = self.token(at: index + 1) else { return false }
        return next.kind == .letters && next.touchesPrevious
    }

    /// The words in `range` as a place name, without the labels and lowercase words around it
    /// ("Outbound Lisbon" → "Lisbon", "Paris on" → "Paris"); nil unless it starts with a capital
    /// — or with a letter of a script without case (`新大阪`, `東京`).
    private func placeName(_ range: Range<Int>) -> String? {
        var wordStarts = range.filter { startsNameWord($0) }
        func startsLikeAName(_ index: Int) -> Bool {
            guard let first = tokens[index].text.first else { return false }
            return first.isUppercase || (first.isLetter && !first.isLowercase && !first.isCased)
        }
        func isLeadingNoise(_ index: Int) -> Bool {
            Self.nameLeadWords.contains(tokens[index].folded) || !startsLikeAName(index)
        }
        while let first = wordStarts.first, isLeadingNoise(first) { wordStarts.removeFirst() }
        var end = range.upperBound
        while let last = wordStarts.last, !startsLikeAName(last) {
            wordStarts.removeLast()
            end = last
        }
        guard let start = wordStarts.first else { return nil }
        // A dot or bracket left at the end is punctuation, not part of the name.
        while end > start, tokens[end - 1].kind == .symbol, tokens[end - 1].text != ")" { end -= 1 }
        return joined(start..<end)
    }

    private static let maximumWordsInName = 5
    private static let arrows: Set<String> = ["→", "➔", "➜", "➝", "⟶", "⇒", "►", "▶", "»", ">", "✈"]
    private static let dashes: Set<String> = ["-", "–", "—"]
    private static let nameConnectors: Set<String> = ["-", "'", "’"]
    private static let routeLabelPairs = [
        (TicketLabels("from"), TicketLabels("to")),
        (TicketLabels("origin"), TicketLabels("destination")),
        // A departure and an arrival with their stations, in the seven languages and Japanese:
        // `Départ 07h43 Paris Gare de Lyon` over `Arrivée 09h41 Lyon Part-Dieu`.
        (TicketLabels("departure", "départ", "abfahrt", "partenza", "salida", "partida", "vertrek", "出発"),
         TicketLabels("arrival", "arrivée", "ankunft", "arrivo", "llegada", "chegada", "aankomst", "到着")),
    ]
    private static let departureStationLabels = routeLabelPairs[2].0
    /// Words that end a name read forwards: "Lisbon to Paris", "Paris on 12 Dec", "Lyon via Dijon".
    private static let nameStopWords: Set<String> = ["to", "via", "on", "at", "dep", "arr", "departure", "arrival"]
    /// Labels that precede a name on its line: "Outbound Lisbon → Paris".
    private static let nameLeadWords: Set<String> = [
        "from", "route", "trip", "journey", "outbound", "return", "inbound", "flight", "train", "your", "itinerary",
    ]
    private static let airportCodeLookalikes: Set<String> = [
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
        "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN", "EUR", "USD", "GBP", "CHF", "VAT", "THE", "AND",
        "FOR", "PNR", "REF", "ARR", "DEP", "ICE", "TGV", "TER", "AVE", "BUS", "VIA", "AIR", "ONE", "WAY",
    ]
}
