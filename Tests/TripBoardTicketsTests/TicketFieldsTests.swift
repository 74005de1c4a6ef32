import Foundation
import Testing
@testable import TripBoardTickets
import TripBoardStorage
import TripBoardSystem
import TripBoardModel

/// `TicketFields.extract(from:)`: booking details from the text poppler returns for a ticket's first pages.
struct TicketFieldsTests {
    /// A whole document as poppler prints it (labels and values in reading order) and what it holds.
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let expected: TicketFields
        let title: String?
        var testDescription: String { name }
    }

    static let samples: [Sample] = [
        Sample(name: "TAP boarding pass, values under their labels", text: """
            TAP AIR PORTUGAL
            BOARDING PASS / CARTÃO DE EMBARQUE
            Name
            SMITH/JOHN MR
            From
            LISBON (LIS)
            To
            PARIS CHARLES DE GAULLE (CDG)
            Flight
            TP1351
            Date
            12DEC2026
            Departure
            07:35
            Boarding time
            06:55
            Gate        Seat
            14          12A
            Booking reference
            X7K2QP
            Ticket number 0472123456789
            Issued 01DEC2026 18:20
            """,
            expected: fields(.flight, "X7K2QP", "TP 1351", "LIS", "CDG", "2026-12-12", "07:35", seat: "12A"),
            title: "TP 1351 LIS → CDG"),
        Sample(name: "TAP e-ticket receipt, a table with yearless dates", text: """
            ELECTRONIC TICKET RECEIPT
            Booking Reference: X7K2QP     Ticket Number: 047 2123456789
            Issue date: 01DEC2026   Issuing office: LISBON
            FLIGHT   FROM            TO                DEPART        ARRIVE     CLASS  STATUS  BAG
            TP 1351  LISBON LIS T1   PARIS CDG T2      12DEC 0735    12DEC 1050  K      OK      1PC
            TP 1350  PARIS CDG T2    LISBON LIS T1     19DEC 1205    19DEC 1330  K      OK      1PC
            Fare calculation: LIS TP PAR 45.00 TP LIS 45.00 NUC90.00 END
            Taxes: 12.34YQ 5.67PT 3.21FR    Total EUR 270.55
            """,
            expected: fields(.flight, "X7K2QP", "TP 1351", nil, nil, "2026-12-12", "07:35"),
            title: "TP 1351"),
        Sample(name: "easyJet boarding pass, one line per fact", text: """
            easyJet
            Boarding pass
            U2 1234   Lisbon (LIS) → London Gatwick (LGW)
            Sat 12 Dec 2026, 07:35
            Seat 12A    Bag drop closes 06:55
            Booking reference: K9Z3TB
            """,
            expected: fields(.flight, "K9Z3TB", "U2 1234", "LIS", "LGW", "2026-12-12", "07:35", seat: "12A"),
            title: "U2 1234 LIS → LGW"),
        Sample(name: "Deutsche Bahn e-ticket", text: """
            DB Fernverkehr AG
            Online-Ticket
            Booking code: Q5PW2M
            Outward journey: Sat, 12 Dec 2026
            Frankfurt(Main)Hbf → Köln Hbf
            Station              Date     Time    Platform   Products
            Frankfurt(Main)Hbf   dep 12.12.  09:13   7    ICE 123
            Köln Hbf             arr 12.12.  10:17   3
            Coach 21, Seat 45
            Issued 01.12.2026 14:02
            """,
            expected: fields(.train, "Q5PW2M", "ICE 123", "Frankfurt(Main)Hbf", "Köln Hbf", "2026-12-12", "09:13", seat: "21/45",
                             arrival: (nil, "10:17"), arrivalPlace: "Köln", arrivalDayMonth: (12, 12)),
            title: "ICE 123 Frankfurt(Main)Hbf → Köln Hbf"),
        Sample(name: "CP Alfa Pendular ticket", text: """
            CP Comboios de Portugal
            Alfa Pendular 133
            Lisboa Santa Apolónia → Porto Campanhã
            Departure 05.01.2027 10:31    Arrival 05.01.2027 13:20
            Carriage 4   Seat 62
            Ticket no. 8312 7730 1124
            Reservation code: CPX4F9
            """,
            expected: fields(.train, "CPX4F9", "Alfa Pendular 133", "Lisboa Santa Apolónia", "Porto Campanhã",
                             "2027-01-05", "10:31", seat: "4/62", arrival: ("2027-01-05", "13:20")),
            title: "Alfa Pendular 133 Lisboa Santa Apolónia → Porto Campanhã"),
        Sample(name: "Eurostar e-ticket", text: """
            EUROSTAR
            Your e-ticket
            Booking reference: ZK4RTW
            London St Pancras Int'l → Paris Gare du Nord
            Eurostar 9014    Coach 12    Seat 61
            Departure: Saturday 12 December 2026 at 08:01
            """,
            expected: fields(.train, "ZK4RTW", "Eurostar 9014", "London St Pancras Int'l", "Paris Gare du Nord",
                             "2026-12-12", "08:01", seat: "12/61"),
            title: "Eurostar 9014 London St Pancras Int'l → Paris Gare du Nord"),
        Sample(name: "hotel confirmation", text: """
            Hotel Avenida Palace
            Booking confirmation
            Confirmation number: HX48K2Q
            Guest: John Smith
            Check-in: Sat 12 Dec 2026 (from 15:00)
            Check-out: Tue 15 Dec 2026 (until 12:00)
            3 nights, 1 room, 2 adults
            Booked on 1 Dec 2026
            """,
            expected: fields(.hotel, "HX48K2Q", nil, nil, nil, "2026-12-12", "15:00", hotel: "Hotel Avenida Palace", checkOut: "2026-12-15"),
            title: "Hotel Avenida Palace"),
        Sample(name: "hotel that calls check-in arrival", text: """
            Pensão Lisboa
            Your reservation at our hotel
            Arrival: 12.12.2026    Departure: 15.12.2026
            Room: Double, 3 nights
            """,
            expected: fields(.hotel, nil, nil, nil, nil, "2026-12-12", nil, hotel: "Pensão Lisboa", checkOut: "2026-12-15"),
            title: "Pensão Lisboa"),
        Sample(name: "FlixBus ticket", text: """
            FlixBus
            Booking number #3049582114
            Lisbon (Oriente) → Madrid (Estación Sur)
            Departure: 12.12.2026 07:35
            Arrival: 12.12.2026 16:20
            Bus 042    Platform 5
            """,
            expected: fields(.other, "3049582114", nil, "Lisbon (Oriente)", "Madrid (Estación Sur)", "2026-12-12", "07:35",
                             arrival: ("2026-12-12", "16:20")),
            title: "Lisbon (Oriente) → Madrid (Estación Sur)"),
        Sample(name: "café receipt, no booking", text: """
            Pastéis de Belém
            Rua de Belém 84-92, 1300-085 Lisboa
            NIF 500 000 000
            2 x Pastel de Belém     2.80
            1 x Galão               1.60
            Total EUR               4.40
            Paid by card 03.12.2026 14:02
            Thank you!
            """,
            expected: TicketFields(), title: nil),
        Sample(name: "concert ticket with a date only", text: """
            Coliseu dos Recreios
            Sat 12 Dec 2026 21:00   Doors 20:00
            Row F   Seat 12
            """,
            expected: fields(.other, nil, nil, nil, nil, "2026-12-12", "21:00", seat: "F/12"), title: nil),
        Sample(name: "empty page", text: "", expected: TicketFields(), title: nil),
    ]

    @Test(arguments: samples)
    func readsAWholeDocument(sample: Sample) {
        let extracted = TicketFields.extract(from: sample.text)
        #expect(extracted == sample.expected)
        #expect(extracted.suggestedTitle == sample.title)
    }

    // MARK: - Dates and times

    @Test(arguments: [
        ("12 DEC 2026 07:35", "2026-12-12", "07:35"), ("12DEC2026 0735", "2026-12-12", "07:35"),
        ("12 Dec 2026, 07:35", "2026-12-12", "07:35"), ("12 dec 2026 7:35", "2026-12-12", "07:35"),
        ("12   DEC    2026     07:35", "2026-12-12", "07:35"), ("12-Dec-2026 07.35", "2026-12-12", "07:35"),
        ("12 DEC 2026 07h35", "2026-12-12", "07:35"), ("Sat 12 Dec 2026 07:35", "2026-12-12", "07:35"),
        ("Saturday, 12 December 2026 at 7:35", "2026-12-12", "07:35"), ("12th December 2026", "2026-12-12", nil),
        ("December 12, 2026 7:35 PM", "2026-12-12", "19:35"), ("Sept 1 2026 12:05 am", "2026-09-01", "00:05"),
        ("2027-01-05 10:31", "2027-01-05", "10:31"), ("2027-01-05T10:31", "2027-01-05", "10:31"),
        ("2027-01-05T10:31:00Z", "2027-01-05", "10:31"), ("05.01.2027 10:31", "2027-01-05", "10:31"),
        ("05/01/2027 10:31", "2027-01-05", "10:31"), ("5.1.2027 10:31", "2027-01-05", "10:31"),
        ("05-01-2027 - 10:31", "2027-01-05", "10:31"), ("29 FEB 2028", "2028-02-29", nil),
        ("12DEC26 07:35", "2026-12-12", "07:35"), ("Issued 20DEC2026\nDeparture 05JAN 07:35", "2027-01-05", "07:35"),
        ("Date 12DEC\nDeparture 07:35", nil, "07:35"), ("Departure\n12 DEC 2026\n07:35", "2026-12-12", "07:35"),
        ("Date:\r\n12 DEC 2026\r\nDeparture time:\r\n07:35", "2026-12-12", "07:35"),
        ("Departure: 07:35", nil, "07:35"), ("DEP 07:35 ARR 10:50", nil, "07:35"),
        ("Arrival 10:50", nil, nil),
    ] as [(String, String?, String?)])
    func readsDateAndTimeForms(text: String, date: String?, time: String?) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.departureDate == date.flatMap { CivilDate($0) })
        #expect(extracted.departureTime == time.flatMap { TicketFields.TimeOfDay($0) })
    }

    /// Month names in French, German, Spanish, Portuguese, Italian and Dutch, with their weekday
    /// before them and `de`/`di` between the parts; Japanese and Chinese dates; the labels.
    @Test(arguments: [
        ("Départ : lundi 12 avr. 2027 07:35", "2027-04-12", "07:35"), ("Date du voyage : 3 février 2027 à 10:15", "2027-02-03", "10:15"),
        ("Abfahrt: Sonntag, 14. März 2027 um 09:13", "2027-03-14", "09:13"), ("Reisedatum 2. Dez. 2027", "2027-12-02", nil),
        ("Salida: 3 de mayo de 2027 a las 10:00", "2027-05-03", "10:00"), ("Fecha 21 dic 2027", "2027-12-21", nil),
        ("Partida: 14 de setembro de 2027 às 08:40", "2027-09-14", "08:40"), ("Data 1 de março de 2027", "2027-03-01", nil),
        ("Partenza 14 maggio 2027 ore 09:05", "2027-05-14", "09:05"), ("Data di viaggio: 2 gen 2027", "2027-01-02", nil),
        ("Vertrek: zaterdag 13 maart 2027 om 11:20", "2027-03-13", "11:20"), ("Datum 1 okt 2027", "2027-10-01", nil),
        ("出発 2027年5月14日 09:09", "2027-05-14", "09:09"), ("乗車日 2027年12月1日", "2027-12-01", nil),
        ("Ausgestellt am 01.03.2027\nAbfahrt 14.03.2027 09:13", "2027-03-14", "09:13"),
        ("Émis le 1 mars 2027\nDépart 12 avril 2027", "2027-04-12", nil),
        ("発行日 2027年3月1日\n出発 2027年5月14日", "2027-05-14", nil),
    ] as [(String, String?, String?)])
    func readsDatesInSevenLanguagesAndJapanese(text: String, date: String?, time: String?) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.departureDate == date.flatMap { CivilDate($0) })
        #expect(extracted.departureTime == time.flatMap { TicketFields.TimeOfDay($0) })
    }

    /// Named trains (Japan's Shinkansen by service name, Amtrak's) and lodging of every kind.
    @Test(arguments: [
        ("JR Central\nShinkansen Nozomi 21\nDate 14 MAY 2027 09:09", BookingKind.train, "Nozomi 21", nil as String?),
        ("Amtrak\nAcela 2151\nMay 14, 2027 7:05 AM", .train, "Acela 2151", nil),
        // A Shinkansen's number with its counter, glued to its name or not; a car number (号車) is none.
        ("JR東海\n新幹線 のぞみ21号 新大阪 → 東京\n2027年5月14日 09:09", .train, "Nozomi 21", nil),
        ("JR東海\n新幹線 ひかり 505号\n2027年5月14日 09:09", .train, "Hikari 505", nil),
        ("Trenitalia\nFrecciargento 8503\n14 maggio 2027 09:05", .train, "Frecciargento 8503", nil),
        ("Ryokan Sawaya\nCheck-in 14 May 2027 15:00\nConfirmation number 84122394", .hotel, nil, "Ryokan Sawaya"),
        ("Casa do Bairro B&B\nCheck-in 14 May 2027 15:00\nBooking reference ZZ12345", .hotel, nil, "Casa do Bairro B&B"),
        ("Alfama Apartments\nCheck-in 14 May 2027 15:00\nBooking reference ZZ12346", .hotel, nil, "Alfama Apartments"),
        ("Casa Azul B&B Sevilla\nConfirmación de reserva\nLlegada: jueves, 8 de abril de 2027, 14:00\nSalida: 11 de abril de 2027",
         .hotel, nil, "Casa Azul B&B Sevilla"),
        ("Canal View Apartments Amsterdam\nAankomst: vrijdag 18 juni 2027 15:00\nVertrek: 21 juni 2027 10:00", .hotel, nil,
         "Canal View Apartments Amsterdam"),
    ] as [(String, BookingKind, String?, String?)])
    func readsNamedTrainsAndLodgingOfEveryKind(text: String, kind: BookingKind, number: String?, hotel: String?) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.kind == kind && extracted.number == number && extracted.hotelName == hotel, "\(extracted)")
    }

    /// Numeric dates: day first, unless only month first is a date, or a 12-hour time follows
    /// (an American ticket); dots and hyphens are always day first.
    @Test(arguments: [
        ("Date 05/04/2027 07:05", "2027-04-05", "07:05"), ("Date 05/13/2027 07:05", "2027-05-13", "07:05"),
        ("Date 05/04/2027 7:05 PM", "2027-05-04", "19:05"), ("Date 13/05/2027 7:05 PM", "2027-05-13", "19:05"),
        ("Datum 05.04.2027 07:05", "2027-04-05", "07:05"), ("Date 05-13-2027", nil, nil),
    ] as [(String, String?, String?)])
    func readsNumericDatesByTheirOnlyReadingOrTheClock(text: String, date: String?, time: String?) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.departureDate == date.flatMap { CivilDate($0) })
        #expect(extracted.departureTime == time.flatMap { TicketFields.TimeOfDay($0) })
    }

    /// The precedence for a slashed date both readings fit: the country the journey departs from
    /// (the United States: month first; elsewhere day first, whatever the clock), before the
    /// 12-hour clock; the only valid reading before either.
    @Test(arguments: [
        ("JFK → LAX\nDeparture 05/04/2027 07:05", "2027-05-04"), ("Chicago → Denver\nDeparture 05/04/2027 07:05", "2027-05-04"),
        ("LHR → JFK\nDeparture 05/04/2027 7:05 PM", "2027-04-05"), ("Lisboa → Porto\nData 05/04/2027 07:05", "2027-04-05"),
        ("JFK → LHR\nDeparture 13/05/2027 07:05", "2027-05-13"), ("LHR → JFK\nDeparture 05/13/2027 07:05", "2027-05-13"),
        ("Departure 05/04/2027 7:05 PM", "2027-05-04"), ("Honolulu → Tokyo\nDeparture 05/04/2027 07:05", "2027-05-04"),
    ] as [(String, String)])
    func theDepartureCountryDecidesASlashedDateBothReadingsFit(text: String, date: String) {
        #expect(TicketFields.extract(from: text).departureDate == CivilDate(date), "\(text)")
    }

    /// References and seats labelled in French, Portuguese, Spanish, German, Dutch and Japanese.
    @Test(arguments: [
        ("SNCF\nTrain TGV 6607\nRéférence: QZLM4T", "QZLM4T", nil as String?),
        ("Air France\nRéf. de réservation: HZ7P2L\nSiège 18C", "HZ7P2L", "18C"),
        ("CP Comboios de Portugal\nReferência: 8K2M4P\nCarruagem 3 Lugar 54", "8K2M4P", "3/54"),
        ("NS International\nBoekingsnummer: NX4R7Q\nRijtuig 26 Plaats 61", "NX4R7Q", "26/61"),
        ("Renfe\nAVE 03073\nLocalizador: R7X2KQ\nCoche 5 Plaza 08D", "R7X2KQ", "5/08D"),
        ("Hotel Zum Ritter\nReservierungsnummer: 77318842\nAnreise: 12.03.2027", "77318842", nil),
        ("Casa Azul\nNúmero de reserva: 55201187\nCheck-in 8 April 2027", "55201187", nil),
        ("JR東海\n予約番号: E47291\n新幹線 のぞみ 21号", "E47291", nil),
    ] as [(String, String?, String?)])
    func readsReferencesAndSeatsInOtherLanguages(text: String, reference: String?, seat: String?) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.reference == reference && extracted.seat == seat, "\(extracted)")
    }

    /// A booking reference that looks like a flight number (`E47291`) is the reference only.
    @Test func aReferenceIsNeverAlsoAFlightNumber() {
        let extracted = TicketFields.extract(from: "JR東海 新幹線\n予約番号: E47291\n出発 2027年5月14日 10:03")
        #expect(extracted.reference == "E47291" && extracted.number == nil && extracted.kind != .flight, "\(extracted)")
    }

    /// A departure and an arrival each with its station, a time between: the route.
    @Test(arguments: [
        ("SNCF\nDépart 07h43 Paris Gare de Lyon\nArrivée 09h41 Lyon Part-Dieu\nTGV INOUI n° 6607", "Paris Gare de Lyon", "Lyon Part-Dieu", "TGV 6607"),
        ("Trenitalia\nPartenza 09:05 Milano Centrale\nArrivo 12:15 Roma Termini\nFrecciarossa 9520", "Milano Centrale", "Roma Termini", "Frecciarossa 9520"),
        ("NS International\nVertrek 10:54 Amsterdam Centraal\nAankomst 14:55 Frankfurt (Main) Hbf\nICE Nr. 123", "Amsterdam Centraal", "Frankfurt (Main) Hbf", "ICE 123"),
    ] as [(String, String, String, String)])
    func readsARouteFromItsDepartureAndArrivalLabels(text: String, origin: String, destination: String, number: String) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.origin == origin && extracted.destination == destination && extracted.number == number, "\(extracted)")
    }

    /// A hotel's check-in and check-out labelled in German and Japanese.
    @Test(arguments: [
        ("Hotel Sacher\nAnreise: 12.03.2027\nAbreise: 15.03.2027", "2027-03-12"),
        ("Ryokan Sawaya\nチェックアウト 2027年5月16日\nチェックイン 2027年5月14日", "2027-05-14"),
        ("Casa Azul B&B Sevilla\nSalida: 11 de abril de 2027\nLlegada: jueves, 8 de abril de 2027, 14:00", "2027-04-08"),
        ("Canal View Apartments Amsterdam\nVertrek: 21 juni 2027 10:00\nAankomst: vrijdag 18 juni 2027 15:00", "2027-06-18"),
    ])
    func readsCheckInLabelsInOtherLanguages(text: String, date: String) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.departureDate == CivilDate(date), "\(extracted)")
    }

    @Test(arguments: [
        "31 FEB 2026", "31 FEB", "30.02.2026", "12 DEC 26", "2026-13-01", "12/2026", "2026", "12 DEC", "12.12.",
        "Gate 12 out 2027", "12 set 2027", "2 ago 2027", "2027年13月1日", "2027年2月30日",
        "05.01.27",
        "12 DECEMBRO 2026", "Total 12.50 EUR", "25:00", "12:60", "1:5", "ratio 3:2", "10 x 12 mm", "1200",
    ])
    func findsNoDateOrTimeInLookalikes(text: String) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.departureDate == nil)
        #expect(extracted.departureTime == nil)
    }

    @Test(arguments: [
        ("Issued 01 DEC 2026 14:02\nDeparture 12 DEC 2026 07:35", "2026-12-12", "07:35"),
        ("Date of issue: 01.12.2026\nTravel date: 12.12.2026", "2026-12-12", nil),
        ("Printed 2026-12-01 09:00\n2026-12-12 07:35", "2026-12-12", "07:35"),
        ("Booking date 01 Dec 2026\nDate 12 Dec 2026", "2026-12-12", nil),
        ("Arrival 13 DEC 2026 10:50\nDeparture 12 DEC 2026 23:35", "2026-12-12", "23:35"),
        ("Date 12DEC2026 Boarding time 06:55 Departure time 07:35", "2026-12-12", "07:35"),
        ("Boarding 12DEC2026 06:55", "2026-12-12", "06:55"),
        ("Date of birth 14 MAR 1985\nFlight date 12 DEC 2026", "2026-12-12", nil),
        ("Paid 01.12.2026 14:02", nil, nil), ("Valid 12.12.2026 - 15.12.2026", "2026-12-12", nil),
        ("Journey time 2h35\nDeparture 12 Dec 2026", "2026-12-12", nil), ("Gate closes 07:15", nil, nil),
        ("Hotel\nDeparture: 15.12.2026\nArrival: 12.12.2026", "2026-12-12", nil),
    ] as [(String, String?, String?)])
    func prefersTheDepartureOverIssueAndArrivalDates(text: String, date: String?, time: String?) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.departureDate == date.flatMap { CivilDate($0) })
        #expect(extracted.departureTime == time.flatMap { TicketFields.TimeOfDay($0) })
    }

    // MARK: - References

    @Test(arguments: [
        ("Booking reference: X7K2QP", "X7K2QP"), ("BOOKING REFERENCE X7K2QP", "X7K2QP"),
        ("booking ref. X7K2QP", "X7K2QP"), ("Booking Ref:\nX7K2QP", "X7K2QP"),
        ("Reference: ABC12", "ABC12"), ("Ref ABCD1234", "ABCD1234"),
        ("PNR: X7K2QP", "X7K2QP"), ("Record locator   X7K2QP", "X7K2QP"),
        ("Confirmation number: HX48K2Q", "HX48K2Q"), ("Confirmation Code HX48K2Q", "HX48K2Q"),
        ("Booking code: Q5PW2M", "Q5PW2M"), ("Reservation number: RS12345", "RS12345"),
        ("Booking reference (PNR): X7K2QP", "X7K2QP"), ("Référence de dossier : QWERTY", "QWERTY"),
        ("Re\u{301}fe\u{301}rence de dossier : QWERTY", "QWERTY"),  // decomposed accents
        ("Your booking reference is X7K2QP.", "X7K2QP"), ("Booking reference   Flight\nX7K2QP   TP1351", "X7K2QP"),
        ("Payment ref: PAY55512\nBooking reference: X7K2QP", "X7K2QP"), ("Reference: 12345678", nil),
        ("Booking reference: X7K2", nil), ("PNR: X7K2QPAB9", nil),
        ("Ref: x7k2qp", nil), ("Booking reference: BOOKING", nil),
        ("Booking reference: none\nFlight TP1351", nil), ("Reference number", nil),
        ("Reservation details: SINGLE ROOM", nil), ("XPNR X7K2QP", nil),
        ("X7K2QP", nil),
    ] as [(String, String?)])
    func readsTheReferenceAfterALabel(text: String, reference: String?) {
        #expect(TicketFields.extract(from: text).reference == reference)
    }

    // MARK: - Flight and train numbers

    @Test(arguments: [
        ("TP1351", "TP 1351", BookingKind.flight), ("TP 1351", "TP 1351", .flight),
        ("Flight: TP  1351", "TP 1351", .flight), ("U2 1234", "U2 1234", .flight),
        ("U21234", "U2 1234", .flight), ("U20123", "U2 123", .flight),
        ("FR 8347", "FR 8347", .flight), ("FR8347", "FR 8347", .flight),
        ("9W123", "9W 123", .flight), ("Flight LH 0456", "LH 456", .flight),
        ("Flight no. AM 12", "AM 12", .flight), ("Flight\nBA 1", "BA 1", .flight),
        ("Seat 12A  Flight TP1351", "TP 1351", .flight), ("ICE 123", "ICE 123", .train),
        ("ICE123", "ICE 123", .train), ("TGV 6201", "TGV 6201", .train),
        ("TGV INOUI 6201", "TGV 6201", .train), ("tgv 6201", "TGV 6201", .train),
        ("IC 2345", "IC 2345", .train), ("EC 45", "EC 45", .train),
        ("RE 4", "RE 4", .train), ("AVE 3071", "AVE 3071", .train),
        ("Eurostar 9014", "Eurostar 9014", .train), ("EUROSTAR 9014", "Eurostar 9014", .train),
        ("Train 1234", "Train 1234", .train), ("Train no. 1234", "Train 1234", .train),
        ("Zug 1234", "Train 1234", .train), ("Zug Nr. 1234", "Train 1234", .train),
        ("Alfa Pendular 133", "Alfa Pendular 133", .train),
    ] as [(String, String, BookingKind)])
    func readsAndNormalizesServiceNumbers(text: String, number: String, kind: BookingKind) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.number == number)
        #expect(extracted.kind == kind)
    }

    @Test(arguments: [
        "2026", "12A", "Seat 12A", "ABC123456", "Gate B12", "12 DEC 2026", "07:35 AM 12 DEC 2026",
        "VAT PT123456789", "TP 12345", "tp 1351", "TP1351X", "SA 12 DEC 2026", "MO 12.12.2026", "Terminal 1",
        "Price 12.50", "Seat: AB 12", "Gate A 12", "AM 07:35", "Train 2 of 3", "re 4", "Park Ave 12", "B12",
        "X7K2QP",
    ])
    func findsNoServiceNumberInLookalikes(text: String) {
        #expect(TicketFields.extract(from: text).number == nil)
    }

    // MARK: - Routes

    @Test(arguments: [
        ("LIS → CDG", "LIS", "CDG"), ("LIS -> CDG", "LIS", "CDG"),
        ("LIS - CDG", "LIS", "CDG"), ("LIS-CDG", "LIS", "CDG"),
        ("LIS–CDG", "LIS", "CDG"), ("LIS — CDG", "LIS", "CDG"),
        ("LIS to CDG", "LIS", "CDG"), ("from LIS to CDG", "LIS", "CDG"),
        ("LIS > CDG", "LIS", "CDG"), ("FR 8347 Lisbon (LIS) to Paris Beauvais (BVA)", "LIS", "BVA"),
        ("Lisbon (LIS) → Paris (CDG)", "LIS", "CDG"), ("Lisbon → Paris", "Lisbon", "Paris"),
        ("Outbound: Lisbon → Paris Gare de Lyon on 12 Dec", "Lisbon", "Paris Gare de Lyon"),
        ("Lyon Part-Dieu → Marseille St-Charles", "Lyon Part-Dieu", "Marseille St-Charles"),
        ("LISBON → PARIS", "LISBON", "PARIS"),
        ("Route Lisboa Santa Apolónia -> Porto Campanhã", "Lisboa Santa Apolónia", "Porto Campanhã"),
        ("From: Lisbon To: Paris", "Lisbon", "Paris"), ("FROM: LISBON\nTO: PARIS", "LISBON", "PARIS"),
        ("From\nLisbon\nTo\nParis", "Lisbon", "Paris"), ("from Lisbon to Paris on 12 Dec 2026", "Lisbon", "Paris"),
        ("From: Lisbon (LIS) Terminal 1\nTo: Paris (CDG)", "LIS", "CDG"),
        ("Origin: LIS   Destination: CDG", "LIS", "CDG"), ("Departure 07:35 LIS → CDG 10:50", "LIS", "CDG"),
        ("Lisboa Oriente 08:39 → Faro 11:45", "Lisboa Oriente", "Faro"),
        ("08:39 Lisboa Oriente → 11:45 Faro", "Lisboa Oriente", "Faro"),
        // Scripts without capitals: a name is any word of them.
        ("新大阪 → 東京", "新大阪", "東京"), ("のぞみ 21号 新大阪 → 東京", "新大阪", "東京"), ("上海虹桥 → 北京南", "上海虹桥", "北京南"),
    ] as [(String, String, String)])
    func readsTheRoute(text: String, origin: String, destination: String) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.origin == origin)
        #expect(extracted.destination == destination)
    }

    @Test(arguments: [
        "MON - FRI", "12-DEC-2026", "Booking - Confirmation", "Welcome to Paris", "Check-in from 15:00 to 11:00",
        "LIS → LIS", "lis → cdg", "LIS\n→ CDG", "EUR - USD", "Transfer from the airport to the hotel",
        "Greetings from Lisbon", "→", "LIS →", "Step 1 → Step 2", "Part-Dieu → x",
    ])
    func findsNoRouteInLookalikes(text: String) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted.origin == nil)
        #expect(extracted.destination == nil)
    }

    // MARK: - Kind

    @Test(arguments: [
        ("BOARDING PASS", BookingKind.flight), ("Your flight is confirmed. Gate opens 40 minutes before.", .flight),
        ("Thank you for flying with our airline", .flight), ("Your train ticket. Platform 4.", .train),
        ("SNCF e-billet", .train), ("Deutsche Bahn", .train),
        ("CP Comboios de Portugal", .train), ("Coach 12 Seat 61 — rail ticket", .train),
        ("HOTEL CONFIRMATION", .hotel), ("Check-in 15:00, check-out 11:00, 2 nights", .hotel),
        ("Hotel shuttle to the airport: tell us your flight", .hotel), ("FlixBus", .other),
        ("Bus station: Sete Rios", .other), ("Booking reference X7K2QP", .other),
        ("LIS → CDG", .other),
    ] as [(String, BookingKind)])
    func guessesTheKind(text: String, kind: BookingKind) {
        #expect(TicketFields.extract(from: text).kind == kind)
    }

    @Test(arguments: ["", "   \n\n\u{0C}", "Thank you for your order", "Invoice 2026", "Gatekeeper reboarding"])
    func findsNothingInTextWithoutABooking(text: String) {
        let extracted = TicketFields.extract(from: text)
        #expect(extracted == TicketFields())
        #expect(extracted.suggestedTitle == nil)
    }

    // MARK: - Title

    @Test(arguments: [
        (TicketFields(kind: .flight, number: "TP 1351", origin: "LIS", destination: "CDG"), "TP 1351 LIS → CDG"),
        (TicketFields(kind: .flight, number: "TP 1351"), "TP 1351"),
        (TicketFields(kind: .flight, number: "TP 1351", destination: "CDG"), "TP 1351 to CDG"),
        (TicketFields(kind: .train, origin: "Lisboa", destination: "Porto"), "Lisboa → Porto"),
        (TicketFields(kind: .train, destination: "Porto"), "Train to Porto"),
        (TicketFields(kind: .other, destination: "Madrid"), "Trip to Madrid"),
        (TicketFields(kind: .flight, origin: "LIS"), "Flight from LIS"),
        (TicketFields(kind: .hotel, reference: "HX48K2Q"), "Hotel booking HX48K2Q"),
        (TicketFields(kind: .other, reference: "X7K2QP"), "Booking X7K2QP"),
        (TicketFields(kind: .train), "Train"),
        (TicketFields(kind: .other), nil),
        (TicketFields(), nil),
    ] as [(TicketFields, String?)])
    func suggestsATitle(fields: TicketFields, title: String?) {
        #expect(fields.suggestedTitle == title)
    }

    // MARK: - Encoding and robustness

    @Test func encodesTheTimeAsHoursAndMinutes() throws {
        let original = Self.fields(.flight, "X7K2QP", "TP 1351", "LIS", "CDG", "2026-12-12", "07:05")
        let json = String(decoding: try JSONEncoder().encode(original), as: UTF8.self)
        #expect(json.includes(#""departureTime":"07:05""#))
        #expect(json.includes(#""departureDate":"2026-12-12""#))
        #expect(try JSONDecoder().decode(TicketFields.self, from: Data(json.utf8)) == original)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(TicketFields.TimeOfDay.self, from: Data(#""7:5""#.utf8))
        }
    }

    @Test func timeOfDayChecksItsRange() throws {
        #expect(TicketFields.TimeOfDay(hour: 24, minute: 0) == nil)
        #expect(TicketFields.TimeOfDay(hour: 23, minute: 60) == nil)
        #expect(TicketFields.TimeOfDay("25:00") == nil)
        let time = try #require(TicketFields.TimeOfDay(hour: 7, minute: 35))
        #expect(time.minutesSinceMidnight == 455)
        #expect(time.description == "07:35")
        #expect(time < TicketFields.TimeOfDay(hour: 7, minute: 36)!)
    }

    /// Scraps of ticket-like text, generated from a fixed seed: extraction never traps (no index
    /// out of range at the end of the text) and a found date always comes back out of its own text.
    @Test func survivesArbitraryScraps() {
        let pieces = ["12", "7", "2026", "DEC", "TP", "U", "2", "LIS", "CDG", "Ref", "PNR", "X7K2QP", ":", ".", "-", "/",
                      "→", ">", "(", ")", "T", "h", "Departure", "Issued", "from", "to", " ", " ", "\n", "é", "\u{301}"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<(Int(state % 12) + 1) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int((state >> 33) % UInt64(pieces.count))]
            }
            let extracted = TicketFields.extract(from: text)
            if let date = extracted.departureDate {
                #expect(TicketFields.extract(from: "Departure " + date.description).departureDate == date)
            }
        }
    }

    static func fields(_ kind: BookingKind?, _ reference: String?, _ number: String?, _ origin: String?,
                       _ destination: String?, _ date: String?, _ time: String?, hotel: String? = nil, seat: String? = nil,
                       arrival: (date: String?, time: String)? = nil, checkOut: String? = nil, arrivalPlace: String? = nil,
                       arrivalDayMonth: (day: Int, month: Int)? = nil) -> TicketFields {
        var fields = TicketFields(kind: kind, reference: reference, number: number, origin: origin, destination: destination,
                                  departureDate: date.flatMap { CivilDate($0) },
                                  departureTime: time.flatMap { TicketFields.TimeOfDay($0) }, hotelName: hotel, seat: seat)
        fields.arrivalDate = arrival?.date.flatMap { CivilDate($0) }
        fields.arrivalTime = arrival.flatMap { TicketFields.TimeOfDay($0.time) }
        if let checkOut { fields.arrivalDate = CivilDate(checkOut) }
        fields.arrivalPlace = arrivalPlace
        fields.arrivalDayMonth = arrivalDayMonth.map { TicketFields.DayMonth(day: $0.day, month: $0.month) }
        return fields
    }
}

