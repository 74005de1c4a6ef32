import Testing
@testable import TripBoardTickets
import TripBoardModel

/// The seat read from a ticket's text (`TicketText.seat`): a boarding pass's, a train ticket's
/// coach and seat, in the languages TripBoard reads, and nothing from words that only look like
/// a seat label.
struct TicketSeatTests {
    @Test(arguments: [
        ("BOARDING PASS\nSEAT 14C  GATE 12", "14C"),
        ("Seat: 3A", "3A"),
        ("Gate        Seat\n14          12A", "12A"),
        ("ICE 123 Frankfurt → Berlin\nWagen 7, Sitzplatz 45", "7/45"),
        ("Sitzplatz 45 Fenster", "45"),
        ("Coach 7 Seat 42", "7/42"),
        ("Row F   Seat 12", "F/12"),
        ("Coach   Seat\n7       42", "7/42"),
        ("TGV INOUI 6203\nVoiture 12 Place 061", "12/061"),
        ("新幹線 のぞみ 7号\n座席 7A", "7A"),
        ("Passenger 1: SMITH/JOHN  Seat 14C\nPassenger 2: SMITH/JANE  Seat 14D", "14C"),
        // Columns found by where the words start, not by counting them.
        ("Passenger         Flight     Gate  Seat\nDOE/JOHN MR       TP 1351    12    14C", "14C"),
        ("Coach  Class  Seat\n7      2      42", "7/42"),
        ("Platz 45", "45"),
        ("Zug ICE 123 | Platz 45", "45"),
    ])
    func aSeatIsRead(_ text: String, _ seat: String) {
        #expect(TicketText(text).seat() == seat)
    }

    @Test(arguments: [
        "Place of issue: Lisbon",
        "Seat reservation not included",
        "Date and place 2026-12-12 Lisbon",
        "Seats 2",
        "Place de la Concorde 8",
        "Konzerthaus, Potsdamer Platz 1, Berlin",
        "Mercedes-Platz 1",
        "Extras: child seat 1, GPS",
    ])
    func noSeatIsReadFromOtherWords(_ text: String) {
        #expect(TicketText(text).seat() == nil)
    }

    /// A seat is read from tickets, never from a hotel confirmation or a car hire's extras, and the
    /// summary says it.
    @Test func aBoardingPassHasItsSeatAndAHotelNone() {
        let pass = TicketFields.extract(from: "BOARDING PASS\nFlight TP1351 LIS CDG\nDate 12DEC2026 07:35\nSeat 14C\nBooking reference X7K2QP")
        #expect(pass.seat == "14C")
        #expect(pass.summary.hasSuffix("reference X7K2QP, seat 14C"))
        let hotel = TicketFields.extract(from: "Hotel confirmation\nMemmo Alfama Hotel\nCheck-in 27 March 2027\nPlace 5 Travessa das Merceeiras")
        #expect(hotel.kind == .hotel && hotel.seat == nil)
        let car = TicketFields.extract(from: "Car rental confirmation\nPick-up 12 Dec 2026 10:00 Lisbon Airport\nChild seat: 1")
        #expect(car.seat == nil, "a car hire's child seat is no seat: \(car)")
    }
}
