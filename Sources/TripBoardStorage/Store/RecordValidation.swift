public import TripBoardSystem
public import TripBoardReadPath

// Whole records checked field by field with `FieldRules`, in the form the store keeps them. Every
// path that writes a record goes through these (`Store.insert` calls them again as a last line),
// and sync will check what the server sends with them. A broken rule throws
// `StoreError.invalidField` naming the field, or `.invalidData` for a rule across fields.

extension Trip {
    /// This trip in the form the store keeps (name trimmed, id lowercased, `updatedAt` in UTC),
    /// or the first rule it breaks.
    public func validated() throws -> Trip {
        var trip = self
        trip.id = try FieldRules.id(id)
        trip.name = try FieldRules.line(name, field: "name")
        trip.notes = try FieldRules.notes(notes)
        try FieldRules.dateRange(start: startDate, end: endDate)
        (trip.remoteVersion, trip.updatedAt) = try FieldRules.syncMetadata(syncState, remoteVersion, updatedAt)
        return trip
    }
}

// `Trip`, `Place` and `Booking` are validated deliberately alike, one `FieldRules` call a field:
// their fields and rules differ, and each reads best as its own list.
extension Place {
    /// This place in the form the store keeps, or the first rule it breaks.
    public func validated() throws -> Place {
        var place = self
        place.id = try FieldRules.id(id)
        place.tripId = try FieldRules.id(tripId, field: "tripId")
        place.name = try FieldRules.line(name, field: "name")
        place.city = try FieldRules.optionalLine(city, field: "city")
        (place.remoteVersion, place.updatedAt) = try FieldRules.syncMetadata(syncState, remoteVersion, updatedAt)
        return place
    }
}

extension Booking {
    /// This booking in the form the store keeps (`startsAt` and `endsAt` as `YYYY-MM-DDTHH:MM:SS±HH:MM` or `YYYY-MM-DD`), or
    /// the first rule it breaks.
    public func validated() throws -> Booking {
        var booking = self
        booking.id = try FieldRules.id(id)
        booking.tripId = try FieldRules.id(tripId, field: "tripId")
        booking.title = try FieldRules.line(title, field: "title")
        booking.startsAt = try startsAt.map { try FieldRules.startsAt($0) }
        booking.endsAt = try endsAt.map { try FieldRules.bookingTime($0, field: "endsAt") }
        try FieldRules.bookingTimes(startsAt: booking.startsAt, endsAt: booking.endsAt)
        booking.zone = try FieldRules.zone(zone)
        booking.reference = try FieldRules.optionalLine(reference, field: "reference", limit: FieldRules.referenceLimit)
        (booking.remoteVersion, booking.updatedAt) = try FieldRules.syncMetadata(syncState, remoteVersion, updatedAt)
        return booking
    }
}

extension Attachment {
    /// This attachment row in the form the store keeps, or the first rule it breaks. The hash
    /// is 64 lowercase hex digits, or empty for a row whose file was lost (`missing`) or whose
    /// bytes are not hashed yet (`hashIsUnverified`).
    public func validated() throws -> Attachment {
        var attachment = self
        attachment.id = try FieldRules.id(id)
        attachment.bookingId = try FieldRules.id(bookingId, field: "bookingId")
        attachment.originalFilename = try FieldRules.filename(originalFilename)
        attachment.contentType = try FieldRules.contentType(contentType)
        guard byteCount >= 0 else { throw StoreError.invalidField(field: "byteCount", rule: "must not be negative") }
        if let pageCount, pageCount < 1 { throw StoreError.invalidField(field: "pageCount", rule: "must be at least 1") }
        let isHash = contentHash.utf8.count == 64 && contentHash.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        // Empty: a row whose file is missing, or one whose bytes are not hashed yet (`hashIsUnverified`).
        guard isHash || contentHash.isEmpty else {
            throw StoreError.invalidField(field: "contentHash", rule: "must be 64 lowercase hex digits (BLAKE2b-256)")
        }
        attachment.createdAt = try FieldRules.stamp(createdAt, field: "createdAt")
        (attachment.remoteVersion, attachment.updatedAt) = try FieldRules.syncMetadata(syncState, remoteVersion, updatedAt)
        return attachment
    }
}

extension TripDraft {
    /// The rules a new trip can be held to before any store is opened (its id and stamps are the
    /// store's to make): `trip add` checks them first, so a refused draft creates no container.
    public func checked() throws -> TripDraft {
        var draft = self
        draft.name = try FieldRules.line(name, field: "name")
        draft.notes = try FieldRules.notes(notes)
        try FieldRules.dateRange(start: startDate, end: endDate)
        return draft
    }
}

extension FieldRules {
    /// A trip's dates: the end may not be before the start (both ends are days of the trip).
    public static func dateRange(start: CivilDate, end: CivilDate) throws {
        guard end >= start else {
            throw StoreError.invalidData("the end date \(end) is before the start date \(start)")
        }
    }

    /// `remoteVersion` and `updatedAt` checked, and consistent with `state`; `updatedAt` in UTC.
    static func syncMetadata(_ state: SyncState, _ version: Int64?, _ updatedAt: String) throws -> (Int64?, String) {
        let version = try remoteVersion(version)
        try syncState(state, remoteVersion: version)
        return (version, try stamp(updatedAt))
    }
}
