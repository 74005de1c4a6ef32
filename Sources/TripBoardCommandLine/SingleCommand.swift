package import TripBoardSystem

/// The frame the single-command executables (`widget`, `share-extension`, `container-migration`)
/// share: the words are parsed against the program's declared grammar (`ProgramStart`); `--help`
/// prints the help made from it and touches nothing; `--version` prints the version; `-q` quiets
/// informational lines; `--container` and the environment give the container's path (`locate`);
/// an error becomes one `error:` line and its exit status; output is flushed whatever happens.
package enum SingleCommand {
    package static func main(arguments words: [String], environment: [String: String], console: Console, program: ProgramSpec,
                             locate: (_ explicit: String?, _ environment: [String: String]) throws -> String,
                             message: (any Error) -> String = errorMessage(for:), status: (any Error) -> ExitStatus,
                             body: (inout Arguments, _ containerPath: String) throws -> Int32) -> Int32 {
        defer { console.flush() }
        do {
            var arguments: Arguments
            switch try ProgramStart.parse(words, of: program) {
            case .help(let text):
                console.print(text)
                return ExitStatus.success.rawValue
            case .version(let line):
                console.print(line)
                return ExitStatus.success.rawValue
            case .run(let parsed):
                arguments = parsed
            }
            if arguments.flag(CommonOptions.quiet.name) { console.isQuiet = true }
            try LocalZone.check(environment)
            let containerPath = try locate(try arguments.option(CommonOptions.container.name), environment)
            return try body(&arguments, containerPath)
        } catch {
            console.failure("error: " + message(error))
            return status(error).rawValue
        }
    }

    /// The options every single-command program takes besides its own.
    package static let globalOptions = [CommonOptions.container, CommonOptions.quiet, CommonOptions.help, CommonOptions.version]
}

/// How every executable's command line starts, `app`'s excepted (whose first words choose a
/// command): its words parsed against the program's grammar and the common options; `--help`
/// (or `-h`, anywhere) asks for the help made from the declaration, `--version` for the version
/// line; anything else runs, once the words are checked.
package enum ProgramStart {
    package enum Outcome {
        case help(String)
        case version(String)
        case run(Arguments)
    }

    package static func parse(_ words: [String], of program: ProgramSpec) throws -> Outcome {
        let arguments = Arguments(words, grammar: grammar(of: program))
        if arguments.wantsHelp { return .help(HelpText.single(program)) }
        try arguments.checked()
        if arguments.flag(CommonOptions.version.name) { return .version(program.versionLine) }
        return .run(arguments)
    }

    /// The program's own options and arguments with its global ones (help is always understood).
    package static func grammar(of program: ProgramSpec) -> Grammar {
        Grammar(options: program.grammar.options + program.globalOptions.filter { $0 != CommonOptions.help },
                positionals: program.grammar.positionals, exclusiveGroups: program.grammar.exclusiveGroups)
    }
}
