import TripBoardStorage
import TripBoardSystem
import TripBoardReadPath
import TripBoardCommandLine
import TripBoardWidget

/// Every executable the command model describes (`pdf-worker` is not one: only the others run
/// it, with the contract in docs/pdf-worker.md).
enum Programs {
    static var all: [ProgramSpec] { [AppCommand.program, WidgetCommand.program, ShareCommand.program, MigrationCommand.program] }

    static func named(_ name: String) -> ProgramSpec? { all.first { $0.name == name } }
}

extension ShareCommand {
    static var program: ProgramSpec {
        ProgramSpec(name: "share-extension", tagline: "files a PDF ticket into TripBoard",
                    description: [
                        "Imports the PDF ticket FILE (or standard input, -) as an attachment. The booking is --booking, or one created from what the ticket shows (kind, reference, flight or train number, route, date and time, seat) in --trip, or in the trip whose dates contain the ticket's date; a booking with the same reference and start is used rather than a second one. The same bytes attached twice are reported, not stored again; the bytes of an attachment whose file was lost (missing) are put back in its place. It never creates or migrates a container.",
                    ],
                    globalOptions: SingleCommand.globalOptions, commands: [],
                    grammar: Grammar(options: [
                        .value("--name", "FILENAME", "the file name kept (default: FILE's name; ticket.pdf for standard input)"),
                        .trip(required: false, "the trip to file it in (an id or a unique prefix of one)"),
                        .value("--booking", "ID", "the booking to attach it to (an id or a unique prefix of one)"),
                        .value("--max-size", "SIZE", "the largest file accepted (default 50M; K, M, G suffixes; at most 1G)"),
                        .json,
                    ], positionals: [.required("FILE|-", "the PDF ticket, or - for standard input", completion: .file)]),
                    exitStatuses: [
                        "0  attached, already attached or restored",
                        "64  usage (including no trip found: use --trip)",
                        "65  not a PDF, damaged, encrypted, too large or too complex",
                        "66  missing file, unknown trip or booking, or no container",
                        "69  the PDF reader cannot run",
                        "74  I/O error",
                        "75  busy, or the app has an update to finish",
                    ])
    }
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
                    ])
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
