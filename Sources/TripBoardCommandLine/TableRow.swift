import TripBoardSystem

/// One row of a `TableWriter` table as bytes: each cell's UTF-8 and its width on screen. A list
/// printed from its rows' bytes fills one and reuses it for every row, so a row costs no `String`.
///
/// A cell's width is the columns a terminal shows it in: its byte count when it is ASCII, else
/// `displayWidth` — two for a wide character (CJK, a fullwidth form, an emoji), none for one
/// that takes no column, one for the others — and a cell given as bytes that are not ASCII is
/// made a `String` first, exactly as the model path reads it (invalid UTF-8 replaced).
package struct TableRow {
    package private(set) var bytes: [UInt8] = []
    /// Where each cell ends in `bytes`.
    package private(set) var ends: [Int] = []
    package private(set) var widths: [Int] = []

    package init() {}

    package init(_ cells: [String]) {
        for cell in cells { append(cell) }
    }

    package var count: Int { ends.count }

    /// Empties the row, keeping its storage for the next one.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        widths.removeAll(keepingCapacity: true)
    }

    package mutating func append(_ cell: String) {
        // Shown, not obeyed: a name holding U+202E must not reorder the line it is printed on.
        let shown = showingBidiControls(cell)
        let utf8 = shown.utf8
        bytes.append(contentsOf: utf8)
        ends.append(bytes.count)
        widths.append(utf8.allSatisfy({ $0 < 0x80 }) ? utf8.count : Self.displayWidth(shown))
    }

    /// The columns `text` takes on a terminal, character by character (grapheme clusters): two
    /// when its first scalar is East Asian Wide or Fullwidth (UAX #11: `東京`, `ｶ`) or it is
    /// shown as an emoji (a presentation selector, U+FE0F, in it); none for a zero-width space or
    /// joiner, a format character or a lone combining mark; one for the others.
    package static func displayWidth(_ text: String) -> Int {
        var width = 0
        for character in text {
            let scalars = character.unicodeScalars
            guard let first = scalars.first else { continue }
            if isWide(first.value) || (scalars.count > 1 && scalars.contains { $0.value == 0xFE0F }) {
                width += 2
            } else {
                switch first.properties.generalCategory {
                case .format, .nonspacingMark, .enclosingMark, .control: continue
                default: width += 1
                }
            }
        }
        return width
    }

    private static func isWide(_ value: UInt32) -> Bool {
        let ranges = EastAsianWidth.wideRanges
        var (low, high) = (0, ranges.count - 1)
        while low <= high {
            let middle = (low + high) / 2
            if value < ranges[middle].0 { high = middle - 1 } else if value > ranges[middle].1 { low = middle + 1 } else { return true }
        }
        return false
    }

    /// A cell from UTF-8 bytes (a column read in place).
    package mutating func append(utf8 cell: UnsafeRawBufferPointer) {
        guard !cell.contains(where: { $0 >= 0x80 }) else { return append(String(decoding: cell, as: UTF8.self)) }
        appendASCII(cell)
    }

    /// A cell known to be ASCII (a date, a number, a fixed word).
    package mutating func appendASCII(_ cell: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: cell)
        ends.append(bytes.count)
        widths.append(cell.count)
    }

    /// A cell written by `write` straight into the row, known to be ASCII (a date).
    package mutating func appendASCII(_ write: (inout [UInt8]) -> Void) {
        let start = bytes.count
        write(&bytes)
        ends.append(bytes.count)
        widths.append(bytes.count - start)
    }

    /// The first `characters` characters of `cell`, as `String.prefix` takes them (a short id).
    package mutating func append(prefix characters: Int, ofUTF8 cell: UnsafeRawBufferPointer) {
        // Between two ASCII characters there is always a character boundary but in CR LF
        // (UAX #29, GB3): a prefix that stays in ASCII, and is followed by ASCII, is its bytes.
        let looked = cell.prefix(characters + 1)
        guard looked.allSatisfy({ $0 < 0x80 && $0 != 0x0d }) else {
            return append(String(String(decoding: cell, as: UTF8.self).prefix(characters)))
        }
        appendASCII(UnsafeRawBufferPointer(rebasing: cell.prefix(characters)))
    }

    /// The first line of `text` (up to its first line feed), cut to `characters` characters when
    /// longer: its first `characters - 1` and "…". A note or a reference shown in one column.
    package static func firstLine(of text: String, characters: Int) -> String {
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return line.count > characters ? String(line.prefix(characters - 1)) + "…" : String(line)
    }

    /// A cell of `firstLine(of:characters:)` from UTF-8 bytes: the bytes before the first line feed
    /// when they are ASCII without a carriage return (each byte a character) and not too many.
    package mutating func append(firstLineOf cell: UnsafeRawBufferPointer, characters: Int) {
        var end = 0
        while end < cell.count, cell[end] != 0x0a {
            guard cell[end] < 0x80, cell[end] != 0x0d else {
                return append(Self.firstLine(of: String(decoding: cell, as: UTF8.self), characters: characters))
            }
            end += 1
        }
        guard end <= characters else {
            return append(Self.firstLine(of: String(decoding: cell, as: UTF8.self), characters: characters))
        }
        appendASCII(UnsafeRawBufferPointer(rebasing: cell.prefix(end)))
    }

    /// A cell from a fixed word (a state's name).
    package mutating func append(ascii word: StaticString) {
        appendASCII(UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
    }

    /// A number in decimal, as `String(number)` writes it.
    package mutating func append(_ number: Int) {
        appendASCII { $0.appendDecimal(number) }
    }
}
