import TripBoardSystem
/// The command model every executable's command line is declared in: each command and option
/// once, with its arity, value name and help. Parsing, usage lines, `--help`, errors, did-you-mean
/// suggestions, shell completion and the man pages are all made from it, so they cannot disagree.

/// What the shell may complete for a value.
enum ValueCompletion: Equatable, Sendable {
    /// Free text: nothing to offer.
    case none
    case file
    case directory
    /// One of these words.
    case choices([String])
}

/// One option: `--name VALUE` (a value option) or `--name` (a flag).
struct OptionSpec: Equatable, Sendable {
    let name: String
    /// `-q` for `--quiet`, where there is one.
    var short: String?
    /// `NAME` in `--name NAME`; `nil` for a flag.
    let valueName: String?
    let help: String
    var isRequired = false
    var completion = ValueCompletion.none

    var takesValue: Bool { valueName != nil }

    /// A flag: `--json`.
    static func flag(_ name: String, short: String? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, valueName: nil, help: help)
    }

    /// An option with a value: `--name NAME`.
    static func value(_ name: String, _ valueName: String, _ help: String, required: Bool = false,
                      completion: ValueCompletion = .none) -> OptionSpec {
        OptionSpec(name: name, short: nil, valueName: valueName, help: help, isRequired: required, completion: completion)
    }

    /// An option whose value is one of `choices` (`--sort start|name|updated`).
    static func choice(_ name: String, _ choices: [String], _ help: String, required: Bool = false) -> OptionSpec {
        OptionSpec(name: name, short: nil, valueName: choices.joined(separator: "|"), help: help, isRequired: required,
                   completion: .choices(choices))
    }

    /// How the option reads in a usage line: `--name NAME`, `[--json]`.
    var synopsis: String {
        let bare = valueName.map { "\(name) \($0)" } ?? name
        return isRequired ? bare : "[\(bare)]"
    }

    /// How the option reads in a help list: `-q, --quiet`, `--name NAME`.
    var label: String { (short.map { $0 + ", " } ?? "") + name + (valueName.map { " " + $0 } ?? "") }

    // MARK: - Options several commands share

    static let json = flag("--json", "print the result as JSON (docs/cli.md, JSON output contract)")
    static let yes = flag("--yes", "do not ask first (without a terminal nothing is asked anyway)")
    static let limit = value("--limit", "N", "print at most N (a whole number from 1 on)")
    static func trip(required: Bool, _ help: String = "the trip (an id or a unique prefix of one)") -> OptionSpec {
        value("--trip", "ID", help, required: required)
    }
}

/// One positional argument: `ID`, `[DIR]`, `TEXT...`.
struct PositionalSpec: Equatable, Sendable {
    let name: String
    let help: String
    var isOptional = false
    /// Takes every remaining word (`search TEXT...`).
    var isRepeated = false
    var completion = ValueCompletion.none

    static func required(_ name: String, _ help: String, completion: ValueCompletion = .none) -> PositionalSpec {
        PositionalSpec(name: name, help: help, completion: completion)
    }

    static func optional(_ name: String, _ help: String, completion: ValueCompletion = .none) -> PositionalSpec {
        PositionalSpec(name: name, help: help, isOptional: true, completion: completion)
    }

    static func repeated(_ name: String, _ help: String) -> PositionalSpec {
        PositionalSpec(name: name, help: help, isRepeated: true)
    }

    var synopsis: String {
        let bare = name + (isRepeated ? "..." : "")
        return isOptional ? "[\(bare)]" : bare
    }
}

/// The grammar of one command line: its options and positional arguments.
struct Grammar: Sendable {
    var options: [OptionSpec]
    var positionals: [PositionalSpec]

    /// The option named `word` exactly (`--name`, or its short form `-q`).
    func option(named word: String) -> OptionSpec? {
        options.first { $0.name == word || $0.short == word }
    }

    /// The options, then the positional arguments, as a usage line shows them.
    var synopsis: String {
        (positionals.map(\.synopsis) + options.map(\.synopsis)).joined(separator: " ")
    }
}

/// The options every executable takes, besides its own.
enum CommonOptions {
    static let help = OptionSpec.flag("--help", short: "-h", "print this help and exit; nothing is read or written")
    static let quiet = OptionSpec.flag("--quiet", short: "-q",
                                       "say nothing but errors, warnings and the result asked for (for scripts)")
    static let version = OptionSpec.flag("--version", "print the version and exit")
    static let container = OptionSpec.value("--container", "DIR",
                                            "the container (else $TRIPBOARD_CONTAINER, else $XDG_DATA_HOME/tripboard/shared-container)",
                                            completion: .directory)
}

/// One executable as the model describes it: `app` has commands; the others are one command.
struct ProgramSpec {
    let name: String
    /// The man page's NAME line: what it is, in a few words.
    let tagline: String
    /// What it does, in paragraphs.
    let description: [String]
    /// The options every command line of this program takes (`--container`, `--quiet`, `--help`).
    let globalOptions: [OptionSpec]
    /// `app`'s commands; empty for a single-command program.
    let commands: [CommandSpec]
    /// A single-command program's own options and arguments.
    let grammar: Grammar
    /// The exit statuses, one line each: `64  usage: …`.
    let exitStatuses: [String]

    var isSingleCommand: Bool { commands.isEmpty }
}
