import Foundation
import Testing
@testable import TripBoardStorage
@testable import TripBoardSystem
import TripBoardWorkerContract

/// End to end: the built `pdf-worker` (next to the test bundle in the products directory, or
/// `TRIPBOARD_PDF_WORKER`) spawned through the `PDFWorker` client, as the share extension will.
struct PDFWorkerTests {
    /// The worker under test; `TRIPBOARD_PDF_WORKER` points at a release build when set.
    static func worker(timeout: Double = 20) throws -> PDFWorker {
        let worker = try PDFWorker.locate(environment: ProcessInfo.processInfo.environment, timeout: timeout)
        try #require(FileManager.default.isExecutableFile(atPath: worker.executablePath),
                     "no pdf-worker at \(worker.executablePath): build it (swift build --build-tests builds every product)")
        return worker
    }

    // MARK: - Verdicts

    @Test(arguments: [Fixture.ticket, .junkBeforeHeader, .linearized, .ownerPasswordOnly])
    func readsTicketVariants(_ fixture: Fixture) throws {
        let fixtures = try Fixtures()

        let inspection = try Self.worker().inspect(file: try fixtures.path(fixture))

        #expect(inspection == PDFInspection(pageCount: 1, text: TicketText.lines.joined(separator: "\n")))
    }

    @Test(arguments: [
        (Fixture.userPassword, PDFImportError.Kind.encrypted), (.truncated, .damaged),
        (.noPages, .damaged), (.empty, .notPDF), (.pngRenamed, .notPDF), (.randomBytes, .notPDF),
    ])
    func refusesWhatItCannotRead(_ fixture: Fixture, expected: PDFImportError.Kind) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.path(fixture)

        let error = try #require(throws: PDFImportError.self) { try Self.worker().inspect(file: path) }

        #expect(error.kind == expected, "\(fixture): \(error)")
        #expect(error.description.hasPrefix(path + ": "))
        #expect(!error.description.contains("\n"))
    }

    /// What the share extension does: the PDF in a memory file, sealed against changes, handed
    /// to the worker as its standard input; the thumbnail comes back on the pipe. The verdicts
    /// are the same as from a path.
    @Test func readsAMemoryFileOnItsStandardInputAndReturnsTheThumbnailOnThePipe() throws {
        let fixtures = try Fixtures()
        let bytes = try FileDescriptor.openForReading(path: try fixtures.path(.ticket)).readToEnd()
        let memory = try FileDescriptor.memoryFile(name: "test")
        try memory.write(all: bytes)
        try memory.sealContents()
        #expect(throws: FileSystemError.self, "sealed: no one writes to it any more") { try memory.write(all: [0]) }
        let inspection = try Self.worker().inspect(memoryFile: memory, displayName: "ticket.pdf", thumbnail: true)
        #expect(inspection.pageCount == 1 && inspection.text == TicketText.lines.joined(separator: "\n"))
        let png = try #require(inspection.thumbnail?.pngBytes)
        #expect(png.starts(with: [0x89, 0x50, 0x4e, 0x47]) && inspection.thumbnail?.path == "-")

        let junk = try FileDescriptor.memoryFile(name: "junk")
        try junk.write(all: Array("not a PDF at all".utf8))
        let error = try #require(throws: PDFImportError.self) {
            try Self.worker().inspect(memoryFile: junk, displayName: "junk.pdf", thumbnail: true)
        }
        #expect(error == .notPDF(file: "junk.pdf"))
    }

    @Test func saysAnEncryptedPDFIsPasswordProtected() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.path(.userPassword)

        let error = try #require(throws: PDFImportError.self) { try Self.worker().inspect(file: path) }

        #expect(error == .encrypted(file: path))
        #expect(error.description.contains("password-protected"))
    }

    @Test func reportsAMissingFileAsUnreadable() throws {
        let fixtures = try Fixtures()
        let path = fixtures.directory.child("gone.pdf")

        let error = try #require(throws: PDFImportError.self) { try Self.worker().inspect(file: path) }

        #expect(error.kind == .unreadable)
    }

    @Test func readsTheTextOfAsManyPagesAsAsked() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.path(.manyPages)

        let inspection = try Self.worker().inspect(file: path, textPages: 5)
        let defaultInspection = try Self.worker().inspect(file: path)
        let noText = try Self.worker().inspect(file: path, textPages: 0)

        #expect(inspection.pageCount == Fixture.pageCount)
        #expect(inspection.text.split(separator: "\u{0C}").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            == (1...5).map { "Page \($0) of \(Fixture.pageCount)" })
        #expect(defaultInspection.text.split(separator: "\u{0C}").count == 2)
        #expect(noText.text == "")
    }

    // MARK: - Thumbnail

    @Test(arguments: [(Fixture.ticket, 200, 141, 200), (.landscape, 120, 120, 85), (.linearized, 200, 141, 200)])
    func writesAThumbnailThatFitsTheBoxOnWhite(_ fixture: Fixture, box: Int, width: Int, height: Int) throws {
        let fixtures = try Fixtures()
        let thumbnail = fixtures.directory.child("thumbnail.png")

        let inspection = try Self.worker().inspect(file: try fixtures.path(fixture), thumbnail: thumbnail, thumbnailSize: box)

        #expect(inspection.thumbnail == PDFThumbnail(path: thumbnail, width: width, height: height))
        #expect(inspection.thumbnailError == nil)
        #expect(Array(try fixtures.directory.bytes("thumbnail.png").prefix(8)) == [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
        let pixels = try PNGPixels(path: thumbnail)
        #expect((pixels.width, pixels.height) == (width, height))
        for (x, y) in pixels.corners {
            #expect(pixels.isWhite(x: x, y: y), "corner (\(x), \(y)) is not white")
        }
        #expect(pixels.inkedPixelCount > 0)
        #expect(try fixtures.directory.permissions("thumbnail.png") == 0o600)
    }

    @Test func aThumbnailFailureLeavesTheInspectionStanding() throws {
        let fixtures = try Fixtures()

        let inspection = try Self.worker().inspect(file: try fixtures.path(.ticket), thumbnail: fixtures.directory.child("missing/dir/t.png"))

        #expect(inspection.pageCount == 1)
        #expect(inspection.thumbnail == nil)
        #expect(inspection.thumbnailError?.isEmpty == false)
    }

    // MARK: - Limits

    @Test func aTinyTimeoutKillsTheWorkerAndSaysTheFileIsTooComplex() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.path(.heavy)
        var worker = try Self.worker()
        worker.timeout = 0.3
        let start = Date()

        let error = try #require(throws: PDFImportError.self) {
            try worker.inspect(file: path, thumbnail: fixtures.directory.child("heavy.png"))
        }

        #expect(error == .tooComplex(file: path, limit: .wallClock(seconds: 0.3)))
        #expect(error.description.contains("too complex"))
        #expect(error.description.contains("longer than 0.3 s"))
        #expect(Date().timeIntervalSince(start) < 3, "killed at the deadline, not when the worker finished")
    }

    @Test func theHeavyFixtureIsReadWithEnoughTime() throws {
        // Proves the timeout test above kills a worker that was doing real work, not a hung one.
        let fixtures = try Fixtures()

        let inspection = try Self.worker(timeout: 60).inspect(file: try fixtures.path(.heavy), thumbnail: fixtures.directory.child("heavy.png"))

        #expect(inspection.pageCount == 1)
        #expect(inspection.thumbnail != nil)
    }

    // MARK: - Quiet

    /// The worker run directly with stderr captured to a file: poppler complains about every
    /// repair (`Syntax Error: …`), and none of it may reach the terminal. (`G_MESSAGES_DEBUG=all`
    /// stays in the environment: it made GLib print everything when the worker used poppler-glib.)
    @Test(arguments: [Fixture.noisy, .truncated, .junkBeforeHeader, .randomBytes, .userPassword])
    func writesNothingToTheTerminalAndOneJSONObjectToStdout(_ fixture: Fixture) throws {
        let fixtures = try Fixtures()
        let worker = try Self.worker()
        let errorFile = fixtures.directory.child("stderr.txt")

        let outcome = try ChildProcess.run(
            executable: worker.executablePath,
            arguments: ["inspect", "--thumbnail", fixtures.directory.child("t.png"), try fixtures.path(fixture)],
            environment: ["G_MESSAGES_DEBUG": "all", "LANG": "C.UTF-8"], timeout: 20,
            standardError: .file(path: errorFile))

        let said = try fixtures.directory.bytes("stderr.txt")
        #expect(said == [], "\(fixture): \(String(decoding: said, as: UTF8.self))")
        #expect(outcome.output.last == 0x0a)
        #expect(outcome.output.filter { $0 == 0x0a }.count == 1, "one line")
        let document = try JSONValue.parse(outcome.output)
        guard case .object = document else {
            Issue.record("\(fixture): not a JSON object: \(String(decoding: outcome.output, as: UTF8.self))")
            return
        }
        let status: Int32 = if let kind = document["error"].flatMap({ try? JSON.decode(PDFInspectionFailure.Kind.self, from: $0) }) {
            kind.exitStatus
        } else { 0 }
        #expect(outcome.termination == .exited(status), "\(fixture)")
    }

    @Test func theNoisyFixtureReallyMakesPopplerTalk() throws {
        // Without this the test above could pass because nothing was ever said.
        let fixtures = try Fixtures()
        let errorFile = fixtures.directory.child("stderr.txt")

        let outcome = try ChildProcess.run(
            executable: "/bin/sh", arguments: ["-c", "command -v pdftotext >/dev/null || exit 99; pdftotext \"$0\" - >/dev/null", try fixtures.path(.noisy)],
            environment: ["PATH": "/usr/bin:/bin"], timeout: 20, standardError: .file(path: errorFile))
        if outcome.termination == .exited(99) { try Test.cancel("pdftotext (poppler-utils) is not installed") }

        #expect(String(decoding: try fixtures.directory.bytes("stderr.txt"), as: UTF8.self).contains("Syntax Error"))
    }

    @Test func usageErrorsAreOneJSONObjectWithStatus64() throws {
        let outcome = try ChildProcess.run(executable: try Self.worker().executablePath, arguments: ["inspect"],
                                           environment: [:], timeout: 20)

        #expect(outcome.termination == .exited(64))
        #expect(try JSON.decode(PDFInspectionFailure.self, from: outcome.output).kind == .usage)
    }

    // MARK: - Finding the worker

    @Test func findsTheWorkerNextToTheRunningExecutableUnlessTheEnvironmentNamesOne() throws {
        let located = try PDFWorker.locate(environment: [:])
        let running = try ChildProcess.currentExecutablePath()
        #expect(located.executablePath == URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent("pdf-worker").path)
        #expect(located.timeout == PDFWorker.defaultTimeout)

        #expect(try PDFWorker.locate(environment: ["TRIPBOARD_PDF_WORKER": "/opt/tb/pdf-worker"]).executablePath == "/opt/tb/pdf-worker")
        #expect(try PDFWorker.locate(environment: ["TRIPBOARD_PDF_WORKER": ""]).executablePath == located.executablePath)
    }

    @Test func aMissingWorkerIsItsOwnError() throws {
        let fixtures = try Fixtures()
        let worker = PDFWorker(executablePath: fixtures.directory.child("pdf-worker"))

        let error = try #require(throws: PDFImportError.self) { try worker.inspect(file: try fixtures.path(.ticket)) }

        #expect(error.kind == .workerMissing)
        #expect(error.description.contains("TRIPBOARD_PDF_WORKER"))
    }

    @Test func aWorkerThatIsNotExecutableIsMissingToo() throws {
        let fixtures = try Fixtures()
        try fixtures.directory.write(Array("not a program".utf8), to: "pdf-worker")

        let error = try #require(throws: PDFImportError.self) {
            try PDFWorker(executablePath: fixtures.directory.child("pdf-worker")).inspect(file: try fixtures.path(.ticket))
        }

        #expect(error.kind == .workerMissing)
    }

    // MARK: - How a worker's end is read

    static func outcome(_ termination: ChildProcess.Termination, _ output: String = "", cpuSeconds: Double = 0.1) -> ChildProcess.Outcome {
        ChildProcess.Outcome(termination: termination, output: Array(output.utf8), timedOut: false, exceededOutputLimit: false,
                             cpuSeconds: cpuSeconds, peakResidentBytes: 0, elapsedSeconds: 0.1)
    }

    @Test(arguments: [
        (ChildProcess.Termination.signaled(24), 10.0, PDFImportError.Limit.cpuTime(seconds: 10)),
        (.signaled(9), 12.0, .cpuTime(seconds: 10)),
        (.signaled(9), 0.5, .memory(bytes: 512 << 20, signal: 9)),
        (.signaled(6), 1.0, .memory(bytes: 512 << 20, signal: 6)),
        (.signaled(11), 1.0, .memory(bytes: 512 << 20, signal: 11)),
    ])
    func deathBySignalIsALimit(_ termination: ChildProcess.Termination, cpuSeconds: Double, limit: PDFImportError.Limit) throws {
        let worker = PDFWorker(executablePath: "/unused")

        #expect(throws: PDFImportError.tooComplex(file: "t.pdf", limit: limit)) {
            try worker.interpret(Self.outcome(termination, cpuSeconds: cpuSeconds), file: "t.pdf")
        }
    }

    @Test func aWorkerThatSaysNothingUsefulFailedRatherThanJudgingThePDF() throws {
        let worker = PDFWorker(executablePath: "/unused")
        let cases: [(ChildProcess.Outcome, PDFImportError.Kind)] = [
            (Self.outcome(.exited(0), "not json"), .workerFailed),
            (Self.outcome(.exited(0), #"{"pageCount":"one"}"#), .workerFailed),
            (Self.outcome(.exited(7)), .workerFailed),
            (Self.outcome(.exited(64), #"{"error":"usage","message":"missing FILE"}"#), .workerFailed),
            (Self.outcome(.signaled(15)), .workerFailed),
            (Self.outcome(.exited(82)), .damaged),
            (Self.outcome(.exited(81), "garbled"), .encrypted),
            (Self.outcome(.exited(83), #"{"error":"tooLarge","message":"70000000 bytes"}"#), .tooLarge),
        ]
        for (outcome, expected) in cases {
            let error = try #require(throws: PDFImportError.self) { try worker.interpret(outcome, file: "t.pdf") }
            #expect(error.kind == expected, "\(outcome.termination) \(String(decoding: outcome.output, as: UTF8.self)): \(error)")
        }
    }
}
