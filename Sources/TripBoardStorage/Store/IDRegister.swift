package import TripBoardReadPath
/// Finds an id that two records share, among many, cheaply: each id is kept as its 128 bits with
/// its kind and position (24 bytes, not a string: 2.9 MB for 120,000 records) and the list sorted
/// once. Used where ids arrive in bulk and must be unique across kinds: an import's document (a
/// `Dictionary` of strings cost an import of 100,000 trips 4% of its time). TripBoard 1's four
/// tables are checked by SQLite instead (`LegacyStore.firstSharedID`: one sort that spills to a
/// file, so the migration's memory does not grow with the records; it runs beside the store's
/// build, off the critical path).
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
        // In place: `sort` would allocate a buffer of up to half the entries (1.5 MB at 110,000 ids).
        entries.withUnsafeMutableBufferPointer { Self.heapSort($0) }
        for index in entries.indices.dropFirst() where (entries[index].high, entries[index].low) == (entries[index - 1].high, entries[index - 1].low) {
            let (first, second) = (entries[index - 1], entries[index])
            return Repeat(id: Self.text(first.high, first.low), first: Self.position(first.kind, first.index),
                          second: Self.position(second.kind, second.index))
        }
        return nil
    }

    /// Heapsort by (id, kind, index): O(n log n) with no memory beyond the entries.
    private static func heapSort(_ entries: UnsafeMutableBufferPointer<(high: UInt64, low: UInt64, kind: UInt8, index: UInt32)>) {
        func less(_ a: Int, _ b: Int) -> Bool {
            (entries[a].high, entries[a].low, entries[a].kind, entries[a].index)
                < (entries[b].high, entries[b].low, entries[b].kind, entries[b].index)
        }
        func siftDown(_ start: Int, _ end: Int) {
            var root = start
            while 2 * root + 1 < end {
                var child = 2 * root + 1
                if child + 1 < end && less(child, child + 1) { child += 1 }
                guard less(root, child) else { return }
                entries.swapAt(root, child)
                root = child
            }
        }
        let count = entries.count
        guard count > 1 else { return }
        for start in stride(from: count / 2 - 1, through: 0, by: -1) { siftDown(start, count) }
        for end in stride(from: count - 1, to: 0, by: -1) {
            entries.swapAt(0, end)
            siftDown(0, end)
        }
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
