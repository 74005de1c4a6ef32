// The JSON contract between `pdf-worker` (which links poppler) and the processes that spawn it
// (which must not). The worker prints exactly one of these two documents on stdout:
//
//     {"pageCount": 1, "text": "BOARDING PASS…", "thumbnail": {"height": 200, "path": "…", "width": 141}, "thumbnailError": null}
//     {"error": "encrypted", "message": "the PDF is protected by a password"}
//
// Keys are stable; new keys may be added, so readers ignore keys they do not know. An absent value
// is an explicit `null`, never a missing key: `JSON.encode` writes every nil so.

/// What `pdf-worker inspect` found in a PDF it could read.
public struct PDFInspection: Codable, Sendable, Equatable {
    /// Pages in the document (at least 1: a PDF without pages is reported as damaged).
    public var pageCount: Int
    /// The text of the first pages asked for, pages separated by a form feed (U+000C) as
    /// `pdftotext` does; cut at `PDFWorkerLimits.textBytes` bytes.
    public var text: String
    /// The thumbnail of page 1 when one was asked for and written.
    public var thumbnail: PDFThumbnail?
    /// Why the thumbnail asked for was not written; a thumbnail never fails an inspection.
    public var thumbnailError: String?
    /// What kind of failure `thumbnailError` describes, for the caller to act on (a full disk is
    /// not a damaged PDF); `nil` when there was none, or from a worker older than this key.
    public var thumbnailErrorKind: PDFThumbnailErrorKind?

    public init(pageCount: Int, text: String, thumbnail: PDFThumbnail? = nil, thumbnailError: String? = nil,
                thumbnailErrorKind: PDFThumbnailErrorKind? = nil) {
        self.pageCount = pageCount
        self.text = text
        self.thumbnail = thumbnail
        self.thumbnailError = thumbnailError
        self.thumbnailErrorKind = thumbnailErrorKind
    }
}

/// Why `pdf-worker` could not write the thumbnail asked for.
public enum PDFThumbnailErrorKind: String, Codable, Sendable, Equatable {
    /// poppler could not render page 1, or libpng encode it (the PDF, or memory).
    case rendering
    /// Writing the PNG failed because the file system is full (`ENOSPC`, `EDQUOT`).
    case noSpace
    /// Writing the PNG failed otherwise (an I/O error, the worker's file-size limit).
    case writing
}

/// A PNG rendering of page 1 on white, scaled to fit a square box.
public struct PDFThumbnail: Codable, Sendable, Equatable {
    /// Where the worker wrote the PNG (the path it was given); `-` when it is in `png` instead.
    public var path: String
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The PNG itself, in base64 (RFC 4648, padded), when it was asked for on the pipe
    /// (`--thumbnail -`): a thumbnail never touches a disk in the clear. `null` otherwise.
    public var png: String?

    public init(path: String, width: Int, height: Int, png: [UInt8]? = nil) {
        self.path = path
        self.width = width
        self.height = height
        self.png = png.map(WorkerBase64.encode)
    }

    /// The PNG's bytes carried on the pipe; nil when there are none or they are not base64.
    public var pngBytes: [UInt8]? { png.flatMap(WorkerBase64.decode) }
}

