extension StringProtocol {
    /// True when `other` occurs in this string (compared as UTF-8 bytes). The standard library's
    /// `contains(_: StringProtocol)` lives in the regex runtime, which TripBoard does not link.
    public func includes(_ other: some StringProtocol) -> Bool {
        let haystack = Array(utf8)
        let needle = Array(other.utf8)
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