/// The hotel's name and the numbers hotels print as confirmation numbers.
@Suite struct LodgingFieldsTests {
    @Test(arguments: [
        ("Hotel Avenida Palace\nBooking confirmation\nCheck-in: 12 Dec 2026", "Hotel Avenida Palace"),
        ("Marriott Bonvoy\nReservation Confirmation\nLisbon Marriott Hotel\nCheck-in 12 Dec 2026", "Lisbon Marriott Hotel"),
        ("Booking.com\nBooking confirmation\nPestana Palace Lisboa\nCheck-in 12 Dec 2026", "Pestana Palace Lisboa"),
        ("Booking confirmation\nCasa Amora\nRua João Penha 13\nCheck-in 12 Dec 2026 hotel", "Casa Amora"),
        ("Your stay at Lost Inn Lisbon Hostel in Lisbon\nCheck-in: 12/12/2026", "Lost Inn Lisbon Hostel"),
        ("Reservation confirmed\nHotel: Casa do Bairro\nCheck-in 12 Dec 2026", "Casa do Bairro"),
        ("Property name:\nMemmo Alfama\nCheck-in 12 Dec 2026 hotel", "Memmo Alfama"),
        ("Welcome to Pousada de Lisboa! Your room is ready.\nCheck-in 12 Dec 2026", "Pousada de Lisboa"),
        // Headings, labels and prose are no names.
        ("HOTEL CONFIRMATION\nCheck-in 12 Dec 2026", nil),
        ("Hotel shuttle to the airport: tell us your flight\nCheck-in 12 Dec 2026", nil),
        ("Your reservation at our hotel\nArrival: 12.12.2026", nil),
        ("Hotel address: Rua Jau 54\nCheck-in 12 Dec 2026", nil),
        ("Hotel: \nCheck-in 12 Dec 2026", nil),
    ] as [(String, String?)])
    func hotelName(text: String, name: String?) {
        let fields = TicketFields.extract(from: text)
        #expect(fields.kind == .hotel, "\(text)")
        #expect(fields.hotelName == name, "\(text)")
        #expect(fields.suggestedTitle == name ?? (fields.reference.map { "Hotel booking " + $0 } ?? "Hotel"))
    }

