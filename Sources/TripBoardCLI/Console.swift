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

    /// Prints rows as aligned columns under a header. Widths count characters (grapheme
    /// clusters), with a fast path for ASCII cells; lines are assembled as bytes, so a list of
    /// 100,000 trips costs little more than writing it.
    func printTable(header: [String], rows: [[String]]) {
        func width(_ cell: String) -> Int {
            let utf8 = cell.utf8
            return utf8.allSatisfy({ $0 < 0x80 }) ? utf8.count : cell.count
        }
        let cellWidths = rows.map { $0.map(width) }
        var widths = header.map(width)
        for row in cellWidths {
            for (index, cellWidth) in row.enumerated() where cellWidth > widths[index] { widths[index] = cellWidth }
        }
        func line(_ cells: [String], _ cellWidths: [Int]) {
            var line: [UInt8] = []
            for (index, cell) in cells.enumerated() {
                line += cell.utf8
                if index < cells.count - 1 {
                    line += repeatElement(UInt8(ascii: " "), count: widths[index] - cellWidths[index] + 2)
                }
            }
            while line.last == UInt8(ascii: " ") { line.removeLast() }
            line.append(0x0a)
            write(line)
        }
        line(header, header.map(width))
        for (row, rowWidths) in zip(rows, cellWidths) { line(row, rowWidths) }
    }
}
