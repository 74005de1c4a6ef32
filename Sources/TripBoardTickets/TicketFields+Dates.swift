import TripBoardSystem

/// A date printed on a ticket and the time printed right after it, if any.
struct TicketDate: Sendable, Equatable {
    let date: CivilDate
    let time: TicketFields.TimeOfDay?
    /// The first token of the date and the index after the date (and its time).
    let start: Int
    let end: Int
}

/// A day and month printed without a year, as boarding passes print them (`12DEC`).
struct YearlessTicketDate: Sendable, Equatable {
    let day: Int
    let month: Int
    let time: TicketFields.TimeOfDay?
    let end: Int

    /// The first such day on or after `anchor` (a ticket is used after it is issued).
    func resolved(onOrAfter anchor: CivilDate) -> CivilDate? {
        for year in [anchor.year, anchor.year + 1] {
            if let date = TicketText.civilDate(year, month, day), date >= anchor { return date }
        }
        return nil
    }
}

extension TicketText {
    /// The departure: the date (and time) whose nearest label says departure, else the first one.
    ///
    /// A ticket also prints when it was issued, paid or printed and when the traveller arrives;
    /// the label just before a date tells them apart. Dates labelled as issue or payment dates are
    /// never taken: a wrong departure is worse than none. Hotels call check-in "arrival", so for a
    /// hotel the arrival labels count as the start. A date without a year (`12DEC`) takes its year
    /// from the issue date, when one is printed.
    func departure(forHotel isHotel: Bool) -> (date: CivilDate?, time: TicketFields.TimeOfDay?, yearless: TicketFields.DayMonth?) {
        let labels = isHotel ? Self.hotelLabels : Self.travelLabels
        var bestDate: (value: TicketDate, score: Int)?
        var bestYearless: (value: YearlessTicketDate, score: Int)?
        var bestTime: (value: TicketFields.TimeOfDay, score: Int)?
        var issueDate: CivilDate?
        var index = 0
        while index < tokens.count {
            if let date = date(at: index) {
                if let score = labelScore(before: index, labels) {
                    if score > bestDate?.score ?? Int.min { bestDate = (date, score) }
                } else if labelScore(before: index, [(Self.issueLabels, 1)]) == 1 {
                    issueDate = max(issueDate ?? date.date, date.date)
                }
                index = date.end
            } else if let date = yearlessDate(at: index) {
                if let score = labelScore(before: index, labels), score > bestYearless?.score ?? Int.min {
                    bestYearless = (date, score)
                }
                index = date.end
            } else if let (time, end) = time(at: index, afterDate: false) {
                // A time on its own counts only when nothing says it is an arrival or closing time.
                if let score = labelScore(before: index, labels), score >= 0, score > bestTime?.score ?? Int.min {
                    bestTime = (time, score)
                }
                index = end
            } else {
                index += 1
            }
        }
        if let bestDate { return (bestDate.value.date, bestDate.value.time ?? bestTime?.value, nil) }
        if let yearless = bestYearless?.value {
            return (issueDate.flatMap { yearless.resolved(onOrAfter: $0) }, yearless.time ?? bestTime?.value,
                    TicketFields.DayMonth(day: yearless.day, month: yearless.month))
        }
        return (nil, bestTime?.value, nil)
    }

    /// A journey's arrival: the date and time, or the time alone, that a label on its own line
    /// says is the arrival (the nearest label before it, as for the departure; a label heading a
    /// column on the line above is not enough). Nothing unlabelled is taken: an arrival guessed
    /// wrong would put the end of a booking on another day.
    func arrival() -> (date: CivilDate?, time: TicketFields.TimeOfDay?) {
        var best: (date: CivilDate?, time: TicketFields.TimeOfDay)?
        var index = 0
        while index < tokens.count {
            if let date = date(at: index) {
                if let time = date.time, labelScore(before: index, Self.arrivalOnlyLabels, sameLine: true) == 3, best?.date == nil {
                    best = (date.date, time)
                }
                index = date.end
            } else if yearlessDate(at: index) != nil {
                index += 1
            } else if let (time, end) = time(at: index, afterDate: false) {
                if labelScore(before: index, Self.arrivalOnlyLabels, sameLine: true) == 3, best == nil { best = (nil, time) }
                index = end
            } else {
                index += 1
            }
        }
        return (best?.date, best?.time)
    }

