import Foundation
import Testing
@testable import TripBoardCLI
import TripBoardShareExtension
import TripBoardCommandLine
import TripBoardWidget
import TripBoardModel

/// The conventions the command model gives every executable (docs/cli.md, Conventions): short
/// options grouped POSIX-style, one-of groups declared once and enforced, shown and completed
/// from the declaration, `--version` with `-q`, and commands that need no container working
/// where none can be told.
@Suite struct CommandModelConventionTests {
    static func selected(_ words: [String]) -> (AppCommandSpec, Arguments)? {
        CommandModelTests.selected(words)
    }

    // MARK: - Grouped short options

    @Test func shortOptionsGroupPOSIXStyle() throws {
        let (_, quietHelp) = try #require(Self.selected(["trip", "list", "-qh"]))
        #expect(quietHelp.mistake == nil && quietHelp.wantsHelp && quietHelp.flag("--quiet"))
        let (_, helpQuiet) = try #require(Self.selected(["-hq", "trip", "list"]))
        #expect(helpQuiet.wantsHelp && helpQuiet.flag("--quiet"))
        let (_, doubled) = try #require(Self.selected(["trip", "list", "-qq"]))
        #expect(doubled.mistake == nil && doubled.flag("--quiet") && !doubled.wantsHelp, "a repeated flag counts once")
        // A group is an option of the command: never taken as a value.
        #expect(try #require(Self.selected(["trip", "add", "--name", "-qh"])).1.mistake?.message == "--name needs a value")
        #expect(try #require(Self.selected(["trip", "add", "--name", "-qq"])).1.mistake?.message == "--name needs a value")
        #expect(try #require(Self.selected(["trip", "add", "--name=-qh"])).1.mistake == nil)
        #expect(try #require(Self.selected(["trip", "add", "--name", "-qhello"])).1.option("--name") == "-qhello", "not a group: a value")
        // After `--`, a group is a word like any other.
        var search = try #require(Self.selected(["search", "--", "-qh"])).1
        #expect(!search.wantsHelp && search.nextPositional() == "-qh")
    }

    @Test(arguments: [
        (["trip", "list", "-qx"], "unknown option -x in -qx"),
        (["trip", "list", "-hqz"], "unknown option -z in -hqz"),
        (["trip", "list", "-quiet"], "unknown option -quiet (did you mean --quiet?)"),
        (["trip", "list", "-xq"], "unknown option -xq (did you mean -q?)"),
    ])
    func aGroupWithALetterThatIsNoOptionIsRefusedNamingIt(words: [String], message: String) throws {
        #expect(try #require(Self.selected(words)).1.mistake?.message == message)
        let app = CommandModelTests.app(words)
        #expect(app.status == 64 && app.errors == ["error: " + message], "\(app)")
    }

    @Test func aShortOptionWithAValueTakesTheRestOfItsGroupOrTheNextWord() throws {
        var name = OptionSpec.value("--name", "NAME", "a name")
        name.short = "-n"
        let grammar = Grammar(options: [.flag("--verbose", short: "-v", "more"), name], positionals: [])
        let inline = Arguments(["-vnLisbon"], grammar: grammar)
        #expect(inline.mistake == nil && inline.flag("--verbose"))
        #expect(try inline.option("--name") == "Lisbon")
        let next = Arguments(["-vn", "Porto"], grammar: grammar)
        #expect(try next.option("--name") == "Porto" && next.remainingPositionals.isEmpty)
        let letters = Arguments(["-nv"], grammar: grammar)
        #expect(try letters.option("--name") == "v" && !letters.flag("--verbose"), "after -n, the rest is its value")
        #expect(Arguments(["-vn"], grammar: grammar).mistake?.message == "--name needs a value")
    }

    // MARK: - One-of groups

    @Test func oneOfGroupsAreShownInUsageHelpAndManPages() throws {
        let list = try #require(AppCommand.commands.first { $0.words == ["trip", "list"] })
        #expect(list.usage == "trip list [--upcoming | --past | --from D --to D] [--sort start|name|updated] [--limit N] [--json]")
        let conflicts = try #require(AppCommand.commands.first { $0.words == ["sync", "conflicts"] })
        #expect(conflicts.usage == "sync conflicts [--json | --dismiss ID]")
        let help = CommandModelTests.app(["trip", "list", "--help"])
        #expect(help.status == 0 && help.output.hasPrefix("usage: app [--container DIR] [-q] trip list [--upcoming | --past | --from D --to D] "))
        #expect(CommandModelTests.app(["--help"]).output.contains("  app sync conflicts [--json | --dismiss ID]\n"))
        let page = ManPage.render(AppCommand.program)
        #expect(page.contains(".B app trip list\n[\\fB\\-\\-upcoming\\fR | \\fB\\-\\-past\\fR | \\fB\\-\\-from\\fR \\fID\\fR \\fB\\-\\-to\\fR \\fID\\fR]\n"))
        #expect(page.contains(".B app sync conflicts\n[\\fB\\-\\-json\\fR | \\fB\\-\\-dismiss\\fR \\fIID\\fR]\n"))
    }

