import CCairo
import Foundation
import Testing
import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// The fixture PDFs, made by the tests themselves: drawn with cairo's PDF surface (real text in
/// an embedded font, as a ticket has), transformed with `qpdf`, or cut and mangled by hand.
enum Fixture: String, CaseIterable, Sendable {
    /// One A4 page with the lines of `TicketText`.
    case ticket
    /// One landscape page (A4 on its side).
    case landscape
    /// `Fixture.pageCount` pages, each saying "Page N of …".
    case manyPages
    /// The ticket with a few lines of junk before `%PDF-` (poppler accepts that; so do we).
    case junkBeforeHeader
    /// `qpdf --linearize` ("fast web view").
    case linearized
    /// `qpdf --encrypt user owner 256`: opening needs the user password.
    case userPassword
    /// `qpdf --encrypt "" owner 256`: encrypted, but anyone may open it.
    case ownerPasswordOnly
    /// The first half of the ticket's bytes.
    case truncated
    /// Zero bytes.
    case empty
    /// A PNG image named `.pdf`.
    case pngRenamed
    /// 4 KiB of random bytes.
    case randomBytes
    /// Hand-written: cross-reference offsets off by 7, an unknown font, an unknown operator and an
    /// unterminated string. poppler repairs and renders it, complaining ("Syntax Error: …").
    case noisy
    /// 200 000 separate strokes on one page: rendering takes seconds.
    case heavy
    /// Hand-written, well-formed, with an empty page tree: nothing to import.
    case noPages
    /// Hand-written: a 200 × 100 pt page turned by /Rotate 90, its left half filled pure red.
    case rotatedRed

    static let pageCount = 30
    var fileName: String { rawValue + ".pdf" }
}

/// The text printed on the ticket fixture.
enum TicketText {
    static let lines = ["BOARDING PASS", "TP 1351", "LIS → CDG", "12 DEC 2026 07:35", "Booking reference X7K2QP"]
}

