import Foundation
import Testing

/// `share-extension` on bad input and in a bad container: a one-line error, the documented exit
/// status, and nothing written — no file in `attachments/` or `tmp/`, no row, no new directory.
@Suite struct ShareExtensionFailureTests {
    struct BadCase: CustomStringConvertible, Sendable {
        let name: String
        let status: Int32
        let message: String
        var description: String { name }
    }

    static let badCases: [BadCase] = [
        BadCase(name: "missing file", status: 66, message: "No such file"),
        BadCase(name: "directory", status: 66, message: "is a directory"),
        BadCase(name: "empty file", status: 65, message: "is empty; nothing was imported"),
        BadCase(name: "PNG named .pdf", status: 65, message: "not a PDF file"),
        BadCase(name: "random bytes", status: 65, message: "not a PDF file"),
        BadCase(name: "truncated", status: 65, message: "damaged"),
        BadCase(name: "encrypted", status: 65, message: "password-protected"),
        BadCase(name: "too large", status: 65, message: "larger than the limit of 1 KiB"),
        BadCase(name: "unknown trip", status: 66, message: "no trip"),
        BadCase(name: "malformed trip id", status: 64, message: "is not a trip id"),
        BadCase(name: "unknown booking", status: 66, message: "no booking"),
        BadCase(name: "booking of another trip", status: 64, message: "belongs to another trip"),
        BadCase(name: "bad --max-size", status: 64, message: "--max-size"),
        BadCase(name: "--name with a slash", status: 64, message: "--name must be a file name"),
        BadCase(name: "no FILE", status: 64, message: "missing FILE"),
        BadCase(name: "two FILEs", status: 64, message: "unexpected argument"),
        BadCase(name: "unknown option", status: 64, message: "unknown option --frobnicate"),
        BadCase(name: "PDF reader missing", status: 69, message: "cannot be run"),
    ]