    /// The date starting at `index` in any of the supported forms, with the time that follows it.
    func date(at index: Int) -> TicketDate? {
        guard let (date, end) = bareDate(at: index) else { return nil }
        if let (time, timeEnd) = time(after: end) {
            return TicketDate(date: date, time: time, start: index, end: timeEnd)
        }
        return TicketDate(date: date, time: nil, start: index, end: end)
    }

    /// A time starting at `index`: `07:35`, `7:35`, `07:35:00`, `07h35`, with `AM`/`PM`; right
    /// after a date also `07.35` and `0735`, which elsewhere are prices and numbers.
    func time(at index: Int, afterDate: Bool) -> (TicketFields.TimeOfDay, end: Int)? {
        guard let first = token(at: index), first.kind == .digits, let value = first.number,
              afterDate || startsWord(index)
        else { return nil }
        let digits = first.text.utf8.count
        var hour: Int
        var minute: Int
        var end: Int
        if digits <= 2, let separator = token(at: index + 1), separator.touchesPrevious,
           separator.text == ":" || separator.folded == "h" || (afterDate && separator.text == "."),
           let minutes = token(at: index + 2), minutes.kind == .digits, minutes.touchesPrevious,
           minutes.text.utf8.count == 2, let minuteValue = minutes.number {
            (hour, minute, end) = (value, minuteValue, index + 3)
            if separator.text == ":", isSymbol(end, [":"]), token(at: end)?.touchesPrevious == true,
               let seconds = token(at: end + 1), seconds.kind == .digits, seconds.touchesPrevious {
                end += 2
            }
        } else if afterDate, digits == 4, endsWord(index) {
            (hour, minute, end) = (value / 100, value % 100, index + 1)
        } else {
            return nil
        }
        // "07:35h" is a French habit and "10:31Z" an ISO one; any other letter or digit glued on
        // means this is something else.
        if let suffix = token(at: end), suffix.touchesPrevious, suffix.folded == "h" || (afterDate && suffix.text == "Z") {
            end += 1
        }
        guard endsWord(end - 1) else { return nil }
        if let meridiem = token(at: end), meridiem.line == first.line, meridiem.folded == "am" || meridiem.folded == "pm" {
            guard (1...12).contains(hour) else { return nil }
            hour = hour % 12 + (meridiem.folded == "pm" ? 12 : 0)
            end += 1
        }
        guard let time = TicketFields.TimeOfDay(hour: hour, minute: minute) else { return nil }
        return (time, end)
    }

    // MARK: - Date forms

    /// A date in any form starting at `index`, without the time after it.
    func bareDate(at index: Int) -> (CivilDate, end: Int)? {
        guard startsWord(index) else { return nil }
        return dayMonthNameYear(at: index) ?? monthNameDayYear(at: index) ?? numericDate(at: index) ?? ideographicDate(at: index)
    }

    /// `2027年5月14日`: year, month and day, each followed by its character.
    private func ideographicDate(at index: Int) -> (CivilDate, end: Int)? {
        guard let year = token(at: index), year.kind == .digits, year.text.utf8.count == 4, let yearValue = year.number,
              isWord(index + 1, "年"), let month = token(at: index + 2), month.kind == .digits, let monthValue = month.number,
              isWord(index + 3, "月"), let day = token(at: index + 4), day.kind == .digits, let dayValue = day.number,
              token(at: index + 5)?.text.hasPrefix("日") == true
        else { return nil }
        return Self.civilDate(yearValue, monthValue, dayValue).map { ($0, index + 6) }
    }

    /// Whether the token at `index` is `text` exactly (an ideographic counter: 年, 月).
    private func isWord(_ index: Int, _ text: String) -> Bool { token(at: index)?.text == text }

    /// `de` in `14 de maio de 2027`, `di` in Italian: skipped between a date's parts.
    private func skippingLinkWord(_ index: Int) -> Int {
        token(at: index).map { Self.dateLinkWords.contains($0.folded) } == true ? index + 1 : index
    }

