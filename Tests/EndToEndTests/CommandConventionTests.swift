import Foundation
import Testing

/// The command-line conventions every executable keeps (docs/cli.md, Conventions), run as a user
/// runs them: without HOME, `--version` with `-q`, grouped short options, options that exclude
/// each other.
@Suite struct CommandConventionTests {
    /// An environment with neither HOME nor XDG_DATA_HOME nor TRIPBOARD_CONTAINER.
    static let homeless = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC"]

    /// Runs `program ARGS` in `directory` with exactly `environment` (nothing is added to it).
    static func run(_ program: String, _ arguments: [String], in directory: String,
                    environment: [String: String] = homeless) throws -> ProcessResult {
        try ProcessRunner.run("/usr/bin/env", ["-C", directory, ProcessRunner.executable(program)] + arguments, environment: environment)
    }

    @Test func withoutHomeCommandsThatNeedNoContainerWorkAndCreateNothing() throws {
        let test = try TestContainer()
        let cwd = test.root.path
        for shell in ["bash", "zsh", "fish"] {
            let result = try Self.run("app", ["completion", shell], in: cwd)
            #expect(result.status == 0 && result.stdout.contains("__complete") && result.stderr.isEmpty, "\(shell): \(result)")
        }
        let help = try Self.run("app", ["--help"], in: cwd)
        #expect(help.status == 0 && help.stdout.hasPrefix("usage: app "), "\(help)")
        #expect(try Self.run("app", ["trip", "list", "--help"], in: cwd).status == 0)
        for program in ["app", "widget", "share-extension", "container-migration"] {
            let version = try Self.run(program, ["--version"], in: cwd)
            #expect(version.status == 0 && version.stdout.hasPrefix("TripBoard \(program) 1.0"), "\(program): \(version)")
        }
        let widgetHelp = try Self.run("widget", ["--help"], in: cwd)
        #expect(widgetHelp.status == 0 && widgetHelp.stdout.hasPrefix("usage: widget "), "\(widgetHelp)")
        #expect(test.files().isEmpty, "nothing is created: \(test.files())")
    }

    @Test func withoutHomeACommandThatNeedsTheDefaultContainerIsRefusedWithAHintAndCreatesNothing() throws {
        let test = try TestContainer()
        let cwd = test.root.path
        let hint = "error: cannot tell where the container is: pass --container DIR or set TRIPBOARD_CONTAINER (HOME is not set)"
        let cases: [(String, [String])] = [
            ("app", ["trip", "list"]),
            ("app", ["trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15"]),
            ("app", ["container", "init"]),
            ("app", ["prefs", "set", "theme", "dark"]),
            ("widget", []),
            ("container-migration", ["--from", cwd + "/no-legacy"]),
        ]
        for (program, arguments) in cases {
            let result = try Self.run(program, arguments, in: cwd)
            #expect(result.status == 64 && result.stderr == hint + "\n" && result.stdout.isEmpty, "\(program) \(arguments): \(result)")
        }
        var relative = Self.homeless
        relative["HOME"] = "home"
        let relativeHome = try Self.run("app", ["trip", "list"], in: cwd, environment: relative)
        #expect(relativeHome.status == 64 && relativeHome.stderr == hint + "\n", "a relative HOME counts as none: \(relativeHome)")
        #expect(test.files().isEmpty, "nothing is created: \(test.files())")
        // A container named on the line still needs a device, whose keys seal its store: without
        // HOME, TRIPBOARD_DEVICE_DIR names it; without either the command is refused, creating nothing.
        let deviceless = try Self.run("app", ["container", "init", cwd + "/named"], in: cwd)
        #expect(deviceless.status == 64 && deviceless.stderr.contains("set TRIPBOARD_DEVICE_DIR"), "\(deviceless)")
        #expect(test.files().isEmpty, "nothing is created: \(test.files())")
        var device = Self.homeless
        device["TRIPBOARD_DEVICE_DIR"] = cwd + "/device"
        let named = try Self.run("app", ["container", "init", cwd + "/named"], in: cwd, environment: device)
        #expect(named.status == 0 && named.trimmedStdout == cwd + "/named", "\(named)")
        let added = try Self.run("app", ["--container", cwd + "/named", "trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15"],
                                 in: cwd, environment: device)
        #expect(added.status == 0, "\(added)")
    }

