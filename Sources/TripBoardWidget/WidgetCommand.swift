package import TripBoardSystem
package import TripBoardModel
import TripBoardDevice
public import TripBoardCommandLine

/// The `widget` executable: prints the next trip. Read-only, fast, never creates a file, never
/// blocks the app: it waits at most ~250 ms for the container lock, then shows a placeholder.
public enum WidgetCommand {
    /// The environment variables the widget reads; it looks at no others.
    public static let environmentNames = ["TRIPBOARD_CONTAINER", "XDG_DATA_HOME", "HOME", "LC_ALL", "LC_CTYPE", "LANG",
                                          "NO_COLOR", "TERM", "TZ", "TRIPBOARD_DEVICE_DIR", "XDG_STATE_HOME", "TRIPBOARD_KEYRING",
                                          "TRIPBOARD_MACHINE_ID_FILE"]

    /// How long the widget waits for the shared lock before showing "updating".
    package static let lockTimeout = 0.25

    /// `main(arguments:…)` with the command line as the kernel passed it: a word that is not
    /// valid UTF-8 is refused (65) before anything is touched (`ProgramStart.words`).
    public static func main(rawArguments: [[UInt8]], environment: [String: String], console: Console = Console()) -> Int32 {
        guard let words = ProgramStart.words(rawArguments, console: console) else { return ExitStatus.dataError.rawValue }
        return main(arguments: words, environment: environment, console: console)
    }

    /// Runs `widget` with `arguments` (without the program name) and returns the exit status, for the
    /// process to exit with: a one-shot answer leaves its store connection open (`--watch` closes
    /// what it opens).
    public static func main(arguments: [String], environment: [String: String], console: Console = Console(),
                            isTerminal: Bool? = nil) -> Int32 {
        SingleCommand.main(arguments: arguments, environment: environment, console: console, program: program,
                           locate: ContainerLocation.resolve(explicit:environment:), status: commonExitStatus(for:)) { arguments, containerPath in
            let json = arguments.flag("--json")
            let watch = arguments.flag("--watch")
            let fixedNow = try arguments.option("--now").map { text in
                guard let now = Timestamp(iso8601: text) else {
                    throw CommandLineError.usage("--now '\(text.prefix(40))' is not an ISO 8601 date and time, e.g. 2026-12-12T08:00+00:00")
                }
                return now
            }
            try arguments.finish()
            let style = WidgetStyle(environment: environment, isTerminal: isTerminal ?? StandardStream.output.isTerminal)
            let widget = Widget(containerPath: containerPath, fixedNow: fixedNow, environment: environment)
            if watch {
                return try widget.watch(console: console, json: json, style: style).rawValue
            }
            let answer = try widget.answer()
            try console.write(WidgetRenderer.render(answer, json: json, style: style))
            // The process exits right after this answer: the kernel closes the store's descriptors,
            // drops its locks and unmaps its -shm. Closing the connection first would free the parsed
            // schema piece by piece (6% of a start's instructions) and attempt a checkpoint that a
            // read-only connection cannot make (docs/performance.md).
            keptUntilExit = widget
            return answer.exitStatus.rawValue
        }
    }
}

/// The one-shot answer's widget, kept from being freed before the process exits (see
/// `WidgetCommand.main`). Written once, on the main thread, and never read: nothing to race.
nonisolated(unsafe) private var keptUntilExit: Widget?

/// What the widget shows.
package struct WidgetAnswer: Equatable {
    package enum Status: String { case ongoing, upcoming, noTrip = "none", updating, awaitingFirstUnlock = "locked" }
    package var status: Status
    package var next: NextTrip?

    package var exitStatus: ExitStatus { status == .updating ? .temporaryFailure : .success }
}

/// One widget: a container path and the clock it reads.
package final class Widget {
    package let containerPath: String
    package let fixedNow: Timestamp?
    /// For the device lock's probe (`DeviceLockProbe`): where the device directory is, which keyring.
    package let environment: [String: String]
    private var container: ReadOnlyContainer?

    package init(containerPath: String, fixedNow: Timestamp?, environment: [String: String] = [:]) {
        self.containerPath = containerPath
        self.fixedNow = fixedNow
        self.environment = environment
    }

    /// Computes the answer now. Opens the container lazily; nothing is created if it is absent.
    /// Before the device's first unlock since the computer started, a placeholder: the store is
    /// until-first-unlock data (docs/security.md, "The device lock").
    package func answer() throws -> WidgetAnswer {
        if DeviceLockProbe.awaitsFirstUnlock(environment: environment) { return WidgetAnswer(status: .awaitingFirstUnlock) }
        if container == nil {
            container = try ReadOnlyContainer.open(at: containerPath, lockTimeout: WidgetCommand.lockTimeout,
                                                  keys: try FileProtection.keys(environment: environment))
        }
        guard let container else { return WidgetAnswer(status: .noTrip) }
        let now = fixedNow ?? Timestamp.now()
        let today = now.inLocalZone.localDate
        let (availability, found) = try container.read { connection in
            try NextTrip.find(in: connection, today: today, now: now)
        }
        switch availability {
        case .empty: return WidgetAnswer(status: .noTrip)
        case .updating: return WidgetAnswer(status: .updating)
        case .ready:
            guard let next = found ?? nil else { return WidgetAnswer(status: .noTrip) }
            return WidgetAnswer(status: next.status == .ongoing ? .ongoing : .upcoming, next: next)
        }
    }

    package static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// `--watch`: prints the answer, then again each time it changes, until SIGINT or SIGTERM.
    /// Woken by inotify on the container and store directories (a hint), confirmed by
    /// `PRAGMA data_version` (the truth); re-checks every 30 s anyway (the date rolls over, a
    /// watch could not be set).
    package func watch(console: Console, json: Bool, style: WidgetStyle) throws -> ExitStatus {
        let watcher = try ChangeWatcher()
        var shown: WidgetAnswer?
        var seenVersion: Int64?
        var wake = ChangeWatcher.Wake.changed
        while wake != .terminated {
            if container?.wasReplaced == true {
                // Another container stands at the path now (a restore): read that one from here on.
                container = nil
                seenVersion = nil
                watcher.forget(directoriesUnder: containerPath)
            }
            // The parent too, so that a container created after the watch began is noticed at once.
            watcher.watch(directory: Self.parentDirectory(of: containerPath))
            watcher.watch(directory: containerPath)
            watcher.watch(directory: containerPath + "/" + ContainerLayout.storeDirectory)
            let version = try container?.dataVersion()
            // A wake with an unchanged data_version is someone else's file activity: skip the query.
            if wake == .timedOut || shown == nil || shown?.status == .updating || shown?.status == .noTrip
                || shown?.status == .awaitingFirstUnlock
                || version == nil || version != seenVersion || container?.isImmutableSnapshot == true {
                let answer = try self.answer()
                seenVersion = try container?.dataVersion()
                if answer != shown {
                    try console.write(WidgetRenderer.render(answer, json: json, style: style, compactJSON: true))
                    console.flush()
                    shown = answer
                }
            }
            // An unlock writes no file to wake the watch: the kernel is asked again every second.
            wake = watcher.wait(timeout: shown?.status == .awaitingFirstUnlock ? 1 : 30)
        }
        return .success
    }
}
