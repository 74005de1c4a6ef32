import Foundation
import Testing

/// `app completion bash` in a real bash: the script is sourced, the completion function is
/// called as bash calls it on Tab (COMP_WORDS, COMP_CWORD), and COMPREPLY is what it offers.
/// `app --version`, `-q` and `--json` on the commands that print a result, end to end.
@Suite struct CompletionScriptTests {
    /// COMPREPLY, one per line, for the command line `words` (the last one being completed).
    static func completions(_ words: [String], in directory: String) throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let session = """
            cd '\(directory)'
            source <(app completion bash)
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            _tripboard_complete
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let environment = ["PATH": ProcessRunner.binDirectory.path + ":/usr/bin:/bin", "HOME": directory, "LANG": "C.UTF-8"]
        let result = try ProcessRunner.run("/bin/bash", ["-c", session], environment: environment)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        return result.stdoutLines
    }

    @Test func bashCompletesCommandsOptionsValuesAndPaths() throws {
        let test = try TestContainer()
        try FileManager.default.createDirectory(atPath: test.root.path + "/trips-dir", withIntermediateDirectories: false)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: test.root.path + "/trips.json"))
        let root = test.root.path
        #expect(try Self.completions(["app", "tr"], in: root) == ["trash", "trip"])
        #expect(try Self.completions(["app", "trip", "li"], in: root) == ["list"])
        #expect(try Self.completions(["app", "--container", "/tmp/c", "trip", "list", "--sort", "u"], in: root) == ["updated"])
        #expect(try Self.completions(["app", "trip", "list", "--li"], in: root) == ["--limit"])
        #expect(try Self.completions(["app", "import", "trips"], in: root).sorted() == ["trips-dir", "trips.json"])
        #expect(try Self.completions(["app", "--container", "trips"], in: root) == ["trips-dir"])
        #expect(try Self.completions(["widget", "--w"], in: root) == ["--watch"])
        #expect(!FileManager.default.fileExists(atPath: test.path), "completing opens no container")
    }

    @Test func everyExecutableAnswersVersion() throws {
        for program in ["app", "widget", "share-extension", "container-migration"] {
            let result = try ProcessRunner.run(program, ["--version"], environment: ProcessRunner.environment(container: nil))
            #expect(result.status == 0 && result.stdout.hasPrefix("TripBoard \(program) 1.0 (store schema"), "\(program): \(result)")
        }
        let worker = try ProcessRunner.run("pdf-worker", ["--version"], environment: ProcessRunner.environment(container: nil))
        #expect(worker.status == 0 && worker.stdout.hasPrefix("TripBoard pdf-worker 1.0"), "\(worker)")
    }

    @Test func quietKeepsResultsAndErrorsAndDropsInformationalLines() throws {
        let container = try TestContainer()
        let added = try container.app("-q", "trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15")
        #expect(added.status == 0 && added.stderr.isEmpty && added.stdoutLines.count == 1, "no 'created a new container' line: \(added)")
        let trip = added.trimmedStdout
        let deleted = try container.app("trip", "delete", trip, "--quiet")
        #expect(deleted.status == 0 && deleted.stderr.isEmpty, "\(deleted)")
        let failed = try container.app("-q", "trip", "show", trip)
        #expect(failed.status == 66 && failed.stderr.hasPrefix("error: "), "errors still show: \(failed)")
    }

    @Test func commandsThatPrintAResultTakeJSON() throws {
        let container = try TestContainer()
        let trip = try #require(try JSONSerialization.jsonObject(with: Data(container.appOK(
            "trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15", "--json").utf8)) as? [String: Any])
        #expect(trip["name"] as? String == "Lisbon" && trip["syncState"] as? String == "pendingUpload")
        let id = try #require(trip["id"] as? String)
        let place = try #require(try JSONSerialization.jsonObject(with: Data(container.appOK(
            "place", "add", "--trip", id, "--name", "Belém", "--json").utf8)) as? [String: Any])
        #expect(place["tripId"] as? String == id)
        let booking = try #require(try JSONSerialization.jsonObject(with: Data(container.appOK(
            "booking", "add", "--trip", id, "--kind", "event", "--title", "Fado", "--json").utf8)) as? [String: Any])
        #expect(booking["title"] as? String == "Fado")
        let preference = try #require(try JSONSerialization.jsonObject(with: Data(container.appOK("prefs", "get", "theme", "--json").utf8)) as? [String: Any])
        #expect(preference["key"] as? String == "theme" && preference["isDefault"] as? Bool == true && preference["value"] != nil)
        let other = container.root.appendingPathComponent("other").path
        let created = try #require(try JSONSerialization.jsonObject(with: Data(container.appOK("container", "init", other, "--json").utf8)) as? [String: Any])
        #expect(created["created"] as? Bool == true && (created["path"] as? String)?.hasSuffix("/other") == true)
    }
}
