public import TripBoardSystem
public import TripBoardStorage
import TripBoardWorkerContract
public import TripBoardModel
public import TripBoardDevice

/// What to import and where: the share extension's command line, checked.
public struct TicketFilingRequest: Sendable {
    /// How messages name the source: its path, or `standard input`.
    public var sourceName: String
    /// The name the attachment keeps (`--name`, else the source's file name).
    public var originalFilename: String
    /// `--trip`: an id or unique prefix.
    public var tripReference: String?
    /// `--booking`: an id or unique prefix.
    public var bookingReference: String?
    /// The size cap (`--max-size`).
    public var maximumBytes: Int64
    /// The thumbnail's square box, in pixels.
    public var thumbnailSize: Int
    /// Today, for the trips offered when no trip contains the ticket's date.
    public var today: CivilDate
    /// `--zone`: the IANA zone the ticket's times are in, over any the ticket or the trip suggests.
    public var zone: String?
    /// `--protection`: the class the ticket's file (and its thumbnail) is sealed under.
    public var protection: ProtectionClass

    public static let defaultMaximumBytes: Int64 = 50 << 20

    public init(sourceName: String, originalFilename: String, tripReference: String? = nil, bookingReference: String? = nil,
                maximumBytes: Int64 = TicketFilingRequest.defaultMaximumBytes, thumbnailSize: Int = 200,
                today: CivilDate = Timestamp.now().localDate, zone: String? = nil, protection: ProtectionClass = .completeUnlessOpen) {
        self.zone = zone
        self.protection = protection
        self.sourceName = sourceName
        self.originalFilename = originalFilename
        self.tripReference = tripReference
        self.bookingReference = bookingReference
        self.maximumBytes = maximumBytes
        self.thumbnailSize = thumbnailSize
        self.today = today
    }
}

/// What an import did. `--json` prints this object.
public struct TicketFilingResult: Sendable, Equatable, Encodable {
    public enum Outcome: String, Sendable, Encodable {
        /// A new attachment was stored.
        case attached
        /// These exact bytes were already attached to the booking (or, when the booking was to be
        /// created from the ticket, to a booking of the trip): nothing new was stored.
        case alreadyAttached
        /// These are the bytes of an attachment that had lost its file (`missing`), anywhere in the
        /// container: the file was put back in its place and the row is `present` again.
        case restored
    }

    public var outcome: Outcome
    public var attachment: Attachment
    public var booking: Booking
    /// True when the booking was created from the ticket's fields by this import.
    public var bookingCreated: Bool
    /// True when the ticket went to a booking already in the trip that its reference and start
    /// (or its flight or train number and date) match, rather than to a new one.
    public var bookingMatched: Bool
    /// The zone a booking made from the ticket reads its times in, and why; nil when no booking
    /// was made (or the ticket shows no date).
    public var zone: TicketZone?
    public var tripId: Trip.ID
    public var tripName: String
    /// What was read from the ticket.
    public var detected: TicketFields
    public var pageCount: Int
    /// Whether a thumbnail was made and cached, sealed under the attachment's class (`app
    /// attachment thumbnail ID FILE` writes it out); false when none could be (`thumbnailError`
    /// says why).
    public var thumbnailCached: Bool
    public var thumbnailError: String?
    /// The trip's dates when the booking made from the ticket starts outside them (it is kept, as
    /// `booking add` keeps one); nil otherwise. Said on stderr, not part of the JSON.
    public var outsideTrip: ClosedRange<CivilDate>?

    enum CodingKeys: String, CodingKey {
        case outcome, attachment, booking, bookingCreated, bookingMatched, zone, tripId, tripName, detected, pageCount,
             thumbnailCached, thumbnailError
    }
}

/// The zone a ticket's times are read in, and where it came from, in this order: `--zone`; the
/// departure airport the ticket names (IATA code), else the place its departure station or its
/// hotel's name names (`PlaceZones`); the zone of the trip's booking nearest in time that has
/// one; the city of one of the trip's places; the sharer's `TZ` last.
public struct TicketZone: Sendable, Equatable, Encodable {
    public enum Source: String, Sendable, Encodable {
        case option, departureAirport, ticketPlace, tripBooking, tripPlace, sharer
    }