    @Test(arguments: [
        ("Confirmation number: 4012.345.678", "4012.345.678"),
        ("Confirmation Number: 84122394", "84122394"),
        ("Reservation number: LX-7731", "LX-7731"),
        ("Booking number #3049582114", "3049582114"),
        // Too short, a date, a PIN, or after a generic label: not a confirmation number.
        ("Confirmation number: 12345", nil),
        ("Reservation number: 12.12.2026", nil),
        ("PIN code: 123456", nil),
        ("Ref: 84122394", nil),
        ("Booking number: 2026 Dec", nil),
    ] as [(String, String?)])
    func confirmationNumbers(text: String, reference: String?) {
        #expect(TicketFields.extract(from: "Hotel\n" + text).reference == reference, "\(text)")
    }
}

/// Routes that name their places in capitals, or join them with a hyphen, as Amtrak prints them.
struct TicketRouteNamesTests {
    @Test func threeCapitalsThatBeginAPlacesNameAreTheName() {
        let fields = TicketFields.extract(from: "AMTRAK\nFrom NEW YORK (PENN STATION), NY To WASHINGTON, DC\nDEC 14, 2026  DEPARTS 7:05 AM")
        #expect(fields.origin == "NEW YORK (PENN STATION)" && fields.destination == "WASHINGTON", "not the airport NEW: \(fields)")
    }