    /// `12 DEC 2026`, `12DEC2026`, `12-Dec-2026`, `12th December 2026`, `12. December 2026`.
    private func dayMonthNameYear(at index: Int) -> (CivilDate, end: Int)? {
        guard let dayToken = token(at: index), dayToken.text.utf8.count <= 2, let day = dayToken.number else { return nil }
        var next = index + 1
        if let ordinal = token(at: next), ordinal.touchesPrevious, Self.ordinalSuffixes.contains(ordinal.folded) { next += 1 }
        if isSymbol(next, ["-", ".", "/"]) { next += 1 }
        next = skippingLinkWord(next)
        guard let monthToken = token(at: next), monthToken.line == dayToken.line,
              let month = Self.monthNumbers[monthToken.folded]
        else { return nil }
        next += 1
        if isSymbol(next, ["-", ".", ",", "/"]) { next += 1 }
        next = skippingLinkWord(next)
        // `12DEC26`: a two-digit year only when the whole date is glued together, as on boarding passes.
        let isGlued = ((index + 1)...next).allSatisfy { tokens.indices.contains($0) && tokens[$0].touchesPrevious }
        let shortYear = token(at: next).flatMap { isGlued && $0.kind == .digits && $0.text.utf8.count == 2 ? $0.number : nil }
        guard let fullYear = year(at: next, line: dayToken.line) ?? shortYear.map({ 2000 + $0 }), endsWord(next)
        else { return nil }
        return Self.civilDate(fullYear, month, day).map { ($0, next + 1) }
    }

    /// `12DEC`, `12 Dec`, `12th December`: a day and month with no year after them.
    private func yearlessDate(at index: Int) -> YearlessTicketDate? {
        guard startsWord(index), let dayToken = token(at: index), dayToken.text.utf8.count <= 2,
              let day = dayToken.number, (1...31).contains(day)
        else { return nil }
        var next = index + 1
        if let ordinal = token(at: next), ordinal.touchesPrevious, Self.ordinalSuffixes.contains(ordinal.folded) { next += 1 }
        if isSymbol(next, ["-", "."]) { next += 1 }
        next = skippingLinkWord(next)
        guard let monthToken = token(at: next), monthToken.line == dayToken.line,
              let month = Self.monthNumbers[monthToken.folded], endsWord(next)
        else { return nil }
        // "31 FEB 2026" is no date, not 31 February at 20:26.
        if let after = token(at: next + 1), after.line == monthToken.line, after.text.utf8.count == 4,
           let value = after.number, value >= 1900 {
            return nil
        }
        if let (time, end) = time(after: next + 1) { return YearlessTicketDate(day: day, month: month, time: time, end: end) }
        return YearlessTicketDate(day: day, month: month, time: nil, end: next + 1)
    }

    /// `December 12, 2026`, `Dec. 12 2026`, `Dec 12th, 2026`.
    private func monthNameDayYear(at index: Int) -> (CivilDate, end: Int)? {
        guard let monthToken = token(at: index), let month = Self.monthNumbers[monthToken.folded] else { return nil }
        var next = index + 1
        if isSymbol(next, ["."]) { next += 1 }
        guard let dayToken = token(at: next), dayToken.line == monthToken.line, dayToken.text.utf8.count <= 2,
              let day = dayToken.number
        else { return nil }
        next += 1
        if let ordinal = token(at: next), ordinal.touchesPrevious, Self.ordinalSuffixes.contains(ordinal.folded) { next += 1 }
        if isSymbol(next, [","]) { next += 1 }
        guard let fullYear = year(at: next, line: monthToken.line) else { return nil }
        return Self.civilDate(fullYear, month, day).map { ($0, next + 1) }
    }

    /// `2027-01-05` (also with `/`, and followed by `T10:31`), `05.01.2027`, `05/01/2027`, `05-01-2027`.
    private func numericDate(at index: Int) -> (CivilDate, end: Int)? {
        guard let separator = token(at: index + 1), separator.kind == .symbol, separator.touchesPrevious,
              [".", "/", "-"].contains(separator.text), isSymbol(index + 3, [separator.text]),
              case let parts = [index, index + 2, index + 4].compactMap({ token(at: $0) }), parts.count == 3,
              parts.allSatisfy({ $0.kind == .digits }), parts.dropFirst().allSatisfy(\.touchesPrevious),
              token(at: index + 3)?.touchesPrevious == true,
              let first = parts[0].number, let second = parts[1].number, let third = parts[2].number
        else { return nil }
        let lengths = parts.map { $0.text.utf8.count }
        let isISO = lengths[0] == 4 && lengths[1] <= 2 && lengths[2] <= 2
        let isDayFirst = lengths[0] <= 2 && lengths[1] <= 2 && lengths[2] == 4
        let glued = token(at: index + 5)
        let endsCleanly = endsWord(index + 4) || (isISO && glued?.folded == "t")
        guard endsCleanly else { return nil }
        guard !isISO else { return Self.civilDate(first, second, third).map { ($0, index + 5) } }
        guard isDayFirst else { return nil }
        // Day first, as everywhere but the United States — unless only the other reading is a
        // date (`05/13/2027`), or a 12-hour time follows it (`05/04/2027 7:05 PM`), as on
        // American tickets.
        let dayFirst = Self.civilDate(third, second, first)
        let monthFirst = separator.text == "/" ? Self.civilDate(third, first, second) : nil
        let date = (dayFirst != nil && monthFirst != nil) ? (hasTwelveHourTime(after: index + 5) ? monthFirst : dayFirst)
            : (dayFirst ?? monthFirst)
        return date.map { ($0, index + 5) }
    }

