import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardModel

extension TestContainer {
    /// Runs `share-extension ARGS` on this container.
    @discardableResult
    func share(_ arguments: [String], stdin: Data? = nil, environment extra: [String: String] = [:]) throws -> ProcessResult {
        try ProcessRunner.run("share-extension", arguments, environment: environment(extra), stdin: stdin.map { Array($0) })
    }

    /// Runs `share-extension ARGS --json`, requiring exit 0, and returns the parsed result object.
    func shareOK(_ arguments: String..., stdin: Data? = nil) throws -> [String: Any] {
        let result = try share(arguments + ["--json"], stdin: stdin)
        try #require(result.status == 0, "share-extension \(arguments.joined(separator: " ")): \(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// A file outside the container, in the test's directory.
    @discardableResult
    func input(_ data: Data, as name: String) throws -> String { try TicketPDF.write(data, to: root, as: name) }

    /// Relative paths of the regular files under `relative` (e.g. `attachments`, `tmp`).
    func regularFiles(under relative: String) -> [String] {
        let base = path + "/" + relative
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        var found: [String] = []
        while let next = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + next, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.append(relative + "/" + next)
            }
        }
        return found.sorted()
    }
}

func blake2bHex(_ data: Data) -> String { Sodium.hexString(blake2b(Array(data))) }

/// `share-extension`: a PDF ticket filed as an attachment, its booking read from the ticket, its
/// thumbnail cached — run as the real executables on a fresh container.
@Suite struct ShareExtensionTests {
    @Test func importsATicketAndCreatesTheBookingItDescribes() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let file = try container.input(pdf, as: "TAP boarding pass.pdf")
        let result = try container.shareOK(file)
        #expect(result["outcome"] as? String == "attached")
        #expect(result["tripId"] as? String == trip)
        #expect(result["bookingCreated"] as? Bool == true)
        let detected = try #require(result["detected"] as? [String: Any])
        #expect(detected["kind"] as? String == "flight")
        #expect(detected["number"] as? String == "TP 1351")
        #expect(detected["origin"] as? String == "LIS")
        #expect(detected["destination"] as? String == "CDG")
        #expect(detected["departureDate"] as? String == "2026-12-12")
        #expect(detected["departureTime"] as? String == "07:35")
        #expect(detected["reference"] as? String == "X7K2QP")
        let booking = try #require(result["booking"] as? [String: Any])
        #expect(booking["title"] as? String == "TP 1351 LIS → CDG")
        #expect(booking["kind"] as? String == "flight")
        #expect(booking["startsAt"] as? String == "2026-12-12T07:35:00+00:00")
        #expect(booking["reference"] as? String == "X7K2QP")
        let attachment = try #require(result["attachment"] as? [String: Any])
        let id = try #require(attachment["id"] as? String)
        #expect(attachment["originalFilename"] as? String == "TAP boarding pass.pdf")
        #expect(attachment["contentType"] as? String == "application/pdf")
        #expect(attachment["byteCount"] as? Int == pdf.count)
        #expect(attachment["contentHash"] as? String == blake2bHex(pdf))
        #expect(attachment["pageCount"] as? Int == 1)
        #expect(attachment["syncState"] as? String == "pendingUpload")
        let relative = "attachments/\(id.prefix(2))/\(id).pdf"
        #expect(attachment["relativePath"] as? String == relative)
        // Sealed: not one byte of the ticket on disk, and exactly the ticket once opened.
        #expect(try container.bytes("container/" + relative).range(of: Data("%PDF".utf8)) == nil)
        #expect(try container.unsealed("container/" + relative) == pdf)
        #expect(attachment["protection"] as? String == "complete-unless-open")
        #expect(container.regularFiles(under: "tmp").isEmpty)

