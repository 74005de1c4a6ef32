import TripBoardStorage
import TripBoardSystem
import TripBoardModel
public import TripBoardCommandLine

/// One `app` subcommand, declared once: the words that select it, its options and arguments
/// (`Grammar`), what it does, and how it runs. Usage, help, errors, completion and the man page
/// are made from this declaration; adding a command is adding one of these to a list.
struct AppCommandSpec {
    let words: [String]
    let grammar: Grammar
    let summary: String
    let run: (CommandContext) throws -> Void
    /// Whether the command may create the container when there is none: only commands that add
    /// something new do; the others say there is no container and create nothing.
    var createsContainer = false
    /// What the command needs of the store: commands of the keychain, preferences and cache work
    /// without it (a damaged store does not lock the user out of their secrets).
    var store = StoreRequirement.required
    /// The command reads a secret (on standard input): its errors repeat none of its arguments,
    /// since a word it did not expect is most likely the secret itself.
    var takesSecrets = false
    /// What it does besides its own work (`Chore`): every command of `app` runs a writer's
    /// chores, so that whichever the user runs first moves TripBoard 1's data in, and the trash
    /// and an interrupted hashing pass are tidied by whatever runs next.
    var chores = Chore.ofAWriter

    /// `oneOf`: the options that exclude each other, each group as its alternatives
    /// (`[["--upcoming"], ["--past"], ["--from", "--to"]]`; see `ExclusiveGroup`).
    init(words: [String], options: [OptionSpec] = [], arguments: [PositionalSpec] = [], oneOf: [[[String]]] = [],
         summary: String, run: @escaping (CommandContext) throws -> Void, createsContainer: Bool = false,
         store: StoreRequirement = .required, takesSecrets: Bool = false, chores: Set<Chore> = Chore.ofAWriter) {
        self.words = words
        self.chores = chores
        grammar = Grammar(options: options, positionals: arguments, exclusiveGroups: oneOf.map(ExclusiveGroup.init))
        self.summary = summary
        self.run = run
        self.createsContainer = createsContainer
        self.store = store
        self.takesSecrets = takesSecrets
    }

    /// The command as the command model (help, usage, man page) sees it.
    var declaration: CommandSpec { CommandSpec(words: words, grammar: grammar, summary: summary) }
    var usage: String { declaration.usage }
}

/// What a command does besides its own work, declared with it (`AppCommandSpec.chores`, and
/// `share-extension`'s in `ShareCommand.openContainer`): opening the container only opens it.
enum Chore: Hashable, Sendable {
    /// Before the container is opened: move TripBoard 1's data into it, the first time
    /// (`MigrationCommand.runOnFirstLaunch`; never in an extension, which refuses instead:
    /// `FirstLaunchMigration.due`).
    case firstLaunchMigration
    /// Once it is open with its store: purge what was trashed more than 30 days ago, and finish a
    /// purge that was interrupted (`Trash.tidyUp`: deletes files of the user's, past the trash's
    /// 30 days).
    case trashPurge
    /// After the command, when it wrote to the store: finish the migration's hashing pass if it
    /// was killed (`AttachmentHashing`).
    case finishHashing

    /// A writer's: all three.
    static let ofAWriter: Set<Chore> = [.firstLaunchMigration, .trashPurge, .finishHashing]
}

/// The `app` executable: parse, run, print, exit. `main.swift` calls `AppCommand.main`.
public enum AppCommand {

    static var commands: [AppCommandSpec] {
        tripCommands + childCommands + searchCommands + attachmentCommands + trashCommands + preferenceCommands + transferCommands
            + syncCommands + syncServerCommands
            + keychainCommands + deviceCommands + containerCommands + backupCommands + shellCommands
    }

    /// The options every `app` command line takes, besides the command's own (and `-h`/`--help`).
    static let globalOptions = [CommonOptions.container, CommonOptions.quiet]

    static var program: ProgramSpec {
        ProgramSpec(name: "app", tagline: "TripBoard's trips, places, bookings, preferences and secrets",
                    description: [
                        "TripBoard keeps trips, places, bookings, attachments, preferences and secrets in one shared container that app, widget, share-extension and container-migration open at the same time.",
                        "Options may stand anywhere on the line, before or after the command words. Results go to standard output, diagnostics to standard error; a failure prints one line, error: …, and exits with a status below. `app COMMAND --help` describes one command; docs/cli.md describes them all.",
                    ],
                    globalOptions: globalOptions + [CommonOptions.help, CommonOptions.version],
                    commands: commands.map(\.declaration), grammar: Grammar(options: [], positionals: []),
                    exitStatuses: ExitStatus.appDescriptions, versionDetail: ContainerLayout.versionDetail)
    }

