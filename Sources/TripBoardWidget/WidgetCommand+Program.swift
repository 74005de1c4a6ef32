package import TripBoardCommandLine
import TripBoardModel

/// The widget as the command model declares it: help, usage, errors, completion and its man page.
extension WidgetCommand {
    package static var program: ProgramSpec {
        ProgramSpec(name: "widget", tagline: "prints the next trip",
                    description: [
                        "Prints the next trip: one in progress on today's local date (TZ), else the upcoming one that starts soonest, with what it holds for now: a journey under way, else the next booking, else a longer stay under way. It is read-only: it never creates, changes or deletes a file, and waits at most about 250 ms for the container before it prints a placeholder.",
                    ],
                    globalOptions: SingleCommand.globalOptions, commands: [],
                    grammar: Grammar(options: [
                        .json,
                        .value("--now", "ISO8601", "pretend the current time is ISO8601, e.g. 2026-12-12T08:00+00:00"),
                        .flag("--watch", "print again whenever the answer changes, until interrupted"),
                    ], positionals: []),
                    exitStatuses: [
                        "0  ok, including \"No upcoming trips\"",
                        "64  usage",
                        "65  corrupt or newer store",
                        "66  store missing",
                        "73  the container path is not a directory (or its lock is not a regular file)",
                        "75  updating: a migration or setup is not finished",
                    ], versionDetail: ContainerLayout.versionDetail)
    }
}
