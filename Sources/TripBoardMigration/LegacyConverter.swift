import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

/// Turns legacy rows into records of the new store, through the same rules as every other path
/// that writes records (`validated()`, `FieldRules`): ids lowercased, names trimmed, timestamps
/// normalised, `pendingUpload` (version 1 never synced). A row those rules refuse — an id that is
/// not a version-4 UUID, an empty or over-long name, a time outside the years 0001–9999 — throws
/// `MigrationError.invalidLegacyRecord` naming the record and its version-1 column: the migration
/// refuses rather than store what export, import and sync would refuse (docs/migration.md).
struct LegacyConverter {
    let storePath: String
    /// `updatedAt` for records that had none in version 1 (places, bookings, attachments).
    let migratedAt: String

    func trip(_ row: Statement) throws -> Trip {
        try converting("trip", row.text(0)) {
            guard let start = CivilDate(row.text(2)), let end = CivilDate(row.text(3)) else {
                throw StoreError.invalidData("its start_date or end_date is not YYYY-MM-DD")
            }
            return try Trip(id: RecordID(row.text(0)), name: row.text(1), startDate: start, endDate: end, notes: row.optionalText(4) ?? "",
                            syncState: .pendingUpload, remoteVersion: nil, updatedAt: try FieldRules.stampTime(row.text(5))).validated()
        }
    }

    func place(_ row: Statement) throws -> Place {
        try converting("place", row.text(0)) {
            try Place(id: RecordID(row.text(0)), tripId: RecordID(row.text(1)), name: row.text(2), city: row.optionalText(3), visited: row.integer(4) != 0,
                      syncState: .pendingUpload, remoteVersion: nil, updatedAt: try FieldRules.stampTime(migratedAt)).validated()
        }
    }

    /// A kind outside flight, train, hotel, car, event and other (in any case) becomes `other`
    /// (counted): version 1 had kinds this version does not know.
    func booking(_ row: Statement) throws -> (booking: Booking, kindChanged: Bool) {
        let kind = Self.kind(row.text(2))
        let booking = try converting("booking", row.text(0)) {
            try Booking(id: RecordID(row.text(0)), tripId: RecordID(row.text(1)), kind: kind ?? .other, title: row.text(3),
                        startsAt: try row.optionalText(4).map { try FieldRules.bookingTimeValue($0, field: "startsAt") },
                        reference: row.optionalText(5), syncState: .pendingUpload, remoteVersion: nil, updatedAt: try FieldRules.stampTime(migratedAt)).validated()
        }
        return (booking, kind == nil)
    }

    /// The new row for a legacy attachment whose file was planned as `file` (`nil`: missing). Its
    /// hash is left pending (`Attachment.hashIsUnverified`): the migration reads no
    /// byte, and the hashing pass (`AttachmentHashing`) records it after the container is published.
    func attachment(_ row: LegacyAttachmentRow, file: PlannedFile?) throws -> Attachment {
        try converting("attachment", row.id) {
            let id = try FieldRules.id(row.id)
            return try Attachment(
                id: RecordID(id), bookingId: RecordID(row.bookingId), originalFilename: row.filename, contentType: row.contentType,
                byteCount: file?.byteCount ?? 0, contentHash: .pending, pageCount: nil,
                relativePath: file?.destination ?? Self.destination(attachmentID: id, legacyPath: row.relativePath),
                state: file == nil ? .missing : .present, createdAt: try FieldRules.stampTime(row.createdAt, field: "createdAt"),
                syncState: .pendingUpload, remoteVersion: nil, updatedAt: try FieldRules.stampTime(migratedAt)).validated()
        }
    }

    /// The kind a version-1 booking kind names, in any case; `nil` for one this version does not know.
    static func kind(_ text: String) -> BookingKind? { try? FieldRules.bookingKind(text) }

    /// `attachments/<first two hex digits>/<id>.<ext>`, the extension taken from the legacy path.
    static func destination(attachmentID id: String, legacyPath: String) -> String {
        let name = legacyPath.split(separator: "/").last.map(String.init) ?? ""
        let dot = name.lastIndex(of: ".")
        let fileExtension = dot.map { String(name[name.index(after: $0)...]).lowercased() } ?? ""
        let safeExtension = !fileExtension.isEmpty && fileExtension.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) }
        return ContainerLayout.attachmentsDirectory + "/" + id.prefix(2) + "/" + id + (safeExtension ? "." + fileExtension : "")
    }

    /// The version-1 column a record field comes from, for messages about version-1 data.
    static let legacyColumns = ["startDate": "start_date", "endDate": "end_date", "updatedAt": "updated_at", "tripId": "trip_id",
                                "startsAt": "starts_at", "bookingId": "booking_id", "originalFilename": "filename",
                                "contentType": "content_type", "createdAt": "created_at"]

    /// Runs `body`, turning a rule it breaks into `invalidLegacyRecord` naming the record and
    /// the version-1 column: "trip 3f2a…: name is longer than 200 characters".
    private func converting<T>(_ kind: String, _ id: String, _ body: () throws -> T) throws -> T {
        let what = "\(kind) \(String(id.prefix(40)).lowercased())"
        do {
            return try body()
        } catch StoreError.invalidField(let field, let rule) {
            throw MigrationError.invalidLegacyRecord(path: storePath, detail: "\(what): \(Self.legacyColumns[field] ?? field) \(rule)")
        } catch StoreError.invalidData(let message) {
            throw MigrationError.invalidLegacyRecord(path: storePath, detail: "\(what): \(message)")
        }
    }
}
