public import TripBoardSystem

/// The rules for values that are not free text: ids, times, versions, kinds and sync states.
extension FieldRules {
    /// A record id: a UUID in the 8-4-4-4-12 form, version 4 (random) with the RFC 9562 variant
    /// — which also excludes the nil and max UUIDs. Returned in lower case, the only case the
    /// store keeps (an upper-case id is the same id).
    public static func id(_ text: String, field: String = "id") throws -> String {
        guard Identifier.isValid(text) else {
            throw StoreError.invalidField(field: field, rule: "'\(text.prefix(40))' is not a UUID")
        }
        let id = text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }) ? text.lowercased() : text
        let version = id.utf8[id.utf8.index(id.utf8.startIndex, offsetBy: 14)]
        let variant = id.utf8[id.utf8.index(id.utf8.startIndex, offsetBy: 19)]
        guard version == UInt8(ascii: "4"), [UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(variant) else {
            let what = id.utf8.allSatisfy { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "-") } ? "the nil UUID" : "not a version-4 (random) UUID"
            throw StoreError.invalidField(field: field, rule: "\(id) is \(what); TripBoard ids are random version-4 UUIDs")
        }
        return id
    }

    /// `id(_:field:)` for a typed id.
    public static func id<Record>(_ id: RecordID<Record>, field: String = "id") throws -> RecordID<Record> {
        RecordID(try self.id(id.text, field: field))
    }

    /// A moment TripBoard stores (`updatedAt`, `createdAt`): ISO 8601, local (`TZ`) without a
    /// zone, returned in UTC with milliseconds (`2026-12-01T00:02:12.338Z`). It must fall within
    /// the years 0001–9999 in UTC, the years an ISO 8601 date has four digits for.
    public static func stamp(_ text: String, field: String = "updatedAt") throws -> String {
        let timestamp = try instant(parse(text, field: field), field: field)
        // A stamp already in the stored form (what exports and the store's own stamps hold) is
        // itself: the parser accepted its fields, and its four-digit UTC year is in range.
        return isStoredStamp(text) ? text : timestamp.utcStamp
    }

    /// `stamp(_:field:)` as the moment it names: what a model holds of text from outside (a pulled
    /// record's `updatedAt`), held to the same rule first.
    public static func stampTime(_ text: String, field: String = "updatedAt") throws -> Timestamp {
        Timestamp(stored: try stamp(text, field: field))
    }

    /// True for text shaped `YYYY-MM-DDTHH:MM:SS.mmmZ`, digits where the digits go.
    private static func isStoredStamp(_ text: String) -> Bool {
        guard text.utf8.count == 24 else { return false }
        for (index, byte) in text.utf8.enumerated() {
            let expected: UInt8? = switch index {
            case 4, 7: UInt8(ascii: "-")
            case 10: UInt8(ascii: "T")
            case 13, 16: UInt8(ascii: ":")
            case 19: UInt8(ascii: ".")
            case 23: UInt8(ascii: "Z")
            default: nil
            }
            if let expected { if byte != expected { return false } } else if !(0x30...0x39).contains(byte) { return false }
        }
        return true
    }

    /// A booking's start, kept in the offset it was given in (`2026-12-12T07:35:00+01:00`): ISO
    /// 8601, local (`TZ`) without a zone, or a date alone for an all-day booking (see
    /// `bookingTime`). Both the time as written and the same instant in UTC must fall within the
    /// years 0001–9999.
    public static func startsAt(_ text: String, field: String = "startsAt") throws -> String {
        try bookingTime(text, field: field)
    }

    /// `timestamp`, if it and the same instant in UTC fall within the years 0001–9999.
    public static func instant(_ timestamp: Timestamp, field: String) throws -> Timestamp {
        for (date, how) in [(timestamp.withOffset(0).localDate, "in UTC"), (timestamp.localDate, "as written")]
            where !(1...9999).contains(date.year) {
            throw StoreError.invalidField(field: field, rule: "falls in the year \(date.year) \(how); times must be within the years 0001–9999")
        }
        return timestamp
    }

    /// An attachment's path in the container: `attachments/<xx>/<id>` with an extension of
    /// lowercase letters and digits or none, `<xx>` the id's first two hex digits — how the share
    /// extension (`pdf`), sync (`Store.fileExtension`) and the TripBoard 1 migration name files.
    /// Anything else could name another file of the container (`store/TripBoard.sqlite`), which
    /// a deletion would unlink.
    public static func attachmentPath(_ path: String, id: String, field: String = "relativePath") throws {
        let prefix = "attachments/" + id.prefix(2) + "/" + id
        guard path.hasPrefix(prefix) else {
            throw StoreError.invalidField(field: field, rule: "must be attachments/<first two digits of the id>/<id>.<ext>")
        }
        let rest = path.utf8.dropFirst(prefix.utf8.count)
        guard rest.isEmpty || (rest.first == UInt8(ascii: ".") && rest.count >= 2 && rest.count <= 33
                                 && rest.dropFirst().allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) })) else {
            throw StoreError.invalidField(field: field, rule: "must end in the id, or the id and an extension of 1–32 lowercase letters and digits")
        }
    }

    /// A version the sync server accepted: 1 to `maximumRemoteVersion`, or none.
    public static func remoteVersion(_ version: Int64?, field: String = "remoteVersion") throws -> Int64? {
        guard let version else { return nil }
        guard version >= 1 else { throw StoreError.invalidField(field: field, rule: "must be a positive integer") }
        guard version <= maximumRemoteVersion else {
            throw StoreError.invalidField(field: field, rule: "must be at most \(maximumRemoteVersion)")
        }
        return version
    }

    /// The sync metadata of one record, as the app itself can reach it (docs/storage.md §6): a
    /// `synchronized` record and a tombstone (`pendingDeletion`) both name the version the server
    /// has — a record the server never had is simply removed when deleted — while a record waiting
    /// for upload (`pendingUpload`, `failed`) may or may not have one.
    public static func syncState(_ state: SyncState, remoteVersion: Int64?) throws {
        if remoteVersion == nil && (state == .synchronized || state == .pendingDeletion) {
            throw StoreError.invalidField(field: "syncState", rule: "\(state.rawValue) needs a remoteVersion (the version the server has)")
        }
    }

    /// A booking kind in any case (`FLIGHT`, `Flight`, `flight`): the command line and imports
    /// read kinds the same way.
    public static func bookingKind(_ text: String, field: String = "kind") throws -> BookingKind {
        guard let kind = BookingKind(rawValue: text.lowercased()) else {
            throw StoreError.invalidField(field: field, rule: "'\(text.prefix(40))' is not a booking kind: use one of "
                                          + BookingKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return kind
    }

    /// A booking's zone: an IANA zone name (`Europe/Lisbon`, spelt as `TimeZoneRules.isZoneName`
    /// allows), or nil for a fixed offset. Only the form is checked here: a record from another
    /// device may name a zone this machine's database is too old to hold, and is still kept (it
    /// shows in its stored offset). Where a person types a zone (`booking add --zone`), the
    /// command asks the database.
    public static func zone(_ text: String?, field: String = "zone") throws -> String? {
        guard let text else { return nil }
        guard TimeZoneRules.isPortableZoneName(text) else {
            throw StoreError.invalidField(field: field, rule: "'\(text.prefix(40))' is not an IANA time zone name such as Europe/Lisbon")
        }
        return text
    }

    private static func parse(_ text: String, field: String) throws -> Timestamp {
        guard let timestamp = Timestamp(iso8601: text) else {
            throw StoreError.invalidField(field: field, rule: "'\(text.prefix(40))' is not an ISO 8601 time")
        }
        return timestamp
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
    package static func syncMetadata(_ state: SyncState, _ version: Int64?, _ updatedAt: String) throws -> (Int64?, String) {
        let version = try remoteVersion(version)
        try syncState(state, remoteVersion: version)
        return (version, try stamp(updatedAt))
    }
}
