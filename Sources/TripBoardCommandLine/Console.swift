public import TripBoardSystem

/// Where a command writes: results to stdout (buffered, flushed once), diagnostics to stderr.
public final class Console {
    private var buffer: [UInt8] = []
    /// Lines written to stderr, kept for in-process tests.
    public private(set) var errorLines: [String] = []
    package let echoesErrors: Bool

    /// `echoesErrors: false` keeps stderr lines in memory only (tests).
    public init(echoesErrors: Bool = true) { self.echoesErrors = echoesErrors }

    /// Everything written to stdout so far (tests).
    public var outputText: String { String(decoding: buffer, as: UTF8.self) }

    /// The same, as the bytes written (tests that compare outputs byte for byte).
    package var outputBytes: [UInt8] { buffer }

    /// Prints a line of human output; bidirectional controls in it are shown, not obeyed
    /// (`showingBidiControls`).
    package func print(_ line: String = "") {
        buffer += Array(showingBidiControls(line).utf8)
        buffer.append(0x0a)
        if buffer.count > 1 << 16 { flush() }
    }

    package func write(_ bytes: [UInt8]) {
        buffer += bytes
        if buffer.count > 1 << 16 { flush() }
    }

    /// Lets `body` append its bytes to the output straight, with no array of its own (a list
    /// printed row by row from the statement's bytes).
    package func write(_ body: (inout [UInt8]) throws -> Void) rethrows {
        try body(&buffer)
        if buffer.count > 1 << 16 { flush() }
    }

    /// `-q`/`--quiet`: informational lines (`diagnostic`) and progress bars are not shown;
    /// errors, warnings and the results asked for still are.
    public var isQuiet = false

    /// One informational line on stderr, at once ("created a new TripBoard container at …",
    /// "moved trip … to the trash"); nothing under `--quiet`.
    package func diagnostic(_ line: String) {
        guard !isQuiet else { return }
        errorLine(line)
    }

    /// A warning on stderr, shown even under `--quiet`.
    package func warning(_ line: String) { errorLine("warning: " + line) }

    /// The `error: …` line of a failure, shown even under `--quiet`.
    package func failure(_ line: String) { errorLine(line) }

    private func errorLine(_ line: String) {
        errorLines.append(line)
        if echoesErrors { StandardStream.error.write(Array((line + "\n").utf8)) }
    }

    /// Pushes buffered output to stdout; in-process consoles keep it for `outputText`. The first
    /// write that fails is kept (`outputFailure`) and nothing more is written.
    public func flush() {
        guard echoesErrors else { return }
        if outputFailure == nil { outputFailure = StandardStream.output.writeAll(buffer) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Why stdout could not be written, if it could not.
    public private(set) var outputFailure: StreamWriteFailure?

    /// Flushes and returns the program's exit status: `status`, unless it says success and the
    /// output could not be written (a full disk, an I/O error), which is 74 with one `error:`
    /// line. A reader that went away (`| head`) is no failure: it had what it wanted.
    public func finish(_ status: Int32) -> Int32 {
        flush()
        guard status == ExitStatus.success.rawValue, let problem = outputFailure, !problem.readerGone else { return status }
        failure("error: could not write to standard output (\(problem))")
        return ExitStatus.ioError.rawValue
    }

    /// Writes `value` as JSON: stable, sorted camelCase keys, one document, trailing newline.
    package func printJSON<T: Encodable>(_ value: T) throws {
        write(try Self.json(value) + [0x0a])
    }

    package static func json<T: Encodable>(_ value: T, pretty: Bool = true) throws -> [UInt8] {
        try JSON.encode(value, pretty: pretty)
    }

    /// Prints rows as aligned columns under a header (`TableWriter` with every row at once).
    package func printTable(header: [String], rows: [[String]]) {
        let table = TableWriter(console: self, header: header, pageRows: max(rows.count, 1))
        rows.forEach(table.add)
        table.finish()
    }

    /// Prints `name value` lines, the values aligned after the longest name, no header.
    package func printPairs(_ pairs: [(name: String, value: String)]) {
        let width = pairs.map(\.name.count).max() ?? 0
        for (name, value) in pairs { print(name + String(repeating: " ", count: width - name.count + 2) + value) }
    }
}

/// A table printed as its rows arrive. The columns' widths come from the header and the first
/// page of rows (`pageRows`, 1,000 by default), which is held until it is full, then printed;
/// every later row is printed at once. A later cell wider than its column pushes the rest of
/// its line to the right (two spaces always separate cells), so memory stays flat in the number
/// of rows. Widths count characters (grapheme clusters), with a fast path for ASCII cells
/// (`TableRow`); lines are assembled as bytes.
package final class TableWriter {
    package static let defaultPageRows = 1_000

    private let console: Console
    private let header: TableRow
    private let pageRows: Int
    private var page: [TableRow] = []
    private var widths: [Int]?
    /// How many rows have been added.
    package private(set) var rowCount = 0

    package init(console: Console, header: [String], pageRows: Int = TableWriter.defaultPageRows) {
        self.console = console
        self.header = TableRow(header)
        self.pageRows = pageRows
    }

    package func add(_ cells: [String]) { add(TableRow(cells)) }

    /// Adds a row given as bytes; the caller may reuse `row` for the next one.
    package func add(_ row: TableRow) {
        rowCount += 1
        if let widths { return console.write { Self.line(row, widths, into: &$0) } }
        page.append(row)
        if page.count >= pageRows { printPage() }
    }

    /// Prints what is still held (the header, when no row came).
    package func finish() {
        if widths == nil { printPage() }
    }

    private func printPage() {
        var widths = header.widths
        for row in page {
            for (index, cellWidth) in row.widths.enumerated() where cellWidth > widths[index] {
                widths[index] = cellWidth
            }
        }
        self.widths = widths
        console.write { output in
            Self.line(header, widths, into: &output)
            for row in page { Self.line(row, widths, into: &output) }
        }
        page = []
    }

    /// Padding copied from here is a `memcpy`, not a loop over a repeated element.
    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 128)

    private static func line(_ row: TableRow, _ widths: [Int], into output: inout [UInt8]) {
        let start = output.count
        // From buffers, not `ArraySlice`s: appending a slice takes the generic path, which cost
        // more than the bytes of a short cell (a tenth of a list's instructions).
        row.bytes.withUnsafeBufferPointer { bytes in
            Self.spaces.withUnsafeBufferPointer { spaces in
                var cellStart = 0
                for index in 0..<row.count {
                    let cellEnd = row.ends[index]
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[cellStart..<cellEnd]))
                    cellStart = cellEnd
                    guard index < row.count - 1 else { break }
                    let padding = max(widths[index] - row.widths[index], 0) + 2
                    if padding <= spaces.count {
                        output.append(contentsOf: UnsafeBufferPointer(rebasing: spaces[..<padding]))
                    } else {
                        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: padding))
                    }
                }
            }
        }
        while output.count > start, output.last == UInt8(ascii: " ") { output.removeLast() }
        output.append(0x0a)
    }
}
