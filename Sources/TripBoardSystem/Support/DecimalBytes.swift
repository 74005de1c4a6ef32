extension Array where Element == UInt8 {
    /// Appends `number` in decimal, as `String(number)` writes it, without making a `String` (a
    /// list writing numbers and dates for a million rows).
    package mutating func appendDecimal(_ number: Int) {
        guard number >= 0 else { return append(contentsOf: String(number).utf8) }
        let start = count
        var rest = number
        repeat {
            append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        self[start...].reverse()
    }
}
