import Foundation
import Testing

/// A FIFO (or a directory, a socket, a link) planted where the container keeps a file must not
/// hang anybody: open(2) of a FIFO for reading waits for a writer that never comes. Every command
/// ends in bounded time with one `error:` line and its documented status, and changes nothing;
/// `container check` finds what stands in the wrong place and `--repair` moves it aside.
@Suite struct PlantedFileTests {
    /// Commands stuck behind a FIFO would run until the harness kills them: well under this.
    static let deadline = 10.0

    static func plantFIFO(_ path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        try #require(mkfifo(path, 0o600) == 0, "mkfifo \(path)")
    }

    /// (planted at, command, expected statuses).
    static let cases: [(String, [String], Set<Int32>)] = [
        ("container.json", ["trip", "list"], [73]),
        ("container.json", ["trip", "add", "--name", "X", "--start", "2027-01-01", "--end", "2027-01-02"], [73]),
        ("container.json", ["keychain", "list"], [73]),
        ("preferences/preferences.json", ["prefs", "list"], [73]),
        ("preferences/preferences.json", ["prefs", "set", "theme", "dark"], [73]),
        ("container.lock", ["trip", "list"], [73]),
        ("container.lock", ["container", "check", "--repair"], [73]),
    ]

    @Test(arguments: cases)
    func aFIFOWhereAFileBelongsIsRefusedAtOnce(planted: String, arguments: [String], statuses: Set<Int32>) throws {
        let container = try TestContainer()
        try container.addTrip()
        try Self.plantFIFO(container.path + "/" + planted)
        let before = container.files()
        let result = try ProcessRunner.run("app", arguments, environment: container.environment, timeout: Self.deadline)
        #expect(statuses.contains(result.status) && !result.wasSignaled, "\(planted) \(arguments): \(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains("a FIFO"), "\(result)")
        #expect(container.files() == before, "\(arguments) changed the container")
    }

    @Test func theWidgetRefusesAFIFOAsItsLockWithinItsLimit() throws {
        let container = try TestContainer()
        try container.addTrip()
        try Self.plantFIFO(container.path + "/container.lock")
        let started = Date()
        let result = try ProcessRunner.run("widget", [], environment: container.environment, timeout: Self.deadline)
        #expect(result.status == 73, "\(result)")
        #expect(Date().timeIntervalSince(started) < 2, "the widget's limit is about 250 ms")
    }

    @Test func aFIFOAtTheDeviceKeyIsRefused() throws {
        let container = try TestContainer()
        let device = container.root.path + "/device"
        let environment = ["TRIPBOARD_DEVICE_DIR": device, "TRIPBOARD_MACHINE_ID_FILE": container.root.path + "/machine-id"]
        try Data("0123456789abcdef0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: container.root.path + "/machine-id"))
        try container.appOK("container", "init")
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try Self.plantFIFO(device + "/device.key")
        for arguments in [["keychain", "list"], ["keychain", "set", "s", "a"], ["auth", "status"]] {
            let result = try container.app(arguments: arguments, stdin: "secret", environment: environment)
            #expect(result.status == 73 && result.stderr.contains("a FIFO"), "\(arguments): \(result)")
        }
    }

    @Test func aFIFOAsAnAttachmentIsNotExportedAndCheckQuarantinesIt() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let imported = try container.shareOK(ticket, "--trip", trip)
        let attachment = try #require((imported["attachment"] as? [String: Any])?["id"] as? String)
        let relative = try #require((imported["attachment"] as? [String: Any])?["relativePath"] as? String)
        try Self.plantFIFO(container.path + "/" + relative)
        let export = try container.app(arguments: ["attachment", "export", attachment, container.root.path + "/out.pdf"])
        #expect(export.status == 73 && export.stderr.contains("a FIFO"), "\(export)")
        #expect(!FileManager.default.fileExists(atPath: container.root.path + "/out.pdf"))
        let check = try container.app(arguments: ["container", "check"])
        #expect(check.status == 65 && check.stdout.contains("\(relative) notAFile"), "\(check)")
        let repair = try container.app(arguments: ["container", "check", "--repair"])
        #expect(repair.stdout.contains("moved \(relative), which is not a regular file, to attachments/recovered/"), "\(repair)")
        #expect(try container.sqlite("SELECT state FROM attachments").trimmedStdout == "missing")
        #expect(try container.appOK("container", "check").hasSuffix("\nThe container is consistent."), "the quarantined FIFO is listed as kept")
    }

