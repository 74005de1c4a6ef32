import Foundation
import Testing
@testable import PDFReader
import TripBoardStorage
import TripBoardSystem
import TripBoardWorkerContract

/// The worker's logic in this process: its command line, its checks before poppler, its verdicts.
/// (Limits and silence only apply in the real worker: see PDFWorkerTests.)
struct WorkerCommandTests {
    // MARK: - Command line

    @Test func parsesFileAndOptionsInAnyOrderWithDefaults() throws {
        #expect(try WorkerCommand.parse(["inspect", "t.pdf"]) == .inspect(.init(file: "t.pdf", thumbnailPath: nil, thumbnailSize: 200, textPages: 2)))
        #expect(try WorkerCommand.parse(["inspect", "--thumbnail", "out.png", "t.pdf", "--text-pages", "0", "--thumbnail-size", "64"])
            == .inspect(.init(file: "t.pdf", thumbnailPath: "out.png", thumbnailSize: 64, textPages: 0)))
        #expect(try WorkerCommand.parse(["inspect", "--text-pages", "5", "--", "-dash.pdf"]) == .inspect(.init(file: "-dash.pdf", textPages: 5)))
        #expect(try WorkerCommand.parse(["inspect", "--thumbnail", "-odd name.png", "t.pdf"]) == .inspect(.init(file: "t.pdf", thumbnailPath: "-odd name.png")))
        #expect(try WorkerCommand.parse(["inspect", "--text-pages=3", "--thumbnail=t.png", "t.pdf"])
            == .inspect(.init(file: "t.pdf", thumbnailPath: "t.png", textPages: 3)))
        #expect(try WorkerCommand.parse(["--help"]) == .help)
        #expect(try WorkerCommand.parse(["inspect", "--help"]) == .help)
        #expect(try WorkerCommand.parse(["help"]) == .help)
        #expect(try WorkerCommand.parse(["-q", "--version"]) == .version)
    }

    @Test(arguments: [
        [], ["inspect"], ["look", "t.pdf"], ["inspect", "a.pdf", "b.pdf"], ["inspect", "--thumbnail"],
        ["inspect", "t.pdf", "--text-pages", "-1"], ["inspect", "t.pdf", "--text-pages", "101"],
        ["inspect", "t.pdf", "--thumbnail-size", "0"], ["inspect", "t.pdf", "--thumbnail-size", "2049"],
        ["inspect", "t.pdf", "--thumbnail-size", "12px"], ["inspect", "t.pdf", "--verbose"], ["inspect", ""],
    ])
    func refusesAWrongCommandLineAsUsage(_ arguments: [String]) throws {
        let failure = try #require(throws: PDFInspectionFailure.self) { try WorkerCommand.parse(arguments) }

        #expect(failure.kind == .usage)
        #expect(failure.kind.exitStatus == 64)
        #expect(!failure.message.isEmpty && !failure.message.contains("\n"))
    }

    // MARK: - Verdicts

    @Test(arguments: [
        (Fixture.userPassword, PDFInspectionFailure.Kind.encrypted),
        (.truncated, .damaged), (.noPages, .damaged), (.empty, .notPDF), (.pngRenamed, .notPDF), (.randomBytes, .notPDF),
    ])
    func refusesWhatItCannotRead(_ fixture: Fixture, expected: PDFInspectionFailure.Kind) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.path(fixture)

        let failure = try #require(throws: PDFInspectionFailure.self) { try WorkerCommand.inspect(.init(file: path)) }

        #expect(failure.kind == expected, "\(fixture): \(failure)")
    }

    @Test func reportsMissingFilesAndDirectoriesAsUnreadable() throws {
        let fixtures = try Fixtures()
        for path in [fixtures.directory.child("missing.pdf"), fixtures.directory.path] {
            let failure = try #require(throws: PDFInspectionFailure.self) { try WorkerCommand.inspect(.init(file: path)) }
            #expect(failure.kind == .unreadable, "\(path): \(failure)")
        }
    }

    @Test func findsTheHeaderAnywhereInTheFirstKibibyteOnly() {
        let header = Array("%PDF-1.7\n".utf8)
        #expect(PDFWorkerLimits.hasHeader(header))
        #expect(PDFWorkerLimits.hasHeader(Array(repeating: 0x20, count: 1015) + header.prefix(5)))
        #expect(!PDFWorkerLimits.hasHeader(Array("%PDF".utf8)))
        #expect(!PDFWorkerLimits.hasHeader(Array("%!PS-Adobe-3.0 %PDF".utf8)))
        #expect(!PDFWorkerLimits.hasHeader([]))
    }

    @Test func refusesAPDFWhoseHeaderComesTooLate() throws {
        let fixtures = try Fixtures()
        try fixtures.directory.write(Array(repeating: UInt8(ascii: "x"), count: 1020) + fixtures.bytes(.ticket), to: "late.pdf")

        let failure = try #require(throws: PDFInspectionFailure.self) {
            try WorkerCommand.inspect(.init(file: fixtures.directory.child("late.pdf")))
        }

        #expect(failure.kind == .notPDF)
    }

    @Test func inspectsATicketAndWritesAPrivateThumbnail() throws {
        let fixtures = try Fixtures()
        let thumbnail = fixtures.directory.child("thumbnail.png")

        let inspection = try WorkerCommand.inspect(.init(file: try fixtures.path(.ticket), thumbnailPath: thumbnail, thumbnailSize: 100))

        #expect(inspection.pageCount == 1)
        #expect(inspection.text == TicketText.lines.joined(separator: "\n"))
        #expect(inspection.thumbnail == PDFThumbnail(path: thumbnail, width: 71, height: 100))
        #expect(inspection.thumbnailError == nil)
        #expect(try fixtures.directory.permissions("thumbnail.png") == 0o600)
    }

    @Test func aThumbnailThatCannotBeWrittenDoesNotFailTheInspection() throws {
        let fixtures = try Fixtures()
        try fixtures.directory.write(Array("already here".utf8), to: "taken.png")

        for target in [fixtures.directory.child("taken.png"), fixtures.directory.child("no/such/directory.png")] {
            let inspection = try WorkerCommand.inspect(.init(file: try fixtures.path(.ticket), thumbnailPath: target))
            #expect(inspection.pageCount == 1)
            #expect(inspection.thumbnail == nil)
            #expect(inspection.thumbnailError != nil, "\(target)")
            #expect(inspection.thumbnailErrorKind == .writing, "\(target)")
        }
        #expect(try fixtures.directory.bytes("taken.png") == Array("already here".utf8), "an existing file is never overwritten")
    }

    // MARK: - The JSON contract

    @Test func successAndFailureDocumentsHaveTheirDocumentedKeys() throws {
        let inspection = PDFInspection(pageCount: 2, text: "a\u{0C}b")
        #expect(String(decoding: try JSON.encode(inspection, pretty: false), as: UTF8.self)
            == #"{"pageCount":2,"text":"a\u000cb","thumbnail":null,"thumbnailError":null,"thumbnailErrorKind":null}"#)
        #expect(try JSON.decode(PDFInspection.self, from: JSON.encode(inspection)) == inspection)

        let withThumbnail = PDFInspection(pageCount: 1, text: "", thumbnail: PDFThumbnail(path: "t.png", width: 141, height: 200))
        #expect(String(decoding: try JSON.encode(withThumbnail, pretty: false), as: UTF8.self)
            == #"{"pageCount":1,"text":"","thumbnail":{"height":200,"path":"t.png","png":null,"width":141},"thumbnailError":null,"thumbnailErrorKind":null}"#)
        // On the pipe (`--thumbnail -`): the PNG in base64, read back byte for byte.
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]
        let onThePipe = PDFInspection(pageCount: 1, text: "", thumbnail: PDFThumbnail(path: "-", width: 141, height: 200, png: png))
        #expect(String(decoding: try JSON.encode(onThePipe, pretty: false), as: UTF8.self)
            == #"{"pageCount":1,"text":"","thumbnail":{"height":200,"path":"-","png":"iVBORw0KGgoA/w==","width":141},"thumbnailError":null,"thumbnailErrorKind":null}"#)
        #expect(try JSON.decode(PDFInspection.self, from: JSON.encode(onThePipe)).thumbnail?.pngBytes == png)
        for length in 0...9 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(WorkerBase64.decode(WorkerBase64.encode(bytes)) == bytes, "\(length)")
        }
        #expect(WorkerBase64.decode("a=bc") == nil && WorkerBase64.decode("abc") == nil && WorkerBase64.decode("ab!=") == nil)
        #expect(try JSON.decode(PDFInspection.self, from: Array(#"{"pageCount":1,"text":"","thumbnail":null,"thumbnailError":"x"}"#.utf8)).thumbnailErrorKind == nil,
                "an older worker's document, without the kind, still reads")

        let failure = PDFInspectionFailure(.encrypted, "the PDF needs a password to open")
        #expect(String(decoding: try JSON.encode(failure, pretty: false), as: UTF8.self)
            == #"{"error":"encrypted","message":"the PDF needs a password to open"}"#)
        #expect(try JSON.decode(PDFInspectionFailure.self, from: JSON.encode(failure)) == failure)
    }

    @Test func everyFailureKindHasItsOwnExitStatus() {
        let statuses = PDFInspectionFailure.Kind.allCases.map(\.exitStatus)
        #expect(Set(statuses).count == statuses.count)
        #expect(!statuses.contains(0) && !statuses.contains(1))
        for kind in PDFInspectionFailure.Kind.allCases {
            #expect(PDFInspectionFailure.Kind(exitStatus: kind.exitStatus) == kind)
        }
        #expect(PDFInspectionFailure.Kind(exitStatus: 0) == nil)
    }
}

extension WorkerCommandTests {
    @Test func refusesAFileOverTheSizeCapBeforeParsingIt() throws {
        let fixtures = try Fixtures()
        try fixtures.directory.write(try fixtures.bytes(.ticket), to: "huge.pdf")
        // Sparse: the size is what counts, and the disk is not filled.
        try #require(truncate(fixtures.directory.child("huge.pdf"), off_t(PDFWorkerLimits.fileBytes + 1)) == 0)

        let failure = try #require(throws: PDFInspectionFailure.self) {
            try WorkerCommand.inspect(.init(file: fixtures.directory.child("huge.pdf")))
        }

        #expect(failure.kind == .tooLarge)
        #expect(failure.kind.exitStatus == 83)
    }
}
