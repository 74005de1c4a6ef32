/// Checks for user-supplied text fields. Names and titles are one line; notes may be several.
enum Validation {
    static func singleLine(_ value: String, field: String, maxLength: Int = 200) throws -> String {
        let trimmed = value.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw StoreError.invalidArgument("\(field) must not be empty") }
        guard trimmed.count <= maxLength else {
            throw StoreError.invalidArgument("\(field) is longer than \(maxLength) characters")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw StoreError.invalidArgument("\(field) must be a single line without control characters")
        }
        return trimmed
    }

    static func optionalSingleLine(_ value: String?, field: String, maxLength: Int = 200) throws -> String? {
        guard let value, !value.trimmingWhitespace().isEmpty else { return nil }
        return try singleLine(value, field: field, maxLength: maxLength)
    }

    static func notes(_ value: String) throws -> String {
        guard value.count <= 10_000 else { throw StoreError.invalidArgument("notes are longer than 10000 characters") }
        let allowed: Set<Unicode.Scalar> = ["\n", "\t"]
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && !allowed.contains($0) }) else {
            throw StoreError.invalidArgument("notes must not contain control characters")
        }
        return value
    }

    static func dateRange(start: CivilDate, end: CivilDate) throws {
        guard end >= start else {
            throw StoreError.invalidData("the end date \(end) is before the start date \(start)")
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
