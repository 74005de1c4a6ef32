internal import CPoppler

/// A PDF opened with poppler-glib: page count, text, a thumbnail of page 1.
///
/// Runs poppler in this process: only `pdf-worker` uses it, under resource limits, because
/// poppler parses untrusted bytes with no bound on memory or time (pitfalls.md). Not `Sendable`:
/// a poppler document is not safe to use from two threads at once.
public final class PDFDocument {
    /// The path it was opened from, for messages.
    public let path: String
    private let document: GObjectReference

    /// Opens `path` without a password. poppler repairs broken cross-reference tables by itself
    /// and opens files that have only an owner password; a file that needs a user password is
    /// `.encrypted`. A document without pages is `.damaged`: there is nothing to import.
    ///
    /// The corresponding C function is `poppler_document_new_from_file`.
    public init(path: String) throws(PDFDocumentError) {
        self.path = path
        var error: UnsafeMutablePointer<GError>?
        guard let pointer = poppler_document_new_from_file(FileURI.make(path: path), nil, &error) else {
            throw Self.error(from: error, path: path)
        }
        document = GObjectReference(adopting: pointer)
        if error != nil { g_error_free(error) }
        guard pageCount > 0 else { throw .damaged(path: path, detail: "it has no pages") }
    }

    /// The number of pages.
    public var pageCount: Int { Int(poppler_document_get_n_pages(document.pointer)) }

    /// The text of the first `count` pages (fewer if the document is shorter), pages separated by
    /// a form feed (U+000C) as `pdftotext` does, cut to at most `limit` UTF-8 bytes on a
    /// character boundary. A page poppler cannot load contributes nothing.
    public func text(firstPages count: Int = 2, limit: Int = Int.max) -> String {
        var text = ""
        for index in 0..<min(max(count, 0), pageCount) {
            if index > 0 { text += "\u{0C}" }
            if let page = page(at: index), let characters = poppler_page_get_text(page.pointer) {
                text += String(cString: characters)
                g_free(characters)
            }
            if text.utf8.count > limit { break }
        }
        return Self.prefix(of: text, utf8Limit: limit)
    }

    /// Renders page 1 on a white background (poppler draws on a transparent surface and leaves
    /// the paper unpainted), scaled to fit a `box` × `box` pixel square, keeping its proportions.
    public func renderThumbnail(fittingIn box: Int = 200) throws(PDFDocumentError) -> PNGImage {
        precondition(box > 0, "the thumbnail box must be at least one pixel")
        guard let page = page(at: 0) else { throw .renderingFailed(path: path, detail: "poppler cannot load page 1") }
        var pageWidth = 0.0
        var pageHeight = 0.0
        poppler_page_get_size(page.pointer, &pageWidth, &pageHeight)
        guard pageWidth.isFinite, pageHeight.isFinite, pageWidth > 0, pageHeight > 0 else {
            throw .renderingFailed(path: path, detail: "page 1 has no size")
        }
        let scale = Double(box) / max(pageWidth, pageHeight)
        let width = min(box, max(1, Int((pageWidth * scale).rounded())))
        let height = min(box, max(1, Int((pageHeight * scale).rounded())))

        let surface = CairoSurface(adopting: cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)))
        try check(cairo_surface_status(surface.pointer), "cairo_image_surface_create")
        let context = CairoContext(adopting: cairo_create(surface.pointer))
        cairo_set_source_rgb(context.pointer, 1, 1, 1)
        cairo_paint(context.pointer)
        cairo_scale(context.pointer, Double(width) / pageWidth, Double(height) / pageHeight)
        poppler_page_render(page.pointer, context.pointer)
        try check(cairo_status(context.pointer), "poppler_page_render")
        cairo_surface_flush(surface.pointer)

        let encoder = PNGEncoder()
        let status = cairo_surface_write_to_png_stream(surface.pointer, { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
            let encoder = Unmanaged<PNGEncoder>.fromOpaque(closure).takeUnretainedValue()
            encoder.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return CAIRO_STATUS_SUCCESS
        }, Unmanaged.passUnretained(encoder).toOpaque())
        try withExtendedLifetime(encoder) { () throws(PDFDocumentError) in
            try check(status, "cairo_surface_write_to_png_stream")
        }
        return PNGImage(bytes: encoder.bytes, width: width, height: height)
    }

    // MARK: - Private

    /// The page at `index` (0-based), owned by the returned object; nil when poppler cannot load it.
    private func page(at index: Int) -> GObjectReference? {
        poppler_document_get_page(document.pointer, Int32(index)).map(GObjectReference.init(adopting:))
    }

    private func check(_ status: cairo_status_t, _ call: String) throws(PDFDocumentError) {
        guard status != CAIRO_STATUS_SUCCESS else { return }
        throw .renderingFailed(path: path, detail: "\(call): \(String(cString: cairo_status_to_string(status)))")
    }

    /// Maps a `GError` from `poppler_document_new_from_file` and frees it. poppler reports a
    /// failed `fopen` in the `G_FILE_ERROR` domain and a bad URI in `G_CONVERT_ERROR`; everything
    /// in `POPPLER_ERROR` but `ENCRYPTED` (INVALID, BAD_CATALOG, DAMAGED) means it is not readable as a PDF.
    private static func error(from error: UnsafeMutablePointer<GError>?, path: String) -> PDFDocumentError {
        guard let error else { return .damaged(path: path, detail: "poppler gave no reason") }
        defer { g_error_free(error) }
        let message = error.pointee.message.map { String(cString: $0) } ?? "no message"
        if error.pointee.domain == poppler_error_quark() {
            if error.pointee.code == Int32(POPPLER_ERROR_ENCRYPTED.rawValue) { return .encrypted(path: path) }
            return .damaged(path: path, detail: message)
        }
        return .unreadable(path: path, detail: message)
    }

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

/// Collects the bytes cairo's PNG writer hands out.
private final class PNGEncoder {
    var bytes: [UInt8] = []
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
