import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
/// The records of a pax extended header (POSIX.1-2008, pax, "pax Extended Header"): each is
/// `"%d %s=%s\n", <length>, <keyword>, <value>`, where the length counts the whole record,
/// its own digits included. TripBoard writes `path`, `size` and `mtime` when the ustar fields
/// cannot hold them, and reads those three; other keywords (atime, ctime, uid, uname, comment,
/// vendor ones) do not change what is restored and are ignored, except GNU's sparse-file
/// keywords, whose content is not the file's bytes, which are refused.
enum PaxRecords {
    /// What an extended header says about the entry that follows it.
    struct Overrides: Equatable {
        var path: [UInt8]?
        var size: Int64?
        var modificationTime: Int64?

        var isEmpty: Bool { path == nil && size == nil && modificationTime == nil }
    }

    /// An extended header larger than this is refused: three short records are all TripBoard needs.
    static let maximumLength = 1 << 20

    // MARK: - Writing

    /// One record: `<length> <key>=<value>\n`.
    static func record(_ key: String, _ value: [UInt8]) -> [UInt8] {
        let body = Array(" \(key)=".utf8) + value + [0x0A]
        // The length includes its own digits: grow it until the count of digits stops changing.
        var length = body.count + 1
        while String(length).utf8.count + body.count != length { length = String(length).utf8.count + body.count }
        return Array(String(length).utf8) + body
    }

    // MARK: - Reading

    /// Parses `data` (the extended header's content) on top of `overrides`.
    static func parse(_ data: [UInt8], into overrides: inout Overrides, offset: Int64) throws(TarError) {
        var start = 0
        while start < data.count {
            let record = try nextRecord(data, from: start, offset: offset)
            start = record.end
            try apply(key: record.key, value: record.value, to: &overrides, offset: offset)
        }
    }

    private static func nextRecord(_ data: [UInt8], from start: Int, offset: Int64) throws(TarError)
        -> (key: String, value: ArraySlice<UInt8>, end: Int) {
        let digits = data[start...].prefix { (0x30...0x39).contains($0) }
        guard !digits.isEmpty, digits.count <= 7, digits.first != 0x30, let length = Int(String(decoding: digits, as: UTF8.self)),
              length >= digits.count + 4, start + length <= data.count, data[start + digits.count] == 0x20, data[start + length - 1] == 0x0A
        else { throw .invalidExtendedHeader(reason: "a record whose length does not match", offset: offset) }
        let content = data[(start + digits.count + 1)..<(start + length - 1)]
        guard let equals = content.firstIndex(of: UInt8(ascii: "=")), equals > content.startIndex,
              let key = String(validating: content[..<equals], as: UTF8.self)
        else { throw .invalidExtendedHeader(reason: "a record without a keyword", offset: offset) }
        return (key, content[(equals + 1)...], start + length)
    }

    private static func apply(key: String, value: ArraySlice<UInt8>, to overrides: inout Overrides, offset: Int64) throws(TarError) {
        // POSIX: an empty value removes the keyword, the header field is used again.
        switch key {
        case "path":
            overrides.path = value.isEmpty ? nil : Array(value)
        case "size":
            guard value.isEmpty || value.allSatisfy({ (0x30...0x39).contains($0) }), value.count <= 18 else {
                throw .invalidExtendedHeader(reason: "a size that is not a decimal number", offset: offset)
            }
            overrides.size = value.isEmpty ? nil : Int64(String(decoding: value, as: UTF8.self))
        case "mtime":
            overrides.modificationTime = value.isEmpty ? nil : try seconds(value, offset: offset)
        case _ where key.hasPrefix("GNU.sparse."):
            throw .unsupportedEntryType(type: "sparse file (pax \(key))", offset: offset)
        default:
            break
        }
    }

    /// A pax time: decimal seconds, an optional `-`, an optional fraction; the whole seconds
    /// toward negative infinity.
    private static func seconds(_ value: ArraySlice<UInt8>, offset: Int64) throws(TarError) -> Int64 {
        let negative = value.first == UInt8(ascii: "-")
        let unsigned = negative ? value.dropFirst() : value
        let whole = unsigned.prefix { (0x30...0x39).contains($0) }
        let fraction = unsigned.dropFirst(whole.count)
        guard !whole.isEmpty, whole.count <= 18,
              fraction.isEmpty || (fraction.first == UInt8(ascii: ".") && fraction.dropFirst().allSatisfy({ (0x30...0x39).contains($0) }))
        else { throw .invalidExtendedHeader(reason: "an mtime that is not a decimal number", offset: offset) }
        let seconds = Int64(String(decoding: whole, as: UTF8.self))!
        let hasFraction = fraction.dropFirst().contains { $0 != 0x30 }
        return negative ? -seconds - (hasFraction ? 1 : 0) : seconds
    }
}
