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
        console.finish(run(words, environment: environment, console: console, program: program, locate: locate, message: message,
                           status: status, body: body))
    }

    private static func run(_ words: [String], environment: [String: String], console: Console, program: ProgramSpec,
                            locate: (_ explicit: String?, _ environment: [String: String]) throws -> String,
                            message: (any Error) -> String, status: (any Error) -> ExitStatus,
                            body: (inout Arguments, _ containerPath: String) throws -> Int32) -> Int32 {
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

extension ProgramStart {
    /// The command line as the kernel passed it (`ProcessSetup.rawArguments()`), each word valid
    /// UTF-8; else an error naming the first that is not (65), by position only (it may be a
    /// secret typed in the wrong place). Words are refused rather than repaired: Swift's repair
    /// turns every invalid sequence into U+FFFD, so `a\xFF` and `a\xFE` would name the same
    /// file, trip or keychain service, and a file named so would be another file.
    package static func words(_ raw: [[UInt8]]) throws(CommandLineError) -> [String] {
        var words: [String] = []
        words.reserveCapacity(raw.count)
        for (index, bytes) in raw.enumerated() {
            guard let word = String(validating: bytes, as: UTF8.self) else {
                throw CommandLineError(.dataError, "argument \(index + 1) is not valid UTF-8; TripBoard takes its arguments as UTF-8 text, exactly as given (nothing was changed)")
            }
            words.append(word)
        }
        return words
    }
}

extension ProgramStart {
    /// `words(raw)`, or nil once the error is printed on `console`.
    package static func words(_ raw: [[UInt8]], console: Console) -> [String]? {
        do {
            return try ProgramStart.words(raw)
        } catch {
            console.failure("error: " + error.message)
            console.flush()
            return nil
        }
    }
}
