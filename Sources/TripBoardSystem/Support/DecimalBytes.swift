extension Array where Element == UInt8 {
    /// Appends `number` in decimal, as `String(number)` writes it, without making a `String` (a
    /// list writing numbers and dates for a million rows).
    package mutating func appendDecimal(_ number: Int) {
        guard number >= 0 else { return append(contentsOf: String(number).utf8) }
        // Most significant digit first: no reversing afterwards (a slice's `reverse` takes the
        // generic path, dearer than the digits themselves).
        var divisor = 1
        while divisor <= number / 10 { divisor *= 10 }
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8(number / divisor % 10))
            divisor /= 10
        }
    }
}
