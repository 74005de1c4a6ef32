import TripBoardSystem

/// A date printed on a ticket and the time printed right after it, if any.
struct TicketDate: Sendable, Equatable {
    let date: CivilDate
    let time: TicketFields.TimeOfDay?
    /// The first token of the date and the index after the date (and its time).
    let start: Int
    let end: Int
}

/// A journey's arrival as a ticket prints it (`TicketText.arrival`).
struct TicketArrival: Sendable, Equatable {
    /// The date printed with it; else `dayMonth` (a day and month without a year), else neither.
    var date: CivilDate?
    var dayMonth: TicketFields.DayMonth?
    var time: TicketFields.TimeOfDay
    /// A printed day marker: `(+1)` → 1.
    var dayOffset: Int?
    /// The index after the time (and its marker).
    var end: Int
    /// The line's text after the time, and before the label: where a place may be named.
    var placeAfter = ""
    var placeBefore = ""
    /// Whether an arrival was read before it: the end of an itinerary's last leg, which the
    /// route printed for the first leg does not place.
    var followsAnother = false
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
        let found = labelledDate(isHotel ? Self.hotelLabels : Self.travelLabels)
        return (found.date, found.time, found.yearless)
    }

    /// A hotel stay's end: the date (and time) a check-out label (or a departure label, as some
    /// hotels call it) introduces — nil when no date has one.
    func checkOut() -> (date: CivilDate, time: TicketFields.TimeOfDay?)? {
        let found = labelledDate(Self.checkOutScores)
        guard let date = found.date, let score = found.dateScore, score > 0 else { return nil }
        return (date, found.time)
    }

    /// The date (and time) whose nearest label scores best in `labels`, else the first one.
    private func labelledDate(_ labels: [(TicketLabels, Int?)])
        -> (date: CivilDate?, time: TicketFields.TimeOfDay?, yearless: TicketFields.DayMonth?, dateScore: Int?) {
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
        if let bestDate { return (bestDate.value.date, bestDate.value.time ?? bestTime?.value, nil, bestDate.score) }
        if let yearless = bestYearless?.value {
            return (issueDate.flatMap { yearless.resolved(onOrAfter: $0) }, yearless.time ?? bestTime?.value,
                    TicketFields.DayMonth(day: yearless.day, month: yearless.month), nil)
        }
        return (nil, bestTime?.value, nil, nil)
    }

    /// A journey's arrival: the time — with its date, or a day and month, when printed — that
    /// follows an arrival label directly (only punctuation and a weekday between: `Arrival: Sun 13
    /// Dec 2026 12:20`, `Ankunft 09:41`, `Arr 16MAR 06:30`), its day marker (`(+1)`, `-1`), and
    /// the place named on its line (after the time, else before the label: `Köln Hbf arr 10:17`).
    /// The last such arrival is the journey's end (the final leg of an itinerary). Nothing else is
    /// taken: "your arrival at the gate by 15:50" is no arrival, and a wrong one would put the
    /// end of a booking on another day.
    func arrival() -> TicketArrival? {
        var found: TicketArrival?
        var from = 0
        while let label = firstLabel(Self.journeyArrivalLabels, from: from) {
            from = label.end
            let line = tokens[label.start].line
            var index = label.end
            var reading: TicketArrival?
            while index < tokens.count, tokens[index].line == line, reading == nil {
                if let date = date(at: index), date.time != nil, tokens[date.end - 1].line == line {
                    reading = TicketArrival(date: date.date, dayMonth: nil, time: date.time!, dayOffset: nil, end: date.end)
                } else if let date = yearlessDate(at: index), let time = date.time {
                    reading = TicketArrival(date: nil, dayMonth: TicketFields.DayMonth(day: date.day, month: date.month),
                                            time: time, dayOffset: nil, end: date.end)
                } else if let (dayMonth, next) = numericDayMonth(at: index), let (time, end) = time(at: next, afterDate: true) {
                    // `arr 12.12.  10:17`, as German timetables print it.
                    reading = TicketArrival(date: nil, dayMonth: dayMonth, time: time, dayOffset: nil, end: end)
                } else if let (time, end) = time(at: index, afterDate: false) {
                    reading = TicketArrival(date: nil, dayMonth: nil, time: time, dayOffset: nil, end: end)
                } else if tokens[index].kind == .symbol || Self.weekdayWords.contains(tokens[index].folded) {
                    index += 1
                } else {
                    break
                }
            }
            guard var arrival = reading else { continue }
            arrival.dayOffset = dayMarker(at: arrival.end, line: line).map { offset, end in arrival.end = end; return offset }
            let lineRange = lineRange(of: label.start)
            arrival.placeAfter = joined(arrival.end..<lineRange.upperBound)
            arrival.placeBefore = joined(lineRange.lowerBound..<label.start)
            arrival.followsAnother = found != nil
            found = arrival
            from = arrival.end
        }
        return found
    }

    /// `12.12.` (day, month and a dot after each) and the index after it.
    private func numericDayMonth(at index: Int) -> (TicketFields.DayMonth, Int)? {
        guard let day = token(at: index), day.kind == .digits, day.text.utf8.count <= 2, let dayValue = day.number,
              isSymbol(index + 1, ["."]), let month = token(at: index + 2), month.kind == .digits, month.touchesPrevious,
              month.text.utf8.count <= 2, let monthValue = month.number, isSymbol(index + 3, ["."]),
              (1...12).contains(monthValue), (1...31).contains(dayValue) else { return nil }
        return (TicketFields.DayMonth(day: dayValue, month: monthValue), index + 4)
    }

    /// `(+1)`, `+1`, `(-1)` right after an arrival's time: the days it is from the departure's
    /// date. Returns the offset and the index after the marker.
    private func dayMarker(at index: Int, line: Int) -> (Int, Int)? {
        var next = index
        let bracketed = isSymbol(next, ["("])
        if bracketed { next += 1 }
        guard let sign = token(at: next), sign.line == line, sign.text == "+" || sign.text == "-",
              let days = token(at: next + 1), days.kind == .digits, days.touchesPrevious, let value = days.number, (1...3).contains(value)
        else { return nil }
        next += 2
        if bracketed {
            guard isSymbol(next, [")"]) else { return nil }
            next += 1
        }
        return (sign.text == "-" ? -value : value, next)
    }

    /// The tokens of the line `index` is on.
    private func lineRange(of index: Int) -> Range<Int> {
        let line = tokens[index].line
        var start = index
        while start > 0, tokens[start - 1].line == line { start -= 1 }
        var end = index
        while end < tokens.count, tokens[end].line == line { end += 1 }
        return start..<end
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
        // Day first, as everywhere but the United States. The precedence: the only reading that
        // is a date (`05/13/2027`); else the country the journey departs from (the United
        // States: month first); else a 12-hour time after it means month first (`05/04/2027
        // 7:05 PM`, as American tickets print them); else day first.
        let dayFirst = Self.civilDate(third, second, first)
        let monthFirst = separator.text == "/" ? Self.civilDate(third, first, second) : nil
        let prefersMonthFirst = departsFromTheUnitedStates ?? hasTwelveHourTime(after: index + 5)
        let date = (dayFirst != nil && monthFirst != nil) ? (prefersMonthFirst ? monthFirst : dayFirst) : (dayFirst ?? monthFirst)
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
    func labelScore(before index: Int, _ labels: [(TicketLabels, Int?)]) -> Int? {
        let line = tokens[index].line
        var last = index - 1
        while last >= max(0, index - 8), tokens[last].line >= line - 1 {
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
                                                    "inchecken",
                                                    "チェックイン")
    private static let checkOutLabels = TicketLabels(
        "check-out", "checkout", "check out", "check-out date", "return", "return date", "closes", "abreise", "saída", "uitchecken",
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
    /// What a journey's arrival is labelled with (not "inbound", a return's departure).
    static let journeyArrivalLabels = TicketLabels(
        "arrival", "arrival date", "date of arrival", "arrive", "arrives", "arr", "ankunft", "chegada", "llegada",
        "arrivée", "arrivo", "aankomst", "到着")
    /// Weekday names and their abbreviations in the seven languages, skipped between an arrival
    /// label and its date.
    static let weekdayWords: Set<String> = [
        "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "monday", "tuesday", "wednesday", "thursday",
        "friday", "saturday", "sunday", "lun", "mer", "jeu", "ven", "sam", "dim", "lundi", "mardi", "mercredi", "jeudi",
        "vendredi", "samedi", "dimanche", "mo", "di", "mi", "do", "fr", "sa", "so", "montag", "dienstag", "mittwoch",
        "donnerstag", "freitag", "samstag", "sonntag", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo",
        "segunda", "terça", "quarta", "quinta", "sexta", "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato",
        "maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag", "ma", "wo", "vr", "za", "zo",
    ]
    /// Scores for a hotel's check-out, which some hotels call the departure.
    static let checkOutScores: [(TicketLabels, Int?)] = [
        (issueLabels, nil), (notDepartureLabels, nil), (checkInLabels, -1), (arrivalLabels, -1), (checkOutLabels, 3),
        (departureLabels, 3),
    ]
    /// Scores for hotels, where the stay starts at check-in, also called arrival.
    static let hotelLabels: [(TicketLabels, Int?)] = [
        (issueLabels, nil), (notDepartureLabels, nil), (checkOutLabels, -1), (departureLabels, -1), (checkInLabels, 3),
        (arrivalLabels, 3), (plainDateLabels, 1),
    ]
}
