/// Walks one JSON document read from a `ByteSource` without ever holding it whole: the members
/// of its top-level object in order and, for the members asked for, the elements of their arrays
/// one at a time (an import of a million trips holds one trip). Each member value or element is
/// parsed on its own by `JSONParser`, so the document is checked exactly as `JSONValue.parse`
/// checks it, errors carrying the line and column in the whole document.
///
/// Memory: one read buffer (`chunkSize`), grown only to hold the largest single value.
package struct JSONStreamReader {
    /// How a member's value is handed over.
    package enum Handling {
        /// Parsed whole, to `value`.
        case whole
        /// An array's elements to `element`, one at a time; any other value whole, to `value`.
        case elements
    }

    private let source: any ByteSource
    private let chunkSize: Int
    private var buffer: [UInt8] = []
    private var chunk: [UInt8]
    private var index = 0
    private var atEnd = false
    /// Line and column of `buffer[0]` in the document (bytes already dropped are counted here).
    private var baseLine = 1
    private var baseColumn = 1

    package init(source: any ByteSource, chunkSize: Int = 256 << 10) {
        self.source = source
        self.chunkSize = chunkSize
        self.chunk = [UInt8](repeating: 0, count: chunkSize)
    }

    /// Reads the whole document. `begin` is told of each member of the top-level object as it
    /// starts, and says how its value is to be handed over. A top-level value that is not an
    /// object is parsed whole and handed to `notAnObject` (the caller says why it is the wrong shape).
    package mutating func walk(begin handling: (String) -> Handling, value: (String, JSONValue) throws -> Void,
                       element: (String, Int, JSONValue) throws -> Void, notAnObject: (JSONValue) throws -> Void) throws {
        try skipWhitespace()
        guard try peek() == UInt8(ascii: "{") else {
            try notAnObject(try parseValue(depth: 0))
            return try requireEnd()
        }
        index += 1
        try skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            index += 1
            return try requireEnd()
        }
        while true {
            try skipWhitespace()
            guard try peek() == UInt8(ascii: "\"") else { throw error("expected a string key") }
            guard case .string(let key) = try parseValue(depth: 1) else { throw error("expected a string key") }
            try skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            try skipWhitespace()
            if handling(key) == .elements, try peek() == UInt8(ascii: "[") {
                try walkArray { offset, parsed in try element(key, offset, parsed) }
            } else {
                try value(key, try parseValue(depth: 1))
            }
            try skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return try requireEnd()
            case nil: throw error("unexpected end of input")
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func walkArray(_ element: (Int, JSONValue) throws -> Void) throws {
        index += 1
        try skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            index += 1
            return
        }
        var offset = 0
        while true {
            try skipWhitespace()
            try element(offset, try parseValue(depth: 2))
            offset += 1
            try skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return
            case nil: throw error("unexpected end of input")
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func requireEnd() throws {
        try skipWhitespace()
        if try peek() != nil { throw error("unexpected text after the JSON value") }
    }

    // MARK: - Values

    /// Finds where the value at `index` ends, then parses just those bytes with `JSONParser`.
    private mutating func parseValue(depth: Int) throws -> JSONValue {
        guard try peek() != nil else { throw error("unexpected end of input") }
        // Reading more drops only bytes before `index`: the value still starts there afterwards.
        let end = try scanValueEnd()
        var parser = JSONParser(bytes: Array(buffer[index..<end]))
        do throws(JSONSyntaxError) {
            let value = try parser.parseValue(depth: depth)
            guard parser.index == parser.bytes.count else { throw parser.error("unexpected character") }
            index = end
            return value
        } catch {
            // The error's line and column are within the value: make them the document's.
            let (line, column) = position(of: index)
            throw JSONSyntaxError(message: error.message, line: line + error.line - 1,
                                  column: error.line == 1 ? column + error.column - 1 : error.column)
        }
    }

    /// The index just past the value that starts at `index`: the matching bracket of an object
    /// or array (strings and their escapes skipped), the closing quote of a string, or the first
    /// delimiter after a scalar. At the end of the input, the end of what there is: the parser
    /// then says what is missing. Reads more as needed, keeping the value's bytes.
    private mutating func scanValueEnd() throws -> Int {
        var position = index
        var depth = 0
        var inString = false
        var escaped = false
        let first = buffer[index]
        let isScalar = first != UInt8(ascii: "{") && first != UInt8(ascii: "[") && first != UInt8(ascii: "\"")
        while true {
            if position == buffer.count {
                let before = index
                guard try fill() else { return buffer.count }
                position -= before - index
            }
            let byte = buffer[position]
            if isScalar {
                switch byte {
                case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x0a, 0x0d, 0x09: return position
                default: position += 1; continue
                }
            }
            position += 1
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return position }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return position }
            default: break
            }
        }
    }

    // MARK: - Buffer

    /// The byte at `index`, reading more when the buffer is used up; nil at the end of input.
    private mutating func peek() throws -> UInt8? {
        if index == buffer.count, !(try fill()) { return nil }
        return buffer[index]
    }

    private mutating func skipWhitespace() throws {
        while let byte = try peek(), byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { index += 1 }
    }

    /// Drops the bytes before `index` (counting their lines) and appends the next chunk; false
    /// at the end of the input.
    private mutating func fill() throws -> Bool {
        guard !atEnd else { return false }
        if index > 0 {
            (baseLine, baseColumn) = position(of: index)
            buffer.removeFirst(index)
            index = 0
        }
        let count = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
        if count == 0 {
            atEnd = true
            return false
        }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    /// Line and column in the document of `buffer[offset]`.
    private func position(of offset: Int) -> (line: Int, column: Int) {
        var line = baseLine
        var column = baseColumn
        buffer.withUnsafeBufferPointer { bytes in
            for byte in bytes[..<min(offset, bytes.count)] {
                if byte == 0x0a { line += 1; column = 1 } else { column += 1 }
            }
        }
        return (line, column)
    }

    private func error(_ message: String) -> JSONSyntaxError {
        let (line, column) = position(of: index)
        return JSONSyntaxError(message: message, line: line, column: column)
    }
}
