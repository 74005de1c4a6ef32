import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
/// Why a tar archive could not be written or read: the archive breaks the profile TripBoard
/// writes and accepts (`docs/backup-format.md`).
///
/// Safe to print and log: paths come from the archive and are shown with control characters and
/// non-ASCII escaped (a crafted name cannot rewrite the terminal line); no file contents ever.
/// Input and output failures are not wrapped: they arrive as the error of the layer below
/// (``AgeError`` when the archive is inside an age file, ``FileSystemError`` for a descriptor).
public enum TarError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A header block's checksum does not match its bytes. `offset`: the block's byte offset.
    case badChecksum(offset: Int64)
    /// A header block is not in POSIX ustar (or GNU tar's) form: no `ustar` magic.
    case notUstar(offset: Int64)
    /// A numeric header field (`field`: "size", "mode", …) is not a plain octal number.
    case invalidNumber(field: String, offset: Int64)
    /// An entry of a type TripBoard never restores: a link, a device, a FIFO, a sparse file, a
    /// global extended header. `type` is its typeflag as printed.
    case unsupportedEntryType(type: String, offset: Int64)
    /// A pax extended header (or a GNU long name) is malformed; `reason` is a fixed text.
    case invalidExtendedHeader(reason: String, offset: Int64)
    /// A path breaks the rules (absolute, `..` or `.` component, empty component, NUL, not UTF-8,
    /// a file name ending in `/`, too long); `reason` is a fixed text.
    case invalidPath(String, reason: String)
    /// The caller's allow-list refused this path.
    case pathNotAllowed(String)
    /// A second entry for a path already in the archive, or an entry under a path that is a file.
    case duplicatePath(String)
    /// A directory entry that claims content.
    case directoryWithContent(String)
    /// The archive ends inside a header block or, when `path` is set, inside that entry's content;
    /// or it ends without the two zero blocks that close every tar archive.
    case truncated(path: String?)
    /// Something other than zero bytes where the end-of-archive blocks or the padding after them
    /// must be. `offset`: where.
    case dataAfterEnd(offset: Int64)
    /// Writing: the file at `path` held `actual` bytes, not the `declared` size (it changed while
    /// it was being archived). `actual` is `declared + 1` when it had more.
    case sizeMismatch(path: String, declared: Int64, actual: Int64)

    /// One line for the user, naming what is wrong and where; safe to print.
    public var description: String {
        switch self {
        case .badChecksum(let offset): "tar header at byte \(offset) is damaged: its checksum does not match"
        case .notUstar(let offset): "tar header at byte \(offset) is not a POSIX (ustar) header"
        case .invalidNumber(let field, let offset): "tar header at byte \(offset) has a \(field) field that is not an octal number"
        case .unsupportedEntryType(let type, let offset):
            "tar entry at byte \(offset) is of type \(type) (a link, device, FIFO, sparse file or global header); only files and directories are accepted"
        case .invalidExtendedHeader(let reason, let offset): "tar extended header at byte \(offset) is malformed: \(reason)"
        case .invalidPath(let path, let reason): "tar entry \(Self.printable(path)) has an unacceptable path: \(reason)"
        case .pathNotAllowed(let path): "tar entry \(Self.printable(path)) is not a path this archive may contain"
        case .duplicatePath(let path): "tar entry \(Self.printable(path)) appears twice, or under a path that is a file"
        case .directoryWithContent(let path): "tar directory entry \(Self.printable(path)) has content"
        case .truncated(let path):
            if let path { "the tar archive is truncated inside the content of \(Self.printable(path))" } else {
                "the tar archive is truncated: it ends before its end-of-archive blocks"
            }
        case .dataAfterEnd(let offset): "the tar archive has data at byte \(offset), where only end-of-archive zero blocks may be"
        case .sizeMismatch(let path, let declared, let actual):
            "\(Self.printable(path)) changed while it was archived: \(actual > declared ? "more" : "only \(actual)") bytes instead of \(declared)"
        }
    }

    /// `path` in quotes with everything outside printable ASCII escaped (`\u{…}`).
    static func printable(_ path: String) -> String {
        var text = "\""
        for scalar in path.unicodeScalars {
            if (0x20..<0x7F).contains(scalar.value) && scalar != "\"" && scalar != "\\" {
                text.unicodeScalars.append(scalar)
            } else {
                text += scalar.escaped(asASCII: true)
            }
        }
        return text + "\""
    }
}
