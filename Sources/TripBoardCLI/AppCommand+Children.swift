import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine

extension AppCommand {
    static var childCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["place", "add"],
                        options: [
                            .value("--trip", "ID", "the trip (an id or a unique prefix of one)", required: true),
                            .value("--name", "NAME", "the place's name (one line)", required: true),
                            .value("--city", "CITY", "the city it is in"),
                            .json,
                        ],
                        summary: "Adds a place to see on a trip and prints its id (--json: the place object).", run: addPlace),
            AppCommandSpec(words: ["place", "list"],
                        options: [
                            .value("--trip", "ID", "the trip (an id or a unique prefix of one)", required: true),
                            .json,
                        ],
                        summary: "Lists a trip's places in the order they were added.", run: listPlaces),
            AppCommandSpec(words: ["place", "visit"],
                        options: [
                            .flag("--undo", "mark it not visited"),
                        ],
                        arguments: [
                            .required("ID", "the place (an id or a unique prefix of one)"),
                        ],
                        summary: "Marks a place visited (--undo: not visited).", run: visitPlace),
            AppCommandSpec(words: ["place", "edit"],
                        options: [
                            .value("--name", "NAME", "the place's name (one line)"),
                            .value("--city", "CITY", "the city it is in ('' removes it)"),
                        ],
                        arguments: [
                            .required("ID", "the place (an id or a unique prefix of one)"),
                        ],
                        summary: "Changes a place's name or city (--city '' removes it); the place becomes pendingUpload.",
                        run: editPlace),
            AppCommandSpec(words: ["place", "delete"],
                        arguments: [
                            .required("ID", "the place (an id or a unique prefix of one)"),
                        ],
                        summary: "Moves a place to the trash (restorable for 30 days).", run: deletePlace),
            AppCommandSpec(words: ["booking", "add"],
                        options: [
                            .value("--trip", "ID", "the trip (an id or a unique prefix of one)", required: true),
                            .choice("--kind", BookingKind.allCases.map(\.rawValue), "flight, train, hotel, car, event or other", required: true),
                            .value("--title", "TITLE", "what it is called (one line)", required: true),
                            .value("--starts-at", "TIME", "when it starts: an ISO 8601 time (local without an offset) or a date alone (all day)"),
                            .value("--ends-at", "TIME", "when it ends (check-out, arrival): not before --starts-at"),
                            .value("--zone", "ZONE", "the IANA time zone of its times, e.g. Europe/Lisbon (default: TZ's, where it fits)"),
                            .value("--end-zone", "ZONE", "the IANA time zone of its end when it is another (where a flight lands, e.g. Asia/Tokyo)"),
                        ] + enteredBookingOptions + [.json],
                        summary: """
                        Adds a booking and prints its id (--json: the booking object). KIND is flight, train, hotel, car, event or other. \
                        TIME is e.g. 2026-12-12T07:35+00:00, or a date alone, 2026-12-14, for all day; without an offset it is a \
                        time in --zone (else in TZ), refused where the clocks skip it or show it twice. --ends-at (check-out, \
                        arrival) needs --starts-at and is not before it; it is read in --end-zone when given (a flight's \
                        landing), and shown on that clock. A booking outside its trip's dates is kept, with a warning.
                        """, run: addBooking),
            AppCommandSpec(words: ["booking", "edit"],
                        options: [
                            .choice("--kind", BookingKind.allCases.map(\.rawValue), "flight, train, hotel, car, event or other"),
                            .value("--title", "TITLE", "what it is called (one line)"),
                            .value("--starts-at", "TIME", "when it starts: an ISO 8601 time (local without an offset) or a date alone (all day)"),
                            .value("--ends-at", "TIME", "when it ends (check-out, arrival): not before --starts-at"),
                            .value("--zone", "ZONE", "the IANA time zone of its times ('' for a fixed offset)"),
                            .value("--end-zone", "ZONE", "the IANA time zone of its end when it is another ('' for the booking's)"),
                        ] + enteredBookingOptions,
                        arguments: [
                            .required("ID", "the booking (an id or a unique prefix of one)"),
                        ],
                        summary: """
                        Changes the given fields of a booking, with the rules of booking add; times without an offset are read \
                        in --zone, else the booking's zone (an end in --end-zone, else the end's own zone). --zone alone keeps \
                        the booking's instants and writes them in the new zone's offsets, as --end-zone does the end's. An empty \
                        value removes --starts-at, --ends-at, --zone, --end-zone\(enteredBookingOptionList). The booking becomes \
                        pendingUpload.
                        """, run: editBooking),
            AppCommandSpec(words: ["booking", "list"],
                        options: [
                            .value("--trip", "ID", "the trip (an id or a unique prefix of one)"),
                            .flag("--upcoming", "only those not over yet (undated ones never)"),
                            .limit,
                            .json,
                        ],
                        summary: """
                        Lists a trip's bookings, earliest first; without --trip, every trip's, in time order. --upcoming: \
                        those not over yet (undated ones never); --limit N prints at most N.
                        """, run: listBookings),
            AppCommandSpec(words: ["booking", "show"],
                        options: [
                            .json,
                        ],
                        arguments: [
                            .required("ID", "the booking (an id or a unique prefix of one)"),
                        ],
                        summary: "Shows one booking with its trip and its attachments. ID may be a unique prefix.", run: showBooking),
            AppCommandSpec(words: ["booking", "merge"],
                        options: [
                            .json,
                        ],
                        arguments: [
                            .required("KEEP", "the booking that stays (an id or a unique prefix of one)"),
                            .required("OTHER", "the booking merged into it, of the same trip, then moved to the trash"),
                        ],
                        summary: """
                        Merges OTHER into KEEP, two bookings of one trip (a ticket filed twice). KEEP takes each field it \
                        lacks from OTHER (a start with its end; a zone keeps KEEP's instants) and OTHER's attachments, \
                        except copies of files KEEP has; OTHER goes to the trash with what is left, restorable for 30 \
                        days. A field KEEP has stays as it is. --json: {"kept", "fieldsTaken", "fieldsLeft", \
                        "attachmentsMoved", "copiesLeft", "trashEntry"}.
                        """, run: mergeBookings),
            AppCommandSpec(words: ["booking", "delete"],
                        arguments: [
                            .required("ID", "the booking (an id or a unique prefix of one)"),
                        ],
                        summary: "Moves a booking and its attachments to the trash (restorable for 30 days).", run: deleteBooking),
        ]
    }

    /// `booking add` and `booking edit`'s options for the columns the declaration enters as
    /// plain text (`BookingColumn.entered`: `--reference`, …).
    static var enteredBookingOptions: [OptionSpec] { BookingColumn.entered.map { .value($0.option.name, $0.option.valueName, $0.option.help) } }
    /// `, --reference or --seat`-like: those options, for a list that ends with them.
    static var enteredBookingOptionList: String {
        let names = BookingColumn.entered.map(\.option.name)
        return names.enumerated().map { ($0.offset == names.count - 1 ? " or " : ", ") + $0.element }.joined()
    }

    /// The values given for the columns entered as plain text.
    static func enteredBookingValues(_ context: CommandContext) throws -> EnteredValues<BookingColumn> {
        var entered = EnteredValues<BookingColumn>()
        for (column, option) in BookingColumn.entered { entered[column] = try context.arguments.option(option.name) }
        return entered
    }

    /// Checks `entered` by each column's rule, named by its option, before any container is opened.
    static func checkEnteredBookingValues(_ entered: EnteredValues<BookingColumn>) throws {
        for (column, option) in BookingColumn.entered {
            if let text = entered[column] { _ = try column.spec.rule.apply(toOptional: text, field: option.name) }
        }
    }

    static func addPlace(_ context: CommandContext) throws {
        let tripReference = try context.arguments.requiredRecordIDOption("--trip", "trip")
        let name = try context.arguments.requiredOption("--name")
        let city = try context.arguments.option("--city")
        let json = context.wantsJSON()
        try context.finishArguments()
        let store = try context.store()
        let place = try store.addPlace(tripId: try store.resolveID(Trip.self, tripReference), name: name, city: city)
        if json { return try context.console.printJSON(place) }
        context.console.print(place.id.text)
    }

    static func listPlaces(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let tripReference = try context.arguments.requiredRecordIDOption("--trip", "trip")
        try context.finishArguments()
        let store = try context.store()
        let tripId = try store.resolveID(Trip.self, tripReference)
        // Printed from the rows' bytes, as `trip list` is (`RawChildListTests`). JSON is for
        // scripts: never filtered by a preference.
        if json { return try context.console.printJSONArray(rowsOf: store.placeRows(tripId: tripId), RecordBytes.placeJSON) }
        let showsVisited = try showsVisitedPlaces(context)
        let list = RecordListCells<PlaceColumn>()
        var times = BookingTimeText(), buffer: [UInt8] = []
        try context.console.printTable(header: list.header, rowsOf: store.placeRows(tripId: tripId, includingVisited: showsVisited)) { row, cells in
            list.append(row, to: &cells, times: &times, buffer: &buffer)
        }
        if !showsVisited { try noteHiddenVisitedPlaces(try store.visitedPlaceCount(tripId: tripId), context) }
    }

    /// The `showsVisitedPlaces` preference: false hides visited places from the human lists
    /// (`place list`, `trip show`), as the app's list does; `--json` always has them.
    static func showsVisitedPlaces(_ context: CommandContext) throws -> Bool {
        try loadPreferences(context).1[.showsVisitedPlaces] != .flag(false)
    }

    /// Says how many visited places the preference hid, and how to show them.
    static func noteHiddenVisitedPlaces(_ count: Int, _ context: CommandContext) throws {
        guard count > 0 else { return }
        context.console.print("(\(count) visited place\(count == 1 ? "" : "s") hidden: `app prefs set showsVisitedPlaces on` shows them)")
    }

    static func visitPlace(_ context: CommandContext) throws {
        let undo = context.arguments.flag("--undo")
        let reference = try context.arguments.recordID("place")
        try context.finishArguments()
        let store = try context.store()
        try store.setVisited(placeId: try store.resolveID(Place.self, reference), !undo)
    }

    static func editPlace(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("place")
        let changes = PlaceChanges(name: try context.arguments.option("--name"), city: try context.arguments.option("--city"))
        try context.finishArguments()
        guard !changes.isEmpty else { throw CommandLineError.usage("nothing to change: give --name or --city") }
        // The values are checked before the container is opened: a refused edit touches nothing.
        if let name = changes.name { _ = try FieldRules.line(name, field: "--name") }
        if let city = changes.city { _ = try FieldRules.optionalLine(city, field: "--city") }
        let store = try context.store()
        try store.editPlace(id: try store.resolveID(Place.self, reference), changes: changes)
    }

    static func deletePlace(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("place")
        try context.finishArguments()
        try moveToTrash(.place, reference, context)
    }

    static func addBooking(_ context: CommandContext) throws {
        let tripReference = try context.arguments.requiredRecordIDOption("--trip", "trip")
        let kindText = try context.arguments.requiredOption("--kind")
        let title = try context.arguments.requiredOption("--title")
        let startsAtText = try context.arguments.option("--starts-at")
        let endsAtText = try context.arguments.option("--ends-at")
        let zoneName = try context.arguments.option("--zone")
        let endZoneName = try context.arguments.option("--end-zone")
        let entered = try enteredBookingValues(context)
        let json = context.wantsJSON()
        try context.finishArguments()
        let kind = try FieldRules.bookingKind(kindText, field: "--kind")
        // Checked before the container is opened: a refused booking creates nothing.
        let times = try BookingZoneInput(zoneOption: zoneName, bookingZone: nil)
        let start = try startsAtText.map { try times.read($0, option: "--starts-at") }
        let endTimes = try endZoneName.flatMap { $0.isEmpty ? nil : try BookingZoneInput(zoneOption: $0, bookingZone: nil, option: "--end-zone") }
        let end = try endsAtText.map { try (endTimes ?? times).read($0, option: "--ends-at", checkingEnd: endTimes != nil) }
        var draft = BookingDraft(tripId: RecordID(tripReference), kind: kind, title: title, start: start, end: end, zone: times.zone(for: start))
        // An end in the booking's own zone has no zone of its own.
        draft.endZone = endTimes?.rules.name == draft.zone ? nil : endTimes?.rules.name
        draft.booking = try entered.applied(to: draft.booking)
        draft = try draft.checked()
        let store = try context.store()
        draft.tripId = try store.resolveID(Trip.self, tripReference)
        let booking = try store.addBooking(draft)
        try warnOutsideTrip(booking, store: store, context: context)
        if json { return try context.console.printJSON(booking) }
        context.console.print(booking.id.text)
    }

    static func editBooking(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("booking")
        let kindText = try context.arguments.option("--kind")
        var changes = BookingChanges(title: try context.arguments.option("--title"),
                                     startsAt: try context.arguments.option("--starts-at"),
                                     endsAt: try context.arguments.option("--ends-at"),
                                     zone: try context.arguments.option("--zone"))
        changes.endZone = try context.arguments.option("--end-zone")
        let entered = try enteredBookingValues(context)
        for (column, _) in BookingColumn.entered { changes.entered[column] = entered[column] }
        try context.finishArguments()
        changes.kind = try kindText.map { try FieldRules.bookingKind($0, field: "--kind") }
        guard !changes.isEmpty else {
            throw CommandLineError.usage("nothing to change: give --kind, --title, --starts-at, --ends-at, --zone, --end-zone\(enteredBookingOptionList)")
        }
        // The values are checked before the container is opened (an empty time removes it).
        if let title = changes.title { _ = try FieldRules.line(title, field: "--title") }
        for (zone, option) in [(changes.zone, "--zone"), (changes.endZone, "--end-zone")] {
            if let zone, !zone.isEmpty { _ = try Arguments.checkedZone(zone, option: option) }
        }
        for (text, option) in [(changes.startsAt, "--starts-at"), (changes.endsAt, "--ends-at")] {
            if let text, !text.isEmpty, BookingTime.reading(text, in: .utc, checkingOffset: false) == .unreadable {
                throw BookingZoneInput.unreadable(text, option: option)
            }
        }
        try checkEnteredBookingValues(entered)
        let store = try context.store()
        let id = try store.resolveID(Booking.self, reference)
        // Typed times are read in the zone the booking will have: the new one, else its own.
        let current = try store.booking(id: id)
        let times = try BookingZoneInput(zoneOption: changes.zone, bookingZone: current.zone)
        var start: BookingTime?
        if let text = changes.startsAt, !text.trimmingWhitespace().isEmpty {
            start = try times.read(text, option: "--starts-at")
            changes.startsAt = start?.text
            if changes.zone == nil, current.zone == nil, let zone = times.zone(for: start) { changes.zone = zone }
        }
        if let text = changes.endsAt, !text.trimmingWhitespace().isEmpty {
            // The end's own zone: the new one, else the booking's; else the booking's times.
            let endZone = changes.endZone.map { $0.isEmpty ? nil : $0 } ?? current.endZone
            let endTimes = try endZone.map { try BookingZoneInput(zoneOption: changes.endZone.flatMap { $0.isEmpty ? nil : $0 }, bookingZone: $0,
                                                                  option: "--end-zone") }
            changes.endsAt = try (endTimes ?? times).read(text, option: "--ends-at", checkingEnd: endTimes?.isNamed == true).text
        }
        let booking = try store.editBooking(id: id, changes: changes)
        if changes.startsAt != nil || changes.endsAt != nil { try warnOutsideTrip(booking, store: store, context: context) }
    }

    /// The one-line warning for a booking that starts or ends outside its trip's dates (on the
    /// booking's own clock; the start, when both are): kept, since plans change, but worth a look.
    static func warnOutsideTrip(_ booking: Booking, store: Store, context: CommandContext) throws {
        let trip = try store.trip(id: booking.tripId)
        for (time, verb) in [(booking.startsAt, "starts"), (booking.endsAt, "ends")] {
            guard let date = time?.date else { continue }
            if date < trip.startDate {
                return context.console.warning("the booking \(verb) on \(date), before its trip starts (\(trip.startDate)); it is kept")
            } else if date > trip.endDate {
                return context.console.warning("the booking \(verb) on \(date), after its trip ends (\(trip.endDate)); it is kept")
            }
        }
    }

    static func showBooking(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let reference = try context.arguments.recordID("booking")
        try context.finishArguments()
        let store = try context.store()
        let (booking, trip, attachments) = try store.readTransaction {
            let booking = try store.booking(id: try store.resolveID(Booking.self, reference))
            return (booking, try store.trip(id: booking.tripId), try store.attachments(tripId: booking.tripId).filter { $0.bookingId == booking.id })
        }
        if json { return try context.console.printJSON(BookingDetail(booking: booking, tripName: trip.name, attachments: attachments)) }
        let console = context.console
        var times = BookingTimeText()
        let start = times.text(booking.startsAt, zone: booking.zone, tripYear: trip.startDate.year) ?? "no date"
        console.print(booking.title)
        console.print("  id:       \(booking.id)")
        console.print("  kind:     \(booking.kind.rawValue)")
        console.print("  trip:     \(trip.name)  (\(trip.id.short))")
        console.print("  when:     " + start + (times.text(booking.endsAt, zone: booking.zoneOfEnd, tripYear: trip.startDate.year).map { " → " + $0 } ?? ""))
        for (label, value) in BookingColumn.labelled(booking) {
            console.print("  " + label + ":" + String(repeating: " ", count: max(1, 9 - label.count)) + value)
        }
        console.print("  sync:     \(booking.syncState.rawValue)\(booking.remoteVersion.map { ", remote version \($0)" } ?? ""), updated \(booking.updatedAt.utcStamp)")
        console.print(attachments.isEmpty ? "  attachments: none" : "  attachments:")
        for attachment in attachments { console.print("    " + attachmentLine(attachment, forBooking: nil)) }
    }

    static func listBookings(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let tripReference = try context.arguments.recordIDOption("--trip", "trip")
        let upcoming = context.arguments.flag("--upcoming")
        let limit = try context.arguments.limit()
        try context.finishArguments()
        let now = try context.now()
        let store = try context.store()
        var times = BookingTimeText()
        var buffer: [UInt8] = []
        // Printed from the rows' bytes, as `trip list` is, the times too (`BookingTimeText.write`).
        guard let tripReference else {
            let found = store.bookingRowsAcrossTrips(upcomingAt: upcoming ? now : nil, limit: limit)
            if json { return try context.console.printJSONArray(rowsOf: found, RecordBytes.bookingJSON) }
            let list = RecordListCells<BookingColumn>(extraHeadings: ["TRIP"])
            try context.console.printTable(header: list.header, emptyMessage: upcoming ? "No upcoming bookings." : "No bookings yet.",
                                           rowsOf: found) { row, cells in
                list.append(row, to: &cells, times: &times, buffer: &buffer, tripYear: RecordBytes.date(row, BookingOfTrip.tripStartColumn).year,
                            extraColumn: BookingOfTrip.tripNameColumn)
            }
            return
        }
        let trip = try store.trip(id: try store.resolveID(Trip.self, tripReference))
        let bookings = store.bookingRows(tripId: trip.id, upcomingAt: upcoming ? now : nil, limit: limit)
        if json { return try context.console.printJSONArray(rowsOf: bookings, RecordBytes.bookingJSON) }
        let list = RecordListCells<BookingColumn>()
        try context.console.printTable(header: list.header, rowsOf: bookings) { row, cells in
            list.append(row, to: &cells, times: &times, buffer: &buffer, tripYear: trip.startDate.year)
        }
    }

    static func mergeBookings(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let keepReference = try Arguments.checkedRecordID(try context.arguments.positional("KEEP booking ID"), "booking")
        let otherReference = try Arguments.checkedRecordID(try context.arguments.positional("OTHER booking ID"), "booking")
        try context.finishArguments()
        let container = try context.container()
        let store = try container.store
        let merge = try store.mergeBookings(keep: try store.resolveID(Booking.self, keepReference), other: try store.resolveID(Booking.self, otherReference))
        Trash.removeThumbnails(of: try store.trash.attachmentIDs(inTrashEntry: merge.trashed.id, of: .booking), container: container)
        if json { return try context.console.printJSON(BookingMergeJSON(merge)) }
        let moved = merge.attachmentsMoved.count
        var took = merge.fieldsTaken
        if moved > 0 { took.append("\(moved) attachment\(moved == 1 ? "" : "s")") }
        var line = "kept booking \(merge.kept.title) (\(merge.kept.id.short))"
        line += took.isEmpty ? ", which took nothing from the other" : ", which took its " + took.joined(separator: ", ")
        if !merge.fieldsLeft.isEmpty {
            line += "; not taken: " + merge.fieldsLeft.joined(separator: ", ")
                + (merge.fieldsLeft.count == 1 ? " (it does not fit this booking)" : " (they do not fit this booking)")
        }
        if !merge.copiesLeft.isEmpty {
            line += "; \(merge.copiesLeft.count) copy\(merge.copiesLeft.count == 1 ? "" : " copies") of a file it has stayed with the other"
        }
        context.console.diagnostic(terminalSafe(line))
        context.console.diagnostic(trashedMessage(merge.trashed))
    }

    static func deleteBooking(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("booking")
        try context.finishArguments()
        try moveToTrash(.booking, reference, context)
    }
}

/// `booking show --json`: the booking's own keys, flat (as `Booking` writes them), then its
/// trip's name and its attachments.
struct BookingDetail: Encodable {
    let booking: Booking
    let tripName: String
    let attachments: [Attachment]

    enum CodingKeys: String, CodingKey { case tripName, attachments }

    func encode(to encoder: any Encoder) throws {
        try booking.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tripName, forKey: .tripName)
        try container.encode(attachments, forKey: .attachments)
    }
}


/// `booking merge --json`.
struct BookingMergeJSON: Encodable {
    let kept: Booking
    let fieldsTaken: [String]
    let fieldsLeft: [String]
    let attachmentsMoved: [Attachment.ID]
    let copiesLeft: [Attachment.ID]
    let trashEntry: TrashEntry

    init(_ merge: BookingMerge) {
        (kept, fieldsTaken, fieldsLeft) = (merge.kept, merge.fieldsTaken, merge.fieldsLeft)
        (attachmentsMoved, copiesLeft, trashEntry) = (merge.attachmentsMoved, merge.copiesLeft, merge.trashed)
    }
}
