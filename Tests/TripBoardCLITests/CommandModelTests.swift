import Foundation
import Testing
@testable import TripBoardCLI
import TripBoardShareExtension
import TripBoardCommandLine
import TripBoardWidget

/// The command model in process: how words are parsed, which command they select, the errors
/// and suggestions made from the declarations, and the declarations' own consistency.
@Suite struct CommandModelTests {

    /// `app ARGS` in process, with no container anywhere it could be made.
    static func app(_ arguments: [String]) -> (status: Int32, output: String, errors: [String]) {
        let console = Console(echoesErrors: false)
        let environment = ["TRIPBOARD_CONTAINER": "/nonexistent/tripboard-cli-tests/container", "TZ": "UTC"]
        let status = AppCommand.main(arguments: arguments, environment: environment, console: console)
        return (status, console.outputText, console.errorLines)
    }

    static func selected(_ words: [String]) -> (AppCommandSpec, Arguments)? {
        guard case .command(let command, let arguments) = AppCommand.select(words, among: AppCommand.commands) else { return nil }
        return (command, arguments)
    }

    @Test(arguments: [
        ["trip", "add", "--name", "X", "--start", "2026-12-12", "--end", "2026-12-13"],
        ["--name", "X", "trip", "add", "--start", "2026-12-12", "--end", "2026-12-13"],
        ["--name", "X", "--start", "2026-12-12", "trip", "--end", "2026-12-13", "add"],
        ["--name=X", "trip", "add", "--start=2026-12-12", "--end", "2026-12-13"],
    ])
    func optionsMayStandBeforeOrAfterTheCommandWords(words: [String]) throws {
        let (command, arguments) = try #require(Self.selected(words))
        #expect(command.words == ["trip", "add"])
        #expect(try arguments.option("--name") == "X")
        #expect(try arguments.option("--start") == "2026-12-12")
        try arguments.finish()
    }

    /// Only commands whose words all stand in the line, in order, are parsed for: each command
    /// is still found by its words with options before, between and after them.
    @Test func everyCommandIsFoundByItsWordsAmongOptions() throws {
        #expect(AppCommand.isSubsequence(["trip", "add"], of: ["--name", "x", "trip", "--json", "add"]))
        #expect(!AppCommand.isSubsequence(["trip", "add"], of: ["add", "trip"]))
        #expect(AppCommand.isSubsequence([], of: []))
        for command in AppCommand.commands {
            var words = ["--container", "/c"]
            for word in command.words { words += [word, "-q"] }
            let found = try #require(Self.selected(words), "\(command.words)")
            #expect(found.0.words == command.words, "\(words)")
        }
    }

    @Test func aValueThatIsAnOptionOfTheCommandIsRefusedButTheEqualsFormPassesIt() throws {
        let (_, refused) = try #require(Self.selected(["trip", "add", "--name", "--start", "2026-12-12", "--end", "2026-12-13"]))
        #expect(refused.mistake?.message == "--name needs a value")
        let (_, passed) = try #require(Self.selected(["trip", "add", "--name=--start", "--start", "2026-12-12"]))
        #expect(passed.mistake == nil)
        #expect(try passed.option("--name") == "--start")
        // A word that only looks like an option, but is none of this command's, is a value as it is.
        let (_, unknownWord) = try #require(Self.selected(["trip", "add", "--name", "--x", "--start", "2026-12-12"]))
        #expect(unknownWord.mistake == nil)
        #expect(try unknownWord.option("--name") == "--x")
        let (_, negative) = try #require(Self.selected(["trip", "add", "--notes", "-5 °C"]))
        #expect(try negative.option("--notes") == "-5 °C")
        // A global option is an option of every command; `--` is never a value.
        #expect(try #require(Self.selected(["trip", "add", "--name", "--container", "/c"])).1.mistake?.message == "--name needs a value")
        #expect(try #require(Self.selected(["trip", "add", "--name", "--"])).1.mistake?.message == "--name needs a value")
        #expect(try #require(Self.selected(["trip", "add", "--name"])).1.mistake?.message == "--name needs a value")
    }

    @Test func theLastValueWinsAndAFlagCountsOnceAndAfterTheSeparatorEverythingIsPositional() throws {
        let (_, arguments) = try #require(Self.selected(["trip", "list", "--sort", "name", "--json", "--sort=updated", "--json"]))
        #expect(try arguments.option("--sort") == "updated")
        #expect(arguments.flag("--json"))
        var search = try #require(Self.selected(["search", "--json", "--", "--limit", "-x"])).1
        #expect(search.flag("--json"))
        #expect(search.nextPositional() == "--limit" && search.nextPositional() == "-x")
        #expect(try search.option("--limit") == nil)
    }

    @Test func aFlagGivenAValueIsRefused() throws {
        #expect(try #require(Self.selected(["trip", "list", "--json=yes"])).1.mistake?.message == "--json takes no value")
    }

