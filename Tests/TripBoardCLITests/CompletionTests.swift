import Foundation
import Testing
@testable import TripBoardCLI

/// What `app __complete` offers, made from the same declarations as parsing.
@Suite struct CompletionTests {
    static func complete(_ words: String..., program: String = "app") -> [String] {
        Completion.candidates(Programs.named(program)!, words: words)
    }

    @Test func commandWordsThenTheirOptionsThenValues() {
        #expect(Self.complete("") .contains("trip"))
        #expect(Self.complete("tr") == ["trash", "trip"])
        #expect(Self.complete("trip", "") == ["add", "delete", "edit", "list", "show"])
        #expect(Self.complete("trip", "list", "--s") == ["--sort"])
        #expect(Self.complete("trip", "list", "--sort", "") == ["start", "name", "updated"])
        #expect(Self.complete("trip", "list", "--sort", "n") == ["name"])
        #expect(Self.complete("booking", "add", "--kind", "") == ["flight", "train", "hotel", "car", "event", "other"])
        #expect(Self.complete("prefs", "get", "") == ["currency", "theme", "mapStyle", "showsVisitedPlaces", "cacheLimitMB"])
        #expect(Self.complete("completion", "") == ["bash", "zsh", "fish"])
    }

    @Test func optionsBeforeTheCommandWordsAreSkippedWithTheirValues() {
        #expect(Self.complete("--container", "/tmp/c", "trip", "") == ["add", "delete", "edit", "list", "show"])
        #expect(Self.complete("--container", "") == [Completion.directoryDirective])
        #expect(Self.complete("-") == ["--container", "--help", "--quiet"])
    }

    @Test func aFlagAlreadyGivenIsNotOfferedAgain() {
        #expect(!Self.complete("trip", "list", "--json", "--").contains("--json"))
        #expect(Self.complete("trip", "list", "--").contains("--json"))
    }

    @Test func pathsAreLeftToTheShell() {
        #expect(Self.complete("import", "") == [Completion.fileDirective])
        #expect(Self.complete("backup", "--output", "") == [Completion.fileDirective])
        #expect(Self.complete("", program: "share-extension") == [Completion.fileDirective])
        #expect(Self.complete("--from", "", program: "container-migration") == [Completion.directoryDirective])
        #expect(Self.complete("trip", "show", "") == [], "an id: nothing to offer")
    }

    @Test func theScriptsNameEveryProgram() throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try #require(Completion.script(for: shell))
            for program in Completion.programNames { #expect(script.contains(program), "\(shell): \(program)") }
            #expect(script.contains("__complete"))
        }
        #expect(Completion.script(for: "tcsh") == nil)
    }

    /// zsh and fish parse the scripts (`-n`: syntax only); bash is run for real in EndToEndTests.
    @Test(arguments: [("/usr/bin/zsh", "zsh"), ("/usr/bin/fish", "fish"), ("/bin/bash", "bash")])
    func theScriptsAreWellFormed(shell: String, name: String) throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(UUID().uuidString).\(name)")
        try Completion.script(for: name)!.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: shell)
        process.arguments = ["-n", script.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0 && message.isEmpty, "\(name): \(message)")
    }
}