    /// Whether `AM` or `PM` follows within the next few tokens of the line: a 12-hour clock.
    private func hasTwelveHourTime(after index: Int) -> Bool {
        guard let line = token(at: index - 1)?.line else { return false }
        return (index..<(index + 6)).contains { token(at: $0).map { $0.line == line && ($0.folded == "am" || $0.folded == "pm") } ?? false }
    }

    /// A four-digit year ending its word, on `line`.
    private func year(at index: Int, line: Int) -> Int? {
        guard let token = token(at: index), token.line == line, token.kind == .digits, token.text.utf8.count == 4,
              endsWord(index)
        else { return nil }
        return token.number
    }

    /// The time printed just after a date ending at `end`: after a comma, `at`, `T` or a line break,
    /// but not the start of a second date (`12.12.2026 - 15.12.2026` has no time 15:12).
    private func time(after end: Int) -> (TicketFields.TimeOfDay, end: Int)? {
        var index = end
        while index - end < 2, let token = token(at: index), Self.dateTimeFillers.contains(token.folded) { index += 1 }
        guard let token = token(at: index), token.line <= tokens[end - 1].line + 1, bareDate(at: index) == nil
        else { return nil }
        return time(at: index, afterDate: true)
    }

    static func civilDate(_ year: Int, _ month: Int, _ day: Int) -> CivilDate? {
        guard year >= 1900 else { return nil }
        return CivilDate(CivilDate.pad(year, 4) + "-" + CivilDate.pad(month, 2) + "-" + CivilDate.pad(day, 2))
    }

    private static let ordinalSuffixes: Set<String> = ["st", "nd", "rd", "th"]
    private static let dateTimeFillers: Set<String> = [
        ",", "-", "–", "|", "/", "@", "·", "•", "t", "at", "um", "à", "às", "ore", "om", "a", "las", "alle",
    ]
    private static let dateLinkWords: Set<String> = ["de", "del", "di"]
    /// Month names and their usual abbreviations in English, French, German, Spanish, Portuguese,
    /// Italian and Dutch (lowercased; with and without accents). Abbreviations that are also
    /// English words (`out`, `set`, `ago`) are left out: `12 out` is no date.
    static let monthNumbers: [String: Int] = {
        let names: [(Int, [String])] = [
            (1, ["jan", "january", "janvier", "janv", "januar", "jänner", "jänn", "enero", "ene", "janeiro", "gennaio", "gen", "januari"]),
            (2, ["feb", "february", "février", "fevrier", "févr", "fevr", "fév", "fev", "februar", "febrero", "fevereiro", "febbraio",
                 "februari"]),
            (3, ["mar", "march", "mars", "märz", "maerz", "mär", "marzo", "março", "marco", "maart", "mrt"]),
            (4, ["apr", "april", "avril", "avr", "abril", "abr", "aprile"]),
            (5, ["may", "mai", "mayo", "maio", "maggio", "mag", "mei"]),
            (6, ["jun", "june", "juin", "juni", "junio", "junho", "giugno", "giu"]),
            (7, ["jul", "july", "juillet", "juil", "juli", "julio", "julho", "luglio", "lug"]),
            (8, ["aug", "august", "août", "aout", "agosto", "augustus"]),
            (9, ["sep", "sept", "september", "septembre", "septiembre", "setiembre", "setembro", "settembre"]),
            (10, ["oct", "october", "octobre", "oktober", "okt", "octubre", "outubro", "ottobre", "ott"]),
            (11, ["nov", "november", "novembre", "noviembre", "novembro"]),
            (12, ["dec", "december", "décembre", "decembre", "déc", "dezember", "dez", "diciembre", "dic", "dezembro", "dicembre"]),
        ]
        return Dictionary(names.flatMap { month, words in words.map { ($0, month) } }, uniquingKeysWith: { first, _ in first })
    }()

