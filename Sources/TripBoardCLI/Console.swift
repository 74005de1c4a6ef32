import TripBoardStorage

/// Where a command writes: results to stdout (buffered, flushed once), diagnostics to stderr.
public final class Console {
    private var buffer: [UInt8] = []
    /// Lines written to stderr, kept for in-process tests.
    public private(set) var errorLines: [String] = []
    let echoesErrors: Bool

    /// `echoesErrors: false` keeps stderr lines in memory only (tests).
    public init(echoesErrors: Bool = true) { self.echoesErrors = echoesErrors }

    /// Everything written to stdout so far (tests).
    public var outputText: String { String(decoding: buffer, as: UTF8.self) }

    func print(_ line: String = "") {
        buffer += Array(line.utf8)
        buffer.append(0x0a)
        if buffer.count > 1 << 16 { flush() }
    }

    func write(_ bytes: [UInt8]) {
        buffer += bytes
        if buffer.count > 1 << 16 { flush() }
    }

    /// One line on stderr, at once.
    func diagnostic(_ line: String) {
        errorLines.append(line)
        if echoesErrors { StandardStream.error.write(Array((line + "\n").utf8)) }
    }

    func warning(_ line: String) { diagnostic("warning: " + line) }

    /// Pushes buffered output to stdout; in-process consoles keep it for `outputText`.
    public func flush() {
        guard echoesErrors else { return }
        StandardStream.output.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes `value` as JSON: stable, sorted camelCase keys, one document, trailing newline.
    func printJSON<T: Encodable>(_ value: T) throws {
        write(try Self.json(value) + [0x0a])
    }

    static func json<T: Encodable>(_ value: T, pretty: Bool = true) throws -> [UInt8] {
        try JSON.encode(value, pretty: pretty)
    }

    /// Prints rows as aligned columns under a header.
    func printTable(header: [String], rows: [[String]]) {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (index, cell) in cells.enumerated() {
                text += index == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count + 2)
            }
            while text.last == " " { text.removeLast() }
            return text
        }
        print(line(header))
        for row in rows { print(line(row)) }
    }
}
