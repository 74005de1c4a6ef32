import Foundation
import Testing
@testable import TripBoardCLI

/// The man pages in docs/man are the ones the model makes (`tools/man` writes them), and man
/// renders them without a warning.
@Suite struct ManPageTests {
    static let manDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/man")

    @Test(arguments: Completion.programNames)
    func theCheckedInPageIsTheGeneratedOne(program: String) throws {
        let checkedIn = try String(contentsOf: Self.manDirectory.appendingPathComponent("\(program).1"), encoding: .utf8)
        #expect(checkedIn == ManPage.render(try #require(Programs.named(program))), "docs/man/\(program).1 is stale: run tools/man")
    }

    @Test(arguments: Completion.programNames)
    func manRendersThePageWithoutWarnings(program: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/man")
        process.arguments = ["--warnings=all", "-l", Self.manDirectory.appendingPathComponent("\(program).1").path]
        process.environment = ["PATH": "/usr/bin:/bin", "MANWIDTH": "80", "LANG": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let warnings = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && warnings.isEmpty, "\(warnings)")
        #expect(text.contains("SYNOPSIS") && text.contains("EXIT STATUS"))
        if program == "app" { #expect(text.contains("trip add") && text.contains("--container DIR")) }
    }

    @Test func escapingKeepsRoffControlsOut() {
        #expect(ManPage.escape("a-b \\ c") == "a\\-b \\e c")
        #expect(ManPage.escape(".starts with a dot") == "\\&.starts with a dot")
    }
}