    @Test(arguments: badCases)
    func badInputWritesNothing(_ bad: BadCase) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let otherTrip = try container.addTrip("Other")
        let booking = try container.appOK("booking", "add", "--trip", otherTrip, "--kind", "train", "--title", "Train")
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        var environment: [String: String] = [:]
        let arguments: [String]
        switch bad.name {
        case "missing file": arguments = [container.root.path + "/nowhere.pdf", "--trip", trip]
        case "directory":
            try FileManager.default.createDirectory(atPath: container.root.path + "/folder.pdf", withIntermediateDirectories: false)
            arguments = [container.root.path + "/folder.pdf", "--trip", trip]
        case "empty file": arguments = [try container.input(Data(), as: "empty.pdf"), "--trip", trip]
        case "PNG named .pdf":
            arguments = [try container.input(Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) + Data(count: 200), as: "photo.pdf"), "--trip", trip]
        case "random bytes":
            arguments = [try container.input(Data((0..<4096).map { _ in UInt8.random(in: 0...255) }), as: "noise.pdf"), "--trip", trip]
        case "truncated":
            let whole = TicketPDF.make(lines: TicketPDF.boardingPass)
            arguments = [try container.input(whole.prefix(whole.count / 2), as: "cut.pdf"), "--trip", trip]
        case "encrypted":
            try TicketPDF.tool("qpdf", ["--encrypt", "user", "owner", "256", "--", ticket, container.root.path + "/locked.pdf"])
            arguments = [container.root.path + "/locked.pdf", "--trip", trip]
        case "too large":
            let large = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass, padding: 4000), as: "large.pdf")
            arguments = [large, "--trip", trip, "--max-size", "1K"]
        case "unknown trip": arguments = [ticket, "--trip", UUID().uuidString.lowercased()]
        case "malformed trip id": arguments = [ticket, "--trip", "Lisbon!"]
        case "unknown booking": arguments = [ticket, "--booking", UUID().uuidString.lowercased()]
        case "booking of another trip": arguments = [ticket, "--trip", trip, "--booking", booking]
        case "bad --max-size": arguments = [ticket, "--max-size", "lots"]
        case "--name with a slash": arguments = [ticket, "--name", "../../etc/passwd"]
        case "no FILE": arguments = ["--trip", trip]
        case "two FILEs": arguments = [ticket, ticket, "--trip", trip]
        case "unknown option": arguments = [ticket, "--frobnicate"]
        case "PDF reader missing":
            arguments = [ticket, "--trip", trip]
            environment["TRIPBOARD_PDF_WORKER"] = container.root.path + "/no-such-worker"
        default: Issue.record("no arguments for \(bad.name)"); return
        }
        let before = try container.state()
        let result = try container.share(arguments, environment: environment)
        #expect(result.status == bad.status, "\(bad.name): \(result)")
        #expect(result.stdout.isEmpty, "\(bad.name): \(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(bad.name): one line: \(result)")
        #expect(result.stderr.contains(bad.message), "\(bad.name): \(result)")
        #expect(try container.state() == before, "\(bad.name) changed the container")
        #expect(container.regularFiles(under: "attachments").isEmpty && container.regularFiles(under: "tmp").isEmpty)
    }

    @Test func withoutAContainerItCreatesNothing() throws {
        let container = try TestContainer()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let result = try container.share([ticket])
        #expect(result.status == 66, "\(result)")
        #expect(result.stderr.contains("open the app once to set it up"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: container.path), "the extension must never create a container")
    }

    @Test func aContainerTheAppHasNotFinishedAsksForTheApp() throws {
        let container = try TestContainer()
        try container.addTrip()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        // A store at schema 0: set up, but not yet migrated by the app.
        #expect(try container.sqlite("PRAGMA user_version = 0").status == 0)
        let before = try container.state()
        let result = try container.share([ticket])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("open the app to finish updating"), "\(result)")
        #expect(try container.state() == before)
    }

    /// TripBoard 1's data waiting for the app's first launch: the extension refuses (75, "open the
    /// app first"), changes nothing on either side and leaves the move to the app; after the app
    /// has run once the same ticket is filed. A container the command line names elsewhere gets no
    /// version-1 data from the app, so the extension files into it.
    @Test func aContainerTheAppHasTripBoard1sDataToMoveIntoAsksForTheApp() throws {
        let setup = try MigrationSetup(.standard(trips: 2, fileSize: 500))
        let container = setup.container
        // The app set the container up before TripBoard 1's directory appeared (or with none at
        // the default place): a container whose first-launch migration has not started.
        #expect(try container.app("container", "init", environment: ["TRIPBOARD_LEGACY_DIR": container.root.path + "/none"]).status == 0)
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let before = try container.state()
        func listing(_ path: String) throws -> [String] {
            try FileManager.default.subpathsOfDirectory(atPath: path).sorted().map { name in
                let attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + name)
                return "\(name) \(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? 0)"
            }
        }
        let legacyBefore = try listing(setup.legacy)
        let refused = try ProcessRunner.run("share-extension", [ticket], environment: setup.environment)
        #expect(refused.status == 75, "\(refused)")
        #expect(refused.stdout.isEmpty && refused.stderrLines.count == 1, "\(refused)")
        #expect(refused.stderr.contains("has not been moved into the container yet; open the app first"), "\(refused)")
        #expect(try container.state() == before, "the refusal changed the container")
        #expect(try listing(setup.legacy) == legacyBefore, "the refusal changed TripBoard 1's directory")
        // Named on the command line, however spelled, the same container is still the one the
        // app migrates into.
        // The link outside the test's directory, whose every file `state()` compares.
        let link = NSTemporaryDirectory() + "/tripboard-link-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: container.path)
        defer { try? FileManager.default.removeItem(atPath: link) }
        for spelling in [container.path, container.path + "/", container.path + "//", container.root.path + "/./container", link] {
            let named = try ProcessRunner.run("share-extension", [ticket, "--container", spelling], environment: setup.environment)
            #expect(named.status == 75 && named.stderr.contains("open the app first"), "\(spelling): \(named)")
        }
        #expect(try container.state() == before, "a refusal changed the container")

        // Another container named on the command line: the app's first launch would not move
        // TripBoard 1's data there, so the ticket is filed.
        let other = try TestContainer()
        let otherTrip = try other.addTrip("Porto", start: "2026-12-01", end: "2026-12-31")
        // (The other container's own device: its store is sealed under that device's keys.)
        var elsewhere = other.environment(["TRIPBOARD_LEGACY_DIR": setup.legacy])
        elsewhere["TRIPBOARD_CONTAINER"] = container.path
        let filed = try ProcessRunner.run("share-extension", [ticket, "--container", other.path, "--trip", otherTrip], environment: elsewhere)
        #expect(filed.status == 0, "\(filed)")

        // The app's first launch moves the data in; then the extension files the ticket.
        let launch = try ProcessRunner.run("app", ["trip", "list"], environment: setup.environment)
        #expect(launch.status == 0 && launch.stderr.contains("migrating TripBoard 1's data"), "\(launch)")
        let trip = try container.appOK("trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15")
        let after = try ProcessRunner.run("share-extension", [ticket, "--trip", trip], environment: setup.environment)
        #expect(after.status == 0, "\(after)")
    }

    /// A store the manifest says existed, now gone or emptied, is data loss — as `app` and `widget`
    /// report it — never "being updated" (which would make the user wait for nothing).
    @Test(arguments: ["deleted", "emptied"])
    func aLostStoreIsReportedAsLost(_ loss: String) throws {
        let container = try TestContainer()
        try container.addTrip()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: container.storePath + suffix) }
        if loss == "deleted" {
            try FileManager.default.removeItem(atPath: container.storePath)
        } else {
            try Data().write(to: URL(fileURLWithPath: container.storePath))
        }
        let before = container.files()
        let result = try container.share([ticket])
        #expect(result.status == (loss == "deleted" ? 66 : 65), "\(result)")
        #expect(!result.stderr.contains("being updated"), "\(result)")
        #expect(container.files() == before, "nothing is created in its place")
    }

    @Test func lockedContainerIsBusyWithinItsDeadline() throws {
        let container = try TestContainer()
        try container.addTrip()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let holder = try ProcessRunner.start("/usr/bin/flock", ["-x", container.path + "/container.lock", "sleep", "5"],
                                             environment: ProcessRunner.environment(container: nil))
        defer { holder.kill(); _ = holder.wait() }
        usleep(200_000)
        let before = container.files()
        let result = try container.share([ticket], environment: ["TRIPBOARD_LOCK_TIMEOUT": "0.5"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("busy"), "\(result)")
        #expect(container.files() == before)
    }

    @Test(arguments: ["corrupt", "newer"])
    func aDamagedStoreIsRefusedAndLeftAlone(_ damage: String) throws {
        let container = try TestContainer()
        try container.addTrip()
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        if damage == "corrupt" {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: container.storePath))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(repeating: 0x41, count: 8192))
            try handle.close()
        } else {
            #expect(try container.sqlite("PRAGMA user_version = 99").status == 0)
        }
        let before = container.files()
        let result = try container.share([ticket])
        #expect(result.status == 65, "\(result)")
        #expect(container.files() == before)
    }

    @Test func aThumbnailThatCannotBeCachedDoesNotFailTheImport() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try FileManager.default.createDirectory(atPath: container.path + "/caches", withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: container.path + "/caches/thumbnails")
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: container.path + "/caches/thumbnails"))
        let ticket = try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf")
        let result = try container.share([ticket, "--trip", trip])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.hasPrefix("warning: the thumbnail could not be cached"), "\(result)")
        #expect(container.regularFiles(under: "attachments").count == 1)
        let check = try container.app("container", "check")
        #expect(check.status == 65 && check.stdout.contains("caches/thumbnails (a regular file where the cache's directory belongs)"), "\(check)")
        #expect(try container.app("container", "check", "--repair").status == 0)
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }

    /// A file the container migration moved is not hashed until its pass reaches it: asked for
    /// its thumbnail meanwhile, `attachment thumbnail` hashes it, records the hash, and renders
    /// (it used to refuse it as damaged); a file of another size than its row's is still refused.
    @Test func aThumbnailOfAFileNotHashedYetHashesItFirst() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let imported = try container.shareOK(try container.input(pdf, as: "t.pdf"), "--trip", trip)
        let attachment = try #require(imported["attachment"] as? [String: Any])
        let id = try #require(attachment["id"] as? String)
        let cached = container.path + "/caches/thumbnails/\(id).png.sealed"
        try FileManager.default.removeItem(atPath: cached)
        #expect(try container.sqlite("UPDATE attachments SET content_hash = '' WHERE id = '\(id)'").status == 0)
        let thumbnail = try container.app("attachment", "thumbnail", id, container.root.path + "/out.png")
        #expect(thumbnail.status == 0, "\(thumbnail)")
        let recorded = try container.sqlite("SELECT content_hash FROM attachments WHERE id = '\(id)'", readOnly: true).trimmedStdout
        #expect(recorded == blake2bHex(pdf), "the hash is recorded: \(recorded)")

        // Not hashed yet and not the size its row says: refused as damaged, nothing recorded.
        try FileManager.default.removeItem(atPath: cached)
        #expect(try container.sqlite("UPDATE attachments SET content_hash = '' WHERE id = '\(id)'").status == 0)
        let path = container.path + "/" + (try #require(attachment["relativePath"] as? String))
        try pdf.dropLast().write(to: URL(fileURLWithPath: path))  // in the clear, as an earlier build wrote files
        let refused = try container.app("attachment", "thumbnail", id, "-")
        #expect(refused.status == 65 && refused.stderr.contains("does not match its recorded size and hash"), "\(refused)")
        let after = try container.sqlite("SELECT content_hash FROM attachments WHERE id = '\(id)'", readOnly: true).trimmedStdout
        #expect(after.isEmpty, "nothing recorded for a file of another size: \(after)")
    }

    @Test func aMissingThumbnailIsRenderedAgainAndTheCacheKeepsItsLimit() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let imported = try container.shareOK(try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "t.pdf"), "--trip", trip)
        let id = try #require((imported["attachment"] as? [String: Any])?["id"] as? String)
        let cached = "container/caches/thumbnails/\(id).png.sealed"
        let original = try container.cachedThumbnail(id)
        try FileManager.default.removeItem(atPath: container.root.path + "/" + cached)
        let out = container.root.path + "/out.png"
        #expect(try container.app("attachment", "thumbnail", String(id.prefix(8)), out).status == 0)
        #expect(try container.cachedThumbnail(id) == original, "the same page renders to the same PNG")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == original, "written where asked")
        #expect(try container.app("attachment", "thumbnail", id, container.root.path).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: container.root.path + "/t.pdf.png")) == original, "a directory: <name>.png in it")

        // Two stale 600 KB entries and a 1 MiB limit: importing another ticket evicts the oldest first.
        try container.appOK("prefs", "set", "cacheLimitMB", "1")
        for (index, age) in [(1, 7200.0), (2, 3600.0)] {
            let path = container.path + "/caches/thumbnails/stale-\(index).png.sealed"
            try Data(count: 600_000).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: path)
        }
        let second = try container.shareOK(try container.input(TicketPDF.make(lines: ["Second", "12 DEC 2026"]), as: "u.pdf"), "--trip", trip)
        let names = try FileManager.default.contentsOfDirectory(atPath: container.path + "/caches/thumbnails").sorted()
        #expect(!names.contains("stale-1.png.sealed") && names.contains("stale-2.png.sealed"), "\(names)")
        #expect(names.contains(((second["attachment"] as? [String: Any])?["id"] as? String ?? "?") + ".png.sealed"), "\(names)")
        #expect(try container.appOK("cache", "clear").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container.path + "/caches/thumbnails").isEmpty)
    }
}
