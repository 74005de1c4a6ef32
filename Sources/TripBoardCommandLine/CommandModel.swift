import TripBoardSystem
/// The command model every executable's command line is declared in: each command and option
/// once, with its arity, value name and help. Parsing, usage lines, `--help`, errors, did-you-mean
/// suggestions, shell completion and the man pages are all made from it, so they cannot disagree.

/// What the shell may complete for a value.
package enum ValueCompletion: Equatable, Sendable {
    /// Free text: nothing to offer.
    case none
    case file
    case directory
    /// One of these words.
    case choices([String])
}

/// One option: `--name VALUE` (a value option) or `--name` (a flag).
package struct OptionSpec: Equatable, Sendable {
    package let name: String
    /// `-q` for `--quiet`, where there is one.
    package var short: String?
    /// `NAME` in `--name NAME`; `nil` for a flag.
    package let valueName: String?
    package let help: String
    package var isRequired = false
    package var completion = ValueCompletion.none

    package var takesValue: Bool { valueName != nil }

    /// A flag: `--json`.
    package static func flag(_ name: String, short: String? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, valueName: nil, help: help)
    }

    /// An option with a value: `--name NAME`.
    package static func value(_ name: String, _ valueName: String, _ help: String, required: Bool = false,
                      completion: ValueCompletion = .none) -> OptionSpec {
        OptionSpec(name: name, short: nil, valueName: valueName, help: help, isRequired: required, completion: completion)
    }

    /// An option whose value is one of `choices` (`--sort start|name|updated`).
    package static func choice(_ name: String, _ choices: [String], _ help: String, required: Bool = false) -> OptionSpec {
        OptionSpec(name: name, short: nil, valueName: choices.joined(separator: "|"), help: help, isRequired: required,
                   completion: .choices(choices))
    }

    /// How the option reads in a usage line: `--name NAME`, `[--json]`.
    package var synopsis: String { isRequired ? bareSynopsis : "[\(bareSynopsis)]" }

    /// `--name NAME`, `--json`: without brackets.
    package var bareSynopsis: String { valueName.map { "\(name) \($0)" } ?? name }

    /// How the option reads in a help list: `-q, --quiet`, `--name NAME`.
    package var label: String { (short.map { $0 + ", " } ?? "") + name + (valueName.map { " " + $0 } ?? "") }

    // MARK: - Options several commands share

    package static let json = flag("--json", "print the result as JSON (docs/cli.md, JSON output contract)")
    package static let yes = flag("--yes", "do not ask first (without a terminal nothing is asked anyway)")
    package static let limit = value("--limit", "N", "print at most N (a whole number from 1 on)")
    package static func trip(required: Bool, _ help: String = "the trip (an id or a unique prefix of one)") -> OptionSpec {
        value("--trip", "ID", help, required: required)
    }
}

/// One positional argument: `ID`, `[DIR]`, `TEXT...`.
package struct PositionalSpec: Equatable, Sendable {
    package let name: String
    package let help: String
    package var isOptional = false
    /// Takes every remaining word (`search TEXT...`).
    package var isRepeated = false
    package var completion = ValueCompletion.none

    package static func required(_ name: String, _ help: String, completion: ValueCompletion = .none) -> PositionalSpec {
        PositionalSpec(name: name, help: help, completion: completion)
    }

    package static func optional(_ name: String, _ help: String, completion: ValueCompletion = .none) -> PositionalSpec {
        PositionalSpec(name: name, help: help, isOptional: true, completion: completion)
    }

    package static func repeated(_ name: String, _ help: String) -> PositionalSpec {
        PositionalSpec(name: name, help: help, isRepeated: true)
    }

    package var synopsis: String {
        let bare = name + (isRepeated ? "..." : "")
        return isOptional ? "[\(bare)]" : bare
    }
}

/// Options that exclude each other, declared once: `trip list`'s `[--upcoming | --past | --from D --to D]`.
/// Each alternative is one or more (optional) options that may be given together; options of two
/// alternatives on one line are a usage error made from this declaration.
package struct ExclusiveGroup: Equatable, Sendable {
    /// The alternatives, each the names of its options (`["--from", "--to"]`).
    package let alternatives: [[String]]

    package init(_ alternatives: [[String]]) {
        self.alternatives = alternatives
    }

    /// Every option name of the group.
    package var names: [String] { alternatives.flatMap { $0 } }

    /// The error for `given` (option names on the line), when they come from two alternatives:
    /// "--upcoming and --past exclude each other", each named by the first of its alternative's
    /// options that was given, in the order of the declaration.
    package func conflict(among given: Set<String>) -> String? {
        let named = alternatives.compactMap { alternative in alternative.first(where: given.contains) }
        guard named.count >= 2 else { return nil }
        return "\(named[0]) and \(named[1]) exclude each other"
    }
}

