import TripBoardSystem
import TripBoardModel

// Whole records checked field by field with `FieldRules`, in the form the store keeps them. Every
// path that writes a record goes through these (`Store.insert` calls them again as a last line),
// and sync will check what the server sends with them. A broken rule throws
// `StoreError.invalidField` naming the field, or `.invalidData` for a rule across fields.

extension Attachment {
    /// This attachment row in the form the store keeps, or the first rule it breaks. A verified
    /// hash is 64 lowercase hex digits; a pending one is a row whose bytes are not hashed yet
    /// (`hashIsUnverified`) or whose file was lost first (`missing`).
    public func validated() throws -> Attachment {
        var attachment = self
        attachment.id = try FieldRules.id(id)
        attachment.bookingId = try FieldRules.id(bookingId, field: "bookingId")
        attachment.originalFilename = try FieldRules.filename(originalFilename)
        attachment.contentType = try FieldRules.contentType(contentType)
        guard byteCount >= 0 else { throw StoreError.invalidField(field: "byteCount", rule: "must not be negative") }
        if let pageCount, pageCount < 1 { throw StoreError.invalidField(field: "pageCount", rule: "must be at least 1") }
        if case .verified(let hex) = contentHash,
           hex.utf8.count != 64 || !hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
            throw StoreError.invalidField(field: "contentHash", rule: "must be 64 lowercase hex digits (BLAKE2b-256)")
        }
        attachment.createdAt = try FieldRules.instant(createdAt, field: "createdAt")
        let (version, stamp) = try FieldRules.syncMetadata(syncState, remoteVersion, updatedAt.utcStamp)
        (attachment.remoteVersion, attachment.updatedAt) = (version, Timestamp(stored: stamp))
        return attachment
    }
}
