import Foundation
import Testing

/// A ticket whose file was lost (its row `missing`) shared again: the bytes go back into the row
/// that lost them — wherever it is filed — instead of "already attached, nothing stored".
@Suite struct ShareExtensionRestoreTests {
    /// A shared ticket whose file is then lost and found missing by `container check --repair`.
    static func lostTicket(_ container: TestContainer) throws -> (id: String, relative: String, pdf: Data, file: String) {
        try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let file = try container.input(pdf, as: "boarding.pdf")
        let shared = try container.shareOK(file)
        let id = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        let relative = "attachments/\(id.prefix(2))/\(id).pdf"
        try FileManager.default.removeItem(atPath: container.path + "/" + relative)
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(try container.sqlite("SELECT state FROM attachments").trimmedStdout == "missing")
        return (id, relative, pdf, file)
    }

    @Test func aResharedMissingTicketRestoresTheRowThatLostIt() throws {
        let container = try TestContainer()
        let lost = try Self.lostTicket(container)

        let again = try container.share([lost.file, "--name", "found again.pdf"])

        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.hasPrefix("Restored the missing file of boarding.pdf of \"TP 1351 LIS → CDG\" in Paris"), "\(again)")
        #expect(try container.sqlite("SELECT id, state, original_filename FROM attachments").stdoutLines == ["\(lost.id)|present|boarding.pdf"])
        #expect(try container.unsealed("container/" + lost.relative) == lost.pdf)
        #expect(container.regularFiles(under: "attachments") == [lost.relative], "no second copy")
        #expect(container.regularFiles(under: "tmp").isEmpty)
        #expect(try container.sqlite("SELECT count(*) FROM bookings").trimmedStdout == "1", "no new booking")
        #expect(container.thumbnails == [lost.id])
        #expect(try container.appOK("container", "check", "--grace", "0") == "The container is consistent.")
        // Shared once more: now it is simply already attached.
        #expect(try container.shareOK(lost.file)["outcome"] as? String == "alreadyAttached")
    }

    /// The bytes belong to the row that lost them, whatever booking the share names.
    @Test func theRowIsRestoredWhereverTheShareFilesIt() throws {
        let container = try TestContainer()
        let lost = try Self.lostTicket(container)
        let other = try container.addTrip("Elsewhere", start: "2027-01-01", end: "2027-01-02")
        let booking = try container.appOK("booking", "add", "--trip", other, "--kind", "other", "--title", "Misc")

        let again = try container.shareOK(lost.file, "--booking", booking)

        #expect(again["outcome"] as? String == "restored")
        #expect((again["attachment"] as? [String: Any])?["id"] as? String == lost.id)
        #expect((again["attachment"] as? [String: Any])?["state"] as? String == "present")
        #expect(try container.sqlite("SELECT count(*) FROM attachments").trimmedStdout == "1")
    }

    /// Killed after the file went back, before the row said so: `container check --repair` finds
    /// the file in place, and a share again finds nothing missing.
    @Test func aRestoreKilledBeforeItsCommitIsFinishedByRepair() throws {
        let container = try TestContainer()
        let lost = try Self.lostTicket(container)
        let killed = try container.share([lost.file], environment: ["TRIPBOARD_CRASH_AT": "import.restored"])
        #expect(killed.wasSignaled, "\(killed)")
        #expect(try container.unsealed("container/" + lost.relative) == lost.pdf)
        let repair = try container.app("container", "check", "--repair")
        #expect(repair.stdout.contains("attachment \(lost.id) is present again"), "\(repair)")
        #expect(try container.sqlite("SELECT state FROM attachments").trimmedStdout == "present")
    }
}
