/// The one-line message for an error, as every TripBoard process prints it: safe to print (no
/// secrets, no bound values; errors name paths, never contents).
public func errorMessage(for error: any Error) -> String {
    terminalSafe((error as? any CustomStringConvertible)?.description ?? String(describing: error))
}

/// `text` as one line that is safe to print on a terminal: line breaks become spaces, and other
/// control characters (an ESC from a file name or an argument could recolour or rewrite the
/// screen) are shown as `\u{1B}`.
public func terminalSafe(_ text: String) -> String {
    var result = ""
    result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
    var lastWasBreak = false
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x0a, 0x0b, 0x0c, 0x0d, 0x85, 0x2028, 0x2029:
            if !lastWasBreak { result.unicodeScalars.append(" ") }
            lastWasBreak = true
            continue
        case 0x00...0x1f, 0x7f...0x9f:
            let hex = String(scalar.value, radix: 16, uppercase: true)
            result += "\\u{" + String(repeating: "0", count: max(0, 2 - hex.count)) + hex + "}"
        default:
            result.unicodeScalars.append(scalar)
        }
        lastWasBreak = false
    }
    return result
}
