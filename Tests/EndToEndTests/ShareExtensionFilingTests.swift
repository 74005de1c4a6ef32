import Foundation
import Testing

/// `share-extension` files a ticket like a person would: a hotel confirmation gives the hotel's
/// name and its confirmation number, on PDFs from producers other than the tests' own drawer; a
/// ticket for a booking that is already there is attached to it rather than filed twice.
@Suite struct ShareExtensionFilingTests {
    /// `Tests/Fixtures/hotel-confirmations/`, written by `tools/lib/hotel_confirmations.py`.
    static let confirmations = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/hotel-confirmations").path

    /// name → (hotel name, reference, check-in as stored): the script's EXPECTED table.
    static let expected: [String: (String, String, String)] = [
        "booking-com": ("Pestana Palace Lisboa", "4012.345.678", "2026-12-12T15:00:00+00:00"),
        "marriott": ("Lisbon Marriott Hotel", "84122394", "2026-12-12T16:00:00+00:00"),
        "hostel": ("Lost Inn Lisbon Hostel", "LX-7731", "2026-12-12T14:00:00+00:00"),
        "guesthouse": ("Casa do Bairro", "HMQ2T8XK", "2026-12-12T15:00:00+00:00"),
        "avenida": ("Hotel Avenida Palace", "HX48K2Q", "2026-12-12T15:00:00+00:00"),
    ]

    static let producers = ["reportlab", "fpdf2", "libreoffice"]

    @Test(arguments: producers)
    func hotelConfirmationsGiveTheHotelsNameAndConfirmationNumber(producer: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        for (name, (hotel, reference, startsAt)) in Self.expected.sorted(by: { $0.key < $1.key }) {
            let file = Self.confirmations + "/\(name).\(producer).pdf"
            try #require(FileManager.default.fileExists(atPath: file), "fixture \(file)")
            let result = try container.shareOK(file, "--trip", trip)
            let booking = try #require(result["booking"] as? [String: Any])
            let detected = try #require(result["detected"] as? [String: Any])
            #expect(booking["kind"] as? String == "hotel", "\(name).\(producer): \(result)")
            #expect(booking["title"] as? String == hotel, "\(name).\(producer): \(result)")
            #expect(detected["hotelName"] as? String == hotel, "\(name).\(producer)")
            #expect(booking["reference"] as? String == reference, "\(name).\(producer): \(result)")
            #expect(booking["startsAt"] as? String == startsAt, "\(name).\(producer): \(result)")
            #expect(result["bookingCreated"] as? Bool == true && result["bookingMatched"] as? Bool == false)
        }
    }

    /// The booking typed in by hand (same confirmation number, however it is spaced or dotted,
    /// same check-in) gets the PDF; the human line says so.
    @Test func aConfirmationGoesToTheBookingWithItsReferenceAndStart() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        let typed = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Pestana",
                                        "--reference", "4012345678", "--starts-at", "2026-12-12T15:00")
        let result = try container.shareOK(Self.confirmations + "/booking-com.fpdf2.pdf", "--trip", trip)
        #expect((result["booking"] as? [String: Any])?["id"] as? String == typed, "\(result)")
        #expect(result["bookingCreated"] as? Bool == false && result["bookingMatched"] as? Bool == true)
        #expect((result["booking"] as? [String: Any])?["title"] as? String == "Pestana", "the user's title stays")

        // Another producer's copy of the same confirmation: other bytes, the same booking.
        let human = try container.share([Self.confirmations + "/booking-com.reportlab.pdf", "--trip", trip])
        #expect(human.status == 0, "\(human)")
        #expect(human.stdout.hasPrefix("Attached booking-com.reportlab.pdf to \"Pestana\" (existing booking) in Lisbon."), "\(human)")
        #expect(try container.sqlite("SELECT count(*) FROM bookings").trimmedStdout == "1")
        #expect(try container.sqlite("SELECT count(*) FROM attachments WHERE booking_id = '\(typed)'").trimmedStdout == "2")
    }

    /// A boarding pass goes to the flight with its number on its date, when the booking was typed
    /// without a reference.
    @Test func aBoardingPassGoesToTheFlightWithItsNumberAndDate() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let flight = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP1351 to Paris",
                                         "--starts-at", "2026-12-12T09:00")
        _ = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 13510",
                                "--starts-at", "2026-12-12T07:35")
        let result = try container.shareOK(try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "bp.pdf"),
                                           "--trip", trip)
        #expect((result["booking"] as? [String: Any])?["id"] as? String == flight, "TP 1351 is not TP 13510: \(result)")
        #expect(result["bookingMatched"] as? Bool == true)
    }

    /// What does not match, or matches more than one booking, makes a booking of its own: the same
    /// reference on another date, the same number on another day, two bookings with the reference.
    @Test func noMatchOrTwoMatchesMakeABookingOfItsOwn() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        _ = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Other stay",
                                "--reference", "84122394", "--starts-at", "2026-12-18T16:00")
        let other = try container.shareOK(Self.confirmations + "/marriott.fpdf2.pdf", "--trip", trip)
        #expect(other["bookingCreated"] as? Bool == true, "another date: \(other)")

        _ = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Avenida",
                                "--reference", "HX48K2Q")
        _ = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Avenida again",
                                "--reference", "HX48K2Q")
        let twice = try container.shareOK(Self.confirmations + "/avenida.fpdf2.pdf", "--trip", trip)
        #expect(twice["bookingCreated"] as? Bool == true && twice["bookingMatched"] as? Bool == false, "two matches: \(twice)")
    }

    /// `--booking` still decides: the matching never overrides the user's choice.
    @Test func anExplicitBookingWins() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        _ = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Marriott",
                                "--reference", "84122394", "--starts-at", "2026-12-12T16:00")
        let chosen = try container.appOK("booking", "add", "--trip", trip, "--kind", "other", "--title", "Receipts")
        let result = try container.shareOK(Self.confirmations + "/marriott.reportlab.pdf", "--booking", chosen)
        #expect((result["booking"] as? [String: Any])?["id"] as? String == chosen, "\(result)")
        #expect(result["bookingMatched"] as? Bool == false)
    }
}
