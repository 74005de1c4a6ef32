import TripBoardStorage
import TripBoardTickets
import TripBoardSystem
import TripBoardWorkerContract
import TripBoardModel
import TripBoardDevice
public import TripBoardCommandLine

/// The `share-extension` executable: files one PDF ticket into the shared container, the way a
/// share extension receives a file from Mail. It never creates or migrates a container (that is
/// the app's job) and runs poppler only in `pdf-worker`, under limits.
public enum ShareCommand {
    /// `main(arguments:…)` with the command line as the kernel passed it: a word that is not
    /// valid UTF-8 is refused (65) before anything is touched (`ProgramStart.words`).
    public static func main(rawArguments: [[UInt8]], environment: [String: String], console: Console = Console()) -> Int32 {
        guard let words = ProgramStart.words(rawArguments, console: console) else { return ExitStatus.dataError.rawValue }
        return main(arguments: words, environment: environment, console: console)
    }

    /// Runs `share-extension` with `arguments` (without the program name); returns the exit status.
    public static func main(arguments words: [String], environment: [String: String], console: Console = Console()) -> Int32 {
        SingleCommand.main(arguments: words, environment: environment, console: console, program: program,
                           locate: ContainerLocation.resolve(explicit:environment:), message: message(for:), status: commonExitStatus(for:)) { arguments, containerPath in
            let json = arguments.flag("--json")
            let name = try arguments.option("--name")
            let tripReference = try arguments.recordIDOption("--trip", "trip")
            let bookingReference = try arguments.recordIDOption("--booking", "booking")
            let maximumBytes = try arguments.option("--max-size").map(parseSize) ?? TicketFilingRequest.defaultMaximumBytes
            let zone = try arguments.option("--zone").map { try Arguments.checkedZone($0).name }
            let protection = try arguments.option("--protection").map { try ProtectionClass.fileClass($0, option: "--protection") } ?? .completeUnlessOpen
            // An unknown option is named before a missing FILE (`--bogus` is not "missing FILE").
            let givenPath = arguments.nextPositional()
            try arguments.finish()
            guard let sourcePath = givenPath else { throw CommandLineError.usage("missing FILE (or - for standard input)") }

            let source = try openSource(sourcePath)
            let request = TicketFilingRequest(
                sourceName: sourcePath == "-" ? "standard input" : sourcePath,
                originalFilename: try name.map(checkedFilename) ?? (sourcePath == "-" ? "ticket.pdf" : lastComponent(of: sourcePath)),
                tripReference: tripReference, bookingReference: bookingReference, maximumBytes: maximumBytes,
                today: try today(environment: environment), zone: zone, protection: protection)
            let container = try openContainer(at: containerPath, environment: environment, console: console)
            let worker = try PDFWorker.locate(environment: environment)
            let result = try TicketFiling(container: container, worker: worker).run(source: source, request: request)
            if let warning = result.thumbnailError { console.warning(warning) }
            if result.bookingCreated, let trip = result.outsideTrip, let date = result.booking.startsAt?.date {
                // Kept, as `booking add` keeps one: the date may be right and the trip wrong, or the other way.
                console.warning(terminalSafe("""
                    the ticket's date, \(date), is outside trip \(result.tripName) (\(trip.lowerBound) – \(trip.upperBound)); \
                    the booking is kept: check the date (`app booking edit \(result.booking.id.short) --starts-at …`)
                    """))
            }
            if json {
                try console.printJSON(result)
            } else {
                describe(result, console: console)
            }
            return ExitStatus.success.rawValue
        }
    }

    /// Today where the sharer is (`TZ`), on `TRIPBOARD_NOW`'s clock when set (tests, as `app`'s):
    /// the year of a yearless date and the trips offered when none contains the ticket's date.
    static func today(environment: [String: String]) throws -> CivilDate {
        let now = try ContainerOptions.fixedNow(environment: environment) ?? Timestamp.now()
        return now.inLocalZone.localDate
    }

    /// The container, opened for writing with the extension's one chore — the trash purged after
    /// opening, as any writer does (the app declares its commands' chores in `AppCommandSpec`).
    /// An extension never sets a container up or migrates one: it refuses a container the app has
    /// not set up (66), one whose migration is unfinished (75), and one into which the app's first
    /// launch would move TripBoard 1's data (75, `ShareRefusal.migrationDue`), leaving all three
    /// to the app; nor does it finish the migration's hashing pass.
    static func openContainer(at path: String, environment: [String: String], console: Console) throws -> Container {
        var options = try ContainerOptions(processName: "share-extension", environment: environment)
        options.mayCreate = false
        // Asked before the store is opened, so that a refusal leaves every file as it was; a
        // container never set up is refused by the opening instead ("open the app once", 66).
        if let due = try FirstLaunchMigration.due(containerPath: path, containerIsExplicit: !isAppsContainer(path, environment: environment),
                                                  environment: environment),
           due.state == .notStarted, try Container.hasManifest(at: path) {
            throw ShareRefusal.migrationDue(legacyPath: due.legacyPath)
        }
        // An unfinished migration is refused by the opening itself (75, "being updated").
        let container = try Container.openForWriting(at: path, options: options)
        for notice in container.setUpNotices { console.warning(notice) }
        Trash.tidyUp(container: container)
        return container
    }

