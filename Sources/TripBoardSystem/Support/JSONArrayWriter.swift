/// A pretty JSON array written element by element, byte for byte what `JSON.encode` gives for
/// the whole array: a list of a million records is encoded one record at a time, never held
/// whole. Each call returns the bytes to write next, so the writer knows nothing of where they go.
public struct JSONArrayWriter {
    /// The depth of the array in its document: 0 for a document that is the array, 1 for an
    /// array that is a member of the top-level object.
    public let indentLevel: Int
    /// How many elements have been written.
    public private(set) var count = 0

    public init(indentLevel: Int = 0) { self.indentLevel = indentLevel }

    /// The bytes of `value` as the next element, with the separator (or the opening bracket)
    /// before it.
    public mutating func element<T: Encodable>(_ value: T) throws -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: count == 0 ? "[" : ",")]
        bytes.append(0x0a)
        bytes += repeatElement(UInt8(ascii: " "), count: (indentLevel + 1) * 2)
        bytes += try JSON.makeValue(value).serialized(pretty: true, sortedKeys: true, indentLevel: indentLevel + 1)
        count += 1
        return bytes
    }

    /// Opens the next element as an object written member by member straight into `output`
    /// (a list printed from its rows' bytes, no `Encodable`): the separator or opening bracket,
    /// then the object's writer, whose `end` closes it.
    public mutating func objectElement(into output: inout [UInt8]) -> JSONObjectWriter {
        output.append(UInt8(ascii: count == 0 ? "[" : ","))
        output.append(0x0a)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: (indentLevel + 1) * 2))
        count += 1
        return JSONObjectWriter(indentLevel: indentLevel + 1)
    }

    /// The bytes that close the array (`[]` for an empty one).
    public func end() -> [UInt8] {
        guard count > 0 else { return Array("[]".utf8) }
        return [0x0a] + repeatElement(UInt8(ascii: " "), count: indentLevel * 2) + [UInt8(ascii: "]")]
    }
}

/// A pretty JSON object written member by member as bytes, the same bytes `JSON.encode` gives
/// for it with sorted keys: members must come in the order of their keys' UTF-8 bytes (checked
/// in debug builds), each key a plain ASCII name that needs no escape.
public struct JSONObjectWriter {
    /// The depth of the object in its document.
    public let indentLevel: Int
    private var count = 0
    #if DEBUG
    private var lastKey = ""
    #endif

    public init(indentLevel: Int) { self.indentLevel = indentLevel }

    /// A string member from text bytes, as `JSONValue.writeString(utf8:into:)` writes them.
    public mutating func string(_ key: StaticString, utf8 bytes: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        self.key(key, into: &output)
        JSONValue.writeString(utf8: bytes, into: &output)
    }

    /// A string member from a fixed word that needs no escape (a state's name).
    public mutating func string(_ key: StaticString, ascii word: StaticString, into output: inout [UInt8]) {
        self.key(key, into: &output)
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
        output.append(UInt8(ascii: "\""))
    }

    public mutating func string(_ key: StaticString, _ text: String, into output: inout [UInt8]) {
        self.key(key, into: &output)
        JSONValue.writeString(text, into: &output)
    }

    /// A date member, as `CivilDate` encodes itself.
    public mutating func date(_ key: StaticString, _ date: CivilDate, into output: inout [UInt8]) {
        self.key(key, into: &output)
        output.append(UInt8(ascii: "\""))
        date.appendDescription(to: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// A number member, or `null` for nil (the models encode absent values as `null`).
    public mutating func integer(_ key: StaticString, _ value: Int64?, into output: inout [UInt8]) {
        self.key(key, into: &output)
        guard let value else { return output.append(contentsOf: "null".utf8) }
        output.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ key: StaticString, _ value: Bool, into output: inout [UInt8]) {
        self.key(key, into: &output)
        output.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null(_ key: StaticString, into output: inout [UInt8]) {
        self.key(key, into: &output)
        output.append(contentsOf: "null".utf8)
    }

    /// Closes the object (`{}` when it has no member).
    public func end(into output: inout [UInt8]) {
        guard count > 0 else { return output.append(contentsOf: "{}".utf8) }
        output.append(0x0a)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indentLevel * 2))
        output.append(UInt8(ascii: "}"))
    }

    /// `{` or `,`, the line break and indentation, and `"key" : `, as `JSONValue.serialized` writes them.
    private mutating func key(_ key: StaticString, into output: inout [UInt8]) {
        #if DEBUG
        let text = key.description
        assert(count == 0 || lastKey.utf8.lexicographicallyPrecedes(text.utf8), "JSON members out of order: \(text) after \(lastKey)")
        lastKey = text
        #endif
        output.append(UInt8(ascii: count == 0 ? "{" : ","))
        output.append(0x0a)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: (indentLevel + 1) * 2))
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        output.append(contentsOf: "\" : ".utf8)
        count += 1
    }
}
