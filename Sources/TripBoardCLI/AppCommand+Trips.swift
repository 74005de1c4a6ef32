import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine

extension AppCommand {
    static var tripCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["trip", "add"],
                        options: [
                            .value("--name", "NAME", "the trip's name (one line)", required: true),
                            .value("--start", "YYYY-MM-DD", "the first day", required: true),
                            .value("--end", "YYYY-MM-DD", "the last day (not before the first)", required: true),
                            .value("--notes", "TEXT", "free text about the trip"),
                            .json,
                        ],
                        summary: "Creates a trip and prints its id (--json: the trip object).", run: addTrip, createsContainer: true),
            AppCommandSpec(words: ["trip", "list"],
                        options: [
                            .flag("--upcoming", "only the trips not over today (TZ's date)"),
                            .flag("--past", "only the trips that are over, the most recent first"),
                            .value("--from", "D", "only trips with a day on or after D (YYYY-MM-DD)"),
                            .value("--to", "D", "only trips with a day on or before D (YYYY-MM-DD)"),
                            .choice("--sort", ["start", "name", "updated"], "the order: start (default), name (ignoring case), updated (most recently changed first)"),
                            .limit, .json,
                        ],
                        oneOf: [[["--upcoming"], ["--past"], ["--from", "--to"]]],
                        summary: """
                        Lists the trips, soonest first. --upcoming: those not over today (TZ's date); --past: those over, \
                        the most recent first; --from/--to: those with a day in that range (either may be left out). \
                        --sort name (ignoring case) or updated (the most recently changed first); --limit N prints at most N.
                        """, run: listTrips),
            AppCommandSpec(words: ["trip", "show"],
                        options: [
                            .json,
                        ],
                        arguments: [
                            .required("ID", "the trip (an id or a unique prefix of one)"),
                        ],
                        summary: "Shows one trip with its places and bookings. ID may be a unique prefix.", run: showTrip),
            AppCommandSpec(words: ["trip", "edit"],
                        options: [
                            .value("--name", "N", "the trip's name (one line)"),
                            .value("--start", "D", "the first day"),
                            .value("--end", "D", "the last day (not before the first)"),
                            .value("--notes", "T", "free text about the trip"),
                        ],
                        arguments: [
                            .required("ID", "the trip (an id or a unique prefix of one)"),
                        ],
                        summary: """
                        Changes the given fields in one transaction. With no field flags, opens $VISUAL (else $EDITOR, \
                        else vi) on the trip as JSON; the result is validated and applied, or refused with nothing changed.
                        """, run: editTrip),
            AppCommandSpec(words: ["trip", "delete"],
                        options: [
                            .yes,
                        ],
                        arguments: [
                            .required("ID", "the trip (an id or a unique prefix of one)"),
                        ],
                        summary: """
                        Moves a trip with its places, bookings and attachments to the trash (app trash list), where it \
                        stays 30 days, restorable with app trash restore, and says what went. On a terminal it asks \
                        first (--yes: no question); without one it goes ahead.
                        """,
                        run: deleteTrip),
        ]
    }

    static func addTrip(_ context: CommandContext) throws {
        let name = try context.arguments.requiredOption("--name")
        let start = try context.arguments.requiredDate("--start")
        let end = try context.arguments.requiredDate("--end")
        let notes = try context.arguments.option("--notes") ?? ""
        let json = context.wantsJSON()
        try context.finishArguments()
        // Checked before the container is opened: a refused trip creates no container.
        let draft = try TripDraft(name: name, startDate: start, endDate: end, notes: notes).checked()
        let trip = try context.store().addTrip(draft)
        if json { return try context.console.printJSON(trip) }
        context.console.print(trip.id.text)
    }

    static func listTrips(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let query = try tripQuery(context)
        try context.finishArguments()
        let store = try context.store()
        // Printed from the rows' bytes, not from `Trip`s: the same output (`RawListTests`) at
        // about the cost of `sqlite3` itself (docs/performance.md); the table from the start
        // index alone (`tripTableRows`).
        if json { return try context.console.printJSONArray(rowsOf: store.tripRows(query), RecordBytes.tripJSON) }
        let empty = query.period != .all ? "No trips match."
            : "No trips yet. Add one with: app trip add --name NAME --start YYYY-MM-DD --end YYYY-MM-DD"
        try context.console.printTable(header: tripListHeader, emptyMessage: empty, rowsOf: store.tripTableRows(query), row: tripListCells)
    }

    static let tripListHeader = ["ID", "NAME", "START", "END", "DAYS", "SYNC"]

    /// A `trip list` line's cells from a row of `RecordRows.tripColumns`: what
    /// `[String(trip.id.short), trip.name, trip.startDate.description, trip.endDate.description,
    /// String(trip.dayCount), trip.syncState.rawValue]` gives, as bytes.
    static func tripListCells(_ row: borrowing StoreRow, _ cells: inout TableRow) {
        row.withText(TripColumn.id.position) { cells.append(prefix: 8, ofUTF8: $0) }
        row.withText(TripColumn.name.position) { cells.append(utf8: $0) }
        let start = RecordBytes.date(row, TripColumn.startDate.position), end = RecordBytes.date(row, TripColumn.endDate.position)
        cells.appendASCII { start.appendDescription(to: &$0) }
        cells.appendASCII { end.appendDescription(to: &$0) }
        cells.append(start.days(until: end) + 1)
        cells.append(ascii: RecordBytes.syncStateName(row, TripColumn.syncState.position))
    }

    /// `trip list`'s filters, checked before the container is opened.
    static func tripQuery(_ context: CommandContext) throws -> TripQuery {
        let upcoming = context.arguments.flag("--upcoming")
        let past = context.arguments.flag("--past")
        let from = try context.arguments.date("--from")
        let to = try context.arguments.date("--to")
        let sortText = try context.arguments.option("--sort")
        let limit = try context.arguments.limit()
        // --upcoming, --past and --from/--to exclude each other: the declaration's one-of group.
        if let from, let to, to < from { throw CommandLineError.usage("--to \(to) is before --from \(from)") }
        var order = TripQuery.Order.start
        if let sortText {
            guard let chosen = TripQuery.Order(rawValue: sortText) else {
                throw CommandLineError.usage("--sort '\(sortText.prefix(40))' is not one of start, name, updated")
            }
            order = chosen
        }
        let period: TripQuery.Period = upcoming ? .upcoming : past ? .past : (from != nil || to != nil) ? .overlapping(from: from, to: to) : .all
        return TripQuery(period: period, order: order, limit: limit, today: try context.today())
    }

    static func showTrip(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let reference = try context.arguments.recordID("trip")
        try context.finishArguments()
        let store = try context.store()
        let (trip, places, bookings, attachments) = try store.readTransaction {
            let id = try store.resolveID(Trip.self, reference)
            return (try store.trip(id: id), try store.places(tripId: id), try store.bookings(tripId: id), try store.attachments(tripId: id))
        }
        if json { return try context.console.printJSON(TripDetail(trip: trip, places: places, bookings: bookings, attachments: attachments)) }
        let console = context.console
        console.print("\(trip.name)")
        console.print("  id:       \(trip.id)")
        console.print("  dates:    \(trip.startDate) → \(trip.endDate) (\(trip.dayCount) day\(trip.dayCount == 1 ? "" : "s"))")
        if !trip.notes.isEmpty { console.print("  notes:    " + trip.notes.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n            ")) }
        console.print("  sync:     \(trip.syncState.rawValue)\(trip.remoteVersion.map { ", remote version \($0)" } ?? ""), updated \(trip.updatedAt.utcStamp)")
        let showsVisited = try showsVisitedPlaces(context)
        let shown = showsVisited ? places : places.filter { !$0.visited }
        console.print(shown.isEmpty ? "  places:   none" : "  places:")
        if shown.count < places.count {
            console.print("    (\(places.count - shown.count) visited hidden: `app prefs set showsVisitedPlaces on` shows them)")
        }
        for place in shown {
            console.print("    \(place.visited ? "[x]" : "[ ]") \(place.name)\(place.city.map { ", \($0)" } ?? "")  (\(place.id.short))")
        }
        console.print(bookings.isEmpty ? "  bookings: none" : "  bookings:")
        var times = BookingTimeText()
        for booking in bookings {
            let start = times.text(booking.startsAt, zone: booking.zone, tripYear: trip.startDate.year) ?? "no date"
            let when = start + (times.text(booking.endsAt, zone: booking.zoneOfEnd, tripYear: trip.startDate.year).map { " → " + $0 } ?? "")
            var line = "    \(booking.kind.rawValue) \(booking.title) · \(when)"
            BookingColumn.appendLabelled(booking, separator: " · ", to: &line)
            console.print(line + "  (\(booking.id.short))")
        }
        console.print(attachments.isEmpty ? "  attachments: none" : "  attachments:")
        let titles = Dictionary(bookings.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first })
        for attachment in attachments {
            console.print("    " + attachmentLine(attachment, forBooking: titles[attachment.bookingId] ?? "?"))
        }
    }

    /// An attachment as `trip show` and `booking show` list it: `pass.pdf · 48211 bytes, 1 page
    /// · for TP 1351 · missing  (9c0e51aa)` (the booking's title only where several are listed).
    static func attachmentLine(_ attachment: Attachment, forBooking title: String?) -> String {
        let pages = attachment.pageCount.map { ", \($0) page\($0 == 1 ? "" : "s")" } ?? ""
        let state = attachment.state == .present ? "" : " · \(attachment.state.rawValue)"
        return "\(attachment.originalFilename) · \(attachment.byteCount) bytes\(pages)\(title.map { " · for \($0)" } ?? "")\(state)  (\(attachment.id.short))"
    }

    static func editTrip(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("trip")
        let changes = TripChanges(name: try context.arguments.option("--name"),
                                  startDate: try context.arguments.date("--start"),
                                  endDate: try context.arguments.date("--end"),
                                  notes: try context.arguments.option("--notes"))
        try context.finishArguments()
        // Checked before the container is opened: a script without EDITOR= fails at once, not in a hidden vi.
        let editor = TripEditor.editor(environment: context.environment, isTerminal: StandardStream.input.isTerminal)
        guard !changes.isEmpty || editor != nil else {
            throw CommandLineError.usage("trip edit without --name, --start, --end or --notes opens $VISUAL or $EDITOR, and neither is set (nor is there a terminal for vi): give the fields as options, or set EDITOR")
        }
        let store = try context.store()
        let id = try store.resolveID(Trip.self, reference)
        guard let editor, changes.isEmpty else {
            try store.editTrip(id: id, changes: changes)
            return
        }
        try TripEditor(context: context).edit(tripId: id, editor: editor)
    }

    static func deleteTrip(_ context: CommandContext) throws {
        let confirmed = context.arguments.flag("--yes")
        let reference = try context.arguments.recordID("trip")
        try context.finishArguments()
        // On a terminal it asks first; without one (scripts) it goes ahead, as it always has:
        // the trash is the way back.
        if !confirmed && StandardStream.input.isTerminal {
            let store = try context.store()
            let (trip, held) = try store.readTransaction {
                let id = try store.resolveID(Trip.self, reference)
                let counts = [(try store.places(tripId: id).count, "place"), (try store.bookings(tripId: id).count, "booking"),
                              (try store.attachments(tripId: id).count, "attachment")]
                let held = counts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")" }.joined(separator: ", ")
                return (try store.trip(id: id), held)
            }
            context.closeContainer()
            let question = "Move trip \(trip.name)\(held.isEmpty ? "" : " with " + held) to the trash?"
            guard try askYesOrNo(terminalSafe(question)) else { return context.console.diagnostic("nothing was deleted") }
        }
        try moveToTrash(.trip, reference, context)
    }

    /// Asks on the terminal; true for "y" or "yes".
    static func askYesOrNo(_ question: String) throws -> Bool {
        let answer = try StandardStream.input.readLine(prompt: question + " [y/N] ")
        let text = String(decoding: answer, as: UTF8.self).lowercased().filter { !$0.isWhitespace }
        return text == "y" || text == "yes"
    }

    /// `trip delete`, `place delete`, `booking delete`, `attachment delete`: to the trash, saying
    /// on stderr what went and how to get it back (nothing on stdout).
    static func moveToTrash(_ kind: RecordKind, _ reference: String, _ context: CommandContext) throws {
        let container = try context.container()
        let entry = try Trash.delete(kind, id: try container.store.resolveID(kind, reference), container: container)
        context.console.diagnostic(trashedMessage(entry))
    }

    /// `moved booking X with 1 attachment to the trash; …`: what went, and how to bring it back.
    static func trashedMessage(_ entry: TrashEntry) -> String {
        let with = describe(entry.contents)
        return terminalSafe("""
            moved \(entry.kind.rawValue) \(entry.name)\(with.isEmpty ? "" : " with " + with) to the trash; \
            `app trash restore \(entry.id.prefix(8))` puts it back until \(entry.purgeAfter.withOffset(0).localDate)
            """) + (entry.syncState == .pendingDeletion ? "; the server will be told at the next sync" : "")
    }
}

/// `trip show --json`: the trip's keys, with its places, bookings and attachments.
struct TripDetail: Encodable {
    let trip: Trip
    let places: [Place]
    let bookings: [Booking]
    let attachments: [Attachment]

    enum CodingKeys: String, CodingKey { case places, bookings, attachments }

    // By hand for its shape: the trip's own keys, flat (as `Trip` writes them), then its records.
    func encode(to encoder: any Encoder) throws {
        try trip.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(places, forKey: .places)
        try container.encode(bookings, forKey: .bookings)
        try container.encode(attachments, forKey: .attachments)
    }
}
