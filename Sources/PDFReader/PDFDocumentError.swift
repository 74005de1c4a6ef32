/// Why poppler could not open or render a PDF. Descriptions name the file and never quote its contents.
public enum PDFDocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Opening it needs a user password (poppler leaves the document locked). A file with only an
    /// owner password opens without one.
    case encrypted(path: String)
    /// poppler could not make a document with pages of it, even after repairing its cross-reference table.
    case damaged(path: String, detail: String)
    /// The file could not be opened (missing, no permission, not a file).
    case unreadable(path: String, detail: String)
    /// Rendering or encoding the thumbnail failed (e.g. poppler ran out of memory).
    case renderingFailed(path: String, detail: String)

    /// The file the error is about.
    public var path: String {
        switch self {
        case .encrypted(let path), .damaged(let path, _), .unreadable(let path, _), .renderingFailed(let path, _): path
        }
    }

    /// What went wrong, without the path and without a byte of the file: for `unreadable` the
    /// system's words (`strerror`), for `damaged` ours.
    public var reason: String {
        switch self {
        case .encrypted: "the PDF needs a password to open"
        case .damaged(_, let detail): detail
        case .unreadable(_, let detail): detail
        case .renderingFailed(_, let detail): "cannot render page 1 (\(detail))"
        }
    }

    public var description: String {
        switch self {
        case .damaged: "\(path): damaged PDF (\(reason))"
        case .unreadable: "\(path): cannot open (\(reason))"
        case .encrypted, .renderingFailed: "\(path): \(reason)"
        }
    }
}
