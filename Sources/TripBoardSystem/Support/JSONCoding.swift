/// `Codable` to and from JSON without Foundation: `JSON.encode` and `JSON.decode` are the one way
/// TripBoard writes and reads JSON (output, exports, imports, preferences, the manifest).
public enum JSON {
    /// Encodes `value` as JSON: pretty (two-space indent) or compact, object keys sorted.
    public static func encode<T: Encodable>(_ value: T, pretty: Bool = true) throws -> [UInt8] {
        try makeValue(value).serialized(pretty: pretty, sortedKeys: true)
    }

    /// The JSON value tree for `value`.
    public static func makeValue<T: Encodable>(_ value: T) throws -> JSONValue {
        let node = EncodingNode()
        try value.encode(to: NodeEncoder(node: node, codingPath: []))
        return node.makeValue()
    }

    /// Decodes a `T` from JSON text. Throws `JSONSyntaxError` for malformed JSON and
    /// `DecodingError` (with the coding path) for a document of the wrong shape.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decode(type, from: try JSONValue.parse(bytes))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: []))
    }
}

// MARK: - Encoding

/// One value being encoded; containers fill it in place.
package final class EncodingNode {
    package var scalar: JSONValue?
    package var members: [(String, EncodingNode)]?
    package var elements: [EncodingNode]?

    package func makeValue() -> JSONValue {
        if let members { return .object(members.map { ($0.0, $0.1.makeValue()) }) }
        if let elements { return .array(elements.map { $0.makeValue() }) }
        return scalar ?? .object([])
    }

    package static func scalar(_ value: some Encodable, path: [any CodingKey]) throws -> JSONValue? {
        switch value {
        case let value as Bool: return .bool(value)
        case let value as String: return .string(value)
        case let value as Int: return .number(String(value))
        case let value as Int64: return .number(String(value))
        case let value as Int32: return .number(String(value))
        case let value as UInt64: return .number(String(value))
        case let value as UInt32: return .number(String(value))
        case let value as UInt: return .number(String(value))
        case let value as Int16: return .number(String(value))
        case let value as Int8: return .number(String(value))
        case let value as UInt16: return .number(String(value))
        case let value as UInt8: return .number(String(value))
        case let value as Float: return try scalar(Double(value), path: path)
        case let value as Double:
            guard value.isFinite else {
                throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "JSON has no NaN or infinity"))
            }
            return .number(value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value))
        default: return nil
        }
    }
}

package struct NodeEncoder: Encoder {
    package let node: EncodingNode
    package let codingPath: [any CodingKey]
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.members == nil { node.members = [] }
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.elements == nil { node.elements = [] }
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer { SingleNodeContainer(node: node, codingPath: codingPath) }

    /// Encodes `value` into a fresh node at `path`.
    package static func node(for value: some Encodable, path: [any CodingKey]) throws -> EncodingNode {
        let child = EncodingNode()
        if let scalar = try EncodingNode.scalar(value, path: path) {
            child.scalar = scalar
        } else {
            try value.encode(to: NodeEncoder(node: child, codingPath: path))
        }
        return child
    }
}

package struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    package let node: EncodingNode
    package let codingPath: [any CodingKey]

    package mutating func encodeNil(forKey key: Key) throws { append(key, EncodingNode.with(.null)) }

    package mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        append(key, try NodeEncoder.node(for: value, path: codingPath + [key]))
    }

    // Keys stay present: the synthesized `Encodable` of a struct calls `encodeIfPresent` for an
    // optional property, whose default implementation leaves the key out when the value is nil.
    // TripBoard's JSON contract (docs/cli.md) promises `null` instead, so a model with optional
    // properties needs no hand-written `encode(to:)`. The standard library declares one
    // requirement per primitive type; each one is answered here.
    package mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOrNull(value, key) }
    package mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOrNull(value, key) }

    private mutating func encodeOrNull<T: Encodable>(_ value: T?, _ key: Key) throws {
        guard let value else { return try encodeNil(forKey: key) }
        try encode(value, forKey: key)
    }

    package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        append(key, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    package mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        append(key, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    package mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    package mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = EncodingNode()
        append(key, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key])
    }

    private func append(_ key: Key, _ child: EncodingNode) { node.members!.append((key.stringValue, child)) }
}

package struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    package let node: EncodingNode
    package let codingPath: [any CodingKey]
    package var count: Int { node.elements?.count ?? 0 }

    package mutating func encodeNil() throws { node.elements!.append(EncodingNode.with(.null)) }

    package mutating func encode<T: Encodable>(_ value: T) throws {
        node.elements!.append(try NodeEncoder.node(for: value, path: codingPath + [IndexKey(count)]))
    }

    package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        node.elements!.append(child)
        return NodeEncoder(node: child, codingPath: codingPath + [IndexKey(count - 1)]).container(keyedBy: keyType)
    }

    package mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        node.elements!.append(child)
        return NodeEncoder(node: child, codingPath: codingPath + [IndexKey(count - 1)]).unkeyedContainer()
    }

    package mutating func superEncoder() -> any Encoder {
        let child = EncodingNode()
        node.elements!.append(child)
        return NodeEncoder(node: child, codingPath: codingPath + [IndexKey(count - 1)])
    }
}

package struct SingleNodeContainer: SingleValueEncodingContainer {
    package let node: EncodingNode
    package let codingPath: [any CodingKey]

    package mutating func encodeNil() throws { node.scalar = .null }

    package mutating func encode<T: Encodable>(_ value: T) throws {
        let child = try NodeEncoder.node(for: value, path: codingPath)
        node.scalar = child.scalar
        node.members = child.members
        node.elements = child.elements
    }
}

