public import TripBoardSystem
public import TripBoardModel

/// Booking details read from the text of a ticket's first pages, as poppler extracts it from a
/// boarding pass, a train e-ticket or a hotel confirmation.
///
/// Every field is a guess for the user to confirm, so the scanners prefer leaving a field empty
/// to filling it wrongly: an issue date is never taken for the departure, a seat `12A` or a year
/// `2026` never for a flight number. The text is read as tokens (see `TicketText`), not with
/// regular expressions, which TripBoard does not link.
public struct TicketFields: Sendable, Equatable, Codable {
    /// Flight, train or hotel; other for anything else found (a bus, a concert); nil when nothing
    /// booking-like was found.
    public var kind: BookingKind?
    /// The booking reference, PNR or confirmation code: `X7K2QP`.
    public var reference: String?
    /// The flight or train number, normalized: `TP 1351`, `U2 1234`, `ICE 123`, `Eurostar 9014`.
    public var number: String?
    /// An IATA code (`LIS`) when one is printed, else the place's name (`Lisboa Santa Apolónia`).
    public var origin: String?
    /// An IATA code (`CDG`) when one is printed, else the place's name (`Porto Campanhã`).
    public var destination: String?
    /// The departure date (for a hotel, the check-in date), in the departure's own calendar.
    public var departureDate: CivilDate?
    /// The departure (or check-in) time, local to the departure station.
    public var departureTime: TimeOfDay?
    /// A journey's arrival date, when one is printed beside the arrival; a hotel's check-out date.
    public var arrivalDate: CivilDate?
    /// A journey's arrival time, local to where it arrives: a time right after an arrival label
    /// (`Arrival 11:20`, `Ankunft 13:05`, `到着 11:33`); the last such, an itinerary's end. A
    /// hotel's check-out time, when one is printed with its date.
    public var arrivalTime: TimeOfDay?
    /// The place named on the arrival's line (`Praha`, `HND`), when a known one is.
    public var arrivalPlace: String?
    /// An arrival printed with a day and month but no year (`16MAR`). Not part of the JSON.
    public var arrivalDayMonth: DayMonth?
    /// A printed day marker after the arrival's time (`(+1)` → 1). Not part of the JSON.
    public var arrivalDayOffset: Int?
    /// A hotel's (hostel's, inn's…) name, read only when the ticket is a hotel confirmation:
    /// `Hotel Avenida Palace`.
    public var hotelName: String?
    /// A hotel's address, read only from its label (`Address: Rua do Salitre 7, 1250 Lisboa`):
    /// where the stay is when its name names no place. Not part of the JSON.
    public var hotelAddress: String?
    /// The first passenger's seat, `14C`; on a train with its coach, `7/42`. Not read from a
    /// hotel confirmation or a car hire.
    public var seat: String?
    /// A departure printed as a day and month without a year (`27MAR`), when no issue date gave
    /// it one: the filing picks the year (`TicketFiling.withYear`). Not part of the JSON.
    public var departureDayMonth: DayMonth?

    /// A day of a month, in no year.
    public struct DayMonth: Sendable, Equatable {
        public var day: Int
        public var month: Int

        /// This day in `year`, if it has one (29 February).
        public func date(in year: Int) -> CivilDate? { TicketText.civilDate(year, month, day) }
    }

    enum CodingKeys: String, CodingKey {
        case kind, reference, number, origin, destination, departureDate, departureTime, arrivalDate, arrivalTime, arrivalPlace, hotelName, seat
    }

    public init(kind: BookingKind? = nil, reference: String? = nil, number: String? = nil, origin: String? = nil,
                destination: String? = nil, departureDate: CivilDate? = nil, departureTime: TimeOfDay? = nil,
                hotelName: String? = nil, seat: String? = nil) {
        self.kind = kind
        self.reference = reference
        self.number = number
        self.origin = origin
        self.destination = destination
        self.departureDate = departureDate
        self.departureTime = departureTime
        self.hotelName = hotelName
        self.seat = seat
    }

