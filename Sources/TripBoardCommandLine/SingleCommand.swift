import TripBoardSystem
import TripBoardModel

/// The frame the single-command executables (`widget`, `share-extension`, `container-migration`)
/// share: the words are parsed against the program's declared grammar; `--help` prints the help
/// made from it and touches nothing; `--version` prints the version; `-q` quiets informational
/// lines; `--container` and the environment give the container's path; an error becomes one
/// `error:` line and its exit status; output is flushed whatever happens.
package enum SingleCommand {
    package static func main(arguments words: [String], environment: [String: String], console: Console, program: ProgramSpec,
                     message: (any Error) -> String = errorMessage(for:), status: (any Error) -> ExitStatus,
                     body: (inout Arguments, _ containerPath: String) throws -> Int32) -> Int32 {
        defer { console.flush() }
        do {
            var arguments = Arguments(words, grammar: grammar(of: program))
            if arguments.wantsHelp {
                console.print(HelpText.single(program))
                return ExitStatus.success.rawValue
            }
            try arguments.checked()
            if arguments.flag(CommonOptions.version.name) {
                console.print(versionLine(of: program.name))
                return ExitStatus.success.rawValue
            }
            if arguments.flag(CommonOptions.quiet.name) { console.isQuiet = true }
            try LocalZone.check(environment)
            let containerPath = try ContainerLocation.resolve(explicit: try arguments.option(CommonOptions.container.name), environment: environment)
            return try body(&arguments, containerPath)
        } catch {
            console.failure("error: " + message(error))
            return status(error).rawValue
        }
    }

    /// `--version`'s line of every program, `app` included: the schema and layout numbers come
    /// from `Schema.migrations` and `ContainerLayout`, never written out by hand.
    package static func versionLine(of name: String) -> String {
        "TripBoard \(name) 1.0 (store schema \(Schema.currentVersion), layout \(ContainerLayout.version))"
    }

    /// The options every single-command program takes besides its own.
    package static let globalOptions = [CommonOptions.container, CommonOptions.quiet, CommonOptions.help, CommonOptions.version]

    /// The program's own options and arguments with the common ones (help is always understood).
    package static func grammar(of program: ProgramSpec) -> Grammar {
        Grammar(options: program.grammar.options + program.globalOptions.filter { $0 != CommonOptions.help },
                positionals: program.grammar.positionals, exclusiveGroups: program.grammar.exclusiveGroups)
    }
}
