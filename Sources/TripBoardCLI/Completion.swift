import TripBoardStorage
import TripBoardSystem
import TripBoardCommandLine

/// Shell completion, made from the command model. The scripts `app completion SHELL` prints are
/// small and fixed: on each Tab they run `app __complete PROGRAM -- WORDS…` (the words typed
/// after the program, the last one being completed, maybe empty), which prints one candidate a
/// line — or `:file` or `:directory` when the shell should complete a path itself.
enum Completion {
    static let fileDirective = ":file"
    static let directoryDirective = ":directory"

    /// What may stand for the last of `words`, given the ones before it.
    static func candidates(_ program: ProgramSpec, words: [String]) -> [String] {
        let current = words.last ?? ""
        let before = Array(words.dropLast())
        if before.contains("--") { return [] }
        let grammar: Grammar
        let offered: [OptionSpec]
        var positionalsSoFar: [String]
        var command: AppCommandSpec?
        if program.isSingleCommand {
            grammar = ProgramStart.grammar(of: program)
            offered = grammar.options
            positionalsSoFar = Arguments(before, grammar: grammar).remainingPositionals
        } else {
            switch AppCommand.select(before, among: AppCommand.commands) {
            case .command(let selected, let arguments):
                command = selected
                grammar = AppCommand.grammar(of: selected)
                offered = grammar.options
                positionalsSoFar = arguments.remainingPositionals
            case .incomplete(let given, _):
                grammar = AppCommand.unionGrammar(AppCommand.commands)
                offered = AppCommand.globalOptions
                positionalsSoFar = given
            }
        }
        // A value is expected: the option before wants one.
        if let last = before.last, let option = grammar.option(named: last), option.takesValue {
            return values(option.completion, current)
        }
        if current.hasPrefix("-") {
            let given = Set(before.map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? $0 })
            // Options of a one-of group that exclude one already given are not offered.
            let excluded = Set(grammar.exclusiveGroups.flatMap { group in
                group.alternatives.contains { $0.contains(where: given.contains) }
                    ? group.alternatives.filter { !$0.contains(where: given.contains) }.flatMap { $0 } : []
            })
            let names = (offered + [CommonOptions.help])
                .filter { ($0.takesValue || !given.contains($0.name)) && !excluded.contains($0.name) }.map(\.name)
            return names.filter { $0.hasPrefix(current) }.sorted()
        }
        if program.isSingleCommand || command != nil {
            let positionals = program.isSingleCommand ? program.grammar.positionals : command?.grammar.positionals ?? []
            guard let spec = positionals.indices.contains(positionalsSoFar.count) ? positionals[positionalsSoFar.count]
                    : positionals.last(where: \.isRepeated) else { return [] }
            return values(spec.completion, current)
        }
        // Command words: those that may follow the ones given.
        let level = positionalsSoFar.count
        var next: [String] = []
        for candidate in program.commands where candidate.words.count > level && candidate.words.starts(with: positionalsSoFar) {
            let word = candidate.words[level]
            if word.hasPrefix(current) && !next.contains(word) { next.append(word) }
        }
        return next.sorted()
    }

    static func values(_ completion: ValueCompletion, _ current: String) -> [String] {
        switch completion {
        case .none: []
        case .file: [fileDirective]
        case .directory: [directoryDirective]
        case .choices(let choices): choices.filter { $0.hasPrefix(current) }
        }
    }

    static let programNames = ["app", "widget", "share-extension", "container-migration"]

    /// The script for `shell` (`bash`, `zsh` or `fish`); nil for another shell.
    static func script(for shell: String) -> String? {
        switch shell {
        case "bash": bash
        case "zsh": zsh
        case "fish": fish
        default: nil
        }
    }

    static let bash = """
        # TripBoard completion for bash: source <(app completion bash)
        _tripboard_complete() {
            local current="${COMP_WORDS[COMP_CWORD]}" program="${COMP_WORDS[0]##*/}"
            local IFS=$'\\n'
            local candidates=($(app __complete "$program" -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
            case "${candidates[0]}" in
                :file) COMPREPLY=($(compgen -f -- "$current")) ;;
                :directory) COMPREPLY=($(compgen -d -- "$current")) ;;
                *) COMPREPLY=("${candidates[@]}") ;;
            esac
        }
        complete -o filenames -F _tripboard_complete \(programNames.joined(separator: " "))

        """

    static let zsh = """
        #compdef \(programNames.joined(separator: " "))
        # TripBoard completion for zsh: source <(app completion zsh), or save as _tripboard in $fpath
        _tripboard_complete() {
            local -a candidates
            candidates=("${(@f)$(app __complete "${words[1]:t}" -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
            case "${candidates[1]}" in
                :file) _files ;;
                :directory) _files -/ ;;
                *) (( ${#candidates} )) && [[ -n "${candidates[1]}" ]] && compadd -- "${candidates[@]}" ;;
            esac
        }
        compdef _tripboard_complete \(programNames.joined(separator: " "))

        """

    static let fish = """
        # TripBoard completion for fish: app completion fish | source
        function __tripboard_complete
            set -l tokens (commandline -opc)
            set -l program (basename -- $tokens[1])
            set -l candidates (app __complete $program -- $tokens[2..-1] (commandline -ct) 2>/dev/null)
            switch "$candidates[1]"
                case :file
                    __fish_complete_path (commandline -ct)
                case :directory
                    __fish_complete_directories (commandline -ct)
                case '*'
                    printf '%s\\n' $candidates
            end
        end
        \(programNames.map { "complete -c \($0) -f -a '(__tripboard_complete)'" }.joined(separator: "\n"))

        """
}

extension AppCommand {
    static var shellCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["completion"],
                        arguments: [.required("SHELL", "bash, zsh or fish", completion: .choices(["bash", "zsh", "fish"]))],
                        summary: """
                        Prints the shell completion script for app, widget, share-extension and container-migration: \
                        commands, options and their values, made from the same declarations as --help. bash: \
                        source <(app completion bash); zsh: source <(app completion zsh); fish: app completion fish | source.
                        """, run: printCompletion, store: .none),
        ]
    }

    static func printCompletion(_ context: CommandContext) throws {
        let shell = try context.arguments.positional("SHELL (bash, zsh or fish)")
        try context.finishArguments()
        guard let script = Completion.script(for: shell) else {
            throw CommandLineError.usage("no completion for '\(terminalSafe(String(shell.prefix(40))))': use bash, zsh or fish")
        }
        context.console.write(Array(script.utf8))
    }
}