/// Makes fixtures on demand in a directory of its own.
struct Fixtures {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// The path of `fixture`, made on first use.
    func path(_ fixture: Fixture) throws -> String {
        let path = directory.child(fixture.fileName)
        if directory.exists(fixture.fileName) { return path }
        switch fixture {
        case .ticket:
            try Self.drawPDF(at: path, pages: [TicketText.lines])
        case .landscape:
            try Self.drawPDF(at: path, width: 842, height: 595, pages: [TicketText.lines])
        case .manyPages:
            try Self.drawPDF(at: path, pages: (1...Fixture.pageCount).map { ["Page \($0) of \(Fixture.pageCount)"] })
        case .junkBeforeHeader:
            try directory.write(Array("junk before the header\r\nmore junk\n".utf8) + bytes(.ticket), to: fixture.fileName)
        case .linearized:
            try Self.qpdf(["--linearize", try self.path(.ticket), path])
        case .userPassword:
            try Self.qpdf(["--encrypt", "user", "owner", "256", "--", try self.path(.ticket), path])
        case .ownerPasswordOnly:
            try Self.qpdf(["--encrypt", "", "owner", "256", "--", try self.path(.ticket), path])
        case .truncated:
            let whole = try bytes(.ticket)
            try directory.write(Array(whole.prefix(whole.count / 2)), to: fixture.fileName)
        case .empty:
            try directory.write([], to: fixture.fileName)
        case .pngRenamed:
            try Self.drawPNG(at: path)
        case .randomBytes:
            var generator = SystemRandomNumberGenerator()
            try directory.write((0..<4096).map { _ in UInt8.random(in: 0 ... .max, using: &generator) }, to: fixture.fileName)
        case .noisy:
            try directory.write(Self.noisyPDF(), to: fixture.fileName)
        case .heavy:
            try Self.drawHeavyPDF(at: path, strokes: 200_000)
        case .noPages:
            try directory.write(Self.handWrittenPDF(objects: ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"]),
                                to: fixture.fileName)
        case .rotatedRed:
            let content = "1 0 0 rg 0 0 100 100 re f"
            try directory.write(Self.handWrittenPDF(objects: [
                "<< /Type /Catalog /Pages 2 0 R >>",
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Rotate 90 /Contents 4 0 R >>",
                "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream",
            ]), to: fixture.fileName)
        }
        return path
    }

    /// The bytes of `fixture`, made on first use.
    func bytes(_ fixture: Fixture) throws -> [UInt8] {
        _ = try path(fixture)
        return try directory.bytes(fixture.fileName)
    }

    // MARK: - Makers

    static func drawPDF(at path: String, width: Double = 595, height: Double = 842, pages: [[String]]) throws {
        let surface = cairo_pdf_surface_create(path, width, height)
        let context = cairo_create(surface)
        cairo_select_font_face(context, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(context, 18)
        for lines in pages {
            for (index, line) in lines.enumerated() {
                cairo_move_to(context, 50, 80 + 30 * Double(index))
                cairo_show_text(context, line)
            }
            cairo_show_page(context)
        }
        try finish(context: context, surface: surface, path: path)
    }

    static func drawHeavyPDF(at path: String, strokes: Int) throws {
        let surface = cairo_pdf_surface_create(path, 595, 842)
        let context = cairo_create(surface)
        cairo_set_line_width(context, 0.3)
        for index in 0..<strokes {
            cairo_move_to(context, Double(index % 500), Double(index * 7 % 800))
            cairo_line_to(context, Double(index * 13 % 500), Double(index * 3 % 800))
            cairo_stroke(context)
        }
        cairo_show_page(context)
        try finish(context: context, surface: surface, path: path)
    }

    static func drawPNG(at path: String) throws {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 64, 48)
        let context = cairo_create(surface)
        cairo_set_source_rgb(context, 0.2, 0.4, 0.8)
        cairo_paint(context)
        cairo_destroy(context)
        defer { cairo_surface_destroy(surface) }
        try #require(cairo_surface_write_to_png(surface, path) == CAIRO_STATUS_SUCCESS, "cairo_surface_write_to_png \(path)")
    }

    private static func finish(context: OpaquePointer?, surface: OpaquePointer?, path: String) throws {
        let status = cairo_status(context)
        cairo_destroy(context)
        cairo_surface_finish(surface)
        let surfaceStatus = cairo_surface_status(surface)
        cairo_surface_destroy(surface)
        try #require(status == CAIRO_STATUS_SUCCESS && surfaceStatus == CAIRO_STATUS_SUCCESS, "cairo could not draw \(path)")
    }

    /// A one-page PDF that poppler must repair and complains about.
    static func noisyPDF() -> [UInt8] {
        let content = "BT /F9 12 Tf 10 10 Td (hello) Tj ET 1 2 3 4 5 6 7 8 re foo bar [ ( q Q Q Q"
        return handWrittenPDF(objects: [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
            "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream",
        ], offsetError: 7)
    }

    /// A PDF of `objects` (numbered from 1, the first is the catalog) with a cross-reference
    /// table whose offsets are off by `offsetError` bytes.
    static func handWrittenPDF(objects: [String], offsetError: Int = 0) -> [UInt8] {
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(text.utf8.count + offsetError)
            text += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let crossReference = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { text += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n" }
        text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(crossReference)\n%%EOF\n"
        return Array(text.utf8)
    }

    /// Runs qpdf; skips the test when it is not installed (tools/lib/common.sh installs it).
    static func qpdf(_ arguments: [String]) throws {
        let executable = "/usr/bin/qpdf"
        guard access(executable, X_OK) == 0 else { try Test.cancel("qpdf is not installed") }
        let outcome = try ChildProcess.run(executable: executable, arguments: arguments, environment: [:], timeout: 60)
        try #require(outcome.termination == .exited(0), "qpdf \(arguments): \(outcome.termination)")
    }
}

/// The pixels of a PNG file, read back with cairo.
struct PNGPixels {
    let width: Int
    let height: Int
    private let rows: [[UInt32]]

    init(path: String) throws {
        let surface = cairo_image_surface_create_from_png(path)
        defer { cairo_surface_destroy(surface) }
        try #require(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, "not a PNG cairo can read: \(path)")
        width = Int(cairo_image_surface_get_width(surface))
        height = Int(cairo_image_surface_get_height(surface))
        let (width, height) = (width, height)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = try #require(cairo_image_surface_get_data(surface))
        rows = (0..<height).map { y in
            (0..<width).map { x in UnsafeRawPointer(data + y * stride + x * 4).loadUnaligned(as: UInt32.self) }
        }
    }

    /// True when the pixel at (x, y) is pure white (cairo's xRGB or ARGB, alpha ignored).
    func isWhite(x: Int, y: Int) -> Bool { rows[y][x] & 0x00ff_ffff == 0x00ff_ffff }

    var corners: [(Int, Int)] { [(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1)] }

    /// How many pixels have red, green and blue values (0–255) that `matches` accepts.
    func count(where matches: (_ red: Int, _ green: Int, _ blue: Int) -> Bool) -> Int {
        rows.reduce(0) { total, row in
            total + row.filter { matches(Int($0 >> 16 & 0xff), Int($0 >> 8 & 0xff), Int($0 & 0xff)) }.count
        }
    }

    /// How many pixels are not white (the page's ink).
    var inkedPixelCount: Int { rows.reduce(0) { $0 + $1.filter { $0 & 0x00ff_ffff != 0x00ff_ffff }.count } }
}