    /// An IANA zone name; nil when the sharer's TZ names none (a fixed offset).
    public var name: String?
    public var source: Source
    /// The airport's code, the place's name, or the booking's or place's id, that decided it.
    public var from: String?

    /// How `share-extension` says it: `Europe/Lisbon (the departure airport, LIS)`.
    public var summary: String {
        let zone = name ?? "a fixed offset"
        return switch source {
        case .option: "\(zone) (--zone)"
        case .departureAirport: "\(zone) (the departure airport, \(from ?? ""))"
        case .ticketPlace: "\(zone) (\(from ?? ""), where the ticket starts)"
        case .tripPlace: "\(zone) (the city of place \(from?.prefix(8) ?? "") of the trip)"
        case .tripBooking: "\(zone) (that of booking \(from?.prefix(8) ?? "") of the trip, the nearest in time)"
        case .sharer: "\(zone) (TZ, this computer's: the ticket names no place of a known zone; --zone sets one)"
        }
    }
}

/// Why a ticket could not be filed (beyond a bad PDF, `PDFImportError`, and a bad reference,
/// `StoreError`). One line each; nothing was stored.
public enum TicketFilingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source has no bytes.
    case empty(source: String)
    /// No single trip contains the ticket's date (or it has none): the user must say which.
    case tripNeeded(date: CivilDate?, candidates: [Trip])
    /// `--booking` names a booking of another trip than `--trip`.
    case bookingNotInTrip(bookingId: Booking.ID, tripId: Trip.ID)

    public var description: String {
        switch self {
        case .empty(let source):
            return "\(source) is empty; nothing was imported"
        case .tripNeeded(let date, let candidates):
            let reason = switch (date, candidates.count) {
            case (nil, _): "the ticket shows no date"
            case (let date?, 0): "no trip contains \(date) and there is no upcoming trip"
            case (let date?, _) where candidates.allSatisfy({ $0.startDate <= date && date <= $0.endDate }):
                "\(candidates.count) trips contain \(date)"
            case (let date?, _): "no trip contains \(date)"
            }
            let listed = candidates.prefix(5).map { "\($0.id.short) \($0.name) (\($0.startDate)–\($0.endDate))" }
            let more = candidates.count > 5 ? ", …" : ""
            return "\(reason); choose one with --trip" + (listed.isEmpty ? "" : ": " + listed.joined(separator: ", ") + more)
        case .bookingNotInTrip(let bookingId, let tripId):
            return "booking \(bookingId.short) belongs to another trip than \(tripId.short); drop --trip or pick a booking of that trip"
        }
    }
}

/// Files a PDF ticket into the container, in the order that keeps every instant consistent (the
/// file durable before the row that names it: docs/storage.md §4.3):
///
/// 1. references checked (unknown trip or booking: refused before a byte is written);
/// 2. the bytes read once, capped: into a memory file, hashed with BLAKE2b and sealed into `tmp/`
///    as they come, `%PDF-` checked in the first 1024 bytes;
/// 3. the memory file parsed by `pdf-worker` (limits, timeout), which also renders the thumbnail
///    into `tmp/`, while this process finishes the hash and the seal and fsyncs the staged copy;
/// 4. the booking chosen (`--booking`) or built from the ticket's fields, in `--trip` or the trip
///    whose dates contain the ticket's date; the same bytes already there → reported, not stored;
/// 5. the file renamed to `attachments/<xx>/<id>.pdf` and both directories fsynced;
/// 6. one transaction: the booking it creates and the attachment row;
/// 7. the thumbnail moved into the cache and the cache trimmed — a failure here is reported, never fatal.
///
/// Before step 4, bytes that an attachment row lost (`missing`, anywhere in the container) go
/// back into that row's place instead (`restoreMissingFile`), and the row is `present` again.
///
/// Killed anywhere, it leaves at most a file in `tmp/` (steps 2–5) or an unreferenced file under
/// `attachments/` (between 5 and 6), both removed by `container check --repair`; never a row
/// without its file. Crash points: `import.staged`, `import.inspected`, `import.restored` (a lost
/// file back in place, its row still `missing`: `container check --repair` marks it present),
/// `import.published`, `import.committed`.
public struct TicketFiling {
    let container: Container
    let worker: PDFWorker

