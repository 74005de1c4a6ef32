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

    /// The bytes that close the array (`[]` for an empty one).
    public func end() -> [UInt8] {
        guard count > 0 else { return Array("[]".utf8) }
        return [0x0a] + repeatElement(UInt8(ascii: " "), count: indentLevel * 2) + [UInt8(ascii: "]")]
    }
}
