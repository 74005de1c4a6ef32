import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// The store step's conversion inside SQLite: one `INSERT … SELECT` per table from the attached
/// legacy copy into the new store, in the legacy rowid order. Every field conversion that is not a
/// plain copy or `lower()` of an ASCII id calls the Swift code `LegacyConverter` uses (the field
/// rules of `FieldRules`, which trim names and normalise times), registered
/// as SQL functions, so the two cannot drift apart; and the verification step compares a digest
/// of what the store then holds with the one the plan took through `LegacyConverter` itself.
enum LegacySQLConversion {
    /// `?1` is the migration's `migratedAt`, the `updated_at` of records version 1 had none for.
    static let statements = [
        """
        INSERT INTO main.trips (id, name, start_date, end_date, notes, sync_state, remote_version, updated_at)
        SELECT lower(id), tripboard_field('name', name), tripboard_date(start_date), tripboard_date(end_date), coalesce(notes, ''),
               'pendingUpload', NULL, tripboard_stamp(updated_at)
        FROM legacy.trips ORDER BY rowid
        """,
        """
        INSERT INTO main.places (id, trip_id, name, city, visited, sync_state, remote_version, updated_at)
        SELECT lower(id), lower(trip_id), tripboard_field('name', name), tripboard_field('city', city),
               CAST(coalesce(visited, 0) AS INTEGER) <> 0, 'pendingUpload', NULL, ?1
        FROM legacy.places ORDER BY rowid
        """,
        """
        INSERT INTO main.bookings (id, trip_id, kind, title, starts_at, starts_at_epoch, reference, sync_state, remote_version, updated_at,
                                   over_at_epoch)
        SELECT lower(id), lower(trip_id), tripboard_kind(kind), tripboard_field('title', title), tripboard_instant(starts_at),
               tripboard_epoch(tripboard_instant(starts_at)), tripboard_field('reference', reference), 'pendingUpload', NULL, ?1,
               tripboard_over_epoch(tripboard_instant(starts_at))
        FROM legacy.bookings ORDER BY rowid
        """,
        """
        INSERT INTO main.attachments (id, booking_id, original_filename, content_type, byte_count, content_hash, page_count,
                                      relative_path, state, created_at, sync_state, remote_version, updated_at)
        SELECT lower(a.id), lower(a.booking_id), tripboard_field('originalFilename', a.filename),
               tripboard_field('contentType', a.content_type), coalesce(f.byte_count, 0), '',
               NULL, coalesce(f.destination, tripboard_destination(lower(a.id), a.relative_path)),
               CASE WHEN f.number IS NULL THEN 'missing' ELSE 'present' END, tripboard_stamp(a.created_at), 'pendingUpload', NULL, ?1
        FROM legacy.attachments AS a LEFT JOIN plan.files AS f ON f.attachment_id = lower(a.id) ORDER BY a.rowid
        """,
    ]

    /// Registers the conversion functions on `connection` and attaches the legacy copy as
    /// `legacy`, under the copy's own key (both are sealed). It stays attached: the connection is
    /// the built store's, closed when the store is published.
    static func attach(legacyCopy copy: LegacyStore, to connection: Connection) throws {
        try register(on: connection)
        try connection.attach(copy.path, as: "legacy", sealing: copy.connection.sealing)
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
        try connection.attachInTheClear(fileListPath, as: "plan")
        try connection.statement(statements[3]).run([.text(migratedAt)])
        try connection.execute("DETACH DATABASE plan")
    }

    private static func register(on connection: Connection) throws {
        try connection.defineFunction("tripboard_date", argumentCount: 1) { arguments in
            LegacySQLConversion.converted(arguments[0]) { CivilDate($0)?.description }
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