    public init(container: Container, worker: PDFWorker) {
        self.container = container
        self.worker = worker
    }

    /// Imports the bytes of `source`. Warnings (the thumbnail could not be made or cached) are in
    /// the result; everything else that goes wrong throws with nothing stored.
    public func run(source: FileDescriptor, request: TicketFilingRequest) throws -> TicketFilingResult {
        let store = try container.store
        let requestedTrip = try request.tripReference.map { try store.trip(id: try store.resolveID(Trip.self, $0)) }
        let requestedBooking = try request.bookingReference.map { try store.booking(id: try store.resolveID(Booking.self, $0)) }
        if let requestedBooking, let requestedTrip, requestedBooking.tripId != requestedTrip.id {
            throw TicketFilingError.bookingNotInTrip(bookingId: requestedBooking.id, tripId: requestedTrip.id)
        }
        let originalFilename = try FieldRules.filename(request.originalFilename, field: "name")

        let files = try AttachmentFiles(container: container)
        // The plaintext goes to memory only: read once, each chunk written into a memory file
        // for the worker while a second thread hashes it and a third seals it into tmp/; the
        // memory file is then sealed against changes and parsed while the hash and the seal
        // finish and the sealed copy is fsynced — all done before publishing.
        let copy = try FileDescriptor.memoryFile(name: "tripboard-share")
        let staging = try files.stageShared(from: source, sourceName: request.sourceName, maximumBytes: request.maximumBytes, memory: copy) { head, byteCount in
            guard byteCount > 0 else { throw TicketFilingError.empty(source: request.sourceName) }
            guard PDFWorkerLimits.hasHeader(head) else { throw PDFImportError.notPDF(file: request.sourceName) }
            // The class's key once the file is known to be worth filing (a first share makes the
            // device's keys: not for an empty file); a closed class refuses here.
            return try files.sealingStage(protection: request.protection, prefix: "import")
        }
        try copy.sealContents()
        var sealing: Result<StagedFile, any Error> = .failure(FileSystemError(code: .io, systemCall: "seal", path: files.staging.path, detail: "not run"))
        let inspection: PDFInspection
        do {
            inspection = try worker.inspect(
                memoryFile: copy, displayName: request.sourceName, thumbnail: true, thumbnailSize: request.thumbnailSize, textPages: 2,
                maximumBytes: Int(clamping: request.maximumBytes),
                whileRunning: { sealing = Result { try staging.finish() } })
        } catch {
            // A PDF the worker refuses: its sealed copy is not kept either.
            if case .success(let staged) = sealing { files.discard(staged) }
            throw error
        }
        let staged = try sealing.get()
        var stagedFileIsOurs = true
        defer { if stagedFileIsOurs { files.discard(staged) } }
        CrashPoint.reach("import.staged")
        let png = inspection.thumbnail?.pngBytes
        CrashPoint.reach("import.inspected")
        let tripGiven = try requestedTrip ?? requestedBooking.map { try store.trip(id: $0.tripId) }
        let detected = try withYear(TicketFields.extract(from: inspection.text), trip: tripGiven, today: request.today)
        if var restored = try restoreMissingFile(staged, files: files, detected: detected, pageCount: inspection.pageCount) {
            stagedFileIsOurs = false
            restored.thumbnailError = inspection.thumbnailError
            if let png { cacheThumbnail(png, staging: files.staging, into: &restored) }
            return restored
        }

        var result = try planFiling(staged, inspection: inspection, detected: detected, requestedTrip: requestedTrip,
                                    requestedBooking: requestedBooking, originalFilename: originalFilename, today: request.today,
                                    zoneOption: request.zone)
        if let existing = try existingCopy(of: staged.contentHash, booking: requestedBooking, tripId: result.tripId)
            ?? hashingUnverified(like: staged, booking: requestedBooking, tripId: result.tripId, files: files) {
            try reportAlreadyAttached(existing, in: &result)
        } else {
            result.attachment.relativePath = try files.publish(staged, id: result.attachment.id.text, fileExtension: "pdf")
            stagedFileIsOurs = false
            CrashPoint.reach("import.published")
            try commit(&result, files: files)
            CrashPoint.reach("import.committed")
        }
        if let png { cacheThumbnail(png, staging: files.staging, into: &result) }
        return result
    }

