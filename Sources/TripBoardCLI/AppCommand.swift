import TripBoardStorage

/// One `app` subcommand: the words that select it, its usage line, and what it does.
struct CommandSpec {
    let words: [String]
    let usage: String
    let summary: String
    let run: (CommandContext) throws -> Void
    /// Whether the command may create the container when there is none: only commands that add
    /// something new do; the others say there is no container and create nothing.
    var createsContainer = false
    /// What the command needs of the store: commands of the keychain, preferences and cache work
    /// without it (a damaged store does not lock the user out of their secrets).
    var store = StoreRequirement.required
}

/// The `app` executable: parse, run, print, exit. `main.swift` calls `AppCommand.main`.
public enum AppCommand {
    static let version = "TripBoard app 1.0 (store schema \(Store.schemaVersion), layout \(ContainerLayout.version))"

    static var commands: [CommandSpec] {
        tripCommands + childCommands + searchCommands + attachmentCommands + trashCommands + preferenceCommands + transferCommands
            + syncCommands + syncServerCommands
            + keychainCommands + containerCommands + backupCommands
    }

    /// Runs `app` with `arguments` (without the program name) and returns the exit status.
    public static func main(arguments: [String], environment: [String: String], console: Console = Console()) -> Int32 {
        defer { console.flush() }
        do {
            try run(arguments: arguments, environment: environment, console: console)
            return ExitStatus.success.rawValue
        } catch {
            console.diagnostic("error: " + message(for: error))
            return exitStatus(for: error).rawValue
        }
    }

    /// The app's own words where it can say what to do next; the rest as everywhere.
    static func message(for error: any Error) -> String {
        if case ContainerError.notFound(let path) = error {
            return terminalSafe("no TripBoard container at \(path); `app container init` creates one, and so does a command that adds something (such as `app trip add`)")
        }
        if let error = error as? SQLiteError, error.isCorruption {
            return terminalSafe("the store has a damaged page (\(error.message)); nothing was written, and commands that need the store refuse it from now on. Run `app container check`; `app container salvage` copies what can be read into a new store")
        }
        return errorMessage(for: error)
    }

    static func run(arguments words: [String], environment: [String: String], console: Console) throws {
        var arguments = Arguments(words)
        let explicitContainer = try arguments.option("--container")
        let wantsHelp = arguments.wantsHelp()
        if words == ["--version"] {
            console.print(version)
            return
        }
        var selected: [String] = []
        var candidates = commands
        while let next = candidates.first(where: { $0.words.count > selected.count }), !next.words.isEmpty {
            let copy = arguments
            guard let word = arguments.nextPositional() else { break }
            let narrowed = candidates.filter { $0.words.count > selected.count && $0.words[selected.count] == word }
            if narrowed.isEmpty {
                arguments = copy
                if wantsHelp { break }
                let known = Set(candidates.compactMap { $0.words.count > selected.count ? $0.words[selected.count] : nil })
                throw CommandLineError.usage("unknown command '\((selected + [word]).joined(separator: " ").prefix(60))'; try one of: \(known.sorted().joined(separator: ", "))")
            }
            selected.append(word)
            candidates = narrowed
            if candidates.count == 1 && candidates[0].words.count == selected.count { break }
        }
        guard candidates.count == 1, candidates[0].words == selected else {
            if wantsHelp {
                return printHelp(console: console, commands: selected.isEmpty ? commands : candidates)
            }
            if selected.isEmpty { throw CommandLineError.usage("missing command; `app --help` lists them") }
            throw CommandLineError.usage("incomplete command '\(selected.joined(separator: " "))'; try: "
                + candidates.map { $0.words.joined(separator: " ") }.joined(separator: ", "))
        }
        let command = candidates[0]
        if wantsHelp {
            console.print("usage: app [--container DIR] \(command.usage)")
            console.print()
            console.print(command.summary)
            return
        }
        let containerPath = try ContainerLocation.resolve(explicit: explicitContainer, environment: environment)
        let context = CommandContext(arguments: arguments, environment: environment, console: console, containerPath: containerPath)
        context.createsContainer = command.createsContainer
        context.storeRequirement = command.store
        do {
            try command.run(context)
        } catch {
            context.noteFailure(error)
            throw error
        }
        context.finishPendingHashing()
    }

    static func printHelp(console: Console, commands: [CommandSpec]) {
        console.print("usage: app [--container DIR] COMMAND [OPTIONS]")
        console.print()
        console.print("TripBoard: trips, places, bookings and preferences in the shared container.")
        console.print("The container is --container DIR, else $TRIPBOARD_CONTAINER, else $XDG_DATA_HOME/tripboard/shared-container.")
        console.print()
        console.print("commands:")
        for command in commands {
            console.print("  app " + command.usage)
        }
        console.print()
        console.print("`app COMMAND --help` describes one command. Exit statuses: 0 ok, 64 usage, 65 bad data,")
        console.print("66 not found, 73 cannot create, 74 I/O error, 75 busy (try again). See docs/cli.md.")
    }
}
