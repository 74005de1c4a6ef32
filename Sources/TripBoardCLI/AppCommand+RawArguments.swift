import TripBoardStorage
import TripBoardSystem
public import TripBoardCommandLine

extension AppCommand {
    /// Runs `app` with the command line as the kernel passed it (`ProcessSetup.rawArguments()`).
    /// An argument that is not valid UTF-8 is refused (65) before anything is touched, rather than
    /// repaired: Swift's repair turns every invalid sequence into U+FFFD, so `a\xFF` and `a\xFE`
    /// would name the same keychain service (or trip, or file) and one would overwrite the other.
    public static func main(rawArguments: [[UInt8]], environment: [String: String], console: Console = Console()) -> Int32 {
        var arguments: [String] = []
        for (index, bytes) in rawArguments.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                // The position only: the argument may be a secret typed in the wrong place.
                console.failure("error: argument \(index + 1) is not valid UTF-8; TripBoard takes its arguments as UTF-8 text, exactly as given (nothing was changed)")
                console.flush()
                return ExitStatus.dataError.rawValue
            }
            arguments.append(text)
        }
        return main(arguments: arguments, environment: environment, console: console)
    }
}