extension EncodingNode {
    package static func with(_ value: JSONValue) -> EncodingNode {
        let node = EncodingNode()
        node.scalar = value
        return node
    }
}

/// A `JSONValue` encodes as the JSON it is (a string stays a string, an object an object), so a
/// model can hold one (`SyncConflict.kept`) and keep a synthesized conformance. A number is
/// written as an integer when its text is one, else as a `Double`.
extension JSONValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .number(let text):
            var container = encoder.singleValueContainer()
            if let integer = Int64(text) { try container.encode(integer) } else { try container.encode(Double(text) ?? 0) }
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for member in members { try container.encode(member.value, forKey: MemberKey(member.key)) }
        }
    }
}

/// A value that JSON holds as its text (`CivilDate` as `2026-12-12`, a ticket's time as `07:35`),
/// not as the synthesized object of its fields: `description` is written, `init?(_:)` reads it
/// back, and text it refuses is a `DecodingError.dataCorrupted` that names `textForm`.
public protocol CodableAsText: Codable, CustomStringConvertible {
    /// The form the text must have, for the error: `a date in YYYY-MM-DD form`.
    static var textForm: String { get }
    /// The value `text` spells, or nil when it is not in `textForm`.
    init?(_ text: some StringProtocol)
}

extension CodableAsText {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "not \(Self.textForm): \(text.prefix(40))"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// The coding key of an array element.
package struct IndexKey: CodingKey {
    package let intValue: Int?
    package var stringValue: String { "\(intValue ?? 0)" }
    package init(_ index: Int) { intValue = index }
    package init?(stringValue: String) { nil }
    package init?(intValue: Int) { self.intValue = intValue }
}

/// The coding key of an object member named at run time: a `JSONValue`'s members, a decoding
/// path (`trips[3].endDate`).
package struct MemberKey: CodingKey {
    package let stringValue: String
    package var intValue: Int? { nil }
    package init(_ name: String) { stringValue = name }
    package init?(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}

// MARK: - Decoding

package struct ValueDecoder: Decoder {
    package let value: JSONValue
    package let codingPath: [any CodingKey]
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package init(value: JSONValue, codingPath: [any CodingKey]) {
        self.value = value
        self.codingPath = codingPath
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: Any].self, "an object") }
        var lookup: [String: JSONValue] = [:]
        lookup.reserveCapacity(members.count)
        for member in members { lookup[member.key] = member.value }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(members: lookup, codingPath: codingPath))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([Any].self, "an array") }
        return UnkeyedValueContainer(elements: elements, codingPath: codingPath)
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(value: value, codingPath: codingPath) }

    package func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(expected)"))
    }

    /// Decodes `type` from `value`; primitives directly, everything else through `init(from:)`.
    package static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, path: [any CodingKey]) throws -> T {
        let single = SingleValueContainer(value: value, codingPath: path)
        switch type {
        case is String.Type: return try single.decode(String.self) as! T
        case is Bool.Type: return try single.decode(Bool.self) as! T
        case is Int.Type: return try single.decode(Int.self) as! T
        case is Int64.Type: return try single.decode(Int64.self) as! T
        case is Double.Type: return try single.decode(Double.self) as! T
        default: return try T(from: ValueDecoder(value: value, codingPath: path))
        }
    }
}

package struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    package let members: [String: JSONValue]
    package let codingPath: [any CodingKey]

    package var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    package func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    package func value(for key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing key '\(key.stringValue)'"))
        }
        return value
    }

    package func decodeNil(forKey key: Key) throws -> Bool { try value(for: key) == .null }

    package func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ValueDecoder.decode(type, from: try value(for: key), path: codingPath + [key])
    }

    package func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try value(for: key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    package func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try value(for: key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    package func superDecoder() throws -> any Decoder { ValueDecoder(value: members["super"] ?? .null, codingPath: codingPath) }

    package func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

package struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    package let elements: [JSONValue]
    package let codingPath: [any CodingKey]
    package var currentIndex = 0
    package var count: Int? { elements.count }
    package var isAtEnd: Bool { currentIndex >= elements.count }

    package init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    package mutating func next() throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "array too short"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], codingPath + [IndexKey(currentIndex)])
    }

    package mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    package mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try ValueDecoder.decode(type, from: value, path: path)
    }

    package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path).container(keyedBy: type)
    }

    package mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path).unkeyedContainer()
    }

    package mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next()
        return ValueDecoder(value: value, codingPath: path)
    }
}

package struct SingleValueContainer: SingleValueDecodingContainer {
    package let value: JSONValue
    package let codingPath: [any CodingKey]

    package func decodeNil() -> Bool { value == .null }

    package func failure(_ type: Any.Type, _ expected: String) -> DecodingError {
        if value == .null {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "expected \(expected), found null"))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(expected)"))
    }

    package func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let flag) = value else { throw failure(type, "true or false") }
        return flag
    }

    package func decode(_ type: String.Type) throws -> String {
        guard case .string(let text) = value else { throw failure(type, "a string") }
        return text
    }

    package func decode(_ type: Double.Type) throws -> Double {
        guard case .number(let text) = value, let number = Double(text) else { throw failure(type, "a number") }
        guard number.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(text.prefix(30)) is out of range"))
        }
        return number
    }

    package func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    package func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case .number(let text) = value else { throw failure(type, "an integer") }
        if let exact = T(text) { return exact }
        if let number = Double(text), number == number.rounded(), let exact = T(exactly: number) { return exact }
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(text.prefix(30)) is not a \(T.self)"))
    }

    package func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    package func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    package func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    package func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    package func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    package func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    package func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    package func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    package func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    package func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    package func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoder.decode(type, from: value, path: codingPath)
    }
}