    /// Where the ticket goes and what it makes: the trip (`--trip`, `--booking`'s, else the one
    /// containing the ticket's date), the booking (`--booking`, one that matches the ticket, else
    /// a new one from its fields) and the attachment row, not yet written.
    func planFiling(_ staged: StagedFile, inspection: PDFInspection, detected: TicketFields, requestedTrip: Trip?,
                    requestedBooking: Booking?, originalFilename: String, today: CivilDate, zoneOption: String?) throws -> TicketFilingResult {
        let store = try container.store
        let trip: Trip
        if let requestedBooking {
            trip = try requestedTrip ?? store.trip(id: requestedBooking.tripId)
        } else if let requestedTrip {
            trip = requestedTrip
        } else {
            trip = try tripContaining(detected.departureDate, today: today)
        }
        let matchedBooking = requestedBooking == nil ? try matchingBooking(for: detected, tripId: trip.id) : nil
        var zone: TicketZone?
        if requestedBooking == nil && matchedBooking == nil && detected.departureDate != nil {
            zone = try ticketZone(for: detected, tripId: trip.id, option: zoneOption)
        }
        let plannedBooking = try requestedBooking ?? matchedBooking
            ?? newBooking(from: detected, tripId: trip.id, filename: originalFilename, zone: zone)
        let startDate = plannedBooking.startsAt?.date
        var result = TicketFilingResult(
            outcome: .attached, attachment: Attachment(
                id: .make(), bookingId: plannedBooking.id, originalFilename: originalFilename,
                contentType: "application/pdf", byteCount: staged.byteCount, contentHash: .verified(staged.contentHash),
                pageCount: Int64(inspection.pageCount), relativePath: "", state: .present, createdAt: store.now(),
                syncState: .pendingUpload, remoteVersion: nil, updatedAt: store.now(), protection: staged.protection),
            booking: plannedBooking, bookingCreated: requestedBooking == nil && matchedBooking == nil,
            bookingMatched: matchedBooking != nil, zone: zone, tripId: trip.id, tripName: trip.name,
            detected: detected, pageCount: inspection.pageCount, thumbnailCached: false, thumbnailError: inspection.thumbnailError)
        if let startDate, !(trip.startDate...trip.endDate).contains(startDate) { result.outsideTrip = trip.startDate...trip.endDate }
        return result
    }

    /// The user's lost file came back: the same bytes as an attachment row marked `missing`,
    /// wherever it is filed (whatever `--trip`/`--booking` say, since those bytes belong to that
    /// row). The staged file goes to the row's place, never over anything there; then the row is
    /// `present`. `nil` when no row lost these bytes or its place is taken: an ordinary import.
    func restoreMissingFile(_ staged: StagedFile, files: AttachmentFiles, detected: TicketFields,
                            pageCount: Int) throws -> TicketFilingResult? {
        let store = try container.store
        // A row's booking or trip that is not there (or not live) is "no such row"; a store that
        // cannot be read is an error, not a reason to import the bytes a second time.
        func unlessNotFound<T>(_ read: () throws -> T) throws -> T? {
            do {
                return try read()
            } catch {
                if case StoreError.notFound = error { return nil }
                throw error
            }
        }
        guard var row = try store.missingAttachment(contentHash: staged.contentHash, byteCount: staged.byteCount),
              let booking = try unlessNotFound({ try store.booking(id: row.bookingId) }),
              let trip = try unlessNotFound({ try store.trip(id: booking.tripId) }),
              try files.putBack(staged.stagingName, from: files.staging, to: row.relativePath) else { return nil }
        CrashPoint.reach("import.restored")
        try store.markAttachmentPresent(id: row.id)
        row.state = .present
        return TicketFilingResult(outcome: .restored, attachment: (try? store.attachment(id: row.id)) ?? row, booking: booking,
                                  bookingCreated: false, bookingMatched: false, zone: nil, tripId: trip.id, tripName: trip.name, detected: detected,
                                  pageCount: pageCount, thumbnailCached: false, thumbnailError: nil)
    }