    @Test(arguments: [["-q", "--version"], ["--version", "-q"], ["--quiet", "--version"]])
    func everyExecutablePrintsItsVersionWithQuiet(words: [String]) throws {
        let test = try TestContainer()
        for program in ["app", "widget", "share-extension", "container-migration", "pdf-worker", "sync-agent"] {
            let result = try ProcessRunner.run(program, words, environment: test.environment)
            #expect(result.status == 0 && result.stdout.hasPrefix("TripBoard \(program) 1.0") && result.stdout.hasSuffix("\n")
                    && result.stdoutLines.count == 1 && result.stderr.isEmpty, "\(program) \(words): \(result)")
        }
        #expect(test.files().isEmpty)
    }

    /// The helpers read their words through the same core as the others: help made from their
    /// declaration, `--name=VALUE`, one-line usage errors with status 64 (the worker's as its one
    /// JSON object, its stderr silent).
    @Test func theHelpersReadTheirWordsLikeEveryOtherExecutable() throws {
        let test = try TestContainer()
        for program in ["pdf-worker", "sync-agent"] {
            let help = try ProcessRunner.run(program, ["-h"], environment: test.environment)
            #expect(help.status == 0 && help.stdout.hasPrefix("usage: \(program) [-q]") && help.stdout.contains("exit statuses:")
                    && help.stderr.isEmpty, "\(program): \(help)")
        }
        let agent = try ProcessRunner.run("sync-agent", ["--server", "x"], environment: test.environment)
        #expect(agent.status == 64 && agent.stderr == "error: unknown option --server\n" && agent.stdout.isEmpty, "\(agent)")
        let extra = try ProcessRunner.run("sync-agent", ["now"], environment: test.environment)
        #expect(extra.status == 64 && extra.stderr == "error: unexpected argument 'now'\n", "\(extra)")
        let help = try ProcessRunner.run("sync-agent", ["--help"], environment: test.environment)
        #expect(help.stdout.hasPrefix("usage: sync-agent [-q]\n"), "no space after the usage of a program without arguments: \(help)")
        let command = try ProcessRunner.run("pdf-worker", ["Inspect", "t.pdf"], environment: test.environment)
        #expect(command.status == 64 && command.stdout.contains("unknown command 'Inspect' (did you mean inspect?)"), "\(command)")
        let range = try ProcessRunner.run("pdf-worker", ["inspect", "t.pdf", "--text-pages", "\u{1B}[2J" + String(repeating: "9", count: 100)],
                                          environment: test.environment)
        #expect(range.status == 64 && !range.stdout.contains("\\u001b") && range.stdout.utf8.count < 200,
                "a value out of range is shown safe for a terminal and cut short: \(range)")
        let thumbnail = try ProcessRunner.run("pdf-worker", ["inspect", "t.pdf", "--thumbnail", ""], environment: test.environment)
        #expect(thumbnail.status == 64 && thumbnail.stdout.contains("--thumbnail needs a file name"), "\(thumbnail)")
        let worker = try ProcessRunner.run("pdf-worker", ["inspect", "--thumbnail-siz=64", "t.pdf"], environment: test.environment)
        #expect(worker.status == 64 && worker.stderr.isEmpty
                && worker.stdout == #"{"error":"usage","message":"unknown option --thumbnail-siz (did you mean --thumbnail-size?)"}"# + "\n",
                "\(worker)")
        #expect(test.files().isEmpty)
    }

    /// A word that is not UTF-8 is refused by every executable before anything is touched, never
    /// repaired into another word (`a\xFF` and the file named `a\u{FFFD}` are two files).
    @Test func everyExecutableRefusesAWordThatIsNotUTF8() throws {
        let test = try TestContainer()
        let directory = test.root.path
        try Data("%PDF-1.4 not really".utf8).write(to: URL(fileURLWithPath: directory + "/\u{FFFD}.pdf"))
        let cases: [(String, [String], Int32, String)] = [
            ("widget", ["--container", "c\\377"], 65, "error: argument 2 is not valid UTF-8"),
            ("share-extension", ["\\377.pdf"], 65, "error: argument 1 is not valid UTF-8"),
            ("container-migration", ["--from", "\\376"], 65, "error: argument 2 is not valid UTF-8"),
            ("sync-agent", ["\\377"], 64, "error: argument 1 is not valid UTF-8"),
        ]
        for (program, formats, status, message) in cases {
            let result = try Self.runWithBytes(program, formats, in: directory, environment: test.environment)
            #expect(result.status == status && result.stderr.hasPrefix(message) && result.stderrLines.count == 1 && result.stdout.isEmpty,
                    "\(program): \(result)")
        }
        let worker = try Self.runWithBytes("pdf-worker", ["inspect", "\\357\\277\\275\\377.pdf"], in: directory, environment: test.environment)
        #expect(worker.status == 64 && worker.stderr.isEmpty && worker.stdout.hasPrefix(#"{"error":"usage","message":"argument 2 is not valid UTF-8"#),
                "the worker never inspects the file a repaired name would name: \(worker)")
        #expect(Set(test.files().keys) == ["\u{FFFD}.pdf"], "nothing is created: \(test.files())")
    }

    /// Output that cannot be written (a full disk: /dev/full) is a failure (74, one line), never a
    /// silent success; a reader that went away (`| true`) is none.
    @Test func outputThatCannotBeWrittenIsAFailure() throws {
        let test = try TestContainer()
        for program in ["app", "widget", "share-extension", "container-migration"] {
            for words in [["--version"], ["--help"]] {
                let full = try ProcessRunner.run("/bin/sh", ["-c", "exec \"$0\" \"$1\" > /dev/full", ProcessRunner.executable(program), words[0]],
                                                 environment: test.environment)
                #expect(full.status == 74 && full.stderr == "error: could not write to standard output (No space left on device)\n",
                        "\(program) \(words): \(full)")
            }
        }
        try test.appOK("trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15")
        let list = try ProcessRunner.run("/bin/sh", ["-c", "exec \"$0\" trip list --json > /dev/full", ProcessRunner.executable("app")],
                                         environment: test.environment)
        #expect(list.status == 74 && list.stderrLines.count == 1, "\(list)")
        let gone = try ProcessRunner.run("/bin/bash", ["-c", "\"$0\" --help | true; echo \"${PIPESTATUS[0]}\"", ProcessRunner.executable("app")],
                                         environment: test.environment)
        #expect(gone.trimmedStdout == "0" && gone.stderr.isEmpty, "\(gone)")
    }

    /// Runs `program` with words written as printf(1) formats (`a\\377`): Foundation's `Process`
    /// takes only strings.
    static func runWithBytes(_ program: String, _ formats: [String], in directory: String,
                             environment: [String: String]) throws -> ProcessResult {
        let words = formats.map { "\"$(printf -- '\($0)')\"" }.joined(separator: " ")
        return try ProcessRunner.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$0\" " + words, ProcessRunner.executable(program), directory],
                                     environment: environment)
    }

    @Test func groupedShortOptionsAreTheOptionsInTurn() throws {
        let test = try TestContainer()
        let help = try test.app("trip", "list", "-qh")
        #expect(help.status == 0 && help.stdout.hasPrefix("usage: app [--container DIR] [-q] trip list "), "\(help)")
        let widget = try ProcessRunner.run("widget", ["-hq"], environment: test.environment)
        #expect(widget.status == 0 && widget.stdout.hasPrefix("usage: widget "), "\(widget)")
        #expect(test.files().isEmpty, "help touches nothing")
        let quiet = try test.app("-qq", "trip", "add", "--name", "Lisbon", "--start", "2026-12-12", "--end", "2026-12-15")
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "-qq is -q: no 'created a new TripBoard container' line: \(quiet)")
        let unknown = try test.app("trip", "list", "-qx")
        #expect(unknown.status == 64 && unknown.stderr == "error: unknown option -x in -qx\n", "\(unknown)")
        let share = try ProcessRunner.run("share-extension", ["ticket.pdf", "-qv"], environment: test.environment)
        #expect(share.status == 64 && share.stderr == "error: unknown option -v in -qv\n", "\(share)")
    }

    @Test func optionsThatExcludeEachOtherAreOneUsageErrorBeforeTheContainerIsOpened() throws {
        let test = try TestContainer()
        let conflicts = try test.app("sync", "conflicts", "--json", "--dismiss", "abc")
        #expect(conflicts.status == 64 && conflicts.stderr == "error: --json and --dismiss exclude each other\n", "\(conflicts)")
        let list = try test.app("trip", "list", "--from", "2026-12-01", "--upcoming")
        #expect(list.status == 64 && list.stderr == "error: --upcoming and --from exclude each other\n", "\(list)")
        #expect(test.files().isEmpty, "refused before the container is looked for")
        let usage = try test.app("trip", "list", "--help")
        #expect(usage.stdout.hasPrefix("usage: app [--container DIR] [-q] trip list [--upcoming | --past | --from D --to D] [--sort"), "\(usage)")
    }
}
