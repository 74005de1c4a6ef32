import TripBoardModel
/// A flight or train number found in ticket text, normalized to `TP 1351` or `ICE 123`.
struct ServiceNumber: Sendable, Equatable {
    let text: String
    let kind: BookingKind
    /// The index after the number's last token.
    let end: Int
}

extension TicketText {
    /// The flight or train number: the one after a "Flight" label if any, else the first one.
    func serviceNumber() -> ServiceNumber? {
        // After a label, a designator that is also an English word ("AM", "LA") is still an airline.
        var from = 0
        while let label = firstLabel(Self.flightLabels, from: from) {
            let index = skipNumberFillers(from: label.end)
            if let token = token(at: index), token.line <= tokens[label.start].line + 1,
               let number = flightNumber(at: index, allowingCommonWords: true) {
                return number
            }
            from = label.end
        }
        for index in tokens.indices {
            if let number = trainNumber(at: index) ?? flightNumber(at: index, allowingCommonWords: false) {
                return number
            }
        }
        return nil
    }

    /// True when a flight number starts at `index`, as a reference scanner's sanity check.
    func isFlightNumber(at index: Int) -> Bool { flightNumber(at: index, allowingCommonWords: true) != nil }

    // MARK: - Flights

    /// An IATA designator (`TP`, `U2`, `9W`) and 1–4 digits, glued or spaced: `TP1351`, `U2 1234`.
    private func flightNumber(at index: Int, allowingCommonWords: Bool) -> ServiceNumber? {
        guard startsWord(index), let (designator, digitsIndex, sharesDigits) = designator(at: index),
              allowingCommonWords || !Self.designatorLookalikes.contains(designator),
              !followsPositionLabel(index),
              let digits = serviceDigits(at: index, digitsIndex, maximumCount: sharesDigits ? 5 : 4)
        else { return nil }
        // `U21234`: the designator's digit and the flight number are one token.
        let number = sharesDigits ? String(digits.dropFirst()) : digits
        return ServiceNumber(text: designator + " " + Self.withoutLeadingZeros(number), kind: .flight, end: digitsIndex + 1)
    }

    /// The designator starting at `index`, the index of the digits after it, and whether those
    /// digits begin with the designator's own digit (`U21234`). A letter-digit designator glued to
    /// its number needs three digits after it, or gate `B12` would read as flight `B1 2`.
    private func designator(at index: Int) -> (String, digitsIndex: Int, sharesDigits: Bool)? {
        guard let first = token(at: index), let second = token(at: index + 1) else { return nil }
        let firstLength = first.text.utf8.count
        let secondLength = second.text.utf8.count
        switch first.kind {
        case .letters where first.isUppercaseASCII && firstLength == 2:
            return (first.text, index + 1, false)
        case .letters where first.isUppercaseASCII && firstLength == 1 && second.kind == .digits && second.touchesPrevious:
            if secondLength == 1 { return (first.text + second.text, index + 2, false) }
            if (4...5).contains(secondLength) { return (first.text + String(second.text.prefix(1)), index + 1, true) }
            return nil
        case .digits where firstLength == 1 && second.isUppercaseASCII && secondLength == 1 && second.touchesPrevious:
            return (first.text + second.text, index + 2, false)
        default:
            return nil
        }
    }

    /// True when the word before `index`, on its line, names a seat, gate or other place: `Gate A 12`.
    private func followsPositionLabel(_ index: Int) -> Bool {
        var previous = index - 1
        while isSymbol(previous, [":", ".", "#"]) { previous -= 1 }
        guard let token = token(at: previous), token.isWord, token.line == tokens[index].line else { return false }
        return Self.positionLabels.contains(token.folded)
    }

    // MARK: - Trains

    /// A train product and its number: `ICE 123`, `TGV INOUI 6201`, `Eurostar 9014`, `Zug Nr. 1234`.
    private func trainNumber(at index: Int) -> ServiceNumber? {
        guard startsWord(index), let token = token(at: index), token.kind == .letters else { return nil }
        var digitsIndex = index + 1
        let product: String
        var minimumDigits = 1
        if token.isUppercaseASCII, Self.trainCodes.contains(token.text) {
            product = token.text
        } else if let name = Self.trainNames[token.folded] {
            product = name
        } else if Self.genericTrainWords.contains(token.folded) {
            // "Train 2 of 3" is a count; real train numbers on a "train" label have three digits or more.
            (product, minimumDigits) = ("Train", 3)
            digitsIndex = skipNumberFillers(from: digitsIndex)
        } else if let second = self.token(at: index + 1), second.line == token.line,
                  let name = Self.twoWordTrainNames[token.folded + " " + second.folded] {
            (product, digitsIndex) = (name, index + 2)
        } else {
            return nil
        }
        if let brand = self.token(at: digitsIndex), Self.trainBrandSuffixes.contains(brand.folded) { digitsIndex += 1 }
        // `TGV INOUI n° 6607`, `ICE Nr. 599`: the number's own label.
        if product != "Train" { digitsIndex = skipNumberFillers(from: digitsIndex) }
        guard let digits = serviceDigits(at: index, digitsIndex, maximumCount: 6), digits.utf8.count >= minimumDigits
        else { return nil }
        return ServiceNumber(text: product + " " + Self.withoutLeadingZeros(digits), kind: .train, end: digitsIndex + 1)
    }

    // MARK: - Shared

