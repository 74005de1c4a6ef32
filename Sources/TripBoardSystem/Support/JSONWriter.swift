/// The one JSON writer: every JSON document TripBoard writes — `JSON.encode`'s (through
/// `JSONValue.serialized`), the lists and exports printed straight from their rows, the sync
/// frames and batches — is made of its calls, so separators, indentation and escapes are
/// decided in one place.
///
/// Calls follow the document: `beginObject`, then `key` and a value per member, `endObject`;
/// `beginArray`, values, `endArray`. The writer places commas, line breaks and indentation
/// itself. Pretty output indents by two spaces and writes `"key" : value`, as `JSON.encode` does;
/// compact output has no white space. It does not sort: a caller that must match
/// `JSON.encode`'s bytes writes members in the order of their keys' UTF-8 bytes.
///
/// It appends to `bytes`, which its owner may empty at any point between values (a list of a
/// million records is written a record at a time, each handed out as it is done).
public struct JSONWriter {
    public var bytes: [UInt8]
    @usableFromInline let pretty: Bool
    /// The depth of the container being written (0 outside any).
    @usableFromInline var depth = 0
    /// No member or element written yet in the container being written.
    @usableFromInline var first = true
    /// A key was written and its value is next.
    @usableFromInline var afterKey = false

    public init(pretty: Bool, capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        self.pretty = pretty
    }

    /// Runs `body` with the writer appending to `output` instead of its own bytes, which go to
    /// `output` first: a document written piece by piece into a buffer its owner lends.
    @inlinable public mutating func writingInto(_ output: inout [UInt8], _ body: (inout JSONWriter) -> Void) {
        moveBytes(into: &output)
        swap(&bytes, &output)
        body(&self)
        swap(&bytes, &output)
    }

    /// Appends what the writer holds to `output` and empties it (keeping its capacity).
    @inlinable public mutating func moveBytes(into output: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        output.append(contentsOf: bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    // MARK: Containers

    @inlinable public mutating func beginObject() {
        beforeValue()
        bytes.append(UInt8(ascii: "{"))
        open()
    }

    @inlinable public mutating func endObject() { close(UInt8(ascii: "}")) }

    @inlinable public mutating func beginArray() {
        beforeValue()
        bytes.append(UInt8(ascii: "["))
        open()
    }

    @inlinable public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// `strings` as one compact JSON array: a list to bind to SQLite's `json_each(?)`.
    public static func array(of strings: some Sequence<String>) -> String {
        var writer = JSONWriter(pretty: false)
        writer.beginArray()
        for string in strings { writer.string(string) }
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The next member's key, a plain ASCII name that needs no escape.
    @inlinable public mutating func key(_ name: StaticString) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        keyEnd()
    }

    /// The next member's key, any text (escaped as a string is). A fixed name is a
    /// `StaticString` (`key("id")`), which needs no escape and no scan.
    @inlinable public mutating func key(escaping name: String) {
        separator()
        Self.appendString(name, to: &bytes)
        keyEnd()
    }

    // MARK: Values

    @inlinable public mutating func string(_ text: String) {
        beforeValue()
        Self.appendString(text, to: &bytes)
    }

    /// A string from text bytes: byte for byte what `string` writes for
    /// `String(decoding: utf8, as: UTF8.self)` (invalid UTF-8 replaced as that does).
    @inlinable public mutating func string(utf8: UnsafeRawBufferPointer) {
        beforeValue()
        Self.appendString(utf8: utf8, to: &bytes)
    }

    /// A string from a fixed word that needs no escape (a state's name).
    @inlinable public mutating func string(ascii word: StaticString) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
    }

    @inlinable public mutating func integer(_ value: Int64) {
        beforeValue()
        Self.appendDecimal(value, to: &bytes)
    }

    @inlinable public mutating func integer(_ value: Int) { integer(Int64(value)) }

    /// `value` in decimal, written digit by digit into `output` (no `String` made).
    @inlinable static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        var magnitude = value.magnitude
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 20 digits of any Int64
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// A number from its JSON text (as `JSONValue.number` holds it).
    @inlinable public mutating func number(_ text: String) {
        beforeValue()
        bytes.append(contentsOf: text.utf8)
    }

    @inlinable public mutating func bool(_ value: Bool) {
        beforeValue()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    @inlinable public mutating func null() {
        beforeValue()
        bytes.append(contentsOf: "null".utf8)
    }

    /// A value that is JSON already (a server's jsonb text, a document written before), copied
    /// as it is: the caller answers for it being one compact JSON value.
    @inlinable public mutating func json(_ value: some Sequence<UInt8>) {
        beforeValue()
        bytes.append(contentsOf: value)
    }

    // MARK: Layout

    @inlinable mutating func beforeValue() {
        if afterKey {
            afterKey = false
        } else if depth > 0 {
            separator()
        }
    }

    /// `,` after a member or element, then in pretty output a line break and the indentation.
    @inlinable mutating func separator() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        newline(depth)
    }

    @inlinable mutating func keyEnd() {
        if pretty {
            bytes.append(contentsOf: " : ".utf8)
        } else {
            bytes.append(UInt8(ascii: ":"))
        }
        afterKey = true
    }

    @inlinable mutating func open() {
        depth += 1
        first = true
    }

    /// Closes the container: on a line of its own in pretty output unless it is empty.
    @inlinable mutating func close(_ bracket: UInt8) {
        depth -= 1
        if !first { newline(depth) }
        first = false
        bytes.append(bracket)
    }

    @inlinable mutating func newline(_ level: Int) {
        guard pretty else { return }
        bytes.append(0x0a)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * 2))
    }
}