    /// Runs `app` with `arguments` (without the program name) and returns the exit status.
    public static func main(arguments: [String], environment: [String: String], console: Console = Console()) -> Int32 {
        do {
            try run(arguments: arguments, environment: environment, console: console)
            return console.finish(ExitStatus.success.rawValue)
        } catch {
            console.failure("error: " + message(for: error))
            return console.finish(exitStatus(for: error).rawValue)
        }
    }

    /// The app's own words where it can say what to do next; the rest as everywhere.
    static func message(for error: any Error) -> String {
        if case ContainerError.notFound(let path) = error {
            return terminalSafe("no TripBoard container at \(path); `app container init` creates one, and so does a command that adds something (such as `app trip add`)")
        }
        if Store.isDamagedPage(error) {
            return terminalSafe("the store has a damaged page (\(Store.damageDetail(error))); nothing was written, and commands that need the store refuse it from now on. Run `app container check`; `app container salvage` copies what can be read into a new store")
        }
        return errorMessage(for: error)
    }

    /// What the words ask for: one command with its parsed arguments, or (help, or a mistake)
    /// the command words given so far, which select no single command.
    enum Selection {
        case command(AppCommandSpec, Arguments)
        case incomplete(words: [String], Arguments)
    }

    /// The grammar a command's line is parsed with: its own options and the global ones.
    static func grammar(of command: AppCommandSpec) -> Grammar {
        Grammar(options: command.grammar.options + globalOptions, positionals: command.grammar.positionals,
                exclusiveGroups: command.grammar.exclusiveGroups)
    }

    /// Every option any command has (the first declaration of a name wins): how words are read
    /// when they select no command, to say which command word is wrong.
    static func unionGrammar(_ commands: [AppCommandSpec]) -> Grammar {
        var seen: Set<String> = []
        var options: [OptionSpec] = []
        for option in globalOptions + commands.flatMap(\.grammar.options) where seen.insert(option.name).inserted {
            options.append(option)
        }
        return Grammar(options: options, positionals: [])
    }

    /// Finds the command: each one parses the words with its own grammar (so that an option's
    /// value is never taken for a command word, wherever the option stands), and the one whose
    /// words come first among the positional words wins — the longest, unless only a shorter one
    /// reads the line without a mistake (`backup --output verify` writes a file named `verify`;
    /// `backup verify FILE` verifies).
    static func select(_ words: [String], among commands: [AppCommandSpec]) -> Selection {
        var best: (AppCommandSpec, Arguments)?
        func isBetter(_ command: AppCommandSpec, _ parsed: Arguments) -> Bool {
            guard let (current, currentParse) = best else { return true }
            if (parsed.mistake == nil) != (currentParse.mistake == nil) { return parsed.mistake == nil }
            return command.words.count > current.words.count
        }
        // Only the commands whose words all stand in `words`, in order: the positionals a parse
        // leaves are some of the words as given, so no other command can match. Parsing the
        // words with every grammar was 37% of a `trip add`.
        for command in commands where isSubsequence(command.words, of: words) {
            let parsed = Arguments(words, grammar: grammar(of: command), redacting: command.takesSecrets)
            if parsed.remainingPositionals.starts(with: command.words) && isBetter(command, parsed) { best = (command, parsed) }
        }
        if let (command, parsed) = best {
            var arguments = parsed
            arguments.dropCommandWords(command.words.count)
            return .command(command, arguments)
        }
        let parsed = Arguments(words, grammar: unionGrammar(commands))
        let positionals = parsed.remainingPositionals
        var matched = 0
        while matched < positionals.count,
              commands.contains(where: { $0.words.count > matched && Array($0.words.prefix(matched + 1)) == Array(positionals.prefix(matched + 1)) }) {
            matched += 1
        }
        return .incomplete(words: Array(positionals.prefix(matched + 1)), parsed)
    }

    /// Whether `part`'s words all occur in `words`, in the same order (others may stand between).
    static func isSubsequence(_ part: [String], of words: [String]) -> Bool {
        var remaining = part[...]
        for word in words where word == remaining.first {
            remaining.removeFirst()
        }
        return remaining.isEmpty
    }