    /// The number at `digitsIndex` for a service named at `nameIndex`: on the same line, ending its
    /// word, and not the first part of a time (`AM 07:35`), decimal, fraction or date (`SA 12 DEC 2026`).
    private func serviceDigits(at nameIndex: Int, _ digitsIndex: Int, maximumCount: Int) -> String? {
        // `のぞみ21号`: a Japanese train's number with its counter glued on (not `号車`, a car).
        let counted = self.token(at: digitsIndex + 1).map { $0.text == "号" && $0.touchesPrevious } ?? false
        guard let token = token(at: digitsIndex), token.kind == .digits, token.line == tokens[nameIndex].line,
              token.text.utf8.count <= maximumCount, endsWord(digitsIndex) || counted, bareDate(at: digitsIndex) == nil
        else { return nil }
        if isSymbol(digitsIndex + 1, [":", ".", ",", "/"]), let separator = self.token(at: digitsIndex + 1),
           separator.touchesPrevious, let after = self.token(at: digitsIndex + 2), after.kind == .digits,
           after.touchesPrevious {
            return nil
        }
        return token.text
    }

    /// Skips `:`, `#`, `no.`, `Nr.` between a label and its number.
    private func skipNumberFillers(from start: Int) -> Int {
        var index = start
        while let token = token(at: index), index - start < 6,
              token.kind == .symbol
                ? Self.numberFillerSymbols.contains(token.text) : Self.numberFillerWords.contains(token.folded) {
            index += 1
        }
        return index
    }

    /// `0135` → `135`: airlines pad flight numbers to four digits on some documents only.
    private static func withoutLeadingZeros(_ digits: String) -> String {
        let trimmed = digits.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }

    private static let flightLabels = TicketLabels("flight", "flight no", "flight number", "flug", "vol", "voo", "vuelo")
    private static let numberFillerSymbols: Set<String> = [":", ".", "#", "º", "°"]
    private static let numberFillerWords: Set<String> = ["no", "nr", "n", "number", "num"]
    private static let positionLabels: Set<String> = [
        "seat", "gate", "terminal", "row", "zone", "group", "platform", "track", "gleis", "voie", "coach",
        "car", "carriage", "wagon", "room", "seq", "sequence", "bag", "bags", "lugar", "porta", "sitz", "wagen",
    ]
    /// Two capitals that are also words or abbreviations; still taken after a "Flight" label.
    private static let designatorLookalikes: Set<String> = [
        "AM", "PM", "NO", "TO", "AT", "ON", "OF", "IN", "OR", "BY", "IS", "IT", "MY", "WE", "US", "UP", "ID",
        "MR", "MS", "DR", "ST", "RD", "TH", "ND", "LE", "EL", "DA", "DO", "DI", "AN", "BE", "GO", "HE", "IF",
        "ME", "SO", "PO", "CO", "OK", "NR", "TV", "PT", "IC", "EC", "EN", "RE", "RB", "IR", "RJ", "NJ", "AP",
    ]
    /// Printed in capitals by the railways; as words ("RE", "AVE") they are something else.
    private static let trainCodes: Set<String> = [
        "ICE", "IC", "ICN", "EC", "ECE", "EN", "RE", "RB", "IR", "IRE", "RJ", "RJX", "NJ", "TGV", "TER",
        "AVE", "ALVIA", "AVLO", "AP",
    ]
    private static let trainNames: [String: String] = [
        "eurostar": "Eurostar", "thalys": "Thalys", "tgv": "TGV", "ouigo": "Ouigo", "intercity": "Intercity",
        "intercidades": "Intercidades", "railjet": "Railjet", "nightjet": "Nightjet",
        "frecciarossa": "Frecciarossa", "frecciargento": "Frecciargento", "frecciabianca": "Frecciabianca", "italo": "Italo",
        // Japan's Shinkansen by their service names, and North America's.
        "nozomi": "Nozomi", "hikari": "Hikari", "kodama": "Kodama", "mizuho": "Mizuho", "sakura": "Sakura",
        "hayabusa": "Hayabusa", "komachi": "Komachi", "kagayaki": "Kagayaki", "amtrak": "Amtrak", "acela": "Acela",
        "keystone": "Keystone", "downeaster": "Downeaster",
        "のぞみ": "Nozomi", "ひかり": "Hikari", "こだま": "Kodama",
    ]
    /// Services named in two words: Portugal's, and Amtrak's (`Northeast Regional 171`).
    private static let twoWordTrainNames: [String: String] = [
        "alfa pendular": "Alfa Pendular", "northeast regional": "Northeast Regional", "empire service": "Empire Service",
        "pacific surfliner": "Pacific Surfliner", "capitol corridor": "Capitol Corridor", "coast starlight": "Coast Starlight",
        "silver meteor": "Silver Meteor", "silver star": "Silver Star", "lake shore": "Lake Shore", "auto train": "Auto Train",
        "california zephyr": "California Zephyr", "empire builder": "Empire Builder", "sunset limited": "Sunset Limited",
        "texas eagle": "Texas Eagle", "southwest chief": "Southwest Chief",
    ]
    private static let genericTrainWords: Set<String> = ["train", "zug", "treno", "tren", "comboio", "trem"]
    /// Words between a train's name and its number: `TGV INOUI 6201`, `Lake Shore Limited 49`.
    private static let trainBrandSuffixes: Set<String> = ["inoui", "lyria", "limited"]
}
