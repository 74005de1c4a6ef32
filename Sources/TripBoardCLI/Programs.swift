import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine
import TripBoardWidget
import TripBoardShareExtension

/// Every executable the command model describes (`pdf-worker` is not one: only the others run
/// it, with the contract in docs/pdf-worker.md).
enum Programs {
    static var all: [ProgramSpec] { [AppCommand.program, WidgetCommand.program, ShareCommand.program, MigrationCommand.program] }

    static func named(_ name: String) -> ProgramSpec? { all.first { $0.name == name } }
}

extension MigrationCommand {
    static var program: ProgramSpec {
        ProgramSpec(name: "container-migration", tagline: "moves TripBoard 1's private data into the shared container",
                    description: [
                        "Moves TripBoard version 1's private data — its store, attachments and preferences, and the sign-in tokens it kept in its preferences — into the shared container, then deletes the old location. Interrupted, it resumes where it stopped when run again; once done, running it again prints \"Nothing to migrate\". The old location is --from DIR, else $TRIPBOARD_LEGACY_DIR, else ~/.tripboard.",
                    ],
                    globalOptions: SingleCommand.globalOptions, commands: [],
                    grammar: Grammar(options: [
                        .value("--from", "DIR", "TripBoard 1's directory (else $TRIPBOARD_LEGACY_DIR, else ~/.tripboard)", completion: .directory),
                        .flag("--dry-run", "plan and report what would be migrated; change nothing"),
                        .flag("--merge", "the container holds trips already: add the version-1 records whose ids it lacks"),
                        .flag("--json", "print the summary as JSON (docs/migration.md has the keys)"),
                    ], positionals: []),
                    exitStatuses: [
                        "0  migrated, or nothing to migrate",
                        "64  usage",
                        "65  damaged or unsuitable data (or a container that holds trips, without --merge)",
                        "66  --from DIR does not exist",
                        "73  cannot create",
                        "74  I/O error or not enough space",
                        "75  the container is busy",
                    ], versionDetail: ContainerLayout.versionDetail)
    }
}

extension ExitStatus {
    /// `app`'s exit statuses, one line each, for help and the man page.
    static let appDescriptions = [
        "0  ok",
        "1  internal error (a bug)",
        "64  usage: unknown command or option, missing or malformed argument",
        "65  bad data: a rule broken, a damaged store or file, a wrong passphrase",
        "66  not found: an unknown id, a missing file, no container",
        "69  unavailable: the editor failed, the PDF reader cannot run",
        "73  cannot create: the container or a file cannot be created or used",
        "74  I/O error, disk full",
        "75  busy: try again",
    ]
}