    /// Reads the fields from a ticket's text (its first 100,000 characters); fields that cannot be
    /// found are nil.
    public static func extract(from text: String) -> TicketFields {
        var ticket = TicketText(text)
        let reference = ticket.bookingReference()
        // The booking reference read as a flight number (`予約番号: E47291` → "E4 7291") is none.
        let service = ticket.serviceNumber().flatMap { found in
            String(found.text.filter { $0 != " " }) == reference ? nil : found
        }
        let route = ticket.route()
        let origin = route?.origin ?? ticket.labelledDeparture()
        // The country the journey departs from decides a slashed date that both readings fit.
        ticket.departsFromTheUnitedStates = origin.flatMap { PlaceZones.airport($0) ?? PlaceZones.place(in: $0)?.zone }
            .map { PlaceZones.unitedStatesZones.contains($0) }
        let likelyKind = ticket.likelyKind(service: service)
        let departure = ticket.departure(forHotel: likelyKind == .hotel)
        var fields = TicketFields(reference: reference, number: service?.text, origin: origin,
                                  destination: route?.destination, departureDate: departure.date,
                                  departureTime: departure.time)
        fields.kind = likelyKind ?? (fields == TicketFields() ? nil : .other)
        fields.departureDayMonth = departure.date == nil ? departure.yearless : nil
        if fields.kind != .hotel, fields.kind != nil {
            // Where a journey ends: a time labelled as the arrival, with its date when one is printed.
            // The last leg's arrival names its own place, or is left out: the route's destination
            // is the first leg's, and no end is better than a wrong one.
            if let arrival = ticket.arrival(),
               case let place = Self.place(named: arrival.placeAfter) ?? Self.place(named: arrival.placeBefore),
               place != nil || !arrival.followsAnother {
                (fields.arrivalDate, fields.arrivalTime) = (arrival.date, arrival.time)
                (fields.arrivalDayMonth, fields.arrivalDayOffset) = (arrival.dayMonth, arrival.dayOffset)
                fields.arrivalPlace = place
            }
        }
        switch fields.kind {
        case .hotel?:
            fields.hotelName = ticket.lodgingName()
            fields.hotelAddress = ticket.lodgingAddress(under: fields.hotelName)
            // The stay ends at check-out, on the hotel's clock.
            if let checkOut = ticket.checkOut(), departure.date.map({ checkOut.date > $0 }) ?? false {
                (fields.arrivalDate, fields.arrivalTime) = (checkOut.date, checkOut.time)
            }
        // A car hire's "child seat" is no seat; a document of no kind is no ticket.
        case .car?, nil: break
        default: fields.seat = ticket.seat()
        }
        return fields
    }

    /// An airport code in brackets (`(HND)`) or the first known place `text` names.
    static func place(named text: String) -> String? {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "(") {
            let code = rest[rest.index(after: open)...].prefix(4)
            if code.count == 4, code.last == ")", code.dropLast().allSatisfy({ $0.isASCII && $0.isUppercase }),
               PlaceZones.airport(String(code.dropLast())) != nil {
                return String(code.dropLast())
            }
            rest = rest[rest.index(after: open)...]
        }
        return PlaceZones.place(in: text)?.name
    }

    /// What was read, in one line for the person who shared the ticket: `flight, TP 1351,
    /// LIS → CDG, 2026-12-12 07:35, reference X7K2QP`.
    public var summary: String {
        var parts: [String] = []
        if let kind { parts.append(kind.rawValue) }
        if let hotelName { parts.append(hotelName) }
        if let number { parts.append(number) }
        if let origin, let destination {
            parts.append(origin + " → " + destination)
        } else if let place = destination ?? origin {
            parts.append(place)
        }
        if let date = departureDate {
            parts.append(date.description + (departureTime.map { " " + $0.description } ?? "")
                         + (arrivalTime.map { " → " + (arrivalDate.map { $0.description + " " } ?? "") + $0.description } ?? ""))
        }
        if let reference { parts.append("reference " + reference) }
        if let seat { parts.append("seat " + seat) }
        return parts.isEmpty ? "nothing (the booking is named after the file)" : parts.joined(separator: ", ")
    }

    /// A title for the booking: `TP 1351 LIS → CDG`, `ICE 123`, `Lisbon → Madrid`, `Train to Porto`,
    /// `Hotel Avenida Palace`, `Hotel booking X7K2QP`, `Flight`; nil when nothing was found.
    public var suggestedTitle: String? {
        if kind == .hotel, let hotelName { return hotelName }
        let route = origin.flatMap { origin in destination.map { origin + " → " + $0 } }
        switch (number, route) {
        case let (number?, route?): return number + " " + route
        case let (number?, nil): return destination.map { number + " to " + $0 } ?? number
        case let (nil, route?): return route
        case (nil, nil): break
        }
        let noun = Self.noun(for: kind)
        if let destination { return (noun ?? "Trip") + " to " + destination }
        if let origin { return (noun ?? "Trip") + " from " + origin }
        if let reference { return noun.map { $0 + " booking " + reference } ?? "Booking " + reference }
        // A document of no kind with nothing to name it by: the file's name says more than "Booking".
        return noun
    }

    /// What to call a booking of `kind` in a title; nil when the kind says nothing.
    private static func noun(for kind: BookingKind?) -> String? {
        switch kind {
        case .flight: "Flight"
        case .train: "Train"
        case .hotel: "Hotel"
        case .car: "Car rental"
        case .event: "Event"
        case .other, nil: nil
        }
    }
}

