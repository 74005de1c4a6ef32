public import TripBoardModel
import TripBoardSQLite
import TripBoardSystem

/// Values entered for some of a record's columns — by a person (`booking edit --reference X`) or
/// a ticket — as text: an empty one removes an optional field. Each is read by its column's form
/// and held to its rule when applied (`Store.editPlace`, …), so that a declared column is
/// editable with no code of its own.
package struct EnteredValues<Column: RecordColumn>: Sendable, Equatable {
    private var texts: [Column: String] = [:]

    package init() {}

    package subscript(column: Column) -> String? {
        get { texts[column] }
        set { texts[column] = newValue }
    }

    package var isEmpty: Bool { texts.isEmpty }

    /// `record` with these values set, each as its column's form reads it (`ColumnForm.value(entered:field:)`);
    /// the rules are `validated()`'s.
    package func applied(to record: Column.Record) throws -> Column.Record {
        var values: [(Column, SQLValue)] = []
        for column in Column.allCases {
            guard let text = texts[column] else { continue }
            values.append((column, try column.spec.value(entered: text)))
        }
        return Column.record(record, setting: values)
    }
}

/// A partial edit of a place: `nil` leaves a field as it is; an empty or blank `city` removes it.
public struct PlaceChanges: Sendable, Equatable {
    package var entered = EnteredValues<PlaceColumn>()

    public init(name: String? = nil, city: String? = nil) {
        entered[.name] = name
        entered[.city] = city
    }

    public var name: String? { get { entered[.name] } set { entered[.name] = newValue } }
    public var city: String? { get { entered[.city] } set { entered[.city] = newValue } }
    public var isEmpty: Bool { entered.isEmpty }
}

/// A partial edit of a booking: `nil` leaves a field as it is; an empty `startsAt`, `endsAt`,
/// `reference` or `zone` removes it (a start cannot go while an end stays). Any column of the
/// declaration can be set by its case (`changes.entered[.reference]`).
public struct BookingChanges: Sendable, Equatable {
    package var entered = EnteredValues<BookingColumn>()

    public init(kind: BookingKind? = nil, title: String? = nil, startsAt: String? = nil, endsAt: String? = nil,
                reference: String? = nil, zone: String? = nil) {
        entered[.kind] = kind?.rawValue
        entered[.title] = title
        entered[.startsAt] = startsAt
        entered[.endsAt] = endsAt
        entered[.reference] = reference
        entered[.zone] = zone
    }

    public var kind: BookingKind? {
        get { entered[.kind].flatMap(BookingKind.init(rawValue:)) }
        set { entered[.kind] = newValue?.rawValue }
    }
    public var title: String? { get { entered[.title] } set { entered[.title] = newValue } }
    /// A date (all day) or an ISO 8601 time, as `booking add --starts-at` takes it.
    public var startsAt: String? { get { entered[.startsAt] } set { entered[.startsAt] = newValue } }
    public var endsAt: String? { get { entered[.endsAt] } set { entered[.endsAt] = newValue } }
    public var reference: String? { get { entered[.reference] } set { entered[.reference] = newValue } }
    /// An IANA zone name. A new zone with no new time keeps the booking's instants and writes
    /// them in the zone's offsets (`07:35+00:00` in Europe/Lisbon becomes `08:35+01:00` in
    /// Europe/Paris): the ticket said when, the zone says how to show it.
    public var zone: String? { get { entered[.zone] } set { entered[.zone] = newValue } }
    /// The end's own zone (`''` removes it): a new one with no new end keeps the end's instant
    /// and writes it in that zone's offset, as `zone` does the booking's times.
    public var endZone: String? { get { entered[.endZone] } set { entered[.endZone] = newValue } }
    public var isEmpty: Bool { entered.isEmpty }
}

extension Store {
    /// Applies `changes` to a live place in one transaction, each field through its declared
    /// rule. A change makes the place pendingUpload with a new `updatedAt`; an edit that changes
    /// nothing leaves its sync state alone (as `editTrip`).
    @discardableResult
    public func editPlace(id: Place.ID, changes: PlaceChanges) throws -> Place {
        try connection.writeTransaction {
            let current = try place(id: id)
            return try writeEdit(PlaceColumn.self, current, try PlaceColumn.validated(changes.entered.applied(to: current)))
        }
    }

