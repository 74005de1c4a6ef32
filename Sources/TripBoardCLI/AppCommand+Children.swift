import TripBoardStorage

extension AppCommand {
    static var childCommands: [CommandSpec] {
        [
            CommandSpec(words: ["place", "add"], usage: "place add --trip ID --name NAME [--city CITY]",
                        summary: "Adds a place to see on a trip and prints its id.", run: addPlace),
            CommandSpec(words: ["place", "list"], usage: "place list --trip ID [--json]",
                        summary: "Lists a trip's places in the order they were added.", run: listPlaces),
            CommandSpec(words: ["place", "visit"], usage: "place visit ID [--undo]",
                        summary: "Marks a place visited (--undo: not visited).", run: visitPlace),
            CommandSpec(words: ["place", "delete"], usage: "place delete ID",
                        summary: "Moves a place to the trash (restorable for 30 days).", run: deletePlace),
            CommandSpec(words: ["booking", "add"],
                        usage: "booking add --trip ID --kind KIND --title TITLE [--starts-at ISO8601] [--reference REF]",
                        summary: """
                        Adds a booking and prints its id. KIND is flight, train, hotel, car, event or other. \
                        --starts-at is e.g. 2026-12-12T07:35+00:00; without an offset the time is local (TZ).
                        """, run: addBooking),
            CommandSpec(words: ["booking", "list"], usage: "booking list --trip ID [--json]",
                        summary: "Lists a trip's bookings, earliest first.", run: listBookings),
            CommandSpec(words: ["booking", "delete"], usage: "booking delete ID",
                        summary: "Moves a booking and its attachments to the trash (restorable for 30 days).", run: deleteBooking),
        ]
    }

    static func addPlace(_ context: CommandContext) throws {
        let tripReference = try context.arguments.requiredRecordIDOption("--trip", "trip")
        let name = try context.arguments.requiredOption("--name")
        let city = try context.arguments.option("--city")
        try context.finishArguments()
        let store = try context.store()
        let place = try store.addPlace(tripId: try store.resolveID(.trip, tripReference), name: name, city: city)
        context.console.print(place.id)
    }

    static func listPlaces(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let tripReference = try context.arguments.requiredRecordIDOption("--trip", "trip")
        try context.finishArguments()
        let store = try context.store()
        let places = store.placeRows(tripId: try store.resolveID(.trip, tripReference))
        if json { return try context.console.printJSONArray(places) }
        try context.console.printTable(header: ["ID", "NAME", "CITY", "VISITED", "SYNC"], places) { place in
            [String(place.id.prefix(8)), place.name, place.city ?? "", place.visited ? "yes" : "no", place.syncState.rawValue]
        }
    }

    static func visitPlace(_ context: CommandContext) throws {
        let undo = context.arguments.flag("--undo")
        let reference = try context.arguments.recordID("place")
        try context.finishArguments()
        let store = try context.store()
        try store.setVisited(placeId: try store.resolveID(.place, reference), !undo)
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
        let reference = try context.arguments.option("--reference")
        try context.finishArguments()
        let kind = try FieldRules.bookingKind(kindText, field: "--kind")
        var startsAt: Timestamp?
        if let startsAtText {
            guard let parsed = Timestamp(iso8601: startsAtText) else {
                throw CommandLineError.usage("--starts-at '\(startsAtText.prefix(40))' is not an ISO 8601 date and time, e.g. 2026-12-12T07:35+00:00")
            }
            startsAt = parsed
        }
        let store = try context.store()
        let booking = try store.addBooking(BookingDraft(tripId: try store.resolveID(.trip, tripReference), kind: kind,
                                                        title: title, startsAt: startsAt, reference: reference))
        context.console.print(booking.id)
    }

    static func listBookings(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let tripReference = try context.arguments.requiredRecordIDOption("--trip", "trip")
        try context.finishArguments()
        let store = try context.store()
        let bookings = store.bookingRows(tripId: try store.resolveID(.trip, tripReference))
        if json { return try context.console.printJSONArray(bookings) }
        try context.console.printTable(header: ["ID", "KIND", "TITLE", "STARTS AT", "REFERENCE", "SYNC"], bookings) { booking in
            [String(booking.id.prefix(8)), booking.kind.rawValue, booking.title, booking.startsAt ?? "",
             booking.reference ?? "", booking.syncState.rawValue]
        }
    }

    static func deleteBooking(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("booking")
        try context.finishArguments()
        try moveToTrash(.booking, reference, context)
    }
}
