import TripBoardSQLite
import TripBoardSystem
package import TripBoardModel

/// Every row of the four record tables held to the rules every path that writes one keeps
/// (`validated()`: `FieldRules`, as import and sync use them), in the form the store keeps it,
/// for a store that comes from outside — a backup's (`RestoreVerification`) — or that `container
/// check` looks at: an id that is no UUID (no command can name it), a date that is no day
/// (2026-02-30), a name over its limit, an id two records share, an attachment whose path is not
/// the container's own `attachments/<xx>/<id>.<ext>` (`store/TripBoard.sqlite`, say).
/// docs/storage.md, Rows held to the rules.
extension Store {
    /// The first `limit` rows that break a rule, one line each (`trip <id>: <rule>`).
    package func rowsBreakingRules(limit: Int = 20) throws -> [String] {
        var problems: [String] = []
        func check(_ kind: String, _ id: String, _ body: () throws -> Void) {
            guard problems.count < limit else { return }
            do { try body() } catch { problems.append("\(kind) \(id.prefix(40)): \(Self.ruleText(error))") }
        }
        try connection.statement("SELECT \(RecordRows.tripColumns), trashed_at, trashed_with FROM trips").forEachRow { row in
            let trip = RecordRows.trip(from: row)
            check("trip", trip.id.text) {
                try Self.day(row.text(TripColumn.startDate), field: "startDate")
                try Self.day(row.text(TripColumn.endDate), field: "endDate")
                try Self.syncState(row.text(TripColumn.syncState))
                try Self.canonicalRow(row, TripColumn.self)
                try Self.trashColumns(row.optionalText(TripColumn.count), row.optionalText(TripColumn.count + 1))
            }
        }
        try connection.statement("SELECT \(RecordRows.placeColumns), trashed_at, trashed_with FROM places").forEachRow { row in
            let place = RecordRows.place(from: row)
            check("place", place.id.text) {
                try Self.syncState(row.text(PlaceColumn.syncState))
                try Self.canonicalRow(row, PlaceColumn.self)
                try Self.trashColumns(row.optionalText(PlaceColumn.count), row.optionalText(PlaceColumn.count + 1))
            }
        }
        try connection.statement("SELECT \(RecordRows.bookingColumns), trashed_at, trashed_with FROM bookings").forEachRow { row in
            let booking = RecordRows.booking(from: row)
            check("booking", booking.id.text) {
                guard BookingKind(rawValue: row.text(BookingColumn.kind)) != nil else {
                    throw StoreError.invalidField(field: "kind", rule: "is not a booking kind")
                }
                try Self.syncState(row.text(BookingColumn.syncState))
                try Self.canonicalRow(row, BookingColumn.self)
                try Self.trashColumns(row.optionalText(BookingColumn.count), row.optionalText(BookingColumn.count + 1))
            }
        }
        try connection.statement("SELECT \(Self.attachmentColumns), trashed_with FROM attachments").forEachRow { row in
            var attachment = Self.attachment(from: row).anyState
            check("attachment", attachment.id.text) {
                // The deletion queue unlinks the file a row names: its path is checked first.
                try FieldRules.attachmentPath(attachment.relativePath, id: attachment.id.text)
                guard Attachment.State(rawValue: row.text(8)) != nil else { throw StoreError.invalidField(field: "state", rule: "is not an attachment state") }
                try Self.syncState(row.text(10))
                // No booking once its booking is gone and the row waits for its file's deletion
                // (the table's CHECK says when): the id rule applies to a booking it names.
                if row.optionalText(1) == nil { attachment.bookingId = Booking.ID(attachment.id.text) }
                try Self.canonical(attachment, try attachment.validated())
                // The model holds moments, not their text: the stamps are checked as stored.
                try Self.storedStamp(row.text(9), field: "createdAt")
                try Self.storedStamp(row.text(12), field: "updatedAt")
                try Self.trashColumns(row.optionalText(13), row.optionalText(Self.attachmentColumnCount))
            }
        }
        if problems.count < limit, let shared = try idSharedByTwoRecords() {
            problems.append("\(shared): an id two records share (an id is unique across trips, places, bookings and attachments)")
        }
        return problems
    }