    @Test(arguments: [
        (["trip", "list", "--upcoming", "--past"], "--upcoming and --past exclude each other"),
        (["trip", "list", "--past", "--upcoming"], "--upcoming and --past exclude each other"),
        (["trip", "list", "--from", "2026-12-01", "--past"], "--past and --from exclude each other"),
        (["trip", "list", "--to=2026-12-01", "--upcoming", "--past"], "--upcoming and --past exclude each other"),
        (["--dismiss", "abc", "sync", "conflicts", "--json"], "--json and --dismiss exclude each other"),
    ])
    func twoAlternativesOfAGroupAreOneUsageErrorMadeFromTheDeclaration(words: [String], message: String) throws {
        #expect(try #require(Self.selected(words)).1.mistake?.message == message)
        let app = CommandModelTests.app(words)
        #expect(app.status == 64 && app.errors == ["error: " + message], "\(app)")
    }

    @Test func theOptionsOfOneAlternativeGoTogether() throws {
        let (_, range) = try #require(Self.selected(["trip", "list", "--from", "2026-12-01", "--to", "2026-12-31", "--sort", "name"]))
        #expect(range.mistake == nil)
        #expect(try #require(Self.selected(["trip", "list", "--upcoming", "--upcoming"])).1.mistake == nil)
    }

    @Test func everyGroupNamesOptionalOptionsOfItsCommandAndTheHelpNeedsNoWordsOfItsOwn() {
        for command in AppCommand.commands {
            for group in command.grammar.exclusiveGroups {
                #expect(group.alternatives.count >= 2, "\(command.usage)")
                for name in group.names {
                    let option = command.grammar.option(named: name)
                    #expect(option != nil && option?.isRequired == false, "\(name) in \(command.usage)")
                    #expect(Set(group.names).count == group.names.count, "\(command.usage)")
                }
            }
        }
    }

    @Test func completionOffersNoOptionThatAGivenOneExcludes() {
        let afterUpcoming = CompletionTests.complete("trip", "list", "--upcoming", "--")
        #expect(!afterUpcoming.contains("--past") && !afterUpcoming.contains("--from") && !afterUpcoming.contains("--to"))
        #expect(afterUpcoming.contains("--sort"))
        let afterFrom = CompletionTests.complete("trip", "list", "--from=2026-12-01", "--")
        #expect(afterFrom.contains("--to") && !afterFrom.contains("--past") && !afterFrom.contains("--upcoming"))
        #expect(!CompletionTests.complete("sync", "conflicts", "--dismiss", "abc", "--").contains("--json"))
    }

    // MARK: - --version

    @Test(arguments: [["-q", "--version"], ["--version", "-q"], ["--quiet", "--version"], ["--version", "--container", "/x"], ["-qq", "--version"]])
    func appPrintsItsVersionWithGlobalOptions(words: [String]) {
        let app = CommandModelTests.app(words)
        #expect(app.status == 0 && app.output == AppCommand.program.versionLine + "\n" && app.errors.isEmpty, "\(app)")
    }

    @Test func aCommandsOwnVersionOptionIsNotTheProgramsVersion() throws {
        let (command, arguments) = try #require(Self.selected(["-q", "sync", "ack", "abc", "--version", "1"]))
        #expect(command.words == ["sync", "ack"])
        #expect(try arguments.option("--version") == "1")
        #expect(CommandModelTests.app(["--version", "1"]).status == 64, "an extra word is no version request")
    }

    @Test func singleCommandProgramsPrintTheirVersionWithQuiet() {
        for (name, main) in [("widget", WidgetCommand.main(arguments:environment:console:isTerminal:)),
                             ("share-extension", { words, environment, console, _ in ShareCommand.main(arguments: words, environment: environment, console: console) }),
                             ("container-migration", { words, environment, console, _ in MigrationCommand.main(arguments: words, environment: environment, console: console) })]
                as [(String, ([String], [String: String], Console, Bool?) -> Int32)] {
            for words in [["-q", "--version"], ["--version", "-q"]] {
                let console = Console(echoesErrors: false)
                #expect(main(words, [:], console, nil) == 0, "\(name) \(words)")
                #expect(console.outputText == "TripBoard \(name) 1.0 (\(ContainerLayout.versionDetail))\n", "\(name) \(words)")
            }
        }
    }

    // MARK: - No HOME

    @Test func withoutHomeCommandsThatNeedNoContainerWork() {
        for shell in ["bash", "zsh", "fish"] {
            let console = Console(echoesErrors: false)
            #expect(AppCommand.main(arguments: ["completion", shell], environment: ["TZ": "UTC"], console: console) == 0, "\(shell)")
            #expect(console.outputText.contains("__complete"))
        }
        let help = Console(echoesErrors: false)
        #expect(AppCommand.main(arguments: ["--help"], environment: [:], console: help) == 0)
        let version = Console(echoesErrors: false)
        #expect(AppCommand.main(arguments: ["-q", "--version"], environment: [:], console: version) == 0)
    }

    @Test func withoutHomeACommandThatNeedsTheDefaultContainerIsAUsageErrorWithAHint() {
        for words in [["trip", "list"], ["trip", "add", "--name", "X", "--start", "2026-12-12", "--end", "2026-12-13"], ["container", "info"]] {
            let console = Console(echoesErrors: false)
            #expect(AppCommand.main(arguments: words, environment: ["TZ": "UTC", "HOME": "relative"], console: console) == 64, "\(words)")
            #expect(console.errorLines == ["error: cannot tell where the container is: pass --container DIR or set TRIPBOARD_CONTAINER (HOME is not set)"])
        }
    }
}
