public import TripBoardReadPath
import TripBoardSystem

/// A partial edit of a place: `nil` leaves a field as it is; an empty or blank `city` removes it.
public struct PlaceChanges: Sendable, Equatable {
    public var name: String?
    public var city: String?

    public init(name: String? = nil, city: String? = nil) {
        self.name = name
        self.city = city
    }

    public var isEmpty: Bool { name == nil && city == nil }
}

/// A partial edit of a booking: `nil` leaves a field as it is; an empty `startsAt`, `endsAt`,
/// `reference` or `zone` removes it (a start cannot go while an end stays).
public struct BookingChanges: Sendable, Equatable {
    public var kind: BookingKind?
    public var title: String?
    /// A date (all day) or an ISO 8601 time, as `booking add --starts-at` takes it.
    public var startsAt: String?
    public var endsAt: String?
    public var reference: String?
    /// An IANA zone name. A new zone with no new time keeps the booking's instants and writes
    /// them in the zone's offsets (`07:35+00:00` in Europe/Lisbon becomes `08:35+01:00` in
    /// Europe/Paris): the ticket said when, the zone says how to show it.
    public var zone: String?

    public init(kind: BookingKind? = nil, title: String? = nil, startsAt: String? = nil, endsAt: String? = nil,
                reference: String? = nil, zone: String? = nil) {
        self.kind = kind
        self.title = title
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.reference = reference
        self.zone = zone
    }

    public var isEmpty: Bool { kind == nil && title == nil && startsAt == nil && endsAt == nil && reference == nil && zone == nil }
}

extension Store {
    /// Applies `changes` to a live place in one transaction, each field through its `FieldRules`
    /// rule. A change makes the place pendingUpload with a new `updatedAt`; an edit that changes
    /// nothing leaves its sync state alone (as `editTrip`).
    @discardableResult
    public func editPlace(id: String, changes: PlaceChanges) throws -> Place {
        try connection.writeTransaction {
            let rows = try connection.statement(
                "SELECT \(RecordRows.placeColumns) FROM places WHERE id = ? AND \(RecordRows.live)"
            ).rows([.text(id)], RecordRows.place(from:))
            guard let current = rows.first else { throw StoreError.notFound(kind: .place, id: id) }
            var updated = current
            if let name = changes.name { updated.name = try FieldRules.line(name, field: "name") }
            if let city = changes.city { updated.city = try FieldRules.optionalLine(city, field: "city") }
            guard updated != current else { return current }
            updated.syncState = .pendingUpload
            updated.updatedAt = stamp()
            try connection.statement("UPDATE places SET name = ?, city = ?, sync_state = ?, updated_at = ? WHERE id = ?").run([
                .text(updated.name), .optional(updated.city), .text(updated.syncState.rawValue), .text(updated.updatedAt), .text(id),
            ])
            try noteFieldEdits(.place, id: id, changed: (updated.name != current.name ? ["name"] : []) + (updated.city != current.city ? ["city"] : []),
                               before: current.updatedAt, at: updated.updatedAt)
            return updated
        }
    }

    /// Applies `changes` to a live booking in one transaction, each field through its
    /// `FieldRules` rule and the end checked against the start; the booking's order keys
    /// (`starts_at_epoch`, `over_at_epoch`) follow. Sync state as for `editPlace`.
    @discardableResult
    public func editBooking(id: String, changes: BookingChanges) throws -> Booking {
        try connection.writeTransaction {
            let current = try booking(id: id)
            var updated = current
            if let kind = changes.kind { updated.kind = kind }
            if let title = changes.title { updated.title = try FieldRules.line(title, field: "title") }
            if let text = changes.startsAt {
                updated.startsAt = text.trimmingWhitespace().isEmpty ? nil : try FieldRules.startsAt(text)
            }
            if let text = changes.endsAt {
                updated.endsAt = text.trimmingWhitespace().isEmpty ? nil : try FieldRules.bookingTime(text, field: "endsAt")
            }
            if let reference = changes.reference {
                updated.reference = try FieldRules.optionalLine(reference, field: "reference", limit: FieldRules.referenceLimit)
            }
            if let zone = changes.zone {
                updated.zone = zone.isEmpty ? nil : try FieldRules.zone(zone)
                if let name = updated.zone, name != current.zone, let rules = try? TimeZoneRules.named(name) {
                    // Unchanged times follow the zone: same instant, the zone's offset then.
                    if changes.startsAt == nil { updated.startsAt = updated.startsAt.map { BookingTime.reexpressed($0, in: rules) } }
                    if changes.endsAt == nil { updated.endsAt = updated.endsAt.map { BookingTime.reexpressed($0, in: rules) } }
                }
            }
            try FieldRules.bookingTimes(startsAt: updated.startsAt, endsAt: updated.endsAt)
            guard updated != current else { return current }
            updated.syncState = .pendingUpload
            updated.updatedAt = stamp()
            let epochs = BookingTime.epochs(startsAt: updated.startsAt, endsAt: updated.endsAt)
            try connection.statement("""
                UPDATE bookings SET kind = ?, title = ?, starts_at = ?, starts_at_epoch = ?, ends_at = ?, over_at_epoch = ?,
                                    reference = ?, zone = ?, sync_state = ?, updated_at = ?
                WHERE id = ?
                """).run([
                .text(updated.kind.rawValue), .text(updated.title), .optional(updated.startsAt), .optional(epochs.start),
                .optional(updated.endsAt), .optional(epochs.overAt), .optional(updated.reference), .optional(updated.zone),
                .text(updated.syncState.rawValue), .text(updated.updatedAt), .text(id),
            ])
            let changed = [("kind", updated.kind != current.kind), ("title", updated.title != current.title),
                           ("startsAt", updated.startsAt != current.startsAt), ("endsAt", updated.endsAt != current.endsAt),
                           ("zone", updated.zone != current.zone), ("reference", updated.reference != current.reference)]
            try noteFieldEdits(.booking, id: id, changed: changed.filter(\.1).map(\.0), before: current.updatedAt, at: updated.updatedAt)
            return updated
        }
    }
}

extension BookingDraft {
    /// The rules a new booking can be held to before any store is opened (as `TripDraft.checked`):
    /// its title, times and reference, each through its `FieldRules` rule.
    public func checked() throws -> BookingDraft {
        var draft = self
        draft.title = try FieldRules.line(title, field: "title")
        draft.reference = try FieldRules.optionalLine(reference, field: "reference", limit: FieldRules.referenceLimit)
        draft.zone = try FieldRules.zone(zone)
        for (time, field) in [(start, "startsAt"), (end, "endsAt")] {
            if case .instant(let timestamp) = time { _ = try FieldRules.instant(timestamp, field: field) }
        }
        try FieldRules.bookingTimes(startsAt: start?.text, endsAt: end?.text)
        return draft
    }
}
