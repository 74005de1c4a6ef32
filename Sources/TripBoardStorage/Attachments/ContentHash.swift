/// What an attachment row knows of its file's bytes: their BLAKE2b-256, or not yet.
///
/// `pending` is a file the container migration moved without reading, until the hashing pass
/// (`AttachmentHashing`) reaches it, and a row whose file was lost before it was ever hashed.
/// Whoever must know the bytes meanwhile asks `AttachmentHashing.verifiedHash`, the one place a
/// pending hash is computed (and recorded). The store keeps the hex, or the empty text for
/// `pending` (`init(stored:)`, `stored`); the JSON contract and the sync field have `null`.
public enum ContentHash: Sendable, Hashable, CustomStringConvertible {
    /// 64 lowercase hex digits (`RecordValidation` holds a row to that form).
    case verified(String)
    case pending

    /// The store's text: a hash, or empty for `pending`.
    public init(stored text: String) { self = text.isEmpty ? .pending : .verified(text) }

    /// The text the store keeps: the hex, or empty.
    public var stored: String {
        switch self {
        case .verified(let hex): hex
        case .pending: ""
        }
    }

    /// The hex of a verified hash; `nil` while it is pending.
    public var hex: String? {
        switch self {
        case .verified(let hex): hex
        case .pending: nil
        }
    }

    public var isPending: Bool { self == .pending }

    /// Whether bytes that hash to `hex` may be this row's: the same hash, when it is known; any,
    /// while it is pending (their size is then all a file is held to).
    public func admits(_ hex: String) -> Bool {
        switch self {
        case .verified(let known): known == hex
        case .pending: true
        }
    }

    public var description: String { hex ?? "(not hashed yet)" }
}
