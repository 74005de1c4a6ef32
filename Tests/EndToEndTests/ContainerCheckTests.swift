import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem

/// `container check [--repair]` and the attachment commands on attachments placed by hand (as an
/// import leaves them: the file first, then its row).
@Suite struct ContainerCheckTests {
    struct Placed {
        let id: String
        let path: String
        let bytes: Data
    }

    /// Writes a file under attachments/ and, unless `withRow` is false, its row.
    static func place(_ container: TestContainer, bytes: Data = Data("%PDF-1.7 ticket".utf8), withRow: Bool = true,
                      state: String = "present", ageSeconds: Double = 0) throws -> Placed {
        let id = Identifier.make()
        let relative = "attachments/\(id.prefix(2))/\(id).pdf"
        let full = container.path + "/" + relative
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: full))
        if ageSeconds > 0 {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-ageSeconds)], ofItemAtPath: full)
        }
        if withRow {
            let trip = try container.addTrip()
            let booking = try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351")
            let hash = Sodium.hexString(blake2b(Array(bytes)))
            let insert = """
                INSERT INTO attachments (id, booking_id, original_filename, content_type, byte_count, content_hash, page_count,
                relative_path, state, created_at, updated_at) VALUES ('\(id)', '\(booking)', 'ticket.pdf', 'application/pdf',
                \(bytes.count), '\(hash)', 1, '\(relative)', '\(state)', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z')
                """
            #expect(try container.sqlite(insert).status == 0)
        }
        return Placed(id: id, path: relative, bytes: bytes)
    }

    @Test func aConsistentContainerChecksClean() throws {
        let container = try TestContainer()
        _ = try Self.place(container)
        let result = try container.app("container", "check")
        #expect(result.status == 0, "\(result)")
        #expect(result.trimmedStdout == "The container is consistent.")
    }

    @Test func missingFileIsReportedThenMarkedMissing() throws {
        let container = try TestContainer()
        let placed = try Self.place(container)
        try FileManager.default.removeItem(atPath: container.path + "/" + placed.path)
        let check = try container.app("container", "check", "--json")
        #expect(check.status == 65, "\(check)")
        #expect(check.stdout.contains(placed.id))
        let repair = try container.app("container", "check", "--repair")
        #expect(repair.status == 0, "\(repair)")
        #expect(repair.stdout.contains("marked attachment \(placed.id) missing"))
        #expect(try container.sqlite("SELECT state FROM attachments").trimmedStdout == "missing", "the row stays: nothing invented")
        #expect(try container.app("container", "check").status == 0)
    }

    @Test func oldOrphansAndLeftoversAreRemovedYoungOnesLeftAlone() throws {
        let container = try TestContainer()
        try container.addTrip()
        let old = try Self.place(container, withRow: false, ageSeconds: 7200)
        let young = try Self.place(container, withRow: false)
        let leftover = container.path + "/tmp/import.123.456.tmp"
        try Data("half".utf8).write(to: URL(fileURLWithPath: leftover))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: leftover)
        let check = try container.app("container", "check")
        #expect(check.status == 65)
        #expect(check.stdout.contains("orphan file: \(old.path)") && !check.stdout.contains(young.path), "\(check)")
        #expect(check.stdout.contains("staging leftover: tmp/import.123.456.tmp"))
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(!FileManager.default.fileExists(atPath: container.path + "/" + old.path))
        #expect(FileManager.default.fileExists(atPath: container.path + "/" + young.path), "may belong to an import in flight")
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }

    /// `attachments/recovered/` keeps what a repair quarantined; only `--repair --purge-recovered`
    /// deletes it, and only what it held when that run began, after a missing row's file has gone
    /// back to its place — never an orphan the same run moved there.
    @Test func purgeRecoveredDeletesOnlyWhatWasShownAndNeverAMissingRowsFile() throws {
        let container = try TestContainer()
        try container.addTrip()
        let orphan = try Self.place(container, bytes: Data("%PDF-1.7 nobody's".utf8), withRow: false, ageSeconds: 7200)
        #expect(try container.app("container", "check", "--repair").status == 0)
        let kept = container.path + "/attachments/recovered/" + (orphan.path as NSString).lastPathComponent
        #expect(FileManager.default.fileExists(atPath: kept))
        let listed = try container.app("container", "check")
        #expect(listed.status == 0, "kept files need no repair: \(listed)")
        #expect(listed.stdout.contains("kept in recovered/: attachments/recovered/\((orphan.path as NSString).lastPathComponent) (a regular file, \(orphan.bytes.count) bytes)"))
        #expect(listed.stdout.contains("--purge-recovered"))
        #expect(try container.app("container", "check", "--json").stdout.contains("\"recovered\""))

        // A row whose file was quarantined (missing) gets it back; a new orphan is only moved.
        let lost = try Self.place(container, bytes: Data("%PDF-1.7 the only copy".utf8))
        try FileManager.default.moveItem(atPath: container.path + "/" + lost.path,
                                         toPath: container.path + "/attachments/recovered/lost.pdf")
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(try container.sqlite("SELECT state FROM attachments WHERE id = '\(lost.id)'").trimmedStdout == "missing")
        let fresh = try Self.place(container, bytes: Data("%PDF-1.7 new orphan".utf8), withRow: false, ageSeconds: 7200)

        let refused = try container.app("container", "check", "--purge-recovered")
        #expect(refused.status == 64 && refused.stderr.contains("add --repair"), "\(refused)")
        #expect(FileManager.default.fileExists(atPath: kept), "a refused command changes nothing")

        let purge = try container.app("container", "check", "--repair", "--purge-recovered")
        #expect(purge.status == 0, "\(purge)")
        #expect(purge.stdout.contains("deleted attachments/recovered/\((orphan.path as NSString).lastPathComponent) (a regular file"))
        #expect(!FileManager.default.fileExists(atPath: kept))
        #expect(try container.sqlite("SELECT state FROM attachments WHERE id = '\(lost.id)'").trimmedStdout == "present")
        #expect(try Data(contentsOf: URL(fileURLWithPath: container.path + "/" + lost.path)) == lost.bytes)
        let freshKept = container.path + "/attachments/recovered/" + (fresh.path as NSString).lastPathComponent
        #expect(FileManager.default.fileExists(atPath: freshKept), "moved by this run, shown by no report yet: kept")
        #expect(purge.stdout.contains("kept in recovered/: attachments/recovered/\((fresh.path as NSString).lastPathComponent)"))
    }

    @Test func damagedFilesAreReportedAndNeverRemoved() throws {
        let container = try TestContainer()
        let placed = try Self.place(container)
        try Data("%PDF-1.7 tampered".utf8).write(to: URL(fileURLWithPath: container.path + "/" + placed.path))
        let repair = try container.app("container", "check", "--repair")
        #expect(repair.status == 65, "\(repair)")
        #expect(repair.stdout.contains("damaged file: \(placed.id)"))
        #expect(FileManager.default.fileExists(atPath: container.path + "/" + placed.path))
        let export = try container.app("attachment", "export", placed.id, container.root.path + "/out.pdf")
        #expect(export.status == 65, "an export never hands out damaged bytes: \(export)")
        let left = try FileManager.default.contentsOfDirectory(atPath: container.root.path).filter { $0.hasPrefix("out.pdf") }
        #expect(left.isEmpty, "nor half a file: \(left)")
    }

    @Test func interruptedDeletionIsFinishedByRepair() throws {
        let container = try TestContainer()
        let placed = try Self.place(container, state: "deleting")
        let check = try container.app("container", "check")
        #expect(check.stdout.contains("unfinished deletion: attachment \(placed.id)"))
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(try container.sqlite("SELECT count(*) FROM attachments").trimmedStdout == "0")
        #expect(!FileManager.default.fileExists(atPath: container.path + "/" + placed.path))
    }

    @Test func attachmentsListExportAndDelete() throws {
        let container = try TestContainer()
        let placed = try Self.place(container)
        #expect(try container.appOK("attachment", "list").contains("ticket.pdf"))
        let out = container.root.appendingPathComponent("exported")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        #expect(try container.app("attachment", "export", String(placed.id.prefix(8)), out.path).status == 0)
        #expect(try Data(contentsOf: out.appendingPathComponent("ticket.pdf")) == placed.bytes)
        #expect(try container.app("attachment", "delete", placed.id).status == 0)
        #expect(FileManager.default.fileExists(atPath: container.path + "/" + placed.path), "in the trash, restorable")
        #expect(try container.appOK("attachment", "list") == "No attachments.")
        #expect(try container.app("attachment", "delete", placed.id).status == 66)
        #expect(try container.appOK("container", "check") == "The container is consistent.")
        try container.appOK("trash", "empty", placed.id, "--yes")
        #expect(!FileManager.default.fileExists(atPath: container.path + "/" + placed.path))
        #expect(try container.sqlite("SELECT count(*) FROM attachments").trimmedStdout == "0")
    }
}