    /// `fields` with a year for a departure printed without one (`27MAR`): the year that puts it
    /// inside `trip` (trips cross New Year); with no trip given, the one date of last year, this
    /// year or the next that a single trip contains; else the first such date from `today` on.
    func withYear(_ fields: TicketFields, trip: Trip?, today: CivilDate) throws -> TicketFields {
        guard fields.departureDate == nil, let dayMonth = fields.departureDayMonth else { return fields }
        var fields = fields
        let years = (today.year - 1)...(today.year + 1)
        if let trip {
            fields.departureDate = (trip.startDate.year...trip.endDate.year).compactMap(dayMonth.date(in:))
                .first { trip.startDate <= $0 && $0 <= trip.endDate }
        } else {
            let store = try container.store
            let contained = try years.compactMap(dayMonth.date(in:)).filter { try store.trips(containing: $0).count == 1 }
            if contained.count == 1 { fields.departureDate = contained[0] }
        }
        if fields.departureDate == nil {
            fields.departureDate = (years.lowerBound...(years.upperBound + 4)).compactMap(dayMonth.date(in:)).first { $0 >= today }
        }
        return fields
    }

    /// The one trip whose dates contain `date`; otherwise the error lists the candidates.
    func tripContaining(_ date: CivilDate?, today: CivilDate) throws -> Trip {
        let store = try container.store
        if let date {
            let containing = try store.trips(containing: date)
            if containing.count == 1 { return containing[0] }
            if !containing.isEmpty { throw TicketFilingError.tripNeeded(date: date, candidates: containing) }
        }
        throw TicketFilingError.tripNeeded(date: date, candidates: try store.trips(endingOnOrAfter: today, limit: 6))
    }

    /// The zone the ticket's times are in (`TicketZone`'s order). The nearest booking is by the
    /// distance of its start from the ticket's date. A zone this machine's database does not
    /// hold (a booking synced from a device with newer rules, say) is passed over for the next
    /// source: the times are read in the zone the output names, never in another one silently.
    func ticketZone(for fields: TicketFields, tripId: Trip.ID, option: String?) throws -> TicketZone {
        if let option { return TicketZone(name: option, source: .option) }
        func loads(_ zone: String?) -> Bool { zone.map { (try? TimeZoneRules.named($0)) != nil } ?? false }
        if let origin = fields.origin, let zone = PlaceZones.airport(origin), loads(zone) {
            return TicketZone(name: zone, source: .departureAirport, from: origin)
        }
        // A hotel is where its stay begins — its address's city (which ends it, before its
        // country), else its name's (`Hotel Paris` in Lisbon is in Lisbon); a journey begins
        // where it departs.
        let named = fields.kind == .hotel ? [fields.hotelAddress, fields.hotelName] : [fields.origin]
        for case let text? in named {
            if let (place, zone) = PlaceZones.place(in: text, fromRight: fields.kind == .hotel), loads(zone) {
                return TicketZone(name: zone, source: .ticketPlace, from: place)
            }
        }
        let day = fields.departureDate.map { Int64($0.daysSinceEpoch) * 86_400 + 43_200 } ?? 0
        let nearest = try container.store.bookings(tripId: tripId)
            .compactMap { booking -> (Booking, Int64)? in
                guard booking.zone != nil, let start = booking.startsAt?.startEpoch else { return nil }
                return (booking, abs(start - day))
            }
            .sorted { ($0.1, $0.0.id) < ($1.1, $1.0.id) }
            .first { loads($0.0.zone) }
        if let (booking, _) = nearest { return TicketZone(name: booking.zone, source: .tripBooking, from: booking.id.text) }
        for place in try container.store.places(tripId: tripId) {
            if let city = place.city, let (_, zone) = PlaceZones.place(in: city), loads(zone) {
                return TicketZone(name: zone, source: .tripPlace, from: place.id.text)
            }
        }
        let local = TimeZoneRules.local()
        return TicketZone(name: local.isDatabaseZone && TimeZoneRules.isPortableZoneName(local.name) ? local.name : nil, source: .sharer)
    }

