import TripBoardSQLite
import TripBoardSystem
import TripBoardReadPath

/// The store step's conversion inside SQLite: one `INSERT … SELECT` per table from the attached
/// legacy copy into the new store, in the legacy rowid order. Every field that is not a constant
/// goes through the Swift rules `LegacyConverter` applies (`FieldRules`: ids, names, notes, dates
/// and their order, times, kinds, file names), registered as SQL functions, so the two cannot
/// drift apart. A value a rule refuses fails the statement; the migration then walks the copy
/// through `LegacyConverter` to name the record and the rule (`LegacyRecordCheck`). This is how a
/// migration into a container with no record checks its trips, places and bookings: once, inside
/// SQLite, while the plan lists the files.
enum LegacySQLConversion {
    /// `?1` is the migration's `migratedAt`, the `updated_at` of records version 1 had none for.
    static let statements = [
        """
        INSERT INTO main.trips (id, name, start_date, end_date, notes, sync_state, remote_version, updated_at)
        SELECT tripboard_id(id), tripboard_field('name', name), tripboard_date(start_date), tripboard_end_date(start_date, end_date),
               tripboard_field('notes', coalesce(notes, '')), 'pendingUpload', NULL, tripboard_stamp(updated_at)
        FROM legacy.trips ORDER BY rowid
        """,
        """
        INSERT INTO main.places (id, trip_id, name, city, visited, sync_state, remote_version, updated_at)
        SELECT tripboard_id(id), tripboard_id(trip_id), tripboard_field('name', name), tripboard_field('city', city),
               CAST(coalesce(visited, 0) AS INTEGER) <> 0, 'pendingUpload', NULL, ?1
        FROM legacy.places ORDER BY rowid
        """,
        """
        INSERT INTO main.bookings (id, trip_id, kind, title, starts_at, starts_at_epoch, reference, sync_state, remote_version, updated_at,
                                   over_at_epoch)
        SELECT tripboard_id(id), tripboard_id(trip_id), tripboard_kind(kind), tripboard_field('title', title), tripboard_instant(starts_at),
               tripboard_epoch(tripboard_instant(starts_at)), tripboard_field('reference', reference), 'pendingUpload', NULL, ?1,
               tripboard_over_epoch(tripboard_instant(starts_at))
        FROM legacy.bookings ORDER BY rowid
        """,
        """
        INSERT INTO main.attachments (id, booking_id, original_filename, content_type, byte_count, content_hash, page_count,
                                      relative_path, state, created_at, sync_state, remote_version, updated_at)
        SELECT tripboard_id(a.id), tripboard_id(a.booking_id), tripboard_field('originalFilename', a.filename),
               tripboard_field('contentType', a.content_type), coalesce(f.byte_count, 0), '',
               NULL, coalesce(f.destination, tripboard_destination(lower(a.id), a.relative_path)),
               CASE WHEN f.number IS NULL THEN 'missing' ELSE 'present' END, tripboard_stamp(a.created_at), 'pendingUpload', NULL, ?1
        FROM legacy.attachments AS a LEFT JOIN plan.files AS f ON f.attachment_id = lower(a.id) ORDER BY a.rowid
        """,
    ]

    /// The first id that two version-1 records share (in any case), across the four tables.
    static let repeatedID = """
        SELECT id FROM (SELECT lower(id) AS id FROM legacy.trips UNION ALL SELECT lower(id) FROM legacy.places
                        UNION ALL SELECT lower(id) FROM legacy.bookings UNION ALL SELECT lower(id) FROM legacy.attachments)
        GROUP BY id HAVING count(*) > 1 LIMIT 1
        """

    /// How many version-1 bookings have a kind this version does not know (converted to `other`).
    static let unknownKinds = "SELECT count(*) FROM legacy.bookings WHERE NOT tripboard_known_kind(kind)"

    /// Registers the conversion functions on `connection` and attaches the legacy copy at
    /// `copyPath` as `legacy`. It stays attached: the connection is the built store's, closed when
    /// the store is published.
    static func attach(legacyCopy copyPath: String, to connection: Connection) throws {
        try register(on: connection)
        try connection.statement("ATTACH DATABASE ?1 AS legacy").run([.text(copyPath)])
    }

    /// Trips, places and bookings (they need nothing from the plan but `migratedAt`).
    static func convertTripsPlacesAndBookings(migratedAt: String, in connection: Connection) throws {
        try connection.statement(statements[0]).run([])  // trips keep their own updated_at
        try connection.statement(statements[1]).run([.text(migratedAt)])
        try connection.statement(statements[2]).run([.text(migratedAt)])
    }

