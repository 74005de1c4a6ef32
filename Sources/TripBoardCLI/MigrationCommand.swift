import TripBoardDevice
import TripBoardMigration
import TripBoardStorage
import TripBoardSystem
import TripBoardModel
public import TripBoardCommandLine

/// The `container-migration` executable: moves TripBoard version 1's private directory into the
/// shared container (docs/migration.md). `main.swift` calls `MigrationCommand.main`.
public enum MigrationCommand {
    /// `main(arguments:…)` with the command line as the kernel passed it: a word that is not
    /// valid UTF-8 is refused (65) before anything is touched (`ProgramStart.words`).
    public static func main(rawArguments: [[UInt8]], environment: [String: String], console: Console = Console()) -> Int32 {
        guard let words = ProgramStart.words(rawArguments, console: console) else { return ExitStatus.dataError.rawValue }
        return main(arguments: words, environment: environment, console: console)
    }

    /// Runs `container-migration` with `arguments` (without the program name); returns the exit status.
    public static func main(arguments: [String], environment: [String: String], console: Console = Console()) -> Int32 {
        SingleCommand.main(arguments: arguments, environment: environment, console: console, program: program,
                           locate: ContainerLocation.resolve(explicit:environment:), status: exitStatus(for:)) { arguments, containerPath in
            let from = try arguments.option("--from")
            let dryRun = arguments.flag("--dry-run")
            let merge = arguments.flag("--merge")
            let json = arguments.flag("--json")
            try arguments.finish()
            if let from, from.isEmpty { throw CommandLineError.usage("--from needs a directory") }
            guard let legacyPath = LegacyLayout.resolve(explicit: from, environment: environment) else {
                throw CommandLineError.usage("cannot tell where TripBoard 1's data is: pass --from DIR (HOME is not set)")
            }
            let context = CommandContext(arguments: Arguments(), environment: environment, console: console, containerPath: containerPath)
            var options = try migrationOptions(context, legacyPath: legacyPath, explicit: from != nil)
            options.merge = merge
            options.dryRun = dryRun
            let summary = try runWithProgressBar(options, console: console)
            if json {
                try console.printJSON(summary)
            } else {
                for line in describe(summary) { console.print(line) }
            }
            return ExitStatus.success.rawValue
        }
    }

    static func migrationOptions(_ context: CommandContext, legacyPath: String, explicit: Bool) throws -> MigrationOptions {
        var options = MigrationOptions(legacyPath: legacyPath, legacyPathIsExplicit: explicit, containerPath: try context.containerPath,
                                       deviceKey: context.deviceKey)
        options.container.lockTimeout = try context.containerOptions().lockTimeout
        options.keyring = try DeviceLock.anchor(environment: context.environment)
        return options
    }

    /// The app's first launch: finishes an interrupted migration, or runs one when a version-1
    /// directory exists and the container — the one the environment names, never one given with
    /// `--container` — has never been migrated. Progress on stderr.
    static func runOnFirstLaunch(_ context: CommandContext) throws {
        let containerPath = try context.containerPath
        guard let due = try FirstLaunchMigration.due(containerPath: containerPath, containerIsExplicit: context.containerIsExplicit,
                                                     environment: context.environment) else { return }
        let (state, legacyPath) = (due.state, due.legacyPath)
        let console = context.console
        console.diagnostic(state == .unfinished ? "finishing the migration of TripBoard 1's data into \(containerPath)…"
                                                : "migrating TripBoard 1's data from \(legacyPath) into \(containerPath)…")
        let summary = try runWithProgressBar(try migrationOptions(context, legacyPath: legacyPath, explicit: false), console: console)
        for line in describe(summary) { console.diagnostic(line) }
    }

    /// Runs the migration with a progress bar on stderr (on a terminal), cleared at the end.
    static func runWithProgressBar(_ options: MigrationOptions, console: Console) throws -> MigrationSummary {
        var options = options
        let bar = ProgressBar(isEnabled: StandardStream.error.isTerminal && !console.isQuiet)
        options.progress = bar.update
        defer { bar.finish() }
        return try ContainerMigration.run(options)
    }

    /// The summary for people, one fact a line.
    static func describe(_ summary: MigrationSummary) -> [String] {
        switch summary.outcome {
        case .nothingToMigrate:
            return ["Nothing to migrate: \(summary.note)."]
        case .dryRun where !summary.note.isEmpty:
            return ["Dry run: \(summary.note)."]
        case .dryRun, .migrated:
            break
        }
        let counts = summary.outcome == .dryRun ? summary.legacyCounts : summary.added
        var lines = [summary.outcome == .dryRun
                     ? "Dry run: would migrate \(summary.from) into \(summary.container):"
                     : "Migrated \(summary.from) into \(summary.container) in \(summary.durationSeconds) s\(summary.resumed ? " (resumed)" : ""):"]
        lines.append("  \(counts.trips) trips, \(counts.places) places, \(counts.bookings) bookings, \(counts.attachments) attachments")
        if summary.added != summary.legacyCounts && summary.outcome != .dryRun {
            let legacy = summary.legacyCounts
            lines.append("  already in the container, kept as they were: \(legacy.trips - counts.trips) trips, \(legacy.places - counts.places) places, \(legacy.bookings - counts.bookings) bookings, \(legacy.attachments - counts.attachments) attachments")
        }
        lines.append("  store \(ProgressBar.bytes(summary.storeBytes)); files \(ProgressBar.bytes(summary.attachmentBytes)), "
                     + "sealed on the way in (complete-unless-open), " + (summary.sameFilesystem ? "on the same filesystem" : "from another filesystem"))
        if !summary.missing.isEmpty {
            lines.append("  attachments whose file was missing (kept, marked missing): \(summary.missing.count)")
            lines += summary.missing.map { "    " + $0 }
        }
        if !summary.recovered.isEmpty {
            lines.append("  files with no attachment row, kept in the container: \(summary.recovered.count)")
            lines += summary.recovered.map { "    " + $0 }
        }
        if summary.bookingKindsChangedToOther > 0 {
            lines.append("  bookings of a kind this version does not know, now 'other': \(summary.bookingKindsChangedToOther)")
        }
        let preferences = [("migrated", summary.preferencesMigrated), ("refused (invalid value, skipped)", summary.preferencesRefused),
                           ("kept the container's value", summary.preferencesKept), ("unknown, skipped", summary.preferencesUnknown)]
        for (what, names) in preferences where !names.isEmpty {
            lines.append("  preferences \(what): \(names.joined(separator: ", "))")
        }
        if summary.tokensMoved > 0 { lines.append("  sign-in tokens moved into the keychain: \(summary.tokensMoved)") }
        if summary.tokensDiscarded > 0 {
            lines.append("  sign-in tokens not moved (the container is signed in already) and removed: \(summary.tokensDiscarded)")
        }
        if !summary.leftBehind.isEmpty {
            lines.append("  left in the old location (not TripBoard's): \(summary.leftBehind.joined(separator: ", "))")
        }
        return lines
    }
}
