import TripBoardStorage
import TripBoardSystem
public import TripBoardCommandLine

extension AppCommand {
    /// Runs `app` with the command line as the kernel passed it (`ProcessSetup.rawArguments()`).
    /// An argument that is not valid UTF-8 is refused (65) before anything is touched
    /// (`ProgramStart.words`), as by every executable.
    public static func main(rawArguments: [[UInt8]], environment: [String: String], console: Console = Console()) -> Int32 {
        guard let arguments = ProgramStart.words(rawArguments, console: console) else { return ExitStatus.dataError.rawValue }
        return main(arguments: arguments, environment: environment, console: console)
    }
}