    @Test func aHyphenJoinsTwoKnownPlacesButNoHeading() {
        let amtrak = TicketFields.extract(from: "AMTRAK\nNEW YORK (PENN STATION), NY - WASHINGTON, DC\nDEC 14, 2026  DEPARTS 7:05 AM")
        #expect(amtrak.origin == "NEW YORK (PENN STATION)" && amtrak.destination == "WASHINGTON", "\(amtrak)")
        let heading = TicketFields.extract(from: "Booking - Confirmation\nTrain IC 523\nDate 14 DEC 2026 Departure 09:09")
        #expect(heading.origin == nil && heading.destination == nil, "\(heading)")
    }

    @Test func amtraksTrainsAreNamedInTwoWords() {
        #expect(TicketFields.extract(from: "AMTRAK\nNortheast Regional 171\nDEC 14, 2026 DEPARTS 7:05 AM").number == "Northeast Regional 171")
        #expect(TicketFields.extract(from: "CP\nAlfa Pendular 123\n14 DEC 2026 09:09").number == "Alfa Pendular 123")
    }

    @Test func aReferenceInGroupsIsWhole() {
        #expect(TicketFields.extract(from: "Reservation number: MEMMO-123\nCheck-in: 28 Mar 2027 15:00").reference == "MEMMO-123")
        #expect(TicketFields.extract(from: "Booking reference: X7K2QP\nFlight TP 1351").reference == "X7K2QP")
    }
}