    /// The live place with exactly this id.
    public func place(id: Place.ID) throws -> Place {
        guard let found = try connection.statement("SELECT \(RecordRows.placeColumns) FROM places WHERE id = ? AND \(RecordRows.live)")
            .rows([.text(id.text)], RecordRows.place(from:)).first else {
            throw StoreError.notFound(kind: .place, id: id.text)
        }
        return found
    }

    /// Applies `changes` to a live booking in one transaction, each field through its declared
    /// rule and the end checked against the start; the booking's order keys (`starts_at_epoch`,
    /// `over_at_epoch`) follow. Sync state as for `editPlace`.
    @discardableResult
    public func editBooking(id: Booking.ID, changes: BookingChanges) throws -> Booking {
        try connection.writeTransaction {
            let current = try booking(id: id)
            var updated = try changes.entered.applied(to: current)
            if let name = updated.zone, name != current.zone, let rules = try? TimeZoneRules.named(name) {
                // Unchanged times follow the zone: same instant, the zone's offset then (an end
                // with a zone of its own keeps it).
                if changes.startsAt == nil { updated.startsAt = updated.startsAt.map { BookingTime.reexpressed($0, in: rules) } }
                if changes.endsAt == nil, updated.endZone == nil { updated.endsAt = updated.endsAt.map { BookingTime.reexpressed($0, in: rules) } }
            }
            // An end removed takes its zone with it; an end zone removed leaves the end in the
            // booking's zone, the same instant in its offset.
            if changes.endsAt?.isEmpty == true { updated.endZone = nil }
            if let name = updated.endZone, name != current.endZone, changes.endsAt == nil, let rules = try? TimeZoneRules.named(name) {
                updated.endsAt = updated.endsAt.map { BookingTime.reexpressed($0, in: rules) }
            }
            if current.endZone != nil, updated.endZone == nil, changes.endsAt == nil,
               let name = updated.zone, let rules = try? TimeZoneRules.named(name) {
                updated.endsAt = updated.endsAt.map { BookingTime.reexpressed($0, in: rules) }
            }
            // An end zone that is the booking's zone is none of its own.
            if updated.endZone != nil, updated.endZone == updated.zone { updated.endZone = nil }
            return try writeEdit(BookingColumn.self, current, try BookingColumn.validated(updated))
        }
    }

    /// Writes `updated` over `current`, a live record read in this transaction, when a field
    /// differs: pendingUpload with a new `updatedAt`, every column rewritten, and the fields that
    /// changed noted for the merge (`noteFieldEdits`). Returns what the store now holds.
    func writeEdit<Column: RecordColumn>(_ columns: Column.Type, _ current: Column.Record, _ updated: Column.Record) throws -> Column.Record {
        let changed = Column.changedFields(from: current, to: updated)
        guard !changed.isEmpty else { return current }
        let now = stamp()
        let written = Column.record(updated, setting: [(.syncState, .text(SyncState.pendingUpload.rawValue)), (.updatedAt, .text(now))])
        try update(Column.self, written)
        try syncLedger.noteFieldEdits(Column.recordKind, id: Column.text(.id, of: current), changed: changed,
                           before: Column.text(.updatedAt, of: current), at: now)
        return written
    }
}

extension BookingDraft {
    /// The rules a new booking can be held to before any store is opened (as `TripDraft.checked`):
    /// its declaration's, every field in the form the store keeps it.
    public func checked() throws -> BookingDraft {
        // The trip may still be a prefix the store resolves (`booking add --trip f429`).
        var record = booking
        record.tripId = RecordID(ImportDocument.placeholderID)
        record = try record.validated()
        record.tripId = booking.tripId
        var draft = self
        draft.booking = record
        return draft
    }
}

extension Store {
    /// Writes every column of a validated `record` over its row (`RecordColumn.update`): once per
    /// pulled record and per edit, so the statement's text is made once per kind.
    func update<Column: RecordColumn>(_ columns: Column.Type, _ record: Column.Record) throws {
        let sql = Self.updates[Column.recordKind] ?? Column.update(Column.recordKind.table)
        try connection.statement(sql).run(Column.updateValues(of: record))
    }

    private static let updates: [RecordKind: String] = [
        .trip: TripColumn.update("trips"), .place: PlaceColumn.update("places"), .booking: BookingColumn.update("bookings"),
    ]
}