    @Test func checkFindsWhatStandsInTheWrongPlaceAndRepairMovesOrRemovesIt() throws {
        let container = try TestContainer()
        try container.addTrip()
        let base = container.path
        try FileManager.default.createDirectory(atPath: base + "/attachments/ab", withIntermediateDirectories: true)
        try Self.plantFIFO(base + "/attachments/ab/planted.pdf")
        try FileManager.default.createSymbolicLink(atPath: base + "/attachments/cd", withDestinationPath: "/etc")
        try FileManager.default.createDirectory(atPath: base + "/attachments/ef/folder.pdf", withIntermediateDirectories: true)
        try Self.plantFIFO(base + "/tmp/import.fifo.tmp")
        try FileManager.default.createDirectory(atPath: base + "/tmp/empty-dir", withIntermediateDirectories: false)
        try Self.plantFIFO(base + "/caches/thumbnails/11111111-2222-4333-8444-555555555555.png.sealed")
        let check = try container.app("container", "check", "--json")
        #expect(check.status == 65, "\(check)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any])
        #expect(Set(report["misplacedEntries"] as? [String] ?? []) == ["attachments/ab/planted.pdf (a FIFO)", "attachments/cd (a symbolic link)",
                                                          "attachments/ef/folder.pdf (a directory)", "tmp/empty-dir (a directory)",
                                                          "tmp/import.fifo.tmp (a FIFO)"], "\(report)")
        #expect(report["staleCacheEntries"] as? [String] == ["caches/thumbnails/11111111-2222-4333-8444-555555555555.png.sealed (a FIFO)"])
        let repair = try container.app("container", "check", "--repair")
        #expect(repair.status == 0, "\(repair)")
        let recovered = try FileManager.default.contentsOfDirectory(atPath: base + "/attachments/recovered").sorted()
        #expect(recovered == ["cd", "folder.pdf", "planted.pdf"], "quarantined, not deleted")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: base + "/attachments/recovered/cd") == "/etc")
        #expect(FileManager.default.fileExists(atPath: "/etc/passwd"), "a link is moved, never followed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: base + "/tmp").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: base + "/caches/thumbnails").isEmpty)
        #expect(try container.appOK("container", "check").hasSuffix("\nThe container is consistent."), "kept entries are listed, and need no repair")
    }

    /// A row marked missing whose bytes come back — put in place by hand, or sitting in
    /// attachments/recovered/ after a repair moved them there — is present again after a repair.
    @Test(arguments: ["in place", "in recovered"])
    func aMissingAttachmentWhoseFileComesBackIsPresentAgain(where place: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let imported = try container.shareOK(try container.input(pdf, as: "ticket.pdf"), "--trip", trip)
        let relative = try #require((imported["attachment"] as? [String: Any])?["relativePath"] as? String)
        try FileManager.default.removeItem(atPath: container.path + "/" + relative)
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(try container.sqlite("SELECT state FROM attachments").trimmedStdout == "missing")
        let back = place == "in place" ? container.path + "/" + relative : container.path + "/attachments/recovered/some-name.pdf"
        try FileManager.default.createDirectory(atPath: (back as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try pdf.write(to: URL(fileURLWithPath: back))
        let check = try container.app("container", "check")
        #expect(check.status == 65 && check.stdout.contains("file back for a missing attachment"), "\(check)")
        let repair = try container.app("container", "check", "--repair")
        #expect(repair.status == 0 && repair.stdout.contains("is present again"), "\(repair)")
        #expect(try container.sqlite("SELECT state FROM attachments").trimmedStdout == "present")
        #expect(try Data(contentsOf: URL(fileURLWithPath: container.path + "/" + relative)) == pdf)
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }

    @Test func orphanFilesAreQuarantinedNeverDeleted() throws {
        let container = try TestContainer()
        try container.addTrip()
        let orphan = container.path + "/attachments/ab/abcdef01-2222-4333-8444-555555555555.pdf"
        try FileManager.default.createDirectory(atPath: container.path + "/attachments/ab", withIntermediateDirectories: true)
        try Data("%PDF-1.4 the user's only copy".utf8).write(to: URL(fileURLWithPath: orphan))
        let repair = try container.app("container", "check", "--repair", "--grace", "0")
        #expect(repair.status == 0 && repair.stdout.contains("moved orphan file"), "\(repair)")
        let kept = container.path + "/attachments/recovered/abcdef01-2222-4333-8444-555555555555.pdf"
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "%PDF-1.4 the user's only copy")
    }

    @Test func aThumbnailOfNoAttachmentIsAStaleCacheEntry() throws {
        let container = try TestContainer()
        try container.addTrip()
        let stale = container.path + "/caches/thumbnails/11111111-2222-4333-8444-555555555555.png.sealed"
        try Data("TBSEALED".utf8).write(to: URL(fileURLWithPath: stale))
        #expect(try container.appOK("container", "check") == "The container is consistent.", "younger than the grace period")
        let check = try container.app("container", "check", "--grace", "0")
        #expect(check.status == 65 && check.stdout.contains("the thumbnail of no attachment"), "\(check)")
        #expect(try container.app("container", "check", "--repair", "--grace", "0").status == 0)
        #expect(!FileManager.default.fileExists(atPath: stale))
    }

    @Test func aFileWhereTheCacheDirectoryBelongsIsRemovedByRepair() throws {
        let container = try TestContainer()
        try container.addTrip()
        try FileManager.default.removeItem(atPath: container.path + "/caches/thumbnails")
        try Data("x".utf8).write(to: URL(fileURLWithPath: container.path + "/caches/thumbnails"))
        let check = try container.app("container", "check")
        #expect(check.status == 65 && check.stdout.contains("caches/thumbnails (a regular file where the cache's directory belongs)"), "\(check)")
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }

    @Test(arguments: ["fifo", "directory", "link"])
    func attachmentThumbnailHandsOutOnlyARegularFile(planted: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let attachment = try #require((try container.shareOK(ticket, "--trip", trip)["attachment"] as? [String: Any])?["id"] as? String)
        let thumbnail = container.path + "/caches/thumbnails/\(attachment).png.sealed"
        try FileManager.default.removeItem(atPath: thumbnail)
        switch planted {
        case "fifo": try Self.plantFIFO(thumbnail)
        case "directory": try FileManager.default.createDirectory(atPath: thumbnail, withIntermediateDirectories: false)
        default: try FileManager.default.createSymbolicLink(atPath: thumbnail, withDestinationPath: "/etc/passwd")
        }
        let out = container.root.path + "/thumbnail.png"
        let result = try ProcessRunner.run("app", ["attachment", "thumbnail", attachment, out], environment: container.environment,
                                           timeout: Self.deadline)
        #expect(result.status == 0 && result.stdout.isEmpty, "\(planted): \(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)).prefix(4) == Data([0x89, 0x50, 0x4e, 0x47]), "\(planted)")
        var info = stat()
        #expect(lstat(thumbnail, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "\(planted): not a regular file")
        #expect(FileManager.default.fileExists(atPath: "/etc/passwd"))
    }

    /// share-extension may hold the container lock while it reads its ticket: a FIFO it is given
    /// is opened without waiting for a writer, and with none it is an empty file, at once.
    /// (`app import` reads its document before taking any lock, and waits like `cat`:
    /// `OversizeInputTests.anImportFromAFIFOWaitsForItsWriterHoldingNoLock`.)
    @Test func aTicketFIFOWithNoWriterIsAnEmptyFileNotAHang() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let fifo = container.root.path + "/ticket.pdf"
        try Self.plantFIFO(fifo)
        let result = try container.share([fifo, "--trip", trip])
        #expect(result.status == 65 && result.stderr.contains("empty") && !result.wasSignaled, "\(result)")
    }
}