    /// The booking the ticket describes. A date without a time starts at midnight; times are in
    /// `zone` (`ticketZone`), as with `app booking add --starts-at` without an offset, and the
    /// booking keeps it. A printed time the clocks skip is taken as the first valid time after the
    /// jump, one they show twice as the first: a ticket cannot be asked which it meant.
    func newBooking(from fields: TicketFields, tripId: Trip.ID, filename: String, zone chosen: TicketZone?) throws -> Booking {
        let store = try container.store
        var startsAt: BookingTime?
        var zone: String?
        var checkOut: BookingTime?
        if let date = fields.departureDate {
            let time = fields.departureTime?.description ?? "00:00"
            // `ticketZone` chose a zone that loads (or TZ's, already loaded): a failure now is an
            // error, not a cue to read the times in another zone than the one the output names.
            let named = chosen.flatMap { $0.source == .sharer ? nil : $0.name }
            let local = try named.map { try TimeZoneRules.named($0) } ?? TimeZoneRules.local()
            startsAt = Self.printedTime(date.description + "T" + time, in: local)
            if startsAt != nil, local.isDatabaseZone, TimeZoneRules.isPortableZoneName(local.name) { zone = local.name }
            // A hotel's check-out is on its check-in's clock: a time, or its day when none is printed.
            if fields.kind == .hotel, let out = fields.arrivalDate {
                checkOut = out > date ? fields.arrivalTime.map { Self.printedTime(out.description + "T" + $0.description, in: local) }
                    ?? .allDay(out) : nil
            }
        }
        let (endsAt, endZone) = fields.kind == .hotel ? (checkOut, zone) : Self.arrival(of: fields, startsAt: startsAt, zone: zone)
        let fallbackTitle = filename.hasSuffix(".pdf") || filename.hasSuffix(".PDF") ? String(filename.dropLast(4)) : filename
        return try Booking(id: .make(), tripId: tripId, kind: fields.kind ?? .other,
                           title: fields.suggestedTitle ?? (fallbackTitle.isEmpty ? "Ticket" : fallbackTitle),
                           startsAt: startsAt, reference: fields.reference, syncState: .pendingUpload, remoteVersion: nil,
                           updatedAt: store.now(), endsAt: endsAt, zone: zone, seat: fields.seat,
                           endZone: endZone == zone ? nil : endZone).validated()
    }

    /// A wall-clock time a ticket prints, in `rules`: one the clocks skip is the first valid time
    /// after the jump, one they show twice the first of the two (a ticket cannot be asked).
    static func printedTime(_ text: String, in rules: TimeZoneRules) -> BookingTime? {
        switch BookingTime.reading(text, in: rules, checkingOffset: false) {
        case .time(let time): time
        case .gap(_, let after): .instant(after)
        case .overlap(let earlier, _): .instant(earlier)
        case .wrongOffset, .unreadable: nil
        }
    }

