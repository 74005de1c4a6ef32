package import TripBoardReadPath
/// Finds an id that two records share, among many, cheaply: each id is kept as its 128 bits with
/// its kind and position (24 bytes, not a string: 2.9 MB for 120,000 records) and the list sorted
/// once. Used where ids arrive in bulk and must be unique across kinds — an import's document,
/// TripBoard 1's four tables (separate, and case-sensitive: `AAAA…` and `aaaa…` were two trips).
/// A `Dictionary` of strings cost an import of 100,000 trips 4% of its time; SQLite's `GROUP BY`
/// over version 1's tables took 0.8 s for 310,000 ids.
package struct IDRegister {
    /// One record: where it is (its kind, and its index among the records of that kind).
    package struct Position: Equatable {
        package let kind: RecordKind
        package let index: Int
    }

    /// Two records with one id; `first` comes first by kind (trips, places, bookings,
    /// attachments), then index.
    package struct Repeat {
        package let id: String
        package let first: Position
        package let second: Position
    }

    private var entries: [(high: UInt64, low: UInt64, kind: UInt8, index: UInt32)] = []

    package init() {}

    /// Records `id`, a lowercase UUID that `FieldRules.id` accepted, at `index` among its `kind`.
    package mutating func add(_ id: String, _ kind: RecordKind, index: Int = 0) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var count = 0
        for byte in id.utf8 where byte != UInt8(ascii: "-") {
            let nibble = UInt64(byte <= UInt8(ascii: "9") ? byte &- UInt8(ascii: "0") : byte &- UInt8(ascii: "a") &+ 10)
            if count < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
            count += 1
        }
        let kindOrder = UInt8(RecordKind.allCases.firstIndex(of: kind) ?? 0)
        entries.append((high, low, kindOrder, UInt32(truncatingIfNeeded: index)))
    }

    /// An id two records share, if any (the smallest such id; of its records, the first two in
    /// the order kinds were listed and by index); then forgets every id, so the memory is back.
    package mutating func firstRepeat() -> Repeat? {
        defer { entries = [] }
        entries.sort { ($0.high, $0.low, $0.kind, $0.index) < ($1.high, $1.low, $1.kind, $1.index) }
        for index in entries.indices.dropFirst() where (entries[index].high, entries[index].low) == (entries[index - 1].high, entries[index - 1].low) {
            let (first, second) = (entries[index - 1], entries[index])
            return Repeat(id: Self.text(first.high, first.low), first: Self.position(first.kind, first.index),
                          second: Self.position(second.kind, second.index))
        }
        return nil
    }

    private static func position(_ kind: UInt8, _ index: UInt32) -> Position {
        Position(kind: RecordKind.allCases[Int(kind)], index: Int(index))
    }

    /// The 8-4-4-4-12 text of the 128 bits.
    private static func text(_ high: UInt64, _ low: UInt64) -> String {
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        let all = hex(high) + hex(low)
        return [all.prefix(8), all.dropFirst(8).prefix(4), all.dropFirst(12).prefix(4), all.dropFirst(16).prefix(4), all.dropFirst(20)]
            .joined(separator: "-")
    }
}
