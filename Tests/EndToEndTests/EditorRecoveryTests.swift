import Foundation
import Testing
import TripBoardSystem

/// `trip edit` never throws away what was typed in `$EDITOR`: on a terminal a refused edit opens
/// the editor again with the error on top, in `#` lines; elsewhere the file is kept and named.
@Suite struct EditorRecoveryTests {
    /// An editor script in the test's directory: `body` is shell, with the file as `$1`.
    static func editor(_ container: TestContainer, _ body: String) throws -> String {
        let script = container.root.appendingPathComponent("editor-\(UUID().uuidString.prefix(6)).sh")
        try "#!/bin/sh\n\(body)\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        return script.path
    }

    /// `kept/` beside the container, made empty: the `$TMPDIR` a refused edit is kept in.
    static func keptDirectory(_ container: TestContainer) throws -> String {
        let kept = container.root.appendingPathComponent("kept").path
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: false)
        return kept
    }

    /// The refused edit of `trip` is kept in `kept` (named on stderr), byte for byte as the editor
    /// left it (`typed`), mode 0600; the store is as it was and the container's tmp/ is empty.
    static func expectKept(_ result: ProcessResult, in kept: String, trip: String, asTyped typed: String,
                           container: TestContainer, storeDumpBefore: String,
                           sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = try #require(keptPath(result.stderr), "\(result)", sourceLocation: sourceLocation)
        #expect(path.hasPrefix(kept + "/tripboard-edit-trip-\(trip.prefix(8))-"), "\(result)", sourceLocation: sourceLocation)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: URL(fileURLWithPath: typed)),
                "the text as the editor left it", sourceLocation: sourceLocation)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600, sourceLocation: sourceLocation)
        #expect(try container.state().storeDump == storeDumpBefore, sourceLocation: sourceLocation)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container.path + "/tmp").isEmpty,
                "nothing left in the container's tmp/", sourceLocation: sourceLocation)
    }

    /// The path after "your edit is kept in " in an error line.
    static func keptPath(_ stderr: String) -> String? {
        guard let range = stderr.range(of: "; your edit is kept in ") else { return nil }
        return String(stderr[range.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: [
        ("s/2026-12-15/2026-13-01/", "endDate '2026-13-01' does not exist: there is no month 13"),
        ("s/\"name\" : \"Lisbon\"/\"name\" : \"\"/", "name must not be empty"),
        ("s/{/[/", "not a JSON object"),
    ])
    func withoutATerminalARefusedEditIsKeptAndNamed(sedScript: String, message: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let kept = try Self.keptDirectory(container)
        let typed = container.root.appendingPathComponent("typed.json").path
        let editor = try Self.editor(container, "sed -i '\(sedScript)' \"$1\" && cp \"$1\" '\(typed)'")
        let before = try container.state().storeDump
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": editor, "TMPDIR": kept])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains(message), "\(result)")
        try Self.expectKept(result, in: kept, trip: trip, asTyped: typed, container: container, storeDumpBefore: before)
    }

    /// An edited file over the 1 MiB limit is refused (65) but never thrown away: the file itself
    /// is moved or copied to `$TMPDIR`, mode 0600, and named; an editor that also failed says so (69).
    @Test(arguments: [(0, 65), (3, 69)])
    func anEditedFileOverTheLimitIsRefusedAndKept(editorStatus: Int, expected: Int32) throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let kept = try Self.keptDirectory(container)
        let typed = container.root.appendingPathComponent("typed.json").path
        // What a person might do: paste a huge text into the notes (1.5 MiB), then save.
        let editor = try Self.editor(container, """
            head -c 1572864 /dev/zero | tr '\\0' 'x' > "$1.big" && mv "$1.big" "$1" && chmod 644 "$1" && cp "$1" '\(typed)'
            exit \(editorStatus)
            """)
        let before = try container.state()
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": editor, "TMPDIR": kept])
        #expect(result.status == expected, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.contains(expected == 65 ? "the edited file is larger than the limit of 1 MiB; nothing was changed"
                                                      : "exited with status \(editorStatus); nothing was changed"), "\(result)")
        try Self.expectKept(result, in: kept, trip: trip, asTyped: typed, container: container, storeDumpBefore: before.storeDump)
    }

    /// `$TMPDIR` on another file system (tmpfs): the file cannot be moved there, so it is copied.
    @Test func anEditedFileOverTheLimitIsCopiedToATMPDIROnAnotherFileSystem() throws {
        guard access("/dev/shm", W_OK) == 0 else { return }
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let kept = "/dev/shm/tripboard-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: kept) }
        var here = stat(), there = stat()
        stat(container.root.path, &here)
        stat(kept, &there)
        guard here.st_dev != there.st_dev else { return }
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": "truncate -s 3M", "TMPDIR": kept])
        #expect(result.status == 65, "\(result)")
        let path = try #require(Self.keptPath(result.stderr), "\(result)")
        #expect(path.hasPrefix(kept + "/tripboard-edit-trip-"), "\(result)")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.size] as? Int == 3 << 20 && attributes[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container.path + "/tmp").isEmpty)
    }

    /// When `$TMPDIR` cannot take the file, it stays in the container's `tmp/` and that path is named.
    @Test func anEditedFileOverTheLimitThatCannotBeMovedOutStaysInTheContainerAndIsNamed() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": "truncate -s 2M",
                                                                         "TMPDIR": container.root.path + "/missing"])
        #expect(result.status == 65, "\(result)")
        let path = try #require(Self.keptPath(result.stderr), "\(result)")
        #expect(path.hasPrefix(container.path + "/tmp/edit-trip-\(trip.prefix(8))-"), "\(result)")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 2 << 20)
    }

    /// A refused edit whose `$TMPDIR` cannot take it (here: missing) is not lost with the file in
    /// the container's `tmp/`: that file stays, holding what the editor saved, and is named.
    @Test func aRefusedEditThatTMPDIRCannotTakeStaysInTheContainerAndIsNamed() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let typed = container.root.appendingPathComponent("typed.json").path
        let editor = try Self.editor(container, "sed -i 's/2026-12-15/2026-13-01/' \"$1\" && cp \"$1\" '\(typed)'")
        let before = try container.state().storeDump
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": editor, "TMPDIR": container.root.path + "/missing"])
        #expect(result.status == 65 && result.stderrLines.count == 1, "\(result)")
        let path = try #require(Self.keptPath(result.stderr), "\(result)")
        #expect(path.hasPrefix(container.path + "/tmp/edit-trip-\(trip.prefix(8))-"), "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: URL(fileURLWithPath: typed)), "the text as the editor left it")
        #expect(try container.state().storeDump == before)
    }

    /// With no terminal and neither VISUAL nor EDITOR, `vi` would wait on nothing: refused at
    /// once, before the container is opened; an explicit EDITOR (or VISUAL) works as ever.
    @Test func withoutATerminalOrAnEditorTripEditWithoutFieldsIsAUsageError() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let before = try container.state()
        let result = try container.app("trip", "edit", trip)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains("set EDITOR"), "\(result)")
        #expect(try container.state() == before)
        let empty = try container.app("trip", "edit", trip, environment: ["EDITOR": "", "VISUAL": ""])
        #expect(empty.status == 64, "empty counts as unset: \(empty)")
        #expect(try container.app("trip", "edit", trip, "--name", "Sintra").status == 0, "field options need no editor")
        let visual = try container.app("trip", "edit", trip, environment: ["VISUAL": "sed -i s/Sintra/Porto/"])
        #expect(visual.status == 0, "\(visual)")
        #expect(try container.appOK("trip", "show", trip, "--json").contains("\"Porto\""))
    }

    /// On a real terminal (a pty made by `script`): the first save has a bad date, the editor opens
    /// again on that text with the error in `#` lines on top, the second save fixes it and is
    /// applied — the `#` lines are not part of the JSON.
    @Test func onATerminalARefusedEditReopensTheEditorWithTheErrorOnTop() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let second = container.root.appendingPathComponent("second-look.json").path
        let editor = try Self.editor(container, """
            if grep -q '^# ' "$1"; then cp "$1" '\(second)'; sed -i 's/2026-12-1x/2026-12-18/' "$1"
            else sed -i 's/2026-12-15/2026-12-1x/; s/"Lisbon"/"Lisbon and Sintra"/' "$1"; fi
            """)
        let app = ProcessRunner.executable("app")
        let result = try ProcessRunner.run("/usr/bin/script", ["-qec", "'\(app)' trip edit \(trip)", "/dev/null"],
                                           environment: container.environment(["EDITOR": editor]))
        #expect(result.status == 0, "\(result)")
        let reopened = try String(contentsOfFile: second, encoding: .utf8)
        #expect(reopened.hasPrefix("# The edit was refused; nothing was changed."), "\(reopened)")
        #expect(reopened.contains("# startDate and endDate must be dates in YYYY-MM-DD form"), "\(reopened)")
        #expect(reopened.contains("\"Lisbon and Sintra\"") && reopened.contains("2026-12-1x"), "the person's text is kept: \(reopened)")
        let shown = try container.appOK("trip", "show", trip, "--json")
        #expect(shown.contains("\"Lisbon and Sintra\"") && shown.contains("2026-12-18"), "\(shown)")
    }

    /// On a terminal, a conflict (another process changed the trip while the editor was open)
    /// reopens the editor on the person's text with the current version in `#` lines; saving
    /// again, even unchanged, replaces that version knowingly.
    @Test func onATerminalAConflictShowsTheCurrentVersionAndASecondSaveWins() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let second = container.root.appendingPathComponent("second-look.json").path
        let app = ProcessRunner.executable("app")
        let editor = try Self.editor(container, """
            if grep -q '^# ' "$1"; then cp "$1" '\(second)'
            else '\(app)' trip edit \(trip) --notes meanwhile && sed -i 's/"Lisbon"/"Mine"/' "$1"; fi
            """)
        let result = try ProcessRunner.run("/usr/bin/script", ["-qec", "'\(app)' trip edit \(trip)", "/dev/null"],
                                           environment: container.environment(["EDITOR": editor]))
        #expect(result.status == 0, "\(result)")
        let reopened = try String(contentsOfFile: second, encoding: .utf8)
        #expect(reopened.contains("was changed by another process") && reopened.contains("#   \"notes\" : \"meanwhile\""), "\(reopened)")
        let shown = try container.appOK("trip", "show", trip, "--json")
        #expect(shown.contains("\"Mine\"") && !shown.contains("meanwhile"), "the second save replaced the other version: \(shown)")
    }

    /// On a terminal, saving the refused text again unchanged gives up: the file is kept and named.
    @Test func onATerminalSavingTheRefusedTextUnchangedKeepsTheFile() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let kept = try Self.keptDirectory(container)
        let editor = try Self.editor(container, "grep -q '^# ' \"$1\" || sed -i 's/2026-12-15/2026-12-01/' \"$1\"")
        let app = ProcessRunner.executable("app")
        let result = try ProcessRunner.run("/usr/bin/script", ["-qec", "'\(app)' trip edit \(trip)", "/dev/null"],
                                           environment: container.environment(["EDITOR": editor, "TMPDIR": kept]))
        #expect(result.status == 65, "\(result)")
        let path = try #require(Self.keptPath(result.stdout.replacingOccurrences(of: "\r", with: "")), "\(result)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("# ") && text.contains("2026-12-01"), "\(text)")
        #expect(try container.appOK("trip", "show", trip, "--json").contains("2026-12-15"), "nothing was changed")
    }
}