/// What an independent run of 78 tickets found the reader missing, each read now.
struct TicketLayoutTests {
    @Test func aWeekdayBetweenTheDepartureLabelAndItsDateLeavesTheStation() {
        let fields = TicketFields.extract(from: """
            ICE 123
            Abfahrt         So, 14.03.2027 09:13   Frankfurt(Main)Hbf
            Ankunft         So, 14.03.2027 10:17   Köln Hbf
            """)
        #expect(fields.origin == "Frankfurt(Main)Hbf" && fields.destination == "Köln Hbf", "\(fields)")
    }

    @Test func aDepartureStationWithoutAnArrivalIsTheOrigin() {
        let fields = TicketFields.extract(from: "CP Comboios de Portugal\nAlfa Pendular 131\nPartida 02/06/2027 09:09 Lisboa Santa Apolónia")
        #expect(fields.origin == "Lisboa Santa Apolónia" && fields.destination == nil, "\(fields)")
    }

    @Test func theLastLegsArrivalWithoutItsPlaceIsLeftOut() {
        let fields = TicketFields.extract(from: """
            Flight 1: UA 940 FRA → ORD
            Departure: 14 Apr 2027 10:40   Arrival: 14 Apr 2027 13:05
            Flight 2: UA 1234 ORD → SFO
            Departure: 14 Apr 2027 15:30   Arrival: 14 Apr 2027 18:10
            """)
        #expect(fields.arrivalTime == nil && fields.arrivalDate == nil, "the route's ORD is the first leg's: \(fields)")
        let placed = TicketFields.extract(from: """
            Flight 1: UA 940 FRA → ORD
            Departure: 14 Apr 2027 10:40   Arrival: 14 Apr 2027 13:05 Chicago (ORD)
            Departure: 14 Apr 2027 15:30   Arrival: 14 Apr 2027 18:10 San Francisco (SFO)
            """)
        #expect(placed.arrivalTime?.description == "18:10" && placed.arrivalPlace == "SFO", "\(placed)")
    }