    /// The end of a journey whose arrival the ticket prints, on the clock of where it arrives:
    /// the place named on the arrival's line (an airport code, a city), else the destination of
    /// the route. Its day: the date printed with it (a day and month takes the year that puts it
    /// nearest the departure), else the departure's moved by a printed marker (`(+1)`), else the
    /// first of the day before the departure to two days after that comes after the departure
    /// (a night train arrives the next day; a flight across the date line the day before). Nil
    /// when no place of a known zone says where it arrives, or it would not fall within three
    /// days after the start: no end is better than a wrong one.
    static func arrival(of fields: TicketFields, startsAt: BookingTime?, zone: String?) -> (BookingTime?, String?) {
        guard let arrivalTime = fields.arrivalTime, case .instant(let start)? = startsAt,
              let departureDate = fields.departureDate else { return (nil, nil) }
        let place = fields.arrivalPlace ?? fields.destination
        guard let place, let endZone = PlaceZones.airport(place) ?? PlaceZones.place(in: place)?.zone,
              let rules = try? TimeZoneRules.named(endZone) else { return (nil, nil) }
        let days: [CivilDate]
        if let date = fields.arrivalDate {
            days = [date]
        } else if let dayMonth = fields.arrivalDayMonth {
            days = ((departureDate.year - 1)...(departureDate.year + 1)).compactMap { dayMonth.date(in: $0) }
                .filter { abs($0.daysSinceEpoch - departureDate.daysSinceEpoch) <= 3 }
        } else if let offset = fields.arrivalDayOffset {
            days = [departureDate.adding(days: offset)]
        } else {
            days = (-1...2).map { departureDate.adding(days: $0) }
        }
        for day in days {
            let end = Self.printedTime(day.description + "T" + arrivalTime.description, in: rules)
            if let end, case .instant(let instant) = end, instant.secondsSinceEpoch > start.secondsSinceEpoch,
               instant.secondsSinceEpoch - start.secondsSinceEpoch < 3 * 86_400 {
                return (end, endZone)
            }
        }
        return (nil, nil)
    }

    /// The booking of the trip this ticket is for, when one is already there — typed in by hand,
    /// or filed from another copy of the confirmation: the same reference and the same start, or
    /// the same flight or train number on the same date. The same start is the same wall clock in
    /// the booking's own calendar (its date when the ticket prints no time; any start when the
    /// booking has none), or the same instant where the ticket names the place it starts from (a
    /// train typed in at 22:30 New York time is the 04:30 Köln departure of the next day). Only a
    /// single match counts; two or more, or none, and the ticket makes a booking of its own.
    func matchingBooking(for fields: TicketFields, tripId: Trip.ID) throws -> Booking? {
        guard fields.reference != nil || (fields.number != nil && fields.departureDate != nil) else { return nil }
        let instant = Self.printedStart(of: fields)
        let matches = try container.store.bookings(tripId: tripId).filter { Self.booking($0, matches: fields, startingAt: instant) }
        return matches.count == 1 ? matches[0] : nil
    }

    /// When the journey starts, where the ticket names the place it starts from (an airport's
    /// code, a known station or city) and prints a date and time; nil otherwise.
    static func printedStart(of fields: TicketFields) -> Timestamp? {
        guard let date = fields.departureDate, let time = fields.departureTime, let origin = fields.origin,
              let zone = PlaceZones.airport(origin) ?? PlaceZones.place(in: origin)?.zone,
              let rules = try? TimeZoneRules.named(zone),
              case .instant(let start)? = printedTime(date.description + "T" + time.description, in: rules) else { return nil }
        return start
    }

    static func booking(_ booking: Booking, matches fields: TicketFields, startingAt instant: Timestamp? = nil) -> Bool {
        // The booking's own calendar: its date and wall-clock time in the offset it was written in.
        let date = booking.startsAt?.date.description
        let time: String? = if case .instant(let start)? = booking.startsAt { start.clockText } else { nil }
        let sameInstant: Bool = if let instant, case .instant(let start)? = booking.startsAt {
            start.secondsSinceEpoch == instant.secondsSinceEpoch
        } else { false }
        let sameDate = sameInstant || fields.departureDate.map { date == $0.description } ?? false
        if let reference = fields.reference, let own = booking.reference,
           normalized(own) == normalized(reference) {
            guard let date, !sameInstant else { return true }
            guard let ticketDate = fields.departureDate else { return true }
            guard date == ticketDate.description else { return false }
            return fields.departureTime.map { time == nil || time == $0.description } ?? true
        }
        if let number = fields.number, sameDate, fields.kind == nil || fields.kind == booking.kind {
            let title = normalized(booking.title)
            let wanted = normalized(number)
            guard title.hasPrefix(wanted) else { return false }
            // `TP1351` must not match `TP13510`.
            return title.utf8.dropFirst(wanted.utf8.count).first.map { !($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) } ?? true
        }
        return false
    }

