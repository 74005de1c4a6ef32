internal import PopplerShim
import TripBoardSystem

/// A PDF opened with poppler (its C++ API, through `PopplerShim`): page count, text, a thumbnail
/// of page 1.
///
/// Runs poppler in this process: only `pdf-worker` uses it, under resource limits, because
/// poppler parses untrusted bytes with no bound on memory or time (pitfalls.md). Not `Sendable`:
/// a poppler document is not safe to use from two threads at once.
public final class PDFDocument {
    /// The path it was opened from, for messages.
    public let path: String
    private let document: OpaquePointer
    /// Pages counted once: poppler-cpp counts them on every call.
    public let pageCount: Int

    /// Opens `path` without a password. poppler repairs broken cross-reference tables by itself
    /// and opens files that have only an owner password; a file that needs a user password is
    /// `.encrypted`. A document without pages is `.damaged`: there is nothing to import. A path
    /// that cannot be opened is `.unreadable`, with the system's reason.
    public init(path: String) throws(PDFDocumentError) {
        self.path = path
        var status = TRIPBOARD_PDF_FAILED
        guard let pointer = tripboard_pdf_open(path, &status) else {
            // poppler says only "no document" when fopen fails: ask the system why, in its words.
            do {
                _ = try FileDescriptor.openForReading(path: path)
            } catch {
                throw .unreadable(path: path, detail: error.reason)
            }
            switch status {
            case TRIPBOARD_PDF_ENCRYPTED: throw .encrypted(path: path)
            case TRIPBOARD_PDF_DAMAGED: throw .damaged(path: path, detail: "poppler cannot read it as a PDF")
            default: throw .damaged(path: path, detail: "poppler failed while opening it")
            }
        }
        document = pointer
        pageCount = Int(tripboard_pdf_page_count(pointer))
        guard pageCount > 0 else { throw .damaged(path: path, detail: "it has no pages") }
    }

    deinit { tripboard_pdf_close(document) }

    /// The text of the first `count` pages (fewer if the document is shorter) in reading order,
    /// as `pdftotext` prints it (a blank line between blocks), pages separated by a form feed
    /// (U+000C), cut to at most `limit` UTF-8 bytes on a character boundary. A page poppler
    /// cannot load contributes nothing.
    public func text(firstPages count: Int = 2, limit: Int = Int.max) -> String {
        var text = ""
        for index in 0..<min(max(count, 0), pageCount) {
            if index > 0 { text += "\u{0C}" }
            var length = 0
            if let characters = tripboard_pdf_page_text(document, Int32(index), &length) {
                text += String(decoding: UnsafeRawBufferPointer(start: characters, count: length), as: UTF8.self)
                tripboard_pdf_free(characters)
            }
            if text.utf8.count > limit { break }
        }
        return Self.prefix(of: text, utf8Limit: limit)
    }

    /// Renders page 1 on a white background, scaled to fit a `box` × `box` pixel square, keeping
    /// its proportions, with poppler's own renderer (Splash, as `pdftoppm` draws).
    public func renderThumbnail(fittingIn box: Int = 200) throws(PDFDocumentError) -> PNGImage {
        precondition(box > 0, "the thumbnail box must be at least one pixel")
        var pageWidth = 0.0
        var pageHeight = 0.0
        guard tripboard_pdf_page_size(document, 0, &pageWidth, &pageHeight) != 0 else {
            throw .renderingFailed(path: path, detail: "poppler cannot load page 1")
        }
        guard pageWidth.isFinite, pageHeight.isFinite, pageWidth > 0, pageHeight > 0 else {
            throw .renderingFailed(path: path, detail: "page 1 has no size")
        }
        let scale = Double(box) / max(pageWidth, pageHeight)
        let width = min(box, max(1, Int((pageWidth * scale).rounded())))
        let height = min(box, max(1, Int((pageHeight * scale).rounded())))
        var length = 0
        var reason: UnsafePointer<CChar>?
        guard let png = tripboard_pdf_render_png(document, 0, Int32(width), Int32(height), &length, &reason) else {
            throw .renderingFailed(path: path, detail: reason.map { String(cString: $0) } ?? "poppler failed")
        }
        defer { tripboard_pdf_free(png) }
        return PNGImage(bytes: Array(UnsafeBufferPointer(start: png, count: length)), width: width, height: height)
    }

    // MARK: - Private

    /// The longest prefix of `text` of at most `limit` UTF-8 bytes that ends on a character boundary.
    static func prefix(of text: String, utf8Limit limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var count = 0
        var end = text.startIndex
        for index in text.indices {
            let size = text[index].utf8.count
            if count + size > limit { break }
            count += size
            end = text.index(after: index)
        }
        return String(text[..<end])
    }
}

/// A PNG file's bytes and the size of the image in it.
public struct PNGImage: Sendable, Equatable {
    /// The whole PNG file.
    public let bytes: [UInt8]
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
}
