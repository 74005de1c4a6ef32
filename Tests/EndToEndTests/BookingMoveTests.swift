import Foundation
import Testing

/// Putting right what was filed in the wrong place: `app attachment move ID --booking B` and
/// `app booking merge KEEP OTHER`, with the built executables — what moves, what stays, what a
/// refusal leaves (nothing), and what another device ends with after a sync.
@Suite struct BookingMoveTests {
    static func attachments(_ container: TestContainer) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("attachment", "list", "--json").utf8)) as? [[String: Any]])
    }

    static func booking(_ container: TestContainer, _ id: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("booking", "show", id, "--json").utf8)) as? [String: Any])
    }

    /// A boarding pass shared into a new trip: (trip, the booking it made, the attachment).
    static func sharedPass(_ container: TestContainer, salt: String = "") throws -> (trip: String, booking: String, attachment: String) {
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let pass = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass, salt: salt), as: "pass.pdf")
        let shared = try container.shareOK(pass, "--trip", trip)
        let attachment = try #require(shared["attachment"] as? [String: Any])
        return (trip, try #require(attachment["bookingId"] as? String), try #require(attachment["id"] as? String))
    }

    @Test func anAttachmentMovesToABookingOfAnotherTripAndBack() throws {
        let container = try TestContainer()
        let (_, filed, attachment) = try Self.sharedPass(container)
        let porto = try container.addTrip("Porto", start: "2027-01-10", end: "2027-01-12")
        let hotel = try container.appOK("booking", "add", "--trip", porto, "--kind", "hotel", "--title", "Casa do Rio")

        let moved = try container.app("attachment", "move", String(attachment.prefix(8)), "--booking", String(hotel.prefix(8)))
        #expect(moved.status == 0 && moved.stdout.isEmpty, "\(moved)")
        #expect(moved.stderr == "moved pass.pdf to booking Casa do Rio (\(hotel.prefix(8))) of trip Porto\n", "\(moved.stderr)")
        let row = try #require(try Self.attachments(container).first)
        #expect(row["bookingId"] as? String == hotel && row["syncState"] as? String == "pendingUpload", "\(row)")
        #expect((try Self.booking(container, filed)["attachments"] as? [Any])?.isEmpty == true)
        #expect((try Self.booking(container, hotel)["attachments"] as? [[String: Any]])?.first?["id"] as? String == attachment)
        // Its file stayed where it was and still verifies.
        #expect(try container.app("container", "check").status == 0)
        #expect(try container.app("attachment", "export", attachment, "-").status == 0)

        // Where it is already: nothing changes. Back, with --json: the attachment object.
        let state = try container.state()
        let again = try container.app("attachment", "move", attachment, "--booking", hotel)
        #expect(again.status == 0 && again.stderr.contains("already; nothing changed"), "\(again)")
        #expect(try container.state() == state)
        let back = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("attachment", "move", attachment, "--booking", filed, "--json").utf8))
            as? [String: Any])
        #expect(back["id"] as? String == attachment && back["bookingId"] as? String == filed, "\(back)")
    }

    @Test func aRefusedMoveChangesNothing() throws {
        let container = try TestContainer()
        let (trip, filed, attachment) = try Self.sharedPass(container)
        // A second booking holding the same bytes (the pass shared into it by --booking).
        let other = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351 again")
        let copy = try #require(try container.shareOK(try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "copy.pdf"),
                                                      "--booking", other)["attachment"] as? [String: Any])
        #expect(copy["bookingId"] as? String == other)
        let trashed = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Gone")
        try container.appOK("booking", "delete", trashed)
        let before = try container.state()
        for (words, status, message) in [
            (["attachment", "move", attachment, "--booking", other], 65, "already has this file, as attachment \((copy["id"] as? String ?? "").prefix(8))"),
            (["attachment", "move", attachment, "--booking", trashed], 66, "no booking"),
            (["attachment", "move", attachment, "--booking", "00000000"], 66, "no booking"),
            (["attachment", "move", "00000000", "--booking", filed], 66, "no attachment"),
            (["attachment", "move", attachment], 64, "--booking"),
            (["attachment", "move", attachment, "--booking", "x"], 64, "is not a booking id"),
            (["attachment", "move", "zz", "--booking", filed], 64, "'zz' is not an attachment id"),
            (["attachment", "move", String(repeating: "a", count: 50), "--booking", filed], 64, "\(String(repeating: "a", count: 40))…' is not"),
        ] {
            let result = try container.app(arguments: words)
            #expect(result.status == Int32(status) && result.stderrLines.count == 1 && result.stderr.contains(message) && result.stdout.isEmpty,
                    "\(words): \(result)")
        }
        #expect(try container.state() == before, "a refused move writes nothing")
    }

    @Test func aHandTypedBookingTakesTheTicketsFieldsAndFileAndTheOtherGoesToTheTrash() throws {
        let container = try TestContainer()
        let (trip, ticket, attachment) = try Self.sharedPass(container)
        let typed = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "Lisbon → Paris", "--seat", "3C")
        let merged = try container.app("booking", "merge", String(typed.prefix(8)), String(ticket.prefix(8)))
        #expect(merged.status == 0 && merged.stdout.isEmpty, "\(merged)")
        let lines = merged.stderrLines
        #expect(lines.first == "kept booking Lisbon → Paris (\(typed.prefix(8))), which took its startsAt, zone, reference, 1 attachment", "\(lines)")
        #expect(lines.count == 2 && lines[1].hasPrefix("moved booking TP 1351") && lines[1].contains("to the trash"), "\(lines)")

        let kept = try Self.booking(container, typed)
        let ticketFields = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("trash", "list", "--json").utf8)) as? [[String: Any]])
        #expect(ticketFields.count == 1 && ticketFields.first?["id"] as? String == ticket, "\(ticketFields)")
        #expect(kept["title"] as? String == "Lisbon → Paris" && kept["seat"] as? String == "3C", "its own fields stay: \(kept)")
        #expect(kept["reference"] as? String == "X7K2QP" && (kept["startsAt"] as? String)?.hasPrefix("2026-12-12T07:35") == true, "\(kept)")
        #expect((kept["attachments"] as? [[String: Any]])?.map { $0["id"] as? String } == [attachment], "\(kept)")
        #expect(try container.app("booking", "show", ticket).status == 66)

        // Restored from the trash, the other comes back without what moved.
        try container.appOK("trash", "restore", ticket)
        #expect((try Self.booking(container, ticket)["attachments"] as? [Any])?.isEmpty == true)
        #expect((try Self.booking(container, typed)["attachments"] as? [Any])?.count == 1)
    }

    @Test func aCopyOfAFileTheKeptBookingHasGoesToTheTrashWithTheOther() throws {
        let container = try TestContainer()
        let (trip, first, _) = try Self.sharedPass(container)
        let second = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351", "--reference", "OTHER1",
                                         "--starts-at", "2026-12-12T09:00", "--zone", "Europe/Lisbon")
        let receipt = TicketPDF.make(lines: ["RECEIPT", "TAP Air Portugal", "Total EUR 129.00"])
        let copy = try #require(try container.shareOK(try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "again.pdf"),
                                                      "--booking", second)["attachment"] as? [String: Any])
        let extra = try #require(try container.shareOK(try container.input(receipt, as: "receipt.pdf"), "--booking", second)["attachment"]
            as? [String: Any])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("booking", "merge", first, second, "--json").utf8))
            as? [String: Any])
        #expect(json["fieldsTaken"] as? [String] == [] && json["fieldsLeft"] as? [String] == [], "the first has a start and a reference: \(json)")
        #expect(json["attachmentsMoved"] as? [String] == [extra["id"] as? String ?? ""], "\(json)")
        #expect(json["copiesLeft"] as? [String] == [copy["id"] as? String ?? ""], "\(json)")
        #expect((json["kept"] as? [String: Any])?["reference"] as? String == "X7K2QP")
        let entry = try #require(json["trashEntry"] as? [String: Any])
        #expect(entry["id"] as? String == second && (entry["contents"] as? [String: Any])?["attachments"] as? Int == 1, "\(entry)")
        #expect(try Self.attachments(container).count == 2, "the pass and the receipt, both under the first")
        #expect(try container.app("container", "check").status == 0)
    }

    @Test func aRefusedMergeChangesNothing() throws {
        let container = try TestContainer()
        let (trip, ticket, _) = try Self.sharedPass(container)
        let porto = try container.addTrip("Porto", start: "2027-01-10", end: "2027-01-12")
        let elsewhere = try container.appOK("booking", "add", "--trip", porto, "--kind", "hotel", "--title", "Casa do Rio")
        let early = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "Early",
                                        "--starts-at", "2026-12-13T10:00", "--zone", "Europe/Lisbon")
        _ = early
        let before = try container.state()
        for (words, status, message) in [
            (["booking", "merge", ticket, elsewhere], 65, "are in different trips"),
            (["booking", "merge", ticket, ticket], 64, "the same booking"),
            (["booking", "merge", ticket, "00000000"], 66, "no booking"),
            (["booking", "merge", ticket], 64, "missing OTHER booking ID"),
            (["booking", "merge", ticket, elsewhere, "extra"], 64, "extra"),
        ] {
            let result = try container.app(arguments: words)
            #expect(result.status == Int32(status) && result.stderrLines.count == 1 && result.stderr.contains(message) && result.stdout.isEmpty,
                    "\(words): \(result)")
        }
        #expect(try container.state() == before, "a refused merge writes nothing")
    }

    /// A copy in the trash does not come back beside the same file moved into its booking
    /// meanwhile: a booking holds a file once, whichever way it got there.
    @Test func aCopyInTheTrashDoesNotComeBackBesideTheSameFile() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let first = try container.appOK("booking", "add", "--trip", trip, "--kind", "other", "--title", "B")
        let second = try container.appOK("booking", "add", "--trip", trip, "--kind", "other", "--title", "C")
        let pdf = TicketPDF.make(lines: ["MUSEU NACIONAL DO AZULEJO", "Entry 1 adult"])
        let kept = try #require(try container.shareOK(try container.input(pdf, as: "g1.pdf"), "--booking", first)["attachment"] as? [String: Any])
        let copy = try #require(try container.shareOK(try container.input(pdf, as: "g1.pdf"), "--booking", second)["attachment"] as? [String: Any])
        let keptID = try #require(kept["id"] as? String), copyID = try #require(copy["id"] as? String)
        try container.appOK("attachment", "delete", keptID)
        try container.appOK("attachment", "move", copyID, "--booking", first)
        let before = try container.state()
        let restored = try container.app("trash", "restore", keptID)
        #expect(restored.status == 65 && restored.stderrLines.count == 1
                && restored.stderr.contains("has the same file already, as attachment \(copyID.prefix(8))"), "\(restored)")
        #expect(try container.state() == before)
    }

    /// Times taken from OTHER are written in KEEP's zone (the same instants): KEEP never holds an
    /// offset its zone does not have then. An end goes with its own start only.
    @Test func timesTakenAreWrittenInTheKeptBookingsZone() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let keep = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "K", "--zone", "Europe/Lisbon")
        let other = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "O",
                                        "--starts-at", "2026-12-12T10:00", "--ends-at", "2026-12-12T12:00", "--zone", "Europe/Paris")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("booking", "merge", keep, other, "--json").utf8))
            as? [String: Any])
        let kept = try #require(json["kept"] as? [String: Any])
        #expect(kept["startsAt"] as? String == "2026-12-12T09:00:00+00:00" && kept["endsAt"] as? String == "2026-12-12T11:00:00+00:00"
                && kept["zone"] as? String == "Europe/Lisbon", "\(kept)")
        #expect(json["fieldsTaken"] as? [String] == ["startsAt", "endsAt"], "\(json)")

        let early = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "E",
                                        "--starts-at", "2026-12-13T07:35", "--zone", "Europe/Lisbon")
        let late = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "L",
                                       "--starts-at", "2026-12-13T06:00", "--ends-at", "2026-12-13T08:00", "--zone", "Europe/Lisbon")
        let second = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("booking", "merge", early, late, "--json").utf8))
            as? [String: Any])
        #expect(second["fieldsLeft"] as? [String] == ["endsAt"], "the other's end is of another start: \(second)")
    }

    /// An end KEEP cannot take (before its own start) is left and said so; the rest is taken.
    @Test func aFieldThatWouldBreakTheKeptBookingsRulesIsLeft() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let keep = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Memmo Alfama",
                                       "--starts-at", "2026-12-14T15:00", "--zone", "Europe/Lisbon")
        let other = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Memmo Alfama Hotel",
                                        "--starts-at", "2026-12-12T15:00", "--ends-at", "2026-12-13T11:00", "--zone", "Europe/Lisbon",
                                        "--reference", "MA-2291")
        let merged = try container.app("booking", "merge", keep, other)
        #expect(merged.status == 0, "\(merged)")
        #expect(merged.stderrLines.first == "kept booking Memmo Alfama (\(keep.prefix(8))), which took its reference; not taken: endsAt (it does not fit this booking)",
                "\(merged.stderr)")
        let kept = try Self.booking(container, keep)
        #expect((kept["endsAt"] == nil || kept["endsAt"] is NSNull) && kept["reference"] as? String == "MA-2291", "\(kept)")
    }

    /// The other device pulls the merged-away booking's deletion before the attachment's move
    /// (the push sends bookings first): the attachment, which was under that booking there, is
    /// not lost with it — the deletion takes it to the trash as the server has it, and the move
    /// brings it out under the kept booking. Neither device sends a deletion of it.
    @Test func aMergedTicketIsNotLostOnADeviceThatPullsTheDeletionFirst() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (trip, ticket, attachment) = try Self.sharedPass(a.container)
        let typed = try a.ok("booking", "add", "--trip", trip, "--kind", "flight", "--title", "Lisbon → Paris")
        try a.sync()
        try b.sync()
        try b.ok("booking", "merge", typed, ticket)
        let pushed = try b.sync()
        #expect(pushed["pushed"] as? Int == 3, "the kept booking, the other's deletion, the attachment's move: \(pushed)")
        let pulled = try a.sync()
        #expect(pulled["pushed"] as? Int == 0, "a sends nothing back: \(pulled)")
        for (name, device) in [("a", a), ("b", b)] {
            let listed = try Self.attachments(device.container)
            #expect(listed.map { $0["id"] as? String } == [attachment] && listed.first?["bookingId"] as? String == typed, "\(name): \(listed)")
            #expect(try device.app("booking", "show", ticket).status == 66, "\(name)")
        }
        #expect(try server.psql("SELECT deleted FROM tripboard.records WHERE id = '\(attachment)'") == "f")
        // Restoring the merged-away booking on a brings it back without the ticket that moved.
        try a.ok("trash", "restore", ticket)
        #expect((try Self.booking(a.container, ticket)["attachments"] as? [Any])?.isEmpty == true)
        #expect((try Self.booking(a.container, typed)["attachments"] as? [Any])?.count == 1)
    }

    /// Both travel: B ends with the attachment under the booking A moved it to, and the merged
    /// booking's fields, the other gone.
    @Test func aMoveAndAMergeReachTheOtherDevice() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let (trip, ticket, attachment) = try Self.sharedPass(a.container)
        let typed = try a.ok("booking", "add", "--trip", trip, "--kind", "flight", "--title", "Lisbon → Paris")
        let hotel = try a.ok("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Memmo Alfama")
        try a.sync()
        try b.sync()
        try a.ok("attachment", "move", attachment, "--booking", hotel)
        try a.sync()
        try b.sync()
        #expect(try Self.attachments(b.container).first?["bookingId"] as? String == hotel)

        try b.ok("attachment", "move", attachment, "--booking", ticket)
        try b.ok("booking", "merge", typed, ticket)
        try b.sync()
        try a.sync()
        for (name, device) in [("a", a), ("b", b)] {
            let kept = try Self.booking(device.container, typed)
            #expect(kept["reference"] as? String == "X7K2QP" && (kept["attachments"] as? [[String: Any]])?.first?["id"] as? String == attachment,
                    "\(name): \(kept)")
            #expect(try device.app("booking", "show", ticket).status == 66, "\(name)")
            #expect(try Self.attachments(device.container).count == 1 && device.app("container", "check").status == 0)
        }
    }
}