    /// An id held by records of two tables, if any (each table's own key makes it unique there).
    private func idSharedByTwoRecords() throws -> String? {
        try connection.text("""
            SELECT 'trip ' || id FROM trips WHERE id IN (SELECT id FROM places UNION ALL SELECT id FROM bookings UNION ALL SELECT id FROM attachments)
            UNION ALL SELECT 'place ' || id FROM places WHERE id IN (SELECT id FROM bookings UNION ALL SELECT id FROM attachments)
            UNION ALL SELECT 'booking ' || id FROM bookings WHERE id IN (SELECT id FROM attachments)
            LIMIT 1
            """)
    }

    private static func day(_ text: String, field: String) throws {
        guard CivilDate(text) != nil else { throw StoreError.invalidField(field: field, rule: "is not a day (YYYY-MM-DD)") }
    }

    private static func syncState(_ text: String) throws {
        guard SyncState(rawValue: text) != nil else { throw StoreError.invalidField(field: "syncState", rule: "is not a sync state") }
    }

    /// The row as read must already be in the form `validated()` gives (an id in capitals, a
    /// name with spaces around it, a stamp with an offset: no path of TripBoard's writes that).
    private static func canonical<T: Equatable>(_ stored: T, _ checked: T) throws {
        guard stored == checked else { throw StoreError.invalidData("not in the form TripBoard keeps it (\(Self.firstDifference(stored, checked)))") }
    }

    private static func firstDifference<T>(_ stored: T, _ checked: T) -> String {
        let pairs = zip(Mirror(reflecting: stored).children, Mirror(reflecting: checked).children)
        return pairs.first { "\($0.value)" != "\($1.value)" }.map { $0.0.label ?? "a field" } ?? "a field"
    }

    /// A record row (selected with `Column.selectList`) whose every value, as stored, is what
    /// `validated()` makes of it — the sync state aside (a tombstone's is checked by `syncState`).
    /// Compared as stored text, not as models: a model holds the moment a stamp names, and
    /// `…T10:00:00.000+01:00` names the same one as `…T09:00:00.000Z`.
    private static func canonicalRow<Column: RecordColumn>(_ row: Statement, _ columns: Column.Type) throws {
        var stored = Column.storedValues(from: RowValues(row))
        stored[Column.syncState.rawValue] = .text(SyncState.pendingUpload.rawValue)
        let checked = Column.values(of: try Column.validated(values: stored))
        if let column = Column.allCases.first(where: { stored[$0.rawValue] != checked[$0.rawValue] }) {
            throw StoreError.invalidData("not in the form TripBoard keeps it (\(column.spec.field))")
        }
    }

    /// A stamp as TripBoard keeps it: UTC, with milliseconds.
    private static func storedStamp(_ text: String, field: String) throws {
        if try FieldRules.stamp(text, field: field) != text {
            throw StoreError.invalidField(field: field, rule: "is not a UTC stamp as TripBoard keeps it")
        }
    }

    /// `trashed_at` a stamp and `trashed_with` an id, where set.
    private static func trashColumns(_ at: String?, _ with: String?) throws {
        if let at { try storedStamp(at, field: "trashedAt") }
        if let with, try FieldRules.id(with, field: "trashedWith") != with {
            throw StoreError.invalidField(field: "trashedWith", rule: "is not an id as TripBoard keeps it")
        }
    }

    private static func ruleText(_ error: any Error) -> String {
        switch error as? StoreError {
        case .invalidField(let field, let rule)?: "\(field) \(rule)"
        case .invalidData(let detail)?: detail
        default: "\(error)"
        }
    }
}

/// A record with its sync bookkeeping's combination left out of the comparison: the rules of
/// `validated()` on its fields, ids and stamps, not which states need a version (sync writes
/// states its own way: a deletion sent again to a server that lost the record has none).
private protocol AnySyncState { var syncState: SyncState { get set } }
extension Trip: AnySyncState {}
extension Place: AnySyncState {}
extension Booking: AnySyncState {}
extension Attachment: AnySyncState {}
extension AnySyncState {
    fileprivate var anyState: Self {
        var copy = self
        copy.syncState = .pendingUpload
        return copy
    }
}