    // MARK: - Labels near a date

    /// How much the nearest label before `index` (on its line or the previous one, at most eight
    /// tokens back) says "departure": 0 without a label, nil when it says "issued" or "paid".
    func labelScore(before index: Int, _ labels: [(TicketLabels, Int?)], sameLine: Bool = false) -> Int? {
        let line = tokens[index].line
        var last = index - 1
        while last >= max(0, index - 8), tokens[last].line >= line - (sameLine ? 0 : 1) {
            // The longest label ending here wins: "departure date" is not just "date".
            var best: (length: Int, score: Int?)?
            for (set, score) in labels {
                if let start = matchLabel(set, endingAt: last), last - start + 1 > best?.length ?? 0 {
                    best = (last - start + 1, score)
                }
            }
            if let best { return best.score }
            last -= 1
        }
        return 0
    }

    /// When the ticket was issued: never the departure, but the year of a `12DEC` departure.
    private static let issueLabels = TicketLabels(
        "issued", "issue", "date of issue", "issue date", "printed", "print date", "purchased", "purchase date",
        "paid", "payment", "payment date", "order date", "ordered", "booked", "booked on", "booking date",
        "created", "generated", "émis le", "émis", "date d'émission", "émission", "ausgestellt", "ausgestellt am",
        "ausstellungsdatum", "buchungsdatum", "emitido", "fecha de emisión", "emisión", "data de emissão", "emissão",
        "emesso", "data di emissione", "emissione", "uitgegeven", "uitgiftedatum", "発行日", "購入日")
    private static let notDepartureLabels = TicketLabels(
        "date of birth", "birth", "dob", "valid until", "expires", "expiry",
        // Before a clock-like duration: "Journey time 2h35".
        "duration", "journey time", "travel time",
        // Before a deadline: "Free cancellation until 10 Dec 2026 23:59".
        "until", "cancellation", "cancel", "deadline")
    private static let arrivalLabels = TicketLabels(
        "arrival", "arrival date", "date of arrival", "arrive", "arrives", "arr", "ankunft", "chegada", "llegada",
        "arrivée", "arrivo", "aankomst", "inbound", "到着")
    private static let departureLabels = TicketLabels(
        "departure", "departure date", "date of departure", "depart", "departs", "departing", "dep", "abfahrt",
        "partida", "départ", "salida", "partenza", "vertrek", "outbound", "出発", "発車")
    private static let checkInLabels = TicketLabels("check-in", "checkin", "check in", "check-in date", "anreise", "entrada",
                                                    "チェックイン")
    private static let checkOutLabels = TicketLabels(
        "check-out", "checkout", "check out", "check-out date", "return", "return date", "closes", "abreise", "saída",
        "チェックアウト")
    private static let boardingLabels = TicketLabels("boarding", "boards", "embarque", "imbarco", "instappen")
    private static let plainDateLabels = TicketLabels("date", "travel date", "date of travel", "date du voyage", "datum",
                                                      "reisedatum", "data", "data di viaggio", "fecha", "fecha de viaje",
                                                      "日付", "乗車日")

    /// Scores for flights, trains and buses.
    static let travelLabels: [(TicketLabels, Int?)] = [
        (issueLabels, nil), (notDepartureLabels, nil), (arrivalLabels, -1), (checkOutLabels, -1), (departureLabels, 3),
        (boardingLabels, 2), (checkInLabels, 2), (plainDateLabels, 1),
    ]
    /// Scores for a journey's arrival: only an arrival label counts.
    static let arrivalOnlyLabels: [(TicketLabels, Int?)] = [
        (issueLabels, nil), (notDepartureLabels, nil), (arrivalLabels, 3), (departureLabels, -1), (boardingLabels, -1),
        (checkInLabels, -1), (plainDateLabels, -1),
    ]
    /// Scores for hotels, where the stay starts at check-in, also called arrival.
    static let hotelLabels: [(TicketLabels, Int?)] = [
        (issueLabels, nil), (notDepartureLabels, nil), (checkOutLabels, -1), (departureLabels, -1), (checkInLabels, 3),
        (arrivalLabels, 3), (plainDateLabels, 1),
    ]
}