    /// Whether `path` is the container the app opens without `--container`: the one its first
    /// launch migrates into (`FirstLaunchMigration.due`). Compared as directories (device and
    /// inode), so that `DIR/`, `./DIR` or a symbolic link to it are that container too.
    static func isAppsContainer(_ path: String, environment: [String: String]) -> Bool {
        // No HOME and no TRIPBOARD_CONTAINER: the app has no container of its own to migrate into.
        guard let appsPath = try? ContainerLocation.resolve(explicit: nil, environment: environment) else { return false }
        if appsPath == path { return true }
        // Either missing or unreadable: not one directory that both name.
        guard let apps = try? Directory.open(path: appsPath).status(), let given = try? Directory.open(path: path).status() else { return false }
        return apps.device == given.device && apps.inode == given.inode
    }

    /// The file to import, opened before the container is touched; a directory is refused here
    /// (reading one fails only later, with a less helpful error).
    static func openSource(_ path: String) throws -> FileDescriptor {
        let source = path == "-" ? try FileDescriptor.standardInput() : try FileDescriptor.openForReading(path: path)
        if try source.status().kind == .directory {
            throw CommandLineError(.noInput, "\(path) is a directory, not a PDF file")
        }
        return source
    }

    /// `50M`, `100MiB`, `1G`, `512K`, or bytes; 1 byte … 1 GiB.
    static func parseSize(_ text: String) throws -> Int64 {
        var digits = Substring(text)
        var shift: Int64 = 0
        for (suffixes, bits) in [(["KiB", "KB", "K", "k"], 10), (["MiB", "MB", "M", "m"], 20), (["GiB", "GB", "G", "g"], 30)] {
            if let suffix = suffixes.first(where: { text.hasSuffix($0) }) {
                digits = digits.dropLast(suffix.count)
                shift = Int64(bits)
            }
        }
        let limit = Int64(PDFWorkerLimits.maximumFileBytes)
        guard let value = Int64(digits), value > 0, value <= limit >> shift else {
            throw CommandLineError.usage("--max-size '\(text.prefix(40))' is not a size from 1 byte to 1G, e.g. 50M")
        }
        return value << shift
    }

    static func checkedFilename(_ name: String) throws -> String {
        guard !name.isEmpty, !name.includes("/"), name != ".", name != ".." else {
            throw CommandLineError.usage("--name must be a file name, without '/'")
        }
        return name
    }

    static func lastComponent(of path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    /// The extension's own words for the container's states; the rest as everywhere.
    static func message(for error: any Error) -> String {
        switch error {
        case ContainerError.notFound(let path):
            terminalSafe("no TripBoard container at \(path); open the app once to set it up")
        case StoreError.notReady:
            "TripBoard is being updated; open the app to finish updating, then share the ticket again"
        default:
            errorMessage(for: error)
        }
    }

    static func describe(_ result: TicketFilingResult, console: Console) {
        let booking = "\"\(result.booking.title)\"" + (result.bookingCreated ? " (new \(result.booking.kind.rawValue) booking)"
                                                     : result.bookingMatched ? " (existing booking)" : "")
        switch result.outcome {
        case .attached:
            console.print("Attached \(result.attachment.originalFilename) to \(booking) in \(result.tripName).")
        case .restored:
            console.print("Restored the missing file of \(result.attachment.originalFilename) of \(booking) in \(result.tripName): it is present again.")
        case .alreadyAttached:
            console.print("Already attached: these bytes are \(result.attachment.originalFilename) of \(booking) in \(result.tripName); nothing new was stored.")
        }
        console.print("  detected:   " + result.detected.summary)
        let pages = result.pageCount == 1 ? "1 page" : "\(result.pageCount) pages"
        console.print("  attachment: \(result.attachment.id) (\(pages), \(result.attachment.byteCount) bytes)")
        console.print("  booking:    \(result.booking.id)" + (result.booking.startsAt.map { ", starts \($0)" } ?? "")
                      + (result.bookingCreated ? result.booking.endsAt.map { ", ends \($0)" } ?? "" : ""))
        if let zone = result.zone { console.print("  zone:       " + zone.summary) }
        if result.bookingCreated, result.booking.endsAt != nil, let place = result.detected.arrivalPlace ?? result.detected.destination {
            // Which place set the end's clock, so that a wrong guess shows (`booking edit --end-zone` mends it).
            console.print("  arrives:    \(result.booking.zoneOfEnd ?? "a fixed offset") (\(place), where it arrives)")
        }
        console.print("  protection: " + result.attachment.protection.fileClassName
                      + (result.thumbnailCached ? " (the file and its thumbnail, sealed)" : " (the file, sealed)"))
    }
}