        #expect(result["thumbnailCached"] as? Bool == true)
        let thumbnail = "caches/thumbnails/\(id).png.sealed"
        let png = try container.cachedThumbnail(id)
        #expect(png.prefix(8) == Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
        #expect(try container.bytes("container/" + thumbnail).range(of: Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) == nil)
        for path in [container.path + "/" + relative, container.path + "/" + thumbnail] {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(path)")
        }
        #expect(try container.appOK("attachment", "list", "--trip", trip).contains("TAP boarding pass.pdf"))
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }

    @Test func theSameBytesTwiceAreReportedNotStoredAgain() throws {
        let container = try TestContainer()
        try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let file = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let first = try container.shareOK(file)
        let again = try container.share([file])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.hasPrefix("Already attached"))
        let second = try container.shareOK(file, "--name", "copy.pdf")
        #expect(second["outcome"] as? String == "alreadyAttached")
        #expect((second["attachment"] as? [String: Any])?["id"] as? String == (first["attachment"] as? [String: Any])?["id"] as? String)
        #expect(container.regularFiles(under: "attachments").count == 1)
        #expect(try container.sqlite("SELECT count(*) FROM attachments; SELECT count(*) FROM bookings;").stdoutLines == ["1", "1"])
        #expect(container.regularFiles(under: "tmp").isEmpty)
    }

    /// A row whose bytes are not hashed yet (as the container migration leaves them until its
    /// hashing pass reaches them: `content_hash` empty) is hashed on the spot when the same bytes
    /// are shared again: "already attached", the hash recorded, nothing stored twice — an empty
    /// hash is never taken to mean "different", nor "the same".
    @Test func theSameBytesAsARowNotHashedYetAreRecognisedByHashingItOnTheSpot() throws {
        let container = try TestContainer()
        try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let file = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let first = try container.shareOK(file)
        let id = try #require((first["attachment"] as? [String: Any])?["id"] as? String)
        let hash = try container.sqlite("SELECT content_hash FROM attachments").trimmedStdout
        #expect(try container.sqlite("UPDATE attachments SET content_hash = ''").status == 0)
        let listed = try container.appOK("attachment", "list", "--json")
        #expect(listed.contains(#""contentHash" : null"#), "unverified: null in the JSON contract: \(listed)")
        let again = try container.shareOK(file, "--name", "copy.pdf")
        #expect(again["outcome"] as? String == "alreadyAttached", "\(again)")
        #expect((again["attachment"] as? [String: Any])?["id"] as? String == id)
        #expect(try container.sqlite("SELECT count(*), content_hash FROM attachments").trimmedStdout == "1|" + hash, "the hash is recorded")
        // Other bytes are not taken for it; `container check` hashes a row not hashed yet on the spot.
        #expect(try container.sqlite("UPDATE attachments SET content_hash = ''").status == 0)
        let other = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass.map { $0.replacingOccurrences(of: "A", with: "B") }),
                                        as: "other.pdf")
        #expect(try container.shareOK(other)["outcome"] as? String == "attached")
        // Of the same size, the unverified row was a candidate: hashed on the spot by that share.
        let sameSize = try container.sqlite("SELECT count(DISTINCT byte_count) FROM attachments").trimmedStdout == "1"
        let check = try container.app("container", "check", "--json")
        #expect(check.status == 0 && check.stdout.contains(#""hashesRecorded" : \#(sameSize ? 0 : 1)"#), "\(check)")
        #expect(try container.sqlite("SELECT count(*) FROM attachments WHERE content_hash = ''").trimmedStdout == "0")
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }

    @Test func attachesToAGivenBookingOncePerBooking() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let booking = try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Hotel")
        let other = try container.appOK("booking", "add", "--trip", trip, "--kind", "train", "--title", "Train")
        let file = try container.input(TicketPDF.make(lines: ["Invoice 42"]), as: "invoice.pdf")
        let first = try container.shareOK(file, "--booking", String(booking.prefix(8)))
        #expect(first["bookingCreated"] as? Bool == false)
        #expect((first["booking"] as? [String: Any])?["id"] as? String == booking)
        #expect(try container.shareOK(file, "--booking", booking)["outcome"] as? String == "alreadyAttached")
        #expect(try container.shareOK(file, "--booking", other, "--trip", trip)["outcome"] as? String == "attached")
        #expect(try container.sqlite("SELECT count(*) FROM attachments; SELECT count(*) FROM bookings;").stdoutLines == ["2", "2"])
    }

    @Test func readsStandardInputUnderTheGivenName() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let pdf = TicketPDF.make(lines: ["Train ticket", "Alfa Pendular 131", "Lisboa Santa Apolonia -> Porto Campanha"])
        let result = try container.shareOK("-", "--trip", trip, "--name", "train.pdf", stdin: pdf)
        #expect((result["attachment"] as? [String: Any])?["originalFilename"] as? String == "train.pdf")
        #expect((result["attachment"] as? [String: Any])?["byteCount"] as? Int == pdf.count)
        let unnamed = try container.shareOK("-", "--trip", trip, stdin: TicketPDF.make(lines: ["Other"]))
        #expect((unnamed["attachment"] as? [String: Any])?["originalFilename"] as? String == "ticket.pdf")
    }

    @Test func theTripIsTheOneWhoseDatesContainTheTicketOrTheUserMustSay() throws {
        let container = try TestContainer()
        let file = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let before = try container.state()
        let none = try container.share([file])
        #expect(none.status == 66 || none.status == 64, "\(none)")

        let lisbon = try container.addTrip("Lisbon", start: "2026-12-01", end: "2026-12-05")
        let snapshot = try container.state()
        // On a clock before Lisbon ends, so that it is offered as upcoming.
        let noMatch = try container.share([file], environment: ["TRIPBOARD_NOW": "2026-11-20T12:00:00Z"])
        #expect(noMatch.status == 64, "\(noMatch)")
        #expect(noMatch.stderr.contains("no trip contains 2026-12-12; choose one with --trip: \(lisbon.prefix(8)) Lisbon"))
        #expect(try container.state() == snapshot)
        _ = before

        let paris = try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let bigTrip = try container.addTrip("Europe", start: "2026-12-08", end: "2026-12-20")
        let twoMatch = try container.share([file])
        #expect(twoMatch.status == 64, "\(twoMatch)")
        #expect(twoMatch.stderr.contains("2 trips contain 2026-12-12"))
        #expect(twoMatch.stderr.contains(paris.prefix(8)) && twoMatch.stderr.contains(bigTrip.prefix(8)))
        #expect(try container.shareOK(file, "--trip", paris)["tripId"] as? String == paris)

        let undated = try container.input(TicketPDF.make(lines: ["Museum entry"]), as: "museum.pdf")
        let noDate = try container.share([undated])
        #expect(noDate.status == 64 && noDate.stderr.contains("the ticket shows no date"), "\(noDate)")
        // A ticket with nothing recognisable still files under the file's name.
        let filed = try container.shareOK(undated, "--trip", lisbon)
        #expect((filed["booking"] as? [String: Any])?["title"] as? String == "museum")
        #expect((filed["booking"] as? [String: Any])?["kind"] as? String == "other")
    }

    /// The formats the field reader knows, end to end (the full tables are in TicketFieldsTests).
    @Test(arguments: [
        (["DB Fernverkehr AG", "Online-Ticket", "Booking code: Q5PW2M", "Outward journey: Sat, 12 Dec 2026",
          "Frankfurt(Main)Hbf -> Koeln Hbf", "Frankfurt(Main)Hbf   dep 12.12.  09:13   7    ICE 123"],
         "train", "ICE 123", "2026-12-12T09:13:00+01:00", "Q5PW2M"),
        (["Hotel Avenida Palace", "Booking confirmation", "Confirmation number: HX48K2Q",
          "Check-in: Sat 12 Dec 2026 (from 15:00)", "Check-out: Tue 15 Dec 2026 (until 12:00)"],
         "hotel", nil, "2026-12-12T15:00:00+00:00", "HX48K2Q"),
        (["easyJet", "Boarding pass", "U2 1234   Lisbon (LIS) -> London Gatwick (LGW)", "Sat 12 Dec 2026, 07:35",
          "Booking reference: K9Z3TB"],
         "flight", "U2 1234", "2026-12-12T07:35:00+00:00", "K9Z3TB"),
    ] as [([String], String, String?, String, String)])
    func ticketFormats(lines: [String], kind: String, number: String?, startsAt: String, reference: String) throws {
        let container = try TestContainer()
        try container.addTrip("Winter", start: "2026-12-01", end: "2027-01-31")
        let result = try container.shareOK(try container.input(TicketPDF.make(lines: lines), as: "t.pdf"))
        let booking = try #require(result["booking"] as? [String: Any])
        let detected = try #require(result["detected"] as? [String: Any])
        #expect(booking["kind"] as? String == kind, "\(result)")
        #expect(detected["number"] as? String == number, "\(result)")
        #expect(booking["startsAt"] as? String == startsAt, "\(result)")
        #expect(booking["reference"] as? String == reference, "\(result)")
    }

    /// Shapes of PDF from several producers: all are imported with the right page count.
    @Test func pdfShapesFromSeveralProducers() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let directory = container.root
        let plain = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "plain.pdf")
        let shapes: [(String, Int, () throws -> Void)] = [
            ("plain.pdf", 1, {}),
            ("many.pdf", 12, { try container.input(TicketPDF.make(lines: ["Itinerary"], pages: 12), as: "many.pdf") }),
            ("junk.pdf", 1, {
                try container.input(Data("Content-Type: application/pdf\r\n\r\n".utf8) + TicketPDF.make(lines: ["Junk first"]), as: "junk.pdf")
            }),
            ("linearized.pdf", 1, { try TicketPDF.tool("qpdf", ["--linearize", plain, directory.path + "/linearized.pdf"]) }),
            ("objstreams.pdf", 1, {
                try TicketPDF.tool("qpdf", ["--object-streams=generate", "--compress-streams=y", plain, directory.path + "/objstreams.pdf"])
            }),
            ("cairo.pdf", 1, { try TicketPDF.tool("pdftocairo", ["-pdf", plain, directory.path + "/cairo.pdf"]) }),
            ("owner-only.pdf", 1, { try TicketPDF.tool("qpdf", ["--encrypt", "", "owner", "256", "--", plain, directory.path + "/owner-only.pdf"]) }),
            // Every cross-reference offset off by 7 bytes and an undefined font: poppler repairs and
            // draws it, printing "Syntax Error: Unknown font tag 'F9'" and more on its stderr.
            ("noisy.pdf", 1, {
                let whole = try #require(String(data: TicketPDF.make(lines: ["Noisy ticket", "12 DEC 2026"]), encoding: .isoLatin1))
                let noisy = try #require(whole.replacingOccurrences(of: "/F1 14 Tf", with: "/F9 14 Tf").data(using: .isoLatin1))
                try container.input(noisy.prefix(9) + Data("       ".utf8) + noisy.dropFirst(9), as: "noisy.pdf")
            }),
        ]
        for (name, pages, make) in shapes {
            try make()
            let run = try container.share([directory.path + "/" + name, "--trip", trip, "--json"])
            #expect(run.status == 0 && run.stderr.isEmpty, "\(name): poppler's warnings must not reach the terminal: \(run)")
            let result = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(result["outcome"] as? String == "attached", "\(name)")
            #expect(result["pageCount"] as? Int == pages, "\(name)")
            #expect(result["thumbnailCached"] as? Bool == true, "\(name): \(result)")
        }
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }
}