// MARK: - Strings

extension JSONWriter {
    /// `text` as a JSON string.
    public static func appendString(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            // Most text (ids, stamps, base64) needs no escape: copied in one go.
            if isPlain(bytes, allowingNonASCII: true) { return appendQuoted(bytes, to: &output) }
            appendEscaped(bytes, to: &output)
        }
    }

    /// `bytes` as a JSON string, byte for byte what `appendString` gives for
    /// `String(decoding: bytes, as: UTF8.self)`: ASCII is escaped in place; other text goes
    /// through that `String` first, which replaces invalid UTF-8 as the model path does.
    public static func appendString(utf8 bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        if isPlain(bytes, allowingNonASCII: false) { return appendQuoted(bytes, to: &output) }
        guard bytes.contains(where: { $0 >= 0x80 }) else { return appendEscaped(bytes, to: &output) }
        appendString(String(decoding: bytes, as: UTF8.self), to: &output)
    }

    /// Whether `bytes` need no escape (no quotation mark, reverse solidus or control character)
    /// and, unless `allowingNonASCII`, are all ASCII: one pass over them.
    private static func isPlain(_ bytes: UnsafeRawBufferPointer, allowingNonASCII: Bool) -> Bool {
        let limit: UInt8 = allowingNonASCII ? 0xff : 0x7f
        for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte > limit {
            return false
        }
        return true
    }

    private static func appendQuoted(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: bytes)
        output.append(UInt8(ascii: "\""))
    }

    /// RFC 8259 §7: the quotation mark, the reverse solidus and the control characters are
    /// escaped, every other byte (valid UTF-8 here) is copied.
    private static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): output += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0a: output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0d: output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex: StaticString = "0123456789abcdef"
                output += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                           hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xf)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

// MARK: - Values

extension JSONValue {
    /// Writes the value, object members in the order of their keys' UTF-8 bytes when
    /// `sortedKeys`, else in document order.
    public func write(to writer: inout JSONWriter, sortedKeys: Bool = true) {
        switch self {
        case .null: writer.null()
        case .bool(let value): writer.bool(value)
        case .number(let text): writer.number(text)
        case .string(let text): writer.string(text)
        case .array(let elements):
            writer.beginArray()
            for element in elements { element.write(to: &writer, sortedKeys: sortedKeys) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            let ordered = sortedKeys ? members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : members
            for member in ordered {
                writer.key(escaping: member.key)
                member.value.write(to: &writer, sortedKeys: sortedKeys)
            }
            writer.endObject()
        }
    }

    /// The document as UTF-8. Pretty output indents by two spaces and writes `"key" : value`;
    /// `sortedKeys` orders object members by key, for stable output.
    public func serialized(pretty: Bool = true, sortedKeys: Bool = true) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        write(to: &writer, sortedKeys: sortedKeys)
        return writer.bytes
    }
}

extension JSONWriter {
    /// A date, as `CivilDate` encodes itself (`"YYYY-MM-DD"`).
    public mutating func date(_ date: CivilDate) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        date.appendDescription(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}