/// The grammar of one command line: its options and positional arguments.
package struct Grammar: Sendable {
    package var options: [OptionSpec]
    package var positionals: [PositionalSpec]
    /// Sets of options that exclude each other (see `ExclusiveGroup`).
    package var exclusiveGroups: [ExclusiveGroup]

    package init(options: [OptionSpec], positionals: [PositionalSpec], exclusiveGroups: [ExclusiveGroup] = []) {
        self.options = options
        self.positionals = positionals
        self.exclusiveGroups = exclusiveGroups
        for group in exclusiveGroups {
            for name in group.names {
                assert(options.contains { $0.name == name && !$0.isRequired }, "\(name) in a one-of group must be an optional option of the grammar")
            }
        }
    }

    /// The option named `word` exactly (`--name`, or its short form `-q`).
    package func option(named word: String) -> OptionSpec? {
        options.first { $0.name == word || $0.short == word }
    }

    /// The group `name` belongs to, if any.
    package func exclusiveGroup(of name: String) -> ExclusiveGroup? {
        exclusiveGroups.first { $0.names.contains(name) }
    }

    /// The options as a usage line shows them, in their order, a one-of group standing where its
    /// first option is declared; `render(option, inGroup)` writes one option (`inGroup`: without
    /// the brackets of an optional one), `bracket` a whole group.
    package func synopsisItems(_ render: (OptionSpec, _ inGroup: Bool) -> String,
                               bracket: (String) -> String = { "[" + $0 + "]" }) -> [String] {
        var items: [String] = []
        var shownGroups: [ExclusiveGroup] = []
        for option in options {
            guard let group = exclusiveGroup(of: option.name) else {
                items.append(render(option, false))
                continue
            }
            guard !shownGroups.contains(group) else { continue }
            shownGroups.append(group)
            let alternatives = group.alternatives.map { names in
                names.compactMap { name in self.option(named: name).map { render($0, true) } }.joined(separator: " ")
            }
            items.append(bracket(alternatives.joined(separator: " | ")))
        }
        return items
    }

    /// The positional arguments, then the options, as a usage line shows them.
    package var synopsis: String {
        (positionals.map(\.synopsis) + synopsisItems { option, inGroup in inGroup ? option.bareSynopsis : option.synopsis })
            .joined(separator: " ")
    }
}

/// The options every executable takes, besides its own.
package enum CommonOptions {
    package static let help = OptionSpec.flag("--help", short: "-h", "print this help and exit; nothing is read or written")
    package static let quiet = OptionSpec.flag("--quiet", short: "-q",
                                       "say nothing but errors, warnings and the result asked for (for scripts)")
    package static let version = OptionSpec.flag("--version", "print the version and exit")
    package static let container = OptionSpec.value("--container", "DIR",
                                            "the container (else $TRIPBOARD_CONTAINER, else $XDG_DATA_HOME/tripboard/shared-container)",
                                            completion: .directory)
}

/// One executable as the model describes it: `app` has commands; the others are one command.
package struct ProgramSpec {
    package let name: String
    /// The man page's NAME line: what it is, in a few words.
    package let tagline: String
    /// What it does, in paragraphs.
    package let description: [String]
    /// The options every command line of this program takes (`--container`, `--quiet`, `--help`).
    package let globalOptions: [OptionSpec]
    /// `app`'s commands; empty for a single-command program.
    package let commands: [CommandSpec]
    /// A single-command program's own options and arguments.
    package let grammar: Grammar
    /// The exit statuses, one line each: `64  usage: …`.
    package let exitStatuses: [String]
    /// What `--version` prints after the name and the version number: the store schema and
    /// container layout a program that opens the container was built for.
    package let versionDetail: String?

    package init(name: String, tagline: String, description: [String], globalOptions: [OptionSpec], commands: [CommandSpec],
                 grammar: Grammar, exitStatuses: [String], versionDetail: String?) {
        self.name = name
        self.versionDetail = versionDetail
        self.tagline = tagline
        self.description = description
        self.globalOptions = globalOptions
        self.commands = commands
        self.grammar = grammar
        self.exitStatuses = exitStatuses
    }

    package var isSingleCommand: Bool { commands.isEmpty }

    /// TripBoard's version, the same for every program.
    package static let version = "1.0"

    /// `--version`'s line: `TripBoard widget 1.0 (store schema 14, layout 2)`.
    package var versionLine: String {
        "TripBoard \(name) \(Self.version)" + (versionDetail.map { " (\($0))" } ?? "")
    }
}

/// One command of a program that has several (`app trip add`), as the command model sees it: the
/// words that select it, its options and arguments, and what it does. How it runs is the
/// executable's own business (`AppCommandSpec` in TripBoardCLI keeps that beside it).
package struct CommandSpec {
    package let words: [String]
    package let grammar: Grammar
    package let summary: String

    package init(words: [String], grammar: Grammar, summary: String) {
        self.words = words
        self.grammar = grammar
        self.summary = summary
    }

    /// `trip add --name NAME … [--json]`: the words, then the grammar's synopsis.
    package var usage: String { (words + [grammar.synopsis]).filter { !$0.isEmpty }.joined(separator: " ") }
}
