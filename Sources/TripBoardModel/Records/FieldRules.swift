/// The one rule for each field a record carries. The commands (`trip add`, `trip edit` and its
/// editor, `place add`, `booking add`, `sync ack`), `app import`, the share extension, the container
/// migration and sync all check a value through these, so each path accepts exactly what the
/// others can carry: an export always imports again, and the server is never sent a value another
/// device would refuse. docs/cli.md lists the limits.
///
/// A rule returns the value in the form the store keeps (trimmed, lowercased, normalised to UTC)
/// or throws `StoreError.invalidField`, which names the field and the rule.
public enum FieldRules {
    /// A length limit counted two ways: in characters, as a person counts them (grapheme
    /// clusters), and in UTF-8 bytes, what storage, sync and a terminal line pay for — one letter
    /// followed by ten thousand combining marks is one character.
    public struct TextLimit: Sendable, Equatable {
        public let characters: Int
        public let bytes: Int
    }

    /// Trip and place names, booking titles, cities: one line each.
    public static let lineLimit = TextLimit(characters: 200, bytes: 800)
    /// Booking references (`X7K2QP`): one line.
    public static let referenceLimit = TextLimit(characters: 100, bytes: 400)
    /// A trip's notes: several lines.
    public static let notesLimit = TextLimit(characters: 10_000, bytes: 40_000)
    /// An attachment's original file name: `attachment export` creates a file by that name, and
    /// a Linux file name is at most 255 bytes (NAME_MAX).
    public static let filenameLimit = TextLimit(characters: 255, bytes: 255)
    /// An attachment's content type (`application/pdf`): RFC 6838 allows 127 + 1 + 127 characters.
    public static let contentTypeLimit = TextLimit(characters: 255, bytes: 255)
    /// The largest `remoteVersion`: 2^53 − 1, the largest integer every JSON reader (JavaScript's
    /// `Number` included) reads exactly.
    public static let maximumRemoteVersion: Int64 = (1 << 53) - 1

    // MARK: - Text

    /// A required one-line text (a name, a title): white space trimmed from both ends, then 1 to
    /// `limit` characters and bytes, no control character.
    public static func line(_ value: String, field: String, limit: TextLimit = lineLimit) throws -> String {
        let trimmed = value.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw StoreError.invalidField(field: field, rule: "must not be empty") }
        try check(trimmed, field: field, limit: limit)
        guard !containsControl(trimmed, allowing: []) else {
            throw StoreError.invalidField(field: field, rule: "must be a single line without control characters")
        }
        return trimmed
    }

    /// An optional one-line text (a city, a reference): absent, empty or blank means none.
    public static func optionalLine(_ value: String?, field: String, limit: TextLimit = lineLimit) throws -> String? {
        guard let value, !value.trimmingWhitespace().isEmpty else { return nil }
        return try line(value, field: field, limit: limit)
    }

    /// A trip's notes: kept as written, at most `notesLimit`; line feeds and tabs are the only
    /// control characters allowed.
    public static func notes(_ value: String, field: String = "notes") throws -> String {
        try check(value, field: field, limit: notesLimit)
        guard !containsControl(value, allowing: [UInt8(ascii: "\n"), UInt8(ascii: "\t")]) else {
            throw StoreError.invalidField(field: field, rule: "must not contain control characters other than line feeds and tabs")
        }
        return value
    }

    /// An attachment's original file name: one line of at most 255 bytes, no `/`, not `.` or `..`
    /// (`attachment export` creates a file by this name).
    public static func filename(_ value: String, field: String = "originalFilename") throws -> String {
        let name = try line(value, field: field, limit: filenameLimit)
        guard !name.utf8.contains(UInt8(ascii: "/")), name != ".", name != ".." else {
            throw StoreError.invalidField(field: field, rule: "must be a file name without '/' (and not '.' or '..')")
        }
        return name
    }

    /// An attachment's content type, e.g. `application/pdf`: one line of at most 255 bytes.
    public static func contentType(_ value: String, field: String = "contentType") throws -> String {
        try line(value, field: field, limit: contentTypeLimit)
    }

    private static func check(_ value: String, field: String, limit: TextLimit) throws {
        let bytes = value.utf8.count
        guard bytes <= limit.bytes else {
            throw StoreError.invalidField(field: field, rule: "is longer than \(limit.bytes) bytes of UTF-8")
        }
        // No more characters than bytes: counting them (grapheme breaking) is needed only when
        // the bytes alone could exceed the character limit.
        guard bytes <= limit.characters || value.count <= limit.characters else {
            throw StoreError.invalidField(field: field, rule: "is longer than \(limit.characters) characters")
        }
    }

    /// True when `value` has a control character (general category Cc) other than the ASCII
    /// ones in `allowed`. ASCII text, the usual case, is checked byte by byte in one pass over
    /// the string's own storage (a restore checks every row of a backup's store this way).
    private static func containsControl(_ value: String, allowing allowed: [UInt8]) -> Bool {
        // nil: a byte outside ASCII was met, so the scalars decide.
        let inASCII: Bool?? = value.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte < 0x20 || byte == 0x7f, !allowed.contains(byte) { return true }
            }
            return false
        }
        if case let decided?? = inASCII { return decided }
        return value.unicodeScalars.contains {
            $0.properties.generalCategory == .control && !($0.isASCII && allowed.contains(UInt8($0.value)))
        }
    }
}

extension String {
    /// Without white space (`Character.isWhitespace`) at either end; `self` when there is none
    /// to remove (the usual case, decided from the first and last bytes when they are ASCII).
    package func trimmingWhitespace() -> String {
        if let first = utf8.first, let last = utf8.last, first < 0x80, last < 0x80,
           !Character(Unicode.Scalar(first)).isWhitespace, !Character(Unicode.Scalar(last)).isWhitespace {
            return self
        }
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
