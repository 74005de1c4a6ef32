import TripBoardStorage

/// The frame the single-command executables (`widget`, `share-extension`, `container-migration`)
/// share: `--help` prints `usage` and touches nothing; `--container` and the environment give
/// the container's path; an error becomes one `error:` line and its exit status; output is
/// flushed whatever happens.
enum SingleCommand {
    static func main(arguments words: [String], environment: [String: String], console: Console, usage: String,
                     message: (any Error) -> String = errorMessage(for:),
                     body: (inout Arguments, _ containerPath: String) throws -> Int32) -> Int32 {
        defer { console.flush() }
        do {
            var arguments = Arguments(words)
            if arguments.wantsHelp() {
                console.print(usage)
                return ExitStatus.success.rawValue
            }
            let containerPath = try ContainerLocation.resolve(explicit: try arguments.option("--container"), environment: environment)
            return try body(&arguments, containerPath)
        } catch {
            console.diagnostic("error: " + message(error))
            return exitStatus(for: error).rawValue
        }
    }
}
