import Foundation
import Testing
import TripBoardModel

/// Ticket PDFs for the end-to-end tests, made here: a small PDF writer (Helvetica text lines, one
/// content stream per page, a correct cross-reference table), then other producers' shapes by
/// running real tools on it — `qpdf` (linearized, object streams, encrypted) and `pdftocairo`
/// (re-drawn by cairo, fonts embedded) — and broken shapes cut by hand.
enum TicketPDF {
    /// A boarding pass whose fields the import reads (flight TP 1351, LIS → CDG, 12 DEC 2026 07:35, X7K2QP).
    static let boardingPass = ["BOARDING PASS", "TAP Air Portugal", "Passenger SMITH/ANNA", "Flight TP 1351",
                               "From LIS Lisbon To CDG Paris", "Date 12 DEC 2026  Departure 07:35",
                               "Booking reference X7K2QP", "Seat 12A  Gate 14"]

    /// A PDF whose first page shows `lines`; pages 2… say "Page N". `padding` bytes of an
    /// unreferenced stream make it as large as wanted; `salt` makes otherwise equal files differ.
    static func make(lines: [String], pages: Int = 1, padding: Int = 0, salt: String = "") -> Data {
        var objects = ["<< /Type /Catalog /Pages 2 0 R >>",
                       "<< /Type /Pages /Kids [\((0..<pages).map { "\(3 + 2 * $0) 0 R" }.joined(separator: " "))] /Count \(pages) >>"]
        let font = 3 + 2 * pages
        for page in 0..<pages {
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 \(font) 0 R >> >> /Contents \(4 + 2 * page) 0 R >>")
            let shown = page == 0 ? lines : ["Page \(page + 1) of \(pages)"]
            let text = "BT /F1 14 Tf 50 780 Td 20 TL " + shown.map { "(\(escape($0))) '" }.joined(separator: " ") + " ET"
            objects.append("<< /Length \(text.utf8.count) >>\nstream\n\(text)\nendstream")
        }
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        if !salt.isEmpty { objects.append("(\(escape(salt)))") }
        var data = Data("%PDF-1.4\n%\u{e2}\u{e3}\u{cf}\u{d3}\n".utf8)
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(data.count)
            data.append(Data("\(index + 1) 0 obj\n\(object)\nendobj\n".utf8))
        }
        if padding > 0 {
            offsets.append(data.count)
            data.append(Data("\(objects.count + 1) 0 obj\n<< /Length \(padding) >>\nstream\n".utf8))
            data.append(Data(repeating: 0x78, count: padding))
            data.append(Data("\nendstream\nendobj\n".utf8))
        }
        let crossReference = data.count
        var trailer = "xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { trailer += String(format: "%010d 00000 n \n", offset) }
        trailer += "trailer\n<< /Size \(offsets.count + 1) /Root 1 0 R >>\nstartxref\n\(crossReference)\n%%EOF\n"
        data.append(Data(trailer.utf8))
        return data
    }

    /// Writes `data` to `directory/name` and returns the path.
    @discardableResult
    static func write(_ data: Data, to directory: URL, as name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url.path
    }

    /// Runs a PDF tool (qpdf, pdftocairo); cancels the test when the tool is not installed
    /// (`tools/test` installs them).
    static func tool(_ name: String, _ arguments: [String]) throws {
        let executable = "/usr/bin/" + name
        guard FileManager.default.isExecutableFile(atPath: executable) else { try Test.cancel("\(name) is not installed") }
        let result = try ProcessRunner.run(executable, arguments, environment: ProcessRunner.environment(container: nil))
        // qpdf exits 3 for "succeeded with warnings".
        try #require(result.status == 0 || (name == "qpdf" && result.status == 3), "\(name) \(arguments): \(result)")
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "(", with: "\\(")
            .replacingOccurrences(of: ")", with: "\\)")
    }
}
