import Foundation
import Testing
@testable import PDFReader
import TripBoardSystem

/// The poppler wrapper, in this process (no worker, no limits): what it opens, refuses, reads and renders.
struct PDFDocumentTests {
    // MARK: - Opening

    @Test(arguments: [Fixture.ticket, .junkBeforeHeader, .linearized, .ownerPasswordOnly])
    func opensTicketVariantsAndReadsTheirText(_ fixture: Fixture) throws {
        let fixtures = try Fixtures()
        let document = try PDFDocument(path: try fixtures.path(fixture))

        #expect(document.pageCount == 1)
        let text = document.text()
        for line in TicketText.lines {
            #expect(text.contains(line), "\(fixture): missing \(line) in \(text.debugDescription)")
        }
    }

    @Test func refusesAFileThatNeedsAUserPassword() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.path(.userPassword)

        #expect(throws: PDFDocumentError.encrypted(path: path)) { try PDFDocument(path: path) }
    }

    @Test(arguments: [Fixture.truncated, .empty, .pngRenamed, .randomBytes, .noPages])
    func reportsFilesThatAreNotReadablePDFsAsDamaged(_ fixture: Fixture) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.path(fixture)

        let error = try #require(throws: PDFDocumentError.self) { try PDFDocument(path: path) }
        guard case .damaged(let reportedPath, _) = error else {
            Issue.record("\(fixture): expected damaged, got \(error)")
            return
        }
        #expect(reportedPath == path)
        #expect(error.reason == "poppler cannot read it as a PDF" || error.reason == "it has no pages",
                "\(fixture): our words, never the file's: \(error.reason)")
    }

    @Test func reportsAMissingFileAsUnreadable() throws {
        let fixtures = try Fixtures()
        let path = fixtures.directory.child("no such ticket.pdf")

        let error = try #require(throws: PDFDocumentError.self) { try PDFDocument(path: path) }
        guard case .unreadable = error else {
            Issue.record("expected unreadable, got \(error)")
            return
        }
        #expect(error.description.hasPrefix(path + ": "))
    }

    @Test func repairsABrokenCrossReferenceTable() throws {
        let fixtures = try Fixtures()
        let document = try PDFDocument(path: try fixtures.path(.noisy))

        #expect(document.pageCount == 1)
    }

    // MARK: - Paths a URI would have to escape

    @Test(arguments: ["a b.pdf", "100%.pdf", "%20.pdf", "hash#tag.pdf", "what?.pdf", "é → ü.pdf", "semi;colon&amp.pdf"])
    func opensFilesWhoseNamesNeedEscapingInAURI(_ name: String) throws {
        let fixtures = try Fixtures()
        try fixtures.directory.write(try fixtures.bytes(.ticket), to: name)

        let document = try PDFDocument(path: fixtures.directory.child(name))

        #expect(document.pageCount == 1)
    }

    // MARK: - Text

    @Test func textCoversTheFirstPagesSeparatedByFormFeeds() throws {
        let fixtures = try Fixtures()
        let document = try PDFDocument(path: try fixtures.path(.manyPages))

        #expect(document.pageCount == Fixture.pageCount)
        let pages = document.text(firstPages: 3).split(separator: "\u{0C}", omittingEmptySubsequences: false)
        #expect(pages.count == 3)
        for (index, page) in pages.enumerated() {
            #expect(page.contains("Page \(index + 1) of \(Fixture.pageCount)"))
        }
        #expect(document.text().split(separator: "\u{0C}").count == 2, "two pages by default")
        #expect(document.text(firstPages: 0) == "")
        #expect(document.text(firstPages: 1000).split(separator: "\u{0C}").count == Fixture.pageCount)
    }

    /// The text is `pdftotext -layout`'s (the same physical layout, line for line), on PDFs
    /// of three other producers: `pdftotext` ends each page with a form feed where the document
    /// puts one between pages, and the last lines' newlines are not kept.
    @Test func textIsWhatPdftotextPrints() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/hotel-confirmations").path
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".pdf") }.sorted()
        try #require(names.count >= 15)
        let fixtures = try Fixtures()
        for name in names + [try fixtures.path(.manyPages)] {
            let path = name.hasPrefix("/") ? name : directory + "/" + name
            let printed = try Self.pdftotext(path, pages: 3)
            let expected = printed.split(separator: "\u{0C}", omittingEmptySubsequences: false).dropLast()
                .map { $0.replacing(/\n+$/, with: "") }.joined(separator: "\u{0C}")
            #expect(try PDFDocument(path: path).text(firstPages: 3) == expected, "\(name)")
        }
    }

    static func pdftotext(_ path: String, pages: Int) throws -> String {
        let outcome = try ChildProcess.run(executable: "/usr/bin/pdftotext", arguments: ["-layout", "-enc", "UTF-8", "-l", String(pages), path, "-"],
                                           environment: [:], timeout: 60)
        try #require(outcome.termination == .exited(0), "pdftotext \(path): \(outcome.termination)")
        return String(decoding: outcome.output, as: UTF8.self)
    }

    @Test func textIsCutToTheLimitOnACharacterBoundary() throws {
        let fixtures = try Fixtures()
        let document = try PDFDocument(path: try fixtures.path(.ticket))

        let cut = document.text(limit: 28)
        #expect(cut == "BOARDING PASS\nTP 1351\nLIS ", "26 bytes: '→' takes 3 and is not split: \(cut.debugDescription)")
        #expect(PDFDocument.prefix(of: "→→", utf8Limit: 5) == "→")
        #expect(PDFDocument.prefix(of: "🇵🇹x", utf8Limit: 7) == "", "a flag is one character of 8 bytes")
        #expect(PDFDocument.prefix(of: "abc", utf8Limit: 3) == "abc")
    }

    // MARK: - Thumbnail

    @Test(arguments: [(Fixture.ticket, 200, 141, 200), (.landscape, 200, 200, 141), (.ticket, 64, 45, 64), (.ticket, 1, 1, 1)])
    func thumbnailFitsTheBoxOnWhite(_ fixture: Fixture, box: Int, width: Int, height: Int) throws {
        let fixtures = try Fixtures()
        let document = try PDFDocument(path: try fixtures.path(fixture))

        let image = try document.renderThumbnail(fittingIn: box)

        #expect((image.width, image.height) == (width, height))
        #expect(Array(image.bytes.prefix(8)) == [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "PNG signature")
        try fixtures.directory.write(image.bytes, to: "thumbnail.png")
        let pixels = try PNGPixels(path: fixtures.directory.child("thumbnail.png"))
        #expect((pixels.width, pixels.height) == (width, height))
        for (x, y) in pixels.corners {
            #expect(pixels.isWhite(x: x, y: y), "corner (\(x), \(y)) is not white")
        }
        if box >= 64 { #expect(pixels.inkedPixelCount > 0, "the ticket's text is drawn") }
    }

    /// A page's /Rotate turns its thumbnail (100 × 200 pt shown, so 100 × 200 px in a 200 box), and
    /// red stays red: poppler draws blue, green, red in memory, libpng must be told.
    @Test func thumbnailOfARotatedPageIsTurnedAndKeepsItsColours() throws {
        let fixtures = try Fixtures()
        let document = try PDFDocument(path: try fixtures.path(.rotatedRed))

        let image = try document.renderThumbnail(fittingIn: 200)
        try fixtures.directory.write(image.bytes, to: "thumbnail.png")
        let pixels = try PNGPixels(path: fixtures.directory.child("thumbnail.png"))

        #expect((image.width, image.height) == (100, 200))
        #expect((pixels.width, pixels.height) == (100, 200))
        let red = pixels.count { red, green, blue in red > 240 && green < 16 && blue < 16 }
        let blue = pixels.count { red, green, blue in blue > 240 && green < 16 && red < 16 }
        #expect(abs(red - 100 * 100) < 400, "half the page is red: \(red) pixels")
        #expect(blue == 0)
        #expect(abs(pixels.count { $0 == 255 && $1 == 255 && $2 == 255 } - 100 * 100) < 400, "the other half is white")
    }

    @Test func thumbnailOfTheOwnerPasswordOnlyFileIsDrawnToo() throws {
        let fixtures = try Fixtures()
        let document = try PDFDocument(path: try fixtures.path(.ownerPasswordOnly))

        let image = try document.renderThumbnail()
        try fixtures.directory.write(image.bytes, to: "thumbnail.png")

        #expect(try PNGPixels(path: fixtures.directory.child("thumbnail.png")).inkedPixelCount > 0)
    }
}
