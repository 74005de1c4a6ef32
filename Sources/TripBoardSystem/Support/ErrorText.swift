/// The one-line message for an error, as every TripBoard process prints it: safe to print (no
/// secrets, no bound values; errors name paths, never contents).
public func errorMessage(for error: any Error) -> String {
    terminalSafe((error as? any CustomStringConvertible)?.description ?? String(describing: error))
}

/// `text` as one line that is safe to print on a terminal: line breaks become spaces, and other
/// control characters (an ESC from a file name or an argument could recolour or rewrite the
/// screen) and bidirectional controls (`isBidiControl`) are shown as `\u{1B}`, `\u{202E}`.
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
        case _ where scalar.value <= 0x1f || (0x7f...0x9f).contains(scalar.value) || isBidiControl(scalar):
            result += escaped(scalar)
        default:
            result.unicodeScalars.append(scalar)
        }
        lastWasBreak = false
    }
    return result
}

/// `\u{1B}`, `\u{202E}`: a scalar as Swift writes it, at least two hex digits.
private func escaped(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "\\u{" + String(repeating: "0", count: max(0, 2 - hex.count)) + hex + "}"
}

/// The scalars that reorder the text after them on screen (U+061C, U+200E–F, U+202A–E,
/// U+2066–9): a name holding U+202E shows `gnp.exe` as `exe.png`. Human output shows them as
/// `\u{202E}`; JSON and exports keep them, as data.
public func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
}

/// `text` with its bidirectional controls shown as `\u{202E}` and nothing else changed; `text`
/// itself (no copy) when it has none.
public func showingBidiControls(_ text: String) -> String {
    guard text.utf8.contains(where: { $0 >= 0x80 }), text.unicodeScalars.contains(where: isBidiControl) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
        if isBidiControl(scalar) {
            result += escaped(scalar)
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}