// MARK: - Kind

extension TicketText {
    /// The kind the text's words point to most: a flight or train number counts most, then names
    /// like "boarding pass" or "SNCF", then common words like "gate" or "room". Buses, which
    /// `BookingKind` does not have, count as `.other` so that "coach" alone does not make a train.
    func likelyKind(service: ServiceNumber?) -> BookingKind? {
        var best: (kind: BookingKind, score: Int)?
        for (kind, keywords) in Self.kindKeywords {
            var score = service?.kind == kind ? 4 : 0
            for (labels, weight) in keywords where firstLabel(labels) != nil { score += weight }
            // Ties go to the earlier row: flight, train, hotel, bus.
            if score > 0, score > best?.score ?? 0 { best = (kind, score) }
        }
        return best?.kind
    }

    private static let kindKeywords: [(BookingKind, [(TicketLabels, Int)])] = [
        (.flight, [
            (TicketLabels("boarding pass", "bordkarte", "carte d'embarquement", "cartão de embarque"), 3),
            (TicketLabels("airline", "airlines", "airways", "air lines"), 2),
            (TicketLabels("flight", "flights"), 1), (TicketLabels("gate"), 1), (TicketLabels("airport"), 1),
        ]),
        (.train, [
            (TicketLabels("sncf", "deutsche bahn", "db fernverkehr", "eurostar", "cp comboios", "comboios de portugal",
                          "renfe", "trenitalia", "sbb", "öbb", "amtrak", "jr central", "jr east", "jr west", "shinkansen",
                          "新幹線", "ns international"), 3),
            (TicketLabels("train", "trains"), 1), (TicketLabels("coach"), 1), (TicketLabels("carriage"), 1),
            (TicketLabels("platform"), 1), (TicketLabels("rail", "railway", "railways"), 1),
        ]),
        (.hotel, [
            (TicketLabels("hotel"), 3), (TicketLabels("ryokan", "hostel", "pousada", "guesthouse", "bed and breakfast", "b&b", "apartments",
                                                               "aparthotel", "旅館"), 3),
            // The kinds of lodging in the seven languages and Japanese: `Hôtel des Arts` with
            // `Arrivée`/`Départ` is a stay, not a journey.
            (TicketLabels("hôtel", "hostal", "albergo", "pensão", "pensión", "pensione", "gasthof", "gasthaus", "auberge",
                          "parador", "albergue", "minshuku", "motel", "ホテル"), 3),
            (TicketLabels("check-in", "checkin", "anreise", "inchecken", "チェックイン"), 1),
            (TicketLabels("check-out", "checkout", "uitchecken"), 1), (TicketLabels("nights", "night"), 1),
            (TicketLabels("room", "rooms"), 1),
        ]),
        (.other, [
            (TicketLabels("flixbus", "alsa", "national express", "bus station", "coach station"), 3),
            (TicketLabels("bus"), 2),
        ]),
    ]
}