    /// Uppercased, without spaces, dots and hyphens: `tp 1351` and `TP1351`, `4012.345.678` and
    /// `4012345678` are the same.
    private static func normalized(_ text: String) -> String {
        String(text.uppercased().unicodeScalars.filter { $0 != " " && $0 != "." && $0 != "-" }.map(Character.init))
    }

    /// The live attachment already holding these bytes: in `booking`, or in any booking of the
    /// trip when the booking is to be created from the ticket (sharing a ticket twice).
    func existingCopy(of contentHash: String, booking: Booking?, tripId: Trip.ID) throws -> Attachment? {
        if let booking { return try container.store.attachment(bookingId: booking.id, contentHash: contentHash) }
        return try container.store.attachment(tripId: tripId, contentHash: contentHash)
    }

    /// The live attachment holding these bytes among rows not hashed yet (a migrated container
    /// before its hashing pass reached them): each of the same size, in `booking` or (when the
    /// booking is to be created) in any booking of the trip, is hashed on the spot and its hash
    /// recorded — a pending hash equals nothing. Outside the commit's transaction, so the files
    /// are read without holding the write lock; the commit then finds the hash recorded.
    func hashingUnverified(like staged: StagedFile, booking: Booking?, tripId: Trip.ID, files: AttachmentFiles) throws -> Attachment? {
        let store = try container.store
        for var candidate in try store.unverifiedAttachments(bookingId: booking?.id, tripId: tripId, byteCount: staged.byteCount) {
            guard let hash = try AttachmentHashing.verifiedHash(of: candidate, files: files, recordingIn: store) else { continue }
            if hash == staged.contentHash {
                candidate.contentHash = .verified(hash)
                return candidate
            }
        }
        return nil
    }

    func reportAlreadyAttached(_ existing: Attachment, in result: inout TicketFilingResult) throws {
        result.outcome = .alreadyAttached
        result.attachment = existing
        result.booking = try container.store.booking(id: existing.bookingId)
        result.bookingCreated = false
        result.bookingMatched = false
    }

    /// Step 6: the booking (when new) and the attachment row in one transaction, after checking
    /// again what may have changed since step 1 (another process deleted the trip, or filed the
    /// same bytes first). On failure or a duplicate, the published file is removed again.
    func commit(_ result: inout TicketFilingResult, files: AttachmentFiles) throws {
        let store = try container.store
        let duplicate: Attachment?
        do {
            let filed = result
            duplicate = try store.fileAttachment(filed.attachment, booking: filed.booking, creatingBooking: filed.bookingCreated,
                                                 tripId: filed.tripId) {
                try existingCopy(of: filed.attachment.contentHash.stored, booking: filed.bookingCreated ? nil : filed.booking, tripId: filed.tripId)
            }
        } catch {
            try? files.remove(relativePath: result.attachment.relativePath)  // else an orphan for container check --repair
            throw error
        }
        if let duplicate {
            try files.remove(relativePath: result.attachment.relativePath)
            try reportAlreadyAttached(duplicate, in: &result)
        }
    }

    /// Step 7: the thumbnail joins the cache (for the attachment that holds the bytes, also when
    /// they were already attached) and the cache is trimmed to `cacheLimitMB`.
    func cacheThumbnail(_ png: [UInt8], staging: Directory, into result: inout TicketFilingResult) {
        do {
            let cache = try ThumbnailCache(container: container)
            let id = result.attachment.id.text
            if try !cache.hasEntry(for: id) { try cache.store(png, for: id, protection: result.attachment.protection, staging: staging) }
            result.thumbnailCached = true
            try cache.trim(container: container, keeping: id)
        } catch {
            result.thumbnailError = "the thumbnail could not be cached: " + errorMessage(for: error)
        }
    }
}