    @Test func aLodgingWordInItsOwnLanguageMakesAStay() {
        let fields = TicketFields.extract(from: """
            Hôtel des Arts
            8 rue de Londres
            75009 Paris
            Arrivée : jeudi 4 novembre 2027 15h00
            Départ : samedi 6 novembre 2027 11h00
            Numéro de confirmation : 3318842
            """)
        #expect(fields.kind == .hotel && fields.hotelName == "Hôtel des Arts", "\(fields)")
        #expect(fields.departureDate?.description == "2027-11-04" && fields.departureTime?.description == "15:00", "\(fields)")
        #expect(fields.arrivalDate?.description == "2027-11-06" && fields.arrivalTime?.description == "11:00", "check-out: \(fields)")
    }

    @Test func aSeatUnderItsHeadingAcrossABlankLine() {
        #expect(TicketFields.extract(from: "IBERIA BOARDING PASS\nIB 3166 MAD → ORY\n\nGate         Seat\n\n14           12A").seat == "12A")
    }
}

/// Two more that the independent run found empty.
struct TicketLabelTests {
    @Test func anItalianConfirmationNumberWithoutItsPreposition() {
        #expect(TicketFields.extract(from: "Albergo del Sole\nNumero prenotazione: 4012.345.678\nArrivo: 21/07/2027 14:00").reference
                == "4012.345.678")
    }

    @Test func amtraksLimitedTrainsKeepTheirNumber() {
        #expect(TicketFields.extract(from: "AMTRAK\nLake Shore Limited 49\nDEC 14, 2026 DEPARTS 9:30 PM").number == "Lake Shore 49")
    }
}
