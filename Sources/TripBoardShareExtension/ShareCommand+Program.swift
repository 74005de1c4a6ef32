package import TripBoardCommandLine
import TripBoardModel
import TripBoardDevice

extension ShareCommand {
    package static var program: ProgramSpec {
        ProgramSpec(name: "share-extension", tagline: "files a PDF ticket into TripBoard",
                    description: [
                        "Imports the PDF ticket FILE (or standard input, -) as an attachment. The booking is --booking, or one created from what the ticket shows (kind, reference, flight or train number, route, date and time, seat) in --trip, or in the trip whose dates contain the ticket's date; a booking with the same reference and start is used rather than a second one. A new booking's times are read in --zone, else the zone of the departure airport the ticket names, else that of the trip's booking nearest in time that has one, else TZ's, and the output says which. The file and its thumbnail are sealed under --protection on the way in: no byte of the ticket reaches a disk in the clear (the PDF reader reads an in-memory copy). The same bytes attached twice are reported, not stored again; the bytes of an attachment whose file was lost (missing) are put back in its place. It never creates or migrates a container: until the app has set it up, finished an update or moved TripBoard 1's data into it, the ticket is refused (open the app first).",
                    ],
                    globalOptions: SingleCommand.globalOptions, commands: [],
                    grammar: Grammar(options: [
                        .value("--name", "FILENAME", "the file name kept (default: FILE's name; ticket.pdf for standard input)"),
                        .trip(required: false, "the trip to file it in (an id or a unique prefix of one)"),
                        .value("--booking", "ID", "the booking to attach it to (an id or a unique prefix of one)"),
                        .value("--zone", "ZONE", "the IANA time zone of the ticket's times, e.g. Europe/Lisbon (default: its departure airport's, a booking of the trip's, else TZ's)"),
                        .value("--max-size", "SIZE", "the largest file accepted (default 50M; K, M, G suffixes; at most 1G)"),
                        .choice("--protection", ProtectionClass.fileClassNames, "the protection class the ticket and its thumbnail are sealed under (default complete-unless-open, which files a ticket while the device is locked; complete needs it unlocked)"),
                        .json,
                    ], positionals: [.required("FILE|-", "the PDF ticket, or - for standard input", completion: .file)]),
                    exitStatuses: [
                        "0  attached, already attached or restored",
                        "64  usage (including no trip found: use --trip)",
                        "65  not a PDF, damaged, encrypted, too large or too complex",
                        "66  missing file, unknown trip or booking, or no container",
                        "69  the PDF reader cannot run, or the device is locked (--protection complete or until-first-unlock)",
                        "74  I/O error",
                        "75  busy, or the app has an update to finish or TripBoard 1's data to move: open the app first",
                    ], versionDetail: ContainerLayout.versionDetail)
    }
}
