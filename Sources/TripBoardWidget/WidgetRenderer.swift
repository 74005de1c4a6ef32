package import TripBoardSystem
package import TripBoardModel
import TripBoardCommandLine

/// How the terminal can show text.
package struct WidgetStyle {
    package var unicode: Bool
    package var colour: Bool

    package init(unicode: Bool, colour: Bool) {
        self.unicode = unicode
        self.colour = colour
    }

    /// UTF-8 when the locale says so (LC_ALL › LC_CTYPE › LANG); colour only on a terminal,
    /// without a non-empty NO_COLOR (https://no-color.org) and not TERM=dumb.
    package init(environment: [String: String], isTerminal: Bool) {
        let locale = [environment["LC_ALL"], environment["LC_CTYPE"], environment["LANG"]]
            .compactMap { $0 }.first { !$0.isEmpty } ?? ""
        let lowered = locale.lowercased()
        unicode = lowered.includes("utf-8") || lowered.includes("utf8")
        colour = isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }
}

/// Turns a `WidgetAnswer` into the text or JSON the widget prints.
package enum WidgetRenderer {
    package static func render(_ answer: WidgetAnswer, json: Bool, style: WidgetStyle, compactJSON: Bool = false) throws -> [UInt8] {
        if json { return try Console.json(WidgetJSON(answer), pretty: !compactJSON) + [0x0a] }
        return Array(text(answer, style: style).utf8)
    }

    package static func text(_ answer: WidgetAnswer, style: WidgetStyle) -> String {
        let dash = style.unicode ? " — " : " - "
        let dot = style.unicode ? " · " : " - "
        switch answer.status {
        case .noTrip: return "No upcoming trips\n"
        case .updating: return style.unicode ? "TripBoard is updating…\n" : "TripBoard is updating...\n"
        case .awaitingFirstUnlock: return "Unlock to see your next trip\n"
        case .ongoing, .upcoming: break
        }
        guard let next = answer.next else { return "No upcoming trips\n" }
        let trip = next.trip
        let name = style.colour ? "\u{1B}[1m\(trip.name)\u{1B}[0m" : trip.name
        var line = name + dash
        if let day = next.dayOfTrip {
            line += "day \(day) of \(trip.dayCount)"
        } else if let days = next.daysUntilStart {
            line += (days == 1 ? "tomorrow" : "in \(days) days") + dot + range(trip.startDate, trip.endDate, style: style)
        }
        var text = line + "\n"
        if let booking = next.nextBooking {
            // Appended, not `[String].joined`: the generic join costs its conformance checks at
            // run time (85,000 instructions, 3% of an answer with a booking line).
            var bookingLine = icon(booking.kind, style: style) + " " + booking.title
            var times = BookingTimeText()
            if next.underWay {
                // Under way: until when, on its own clock; a day's booking is today's.
                let until = booking.endsAt.flatMap { times.text($0, zone: booking.zoneOfEnd, tripYear: trip.startDate.year) }
                bookingLine += dot + (until.map { "now, until " + $0 } ?? "today")
            } else if let when = times.text(booking.startsAt, zone: booking.zone, tripYear: trip.startDate.year) {
                bookingLine += dot + when
            }
            BookingColumn.appendLabelled(booking, separator: dot, to: &bookingLine)
            text += bookingLine + "\n"
        }
        return text
    }

    /// `Sat 12 Dec → Tue 15 Dec 2026`, or with both years when they differ.
    package static func range(_ start: CivilDate, _ end: CivilDate, style: WidgetStyle) -> String {
        let arrow = style.unicode ? " → " : " -> "
        let day = BookingTimeText.day
        if start.year == end.year { return day(start) + arrow + day(end) + " \(end.year)" }
        return day(start) + " \(start.year)" + arrow + day(end) + " \(end.year)"
    }

    package static func icon(_ kind: BookingKind, style: WidgetStyle) -> String {
        guard style.unicode else { return "[\(kind.rawValue)]" }
        switch kind {
        case .flight: return "✈"
        case .train: return "🚆"
        case .hotel: return "🏨"
        case .car: return "🚗"
        case .event: return "🎫"
        case .other: return "•"
        }
    }
}

/// `widget --json`; keys documented in docs/cli.md.
package struct WidgetJSON: Encodable {
    package let answer: WidgetAnswer

    package init(_ answer: WidgetAnswer) { self.answer = answer }

    package enum CodingKeys: String, CodingKey { case status, trip, daysUntilStart, dayOfTrip, tripLength, nextBooking, nextBookingUnderWay }

    // By hand for its shape: the answer's parts, flat, with the trip's length computed. Each key
    // is there when there is no next trip, as `null` (the encoder writes every nil so).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(answer.status.rawValue, forKey: .status)
        try container.encode(answer.next?.trip, forKey: .trip)
        try container.encode(answer.next?.daysUntilStart, forKey: .daysUntilStart)
        try container.encode(answer.next?.dayOfTrip, forKey: .dayOfTrip)
        try container.encode(answer.next?.trip.dayCount, forKey: .tripLength)
        try container.encode(answer.next?.nextBooking, forKey: .nextBooking)
        try container.encode(answer.next.flatMap { $0.nextBooking == nil ? nil : $0.underWay }, forKey: .nextBookingUnderWay)
    }
}