    /// The attachments, with the plan's file list (`MigrationFileList`, at `fileListPath`)
    /// attached as `plan` for the statement (sizes and destinations by attachment id; hashes are
    /// left empty — unverified — for the hashing pass).
    static func convertAttachments(fileListPath: String, migratedAt: String, in connection: Connection) throws {
        try connection.statement("ATTACH DATABASE ?1 AS plan").run([.text(fileListPath)])
        try connection.statement(statements[3]).run([.text(migratedAt)])
        try connection.execute("DETACH DATABASE plan")
    }

    private static func register(on connection: Connection) throws {
        try connection.defineFunction("tripboard_date", argumentCount: 1) { arguments in
            LegacySQLConversion.converted(arguments[0]) { CivilDate($0)?.description }
        }
        try connection.defineFunction("tripboard_id", argumentCount: 1) { arguments in
            LegacySQLConversion.converted(arguments[0]) { try? FieldRules.id($0) }
        }
        // A trip's end date, refused when it is before its start (`FieldRules.dateRange`).
        try connection.defineFunction("tripboard_end_date", argumentCount: 2) { arguments in
            guard let startText = arguments[0], let endText = arguments[1] else { return .null }
            guard let start = CivilDate(startText), let end = CivilDate(endText), (try? FieldRules.dateRange(start: start, end: end)) != nil else {
                return .error(LegacySQLConversion.refused)
            }
            return .text(end.description)
        }
        try connection.defineFunction("tripboard_known_kind", argumentCount: 1) { arguments in
            .integer(arguments[0].flatMap(LegacyConverter.kind) == nil ? 0 : 1)
        }
        try connection.defineFunction("tripboard_stamp", argumentCount: 1) { arguments in
            LegacySQLConversion.converted(arguments[0]) { try? FieldRules.stamp($0) }
        }
        try connection.defineFunction("tripboard_instant", argumentCount: 1) { arguments in
            LegacySQLConversion.converted(arguments[0]) { try? FieldRules.startsAt($0) }
        }
        try connection.defineFunction("tripboard_epoch", argumentCount: 1) { arguments in
            guard let text = arguments[0] else { return .null }
            guard let time = BookingTime(text) else { return .error("not an ISO 8601 timestamp") }
            return .integer(time.startEpoch)
        }
        // When a booking with only a start is over (`Schema.bookingTimesAndSearch`): an all-day one at the end of its day.
        try connection.defineFunction("tripboard_over_epoch", argumentCount: 1) { arguments in
            guard let text = arguments[0] else { return .null }
            guard let time = BookingTime(text) else { return .error("not an ISO 8601 timestamp") }
            return .integer(time.endEpoch)
        }
        try connection.defineFunction("tripboard_kind", argumentCount: 1) { arguments in
            LegacySQLConversion.converted(arguments[0]) { (LegacyConverter.kind($0) ?? .other).rawValue }
        }
        try connection.defineFunction("tripboard_field", argumentCount: 2) { arguments in
            guard let field = arguments[0] else { return .error("no field name") }
            guard let text = arguments[1] else { return .null }
            switch Result(catching: { try LegacySQLConversion.field(field, text) }) {
            case .success(let converted?): return .text(converted)
            case .success(nil): return .null
            case .failure: return .error(LegacySQLConversion.refused)
            }
        }
        try connection.defineFunction("tripboard_destination", argumentCount: 2) { arguments in
            guard let id = arguments[0], let legacyPath = arguments[1] else { return .null }
            return .text(LegacyConverter.destination(attachmentID: id, legacyPath: legacyPath))
        }
    }

    private static let refused = "a value the plan accepted cannot be converted"

    /// A text field through its rule (`FieldRules`), as `LegacyConverter` converts it through
    /// `validated()`: `nil` for an optional field left blank.
    private static func field(_ name: String, _ text: String) throws -> String? {
        switch name {
        case "name", "title": try FieldRules.line(text, field: name)
        case "notes": try FieldRules.notes(text)
        case "city": try FieldRules.optionalLine(text, field: name)
        case "reference": try FieldRules.optionalLine(text, field: name, limit: FieldRules.referenceLimit)
        case "originalFilename": try FieldRules.filename(text)
        case "contentType": try FieldRules.contentType(text)
        default: throw StoreError.invalidField(field: name, rule: "has no conversion")
        }
    }

    /// NULL for NULL; `transform` of the text, or an error (which fails the statement) when it
    /// refuses the value — the plan accepted every row, so this means the copy differs from it.
    private static func converted(_ text: String?, _ transform: (String) -> String?) -> FunctionResult {
        guard let text else { return .null }
        guard let converted = transform(text) else { return .error(refused) }
        return .text(converted)
    }
}