    static func run(arguments words: [String], environment: [String: String], console: Console) throws {
        if asksForVersion(words) {
            return console.print(program.versionLine)
        }
        if let hidden = words.first, hidden.hasPrefix("__") {
            return try runHidden(hidden, Array(words.dropFirst()), console: console)
        }
        switch select(words, among: commands) {
        case .incomplete(let given, let arguments):
            try refuse(given, arguments, console: console)
        case .command(let command, let arguments):
            if arguments.wantsHelp { return console.print(HelpText.command(command.declaration, of: program)) }
            if arguments.flag(CommonOptions.quiet.name) { console.isQuiet = true }
            try arguments.checked()
            try LocalZone.check(environment)
            let explicitContainer = try arguments.option(CommonOptions.container.name)
            // Found when first needed: a command that needs no container (`completion`, `container
            // init DIR`) works where none can be told (no HOME); the others fail there, 64.
            let location = Result { try ContainerLocation.resolve(explicit: explicitContainer, environment: environment) }
            let context = CommandContext(arguments: arguments, environment: environment, console: console, containerLocation: location)
            context.containerIsExplicit = !(explicitContainer ?? "").isEmpty
            context.createsContainer = command.createsContainer
            context.storeRequirement = command.store
            context.chores = command.chores
            do {
                try command.run(context)
            } catch {
                context.noteFailure(error)
                throw error
            }
            context.finishPendingHashing()
        }
    }

    /// `app --version`: the flag with no command, alone or with global options (`-q --version`,
    /// `--version --container DIR`). `sync ack ID --version N` is a command's own option.
    static func asksForVersion(_ words: [String]) -> Bool {
        let parsed = Arguments(words, grammar: Grammar(options: globalOptions + [CommonOptions.version], positionals: []))
        return parsed.mistake == nil && !parsed.wantsHelp && parsed.remainingPositionals.isEmpty && parsed.flag(CommonOptions.version.name)
    }

    /// Words that select no single command: help for the commands they begin, or the mistake.
    /// `given` ends with the first word that matches no command (if any).
    static func refuse(_ given: [String], _ arguments: Arguments, console: Console) throws {
        let known = commands.filter { $0.words.starts(with: given.dropLast()) }
        let prefixMatches = commands.filter { $0.words.starts(with: given) }
        if arguments.wantsHelp {
            let shown = prefixMatches.isEmpty ? (given.count > 1 ? known : commands) : prefixMatches
            return console.print(HelpText.commandList(shown.map(\.declaration), of: program))
        }
        try arguments.checked()
        if given.isEmpty { throw CommandLineError.usage("missing command; `app --help` lists them") }
        if !prefixMatches.isEmpty {
            throw CommandLineError.usage("incomplete command '\(given.joined(separator: " "))'; try: "
                + prefixMatches.map { $0.words.joined(separator: " ") }.joined(separator: ", "))
        }
        let level = given.count - 1
        var nextWords: [String] = []
        for command in known where command.words.count > level && !nextWords.contains(command.words[level]) {
            nextWords.append(command.words[level])
        }
        var message = "unknown command '\(terminalSafe(String(given.joined(separator: " ").prefix(60))))'"
        if let suggestion = Suggestion.closest(to: given[level], among: nextWords) {
            message += " (did you mean '\((given.dropLast() + [suggestion]).joined(separator: " "))'?)"
        }
        throw CommandLineError.usage(message + "; try one of: " + nextWords.sorted().joined(separator: ", "))
    }

    /// Commands for the shell, not listed in help: `__complete PROGRAM -- WORDS…` prints what may
    /// follow (the completion scripts call it), `__man PROGRAM` prints a man page (`tools/man`).
    static func runHidden(_ name: String, _ words: [String], console: Console) throws {
        guard let programName = words.first, let program = Programs.named(programName) else {
            throw CommandLineError.usage("\(name) needs a program: app, widget, share-extension or container-migration")
        }
        switch name {
        case "__complete":
            var rest = Array(words.dropFirst())
            if rest.first == "--" { rest.removeFirst() }
            for line in Completion.candidates(program, words: rest) { console.print(line) }
        case "__man":
            console.write(Array(ManPage.render(program).utf8))
        default:
            throw CommandLineError.usage("unknown command '\(terminalSafe(String(name.prefix(60))))'")
        }
    }
}