    @Test(arguments: [
        (["trip", "list", "--jsno"], "unknown option --jsno (did you mean --json?)"),
        (["trip", "list", "--colour"], "unknown option --colour"),
        (["trip", "add", "--nmae", "X"], "unknown option --nmae (did you mean --name?)"),
        (["trip", "lst"], "unknown command 'trip lst' (did you mean 'trip list'?); try one of: add, delete, edit, list, show"),
        (["tirp", "list"], "unknown command 'tirp' (did you mean 'trip'?); try one of: "),
        (["trip"], "incomplete command 'trip'; try: trip add, trip list, trip show, trip edit, trip delete"),
        ([], "missing command; `app --help` lists them"),
        (["trip", "show"], "missing trip ID"),
        (["trip", "show", "abc", "extra"], "unexpected argument 'extra'"),
        (["keychain", "set", "--value=hunter2"], "unknown option (not shown: secrets are read only from standard input, never from the command line)"),
    ])
    func mistakesAreNamedWithSuggestionsAndExit64(words: [String], message: String) {
        let result = Self.app(words)
        #expect(result.status == 64, "\(words): \(result)")
        #expect(result.errors.count == 1 && result.errors[0].hasPrefix("error: " + message), "\(words): \(result.errors)")
        #expect(result.output.isEmpty)
        #expect(!result.errors.joined().contains("hunter2"))
    }

    @Test func suggestionsAreCloseWordsOnly() {
        #expect(Suggestion.closest(to: "--jsno", among: ["--json", "--limit"]) == "--json")
        #expect(Suggestion.closest(to: "lst", among: ["list", "last", "add"]) == "list")
        #expect(Suggestion.closest(to: "--frobnicate", among: ["--name", "--trip"]) == nil)
        #expect(Suggestion.editDistance("ab", "ba") == 1)
        #expect(Suggestion.editDistance("", "abc") == 3)
    }

    @Test func helpIsMadeFromTheDeclarationAndWinsOverMistakes() {
        let help = Self.app(["trip", "add", "--name", "--help"])
        #expect(help.status == 0 && help.errors.isEmpty)
        #expect(help.output.hasPrefix("usage: app [--container DIR] [-q] trip add --name NAME --start YYYY-MM-DD --end YYYY-MM-DD [--notes TEXT] [--json]\n"))
        #expect(help.output.contains("  --start YYYY-MM-DD  the first day\n"))
        #expect(help.output.contains("  -q, --quiet "))
        let group = Self.app(["trip", "-h"])
        #expect(group.status == 0 && group.output.contains("  app trip delete ID [--yes]\n") && !group.output.contains("app place add"))
        let all = Self.app(["--help"])
        #expect(all.output.contains("  app completion SHELL\n") && !all.output.contains("__complete"))
    }

    @Test func everyDeclarationIsConsistent() {
        var seen: Set<[String]> = []
        let global = Set(AppCommand.globalOptions.map(\.name) + ["--help"])
        for command in AppCommand.commands {
            #expect(seen.insert(command.words).inserted, "\(command.words) declared twice")
            let names = command.grammar.options.map(\.name)
            #expect(Set(names).count == names.count, "\(command.words): an option declared twice")
            #expect(global.isDisjoint(with: names), "\(command.words) redeclares a global option")
            for option in command.grammar.options {
                #expect(option.name.hasPrefix("--") && !option.help.isEmpty, "\(command.words) \(option.name)")
            }
            #expect(!command.summary.isEmpty)
            #expect(command.grammar.positionals.dropLast().allSatisfy { !$0.isRepeated }, "\(command.words): only the last argument repeats")
        }
        // One option name, one arity, across every command (so that an option before the command
        // words reads the same whichever command follows) — --version of `sync ack` aside, which
        // `app --version` (alone on the line) does not collide with.
        var arity: [String: Bool] = [:]
        for option in AppCommand.commands.flatMap(\.grammar.options) {
            if let known = arity[option.name] { #expect(known == option.takesValue, "\(option.name) is a flag in one command and takes a value in another") }
            arity[option.name] = option.takesValue
        }
    }

    @Test func quietSilencesInformationalLinesOnly() {
        let console = Console(echoesErrors: false)
        console.isQuiet = true
        console.diagnostic("created a new TripBoard container at /x")
        console.warning("the preferences file was unreadable")
        console.failure("error: boom")
        #expect(console.errorLines == ["warning: the preferences file was unreadable", "error: boom"])
    }

    @Test func everyExecutableHasAVersion() {
        #expect(Self.app(["--version"]).output == AppCommand.program.versionLine + "\n")
        let console = Console(echoesErrors: false)
        #expect(WidgetCommand.main(arguments: ["--version"], environment: [:], console: console) == 0)
        #expect(console.outputText.hasPrefix("TripBoard widget 1.0"))
        let share = Console(echoesErrors: false)
        #expect(ShareCommand.main(arguments: ["--version"], environment: [:], console: share) == 0)
        #expect(share.outputText.hasPrefix("TripBoard share-extension 1.0"))
        let migration = Console(echoesErrors: false)
        #expect(MigrationCommand.main(arguments: ["--version"], environment: [:], console: migration) == 0)
        #expect(migration.outputText.hasPrefix("TripBoard container-migration 1.0"))
    }

    @Test func singleCommandProgramsUseTheModelToo() {
        let console = Console(echoesErrors: false)
        #expect(ShareCommand.main(arguments: ["ticket.pdf", "--trpi", "abc"], environment: [:], console: console) == 64)
        #expect(console.errorLines == ["error: unknown option --trpi (did you mean --trip?)"])
        let widget = Console(echoesErrors: false)
        #expect(WidgetCommand.main(arguments: ["--now"], environment: [:], console: widget) == 64)
        #expect(widget.errorLines == ["error: --now needs a value"])
    }
}
