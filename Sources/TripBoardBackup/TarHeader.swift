import TripBoardModel
import TripBoardStorage
import TripBoardKeychain
/// The 512-byte header block of the POSIX ustar format (POSIX.1-2008, pax, "ustar Interchange
/// Format"), written and read field by field:
///
///     name 0..<100   mode 100..<108   uid 108..<116   gid 116..<124   size 124..<136
///     mtime 136..<148   chksum 148..<156   typeflag 156   linkname 157..<257
///     magic 257..<263 "ustar\0"   version 263..<265 "00"   uname 265..<297   gname 297..<329
///     devmajor 329..<337   devminor 337..<345   prefix 345..<500
///
/// GNU tar's own format has the magic "ustar  \0" and uses the prefix bytes for other things;
/// the reader accepts it (so a default `tar -c` can be restored) and then ignores the prefix.
struct TarHeader {
    static let blockSize = 512
    /// The largest size, and modification time, an 11-digit octal field holds: 8 GiB - 1.
    static let largestOctal11: Int64 = 0o77777777777

    enum TypeFlag {
        static let file = UInt8(ascii: "0")
        static let oldFile: UInt8 = 0
        static let directory = UInt8(ascii: "5")
        static let paxExtended = UInt8(ascii: "x")
        static let paxGlobal = UInt8(ascii: "g")
        static let gnuLongName = UInt8(ascii: "L")
    }

    var name: [UInt8]
    var prefix: [UInt8] = []
    var mode: UInt32
    var size: Int64
    var modificationTime: Int64
    var typeFlag: UInt8

    // MARK: - Writing

    /// The block for this header: uid, gid 0 and uname, gname empty (docs/backup-format.md says
    /// why), POSIX magic and version, checksum filled in.
    func encode() -> [UInt8] {
        precondition(name.count <= 100 && prefix.count <= 155, "ustar name fields overflow")
        var block = [UInt8](repeating: 0, count: Self.blockSize)
        block.replaceSubrange(0..<name.count, with: name)
        Self.put(octal: Int64(mode), width: 8, at: 100, in: &block)
        Self.put(octal: 0, width: 8, at: 108, in: &block)
        Self.put(octal: 0, width: 8, at: 116, in: &block)
        Self.put(octal: size, width: 12, at: 124, in: &block)
        Self.put(octal: modificationTime, width: 12, at: 136, in: &block)
        block[156] = typeFlag
        block.replaceSubrange(257..<265, with: Array("ustar\u{0}00".utf8))
        Self.put(octal: 0, width: 8, at: 329, in: &block)
        Self.put(octal: 0, width: 8, at: 337, in: &block)
        block.replaceSubrange(345..<(345 + prefix.count), with: prefix)
        // "%06o\0 ", the form GNU tar and Python write: six digits, NUL, space.
        let checksum = Self.checksum(of: block)
        Self.put(octal: Int64(checksum), width: 7, at: 148, in: &block)
        block[155] = 0x20
        return block
    }

    /// `value` as `width - 1` zero-padded octal digits and a NUL.
    private static func put(octal value: Int64, width: Int, at offset: Int, in block: inout [UInt8]) {
        precondition(value >= 0, "negative tar field")
        var digits = Array(String(value, radix: 8).utf8)
        precondition(digits.count < width, "value too large for a \(width)-byte tar field")
        digits = [UInt8](repeating: UInt8(ascii: "0"), count: width - 1 - digits.count) + digits
        block.replaceSubrange(offset..<(offset + width), with: digits + [0])
    }

    /// The sum of the block's bytes, unsigned, counting the checksum field as eight spaces.
    static func checksum(of block: [UInt8]) -> Int {
        var sum = 0
        for (index, byte) in block.enumerated() { sum += (148..<156).contains(index) ? 0x20 : Int(byte) }
        return sum
    }

    // MARK: - Reading

    /// Whether the block's magic is POSIX ustar (`ustar\0` `00`) or GNU (`ustar  \0`), or neither.
    enum Magic { case posix, gnu }

    static func magic(of block: [UInt8]) -> Magic? {
        let field = block[257..<265]
        if field.elementsEqual("ustar\u{0}00".utf8) { return .posix }
        if field.elementsEqual("ustar  \u{0}".utf8) { return .gnu }
        return nil
    }

    /// An octal field: optional leading spaces, at least one octal digit, then only NULs or
    /// spaces (POSIX: "terminated by one or more space or null characters"). GNU's base-256 form
    /// (high bit set) and anything else give nil.
    static func octal(_ field: ArraySlice<UInt8>) -> Int64? {
        var bytes = field.drop { $0 == 0x20 }
        let digits = bytes.prefix { (0x30...0x37).contains($0) }
        bytes = bytes.dropFirst(digits.count)
        guard !digits.isEmpty, digits.count <= 21, bytes.allSatisfy({ $0 == 0 || $0 == 0x20 }) else { return nil }
        return digits.reduce(Int64(0)) { $0 * 8 + Int64($1 - 0x30) }
    }

    /// A NUL-terminated name field's bytes; nil when bytes other than NUL follow the first NUL
    /// (a name with a NUL in it, which a C-string reader would cut short).
    static func string(_ field: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let end = field.firstIndex(of: 0) else { return field }
        return field[end...].allSatisfy { $0 == 0 } ? field[..<end] : nil
    }

    // MARK: - Names

    /// `path` split across ustar's `prefix` (≤ 155 bytes) and `name` (≤ 100 bytes) at a slash, as
    /// POSIX says; nil when no split fits (the path then goes in a pax `path` record).
    static func split(_ path: [UInt8]) -> (prefix: [UInt8], name: [UInt8])? {
        if path.count <= 100 { return ([], path) }
        // The shortest prefix that leaves a name of at most 100 bytes; a longer one cannot help.
        for slash in path.indices where path[slash] == 0x2F && path.count - slash - 1 <= 100 {
            guard slash <= 155, slash + 1 < path.count else { return nil }
            return (Array(path[..<slash]), Array(path[(slash + 1)...]))
        }
        return nil
    }
}
