import Foundation
import Testing

/// Tickets as real producers lay them out where the reader once failed: a journey printed as a
/// two-column table (the label in one cell, its value in the next), hotel confirmations whose
/// address follows the name without a label, and Amtrak's e-ticket — in English, German, French,
/// Spanish and Portuguese, with a Greek place name — each by ReportLab, fpdf2 and LibreOffice.
@Suite struct TableTicketTests {
    /// `Tests/Fixtures/table-tickets/`, written by `tools/lib/table_tickets.py`.
    static let tickets = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/table-tickets").path

    struct Expected: Sendable {
        let kind: String
        let title: String
        let startsAt: String
        let zone: String
        let endsAt: String
        let endZone: String?
        let reference: String
        let seat: String?
    }

    /// The script's EXPECTED table, shared from New York (`TZ`): no time may take the sharer's zone.
    static let expected: [String: Expected] = [
        "flight": Expected(kind: "flight", title: "TP 1351 LIS → HND", startsAt: "2026-12-12T07:35:00+00:00", zone: "Europe/Lisbon",
                           endsAt: "2026-12-13T12:20:00+09:00", endZone: "Asia/Tokyo", reference: "X7K2QP", seat: "14C"),
        "zug": Expected(kind: "train", title: "ICE 123 Köln Hbf → Frankfurt(Main)Hbf", startsAt: "2026-12-14T09:13:00+01:00",
                        zone: "Europe/Berlin", endsAt: "2026-12-14T10:18:00+01:00", endZone: nil, reference: "KX4T9P", seat: "45"),
        "train": Expected(kind: "train", title: "TGV 6201 Paris Gare de Lyon → Lyon Part-Dieu", startsAt: "2026-12-15T07:43:00+01:00",
                          zone: "Europe/Paris", endsAt: "2026-12-15T09:41:00+01:00", endZone: nil, reference: "QBX7TR", seat: "061"),
        "tren": Expected(kind: "train", title: "AVE 3073 Madrid Puerta de Atocha → Barcelona Sants", startsAt: "2026-12-16T08:30:00+01:00",
                         zone: "Europe/Madrid", endsAt: "2026-12-16T11:02:00+01:00", endZone: nil, reference: "MZ4K9P", seat: "8A"),
        "ferry": Expected(kind: "other", title: "Ηράκλειο → Piraeus", startsAt: "2026-12-14T21:00:00+02:00", zone: "Europe/Athens",
                          endsAt: "2026-12-15T06:30:00+02:00", endZone: nil, reference: "MN4471Z", seat: nil),
        "sonne": Expected(kind: "hotel", title: "Hotel Sonne", startsAt: "2026-12-14T15:00:00+01:00", zone: "Europe/Berlin",
                          endsAt: "2026-12-16T11:00:00+01:00", endZone: nil, reference: "HS48213X", seat: nil),
        "minos": Expected(kind: "hotel", title: "Casa Minos Guesthouse", startsAt: "2026-12-14T14:00:00+02:00", zone: "Europe/Athens",
                          endsAt: "2026-12-17T11:00:00+02:00", endZone: nil, reference: "CM771204", seat: nil),
        "pousada": Expected(kind: "hotel", title: "Pousada Alfama", startsAt: "2026-12-14T15:00:00+00:00", zone: "Europe/Lisbon",
                            endsAt: "2026-12-16T12:00:00+00:00", endZone: nil, reference: "PA-5521", seat: nil),
        "amtrak": Expected(kind: "train", title: "Northeast Regional 171 NEW YORK (PENN STATION) → WASHINGTON",
                           startsAt: "2026-12-05T07:05:00-05:00", zone: "America/New_York", endsAt: "2026-12-05T10:35:00-05:00",
                           endZone: nil, reference: "4F9A2B", seat: "5/12A"),
    ]

    static let fromNewYork = ["TZ": "America/New_York"]

    @Test(arguments: ShareExtensionFilingTests.producers)
    func everyFieldIsReadFromTablesAndLetterheads(producer: String) throws {
        for (name, want) in Self.expected.sorted(by: { $0.key < $1.key }) {
            let container = try TestContainer()
            let trip = try container.addTrip("December", start: "2026-12-01", end: "2026-12-20")
            let file = Self.tickets + "/\(name).\(producer).pdf"
            try #require(FileManager.default.fileExists(atPath: file), "fixture \(file)")
            let result = try container.share([file, "--trip", trip, "--json"], environment: Self.fromNewYork)
            try #require(result.status == 0, "\(name).\(producer): \(result)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let booking = try #require(answer["booking"] as? [String: Any])
            let got = [booking["kind"], booking["title"], booking["startsAt"], booking["zone"], booking["endsAt"], booking["endZone"],
                       booking["reference"], booking["seat"]].map { $0 as? String }
            let wanted: [String?] = [want.kind, want.title, want.startsAt, want.zone, want.endsAt, want.endZone, want.reference, want.seat]
            #expect(got == wanted, "\(name).\(producer): \(booking)")
        }
    }

    /// A confirmation number printed in groups is the whole of it (`MEMMO-123`, not `MEMMO`), so
    /// the booking typed in with it is the one the PDF goes to.
    @Test func aGroupedReferenceFindsItsBooking() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-10", end: "2026-12-20")
        let typed = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Alfama",
                                        "--reference", "PA5521", "--starts-at", "2026-12-14T15:00", "--zone", "Europe/Lisbon")
        let result = try container.shareOK(Self.tickets + "/pousada.reportlab.pdf", "--trip", trip)
        #expect((result["booking"] as? [String: Any])?["id"] as? String == typed, "\(result)")
        #expect(try container.sqlite("SELECT count(*) FROM bookings").trimmedStdout == "1")
    }

    /// The train typed in on another clock (22:13 on the 13th in Honolulu) is the ticket's 09:13
    /// departure from Köln on the 14th: another date as each was written, the same instant, one booking.
    @Test func theSameDepartureTypedOnAnotherClockIsTheSameBooking() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Rhine", start: "2026-12-10", end: "2026-12-20")
        let typed = try container.appOK("booking", "add", "--trip", trip, "--kind", "train", "--title", "ICE 123",
                                        "--starts-at", "2026-12-13T22:13", "--zone", "Pacific/Honolulu")
        let result = try container.share([Self.tickets + "/zug.fpdf2.pdf", "--trip", trip, "--json"], environment: Self.fromNewYork)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((answer["booking"] as? [String: Any])?["id"] as? String == typed, "\(answer)")
        #expect(answer["bookingMatched"] as? Bool == true)
        #expect(try container.sqlite("SELECT count(*) FROM bookings").trimmedStdout == "1")
    }

    /// A hotel is where its address is, whatever city its name names: `Hotel Paris` in Lisbon.
    @Test func aHotelsAddressDecidesOverItsName() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2027-09-15", end: "2027-09-25")
        let lines = ["Booking confirmation", "Hotel Paris", "Rua Augusta 100", "1100-053 Lisboa", "Portugal",
                     "Confirmation number: 55120931", "Check-in: 20 Sep 2027 14:00", "Check-out: 22 Sep 2027 12:00"]
        let pdf = try container.input(TicketPDF.make(lines: lines), as: "paris.pdf")
        let result = try container.share([pdf, "--trip", trip, "--json"], environment: Self.fromNewYork)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let booking = try #require(answer["booking"] as? [String: Any])
        #expect(booking["startsAt"] as? String == "2027-09-20T14:00:00+01:00" && booking["zone"] as? String == "Europe/Lisbon", "\(booking)")
        #expect(booking["endsAt"] as? String == "2027-09-22T12:00:00+01:00", "\(booking)")
    }
}