/// Base64 (RFC 4648 §4, padded) for the PNG on the worker's pipe: the worker links no crypto library.
public enum WorkerBase64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            let group = (UInt32(bytes[index]) << 16) | (count > 1 ? UInt32(bytes[index + 1]) << 8 : 0) | (count > 2 ? UInt32(bytes[index + 2]) : 0)
            for position in 0..<4 {
                output.append(position <= count ? alphabet[Int((group >> (18 - 6 * UInt32(position))) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        var values = [UInt8](repeating: 255, count: 256)
        for (value, character) in alphabet.enumerated() { values[Int(character)] = UInt8(value) }
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count / 4 * 3)
        var index = 0
        while index < characters.count {
            let quad = characters[index..<(index + 4)]
            let padding = quad.reversed().prefix { $0 == UInt8(ascii: "=") }.count
            guard padding <= 2, index + 4 == characters.count || padding == 0 else { return nil }
            var group: UInt32 = 0
            for (position, character) in quad.enumerated() {
                let value = position < 4 - padding ? values[Int(character)] : 0
                guard value != 255 else { return nil }
                group |= UInt32(value) << (18 - 6 * UInt32(position))
            }
            output.append(UInt8(group >> 16))
            if padding < 2 { output.append(UInt8(group >> 8 & 0xff)) }
            if padding < 1 { output.append(UInt8(group & 0xff)) }
            index += 4
        }
        return output
    }
}

/// The document `pdf-worker` prints when it cannot inspect a file.
public struct PDFInspectionFailure: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; each kind has its own exit status.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// The worker was called wrongly (a bug in the caller).
        case usage
        /// The file could not be opened or read (missing, a directory, no permission).
        case unreadable
        /// The file is larger than `PDFWorkerLimits.fileBytes`.
        case tooLarge
        /// No `%PDF-` in the first 1024 bytes.
        case notPDF
        /// Opening it needs a user password. Files with only an owner password open fine.
        case encrypted
        /// It looks like a PDF but poppler cannot make a document with pages of it.
        case damaged

        /// The worker's exit status for this kind. 64 and 66 keep their sysexits(3) meaning; the
        /// verdicts about the PDF itself use 80–84, outside the sysexits range, so that no status
        /// claims a meaning it does not have. 0 is success, 1 an internal error.
        public var exitStatus: Int32 {
            switch self {
            case .usage: 64
            case .unreadable: 66
            case .notPDF: 80
            case .encrypted: 81
            case .damaged: 82
            case .tooLarge: 83
            }
        }

        /// The kind whose exit status is `status`, if any.
        public init?(exitStatus status: Int32) {
            guard let kind = Kind.allCases.first(where: { $0.exitStatus == status }) else { return nil }
            self = kind
        }
    }

    /// What went wrong (the JSON key is `error`).
    public var kind: Kind
    /// One line, safe to show: never any of the file's contents.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    private enum CodingKeys: String, CodingKey {
        case kind = "error"
        case message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// The limits `pdf-worker` runs under, shared so that the parent's messages quote the real values.
public enum PDFWorkerLimits {
    /// Address space (RLIMIT_AS). A crafted 420 KB PDF needed 577 MB to render a 200-px
    /// thumbnail (pitfalls.md); ordinary tickets need 40–80 MB including poppler itself.
    public static let memoryBytes = 512 << 20
    /// CPU seconds (RLIMIT_CPU soft limit: SIGXCPU). A backstop for a worker whose parent died
    /// before its wall-clock timeout; the hard limit, 2 s later, is SIGKILL.
    public static let cpuSeconds = 10
    /// Largest file the worker writes (RLIMIT_FSIZE): a thumbnail PNG is a few tens of KB.
    public static let writtenFileBytes = 16 << 20
    /// Largest PDF the worker opens: tickets are far smaller, and every byte is parsed by hand-made C++.
    public static let fileBytes = 64 << 20
    /// The most a caller may raise `fileBytes` to (`pdf-worker --max-size`).
    public static let maximumFileBytes = 1 << 30
    /// Most UTF-8 bytes of text reported (the parent reads at most a few times this much).
    public static let textBytes = 1 << 20
    /// Bytes the worker searches for `%PDF-` (poppler accepts junk before the header, so do we).
    public static let headerSearchBytes = 1024

    /// True when `%PDF-` occurs in `bytes` (the first `headerSearchBytes` of a file): PDF readers
    /// accept junk before the header, and so do we.
    public static func hasHeader(_ bytes: [UInt8]) -> Bool {
        let signature = Array("%PDF-".utf8)
        guard bytes.count >= signature.count else { return false }
        return (0...(bytes.count - signature.count)).contains { start in
            bytes[start..<(start + signature.count)].elementsEqual(signature)
        }
    }
    /// Largest thumbnail box the worker accepts (`--thumbnail-size`).
    public static let thumbnailPixels = 2048
    /// Most bytes of a thumbnail carried on the pipe (`--thumbnail -`), before base64.
    public static let thumbnailBytes = 16 << 20
    /// Most pages of text the worker accepts (`--text-pages`).
    public static let textPages = 100
}
