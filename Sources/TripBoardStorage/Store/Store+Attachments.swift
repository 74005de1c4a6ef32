package import TripBoardSQLite
public import TripBoardSystem
public import TripBoardModel
public import TripBoardDevice

/// A file attached to a booking (a PDF ticket, a photo). The bytes live in the container at
/// `relativePath`; this row is committed only after the file is durable there.
public struct Attachment: Sendable, Equatable, Codable, Identifiable, StoredRecord {
    public typealias ID = RecordID<Attachment>
    public static var recordKind: RecordKind { .attachment }
    public var id: ID
    public var bookingId: Booking.ID
    public var originalFilename: String
    public var contentType: String
    public var byteCount: Int64
    /// BLAKE2b-256 of the bytes, or `pending` when they were not hashed yet (`hashIsUnverified`:
    /// a migrated file, before the container's hashing pass reaches it; or a lost file never
    /// hashed). A pending hash admits any bytes (`ContentHash.admits`): only the size holds.
    public var contentHash: ContentHash
    public var pageCount: Int64?
    public var relativePath: String
    public var state: State
    public var createdAt: Timestamp
    public var syncState: SyncState
    public var remoteVersion: Int64?
    public var updatedAt: Timestamp
    /// When it went to the trash (still on disk, restorable); `nil` when it is not in the trash.
    /// Not part of the JSON contract: a trashed attachment is never listed with the live ones.
    public var trashedAt: Timestamp? = nil
    /// The protection class its file is sealed under, or is to be: a file written before
    /// attachments were sealed stays in the clear until `app container protect`, and one
    /// downloaded while the device was locked is sealed to `complete-unless-open` until the
    /// next unlock seals it as its row says (`AttachmentProtection`).
    public var protection: ProtectionClass = .completeUnlessOpen

    /// Where the row's file stands. The raw values are the texts of the store's `state` column
    /// and of the JSON contract's `state`.
    public enum State: String, Sendable, Codable, CaseIterable {
        /// The file is in the container at `relativePath`.
        case present
        /// Its file was lost (e.g. before a migration); the row is kept, waiting for the bytes.
        case missing
        /// Queued: the file is being removed, then the row.
        case deleting
    }

    enum CodingKeys: String, CodingKey {
        case id, bookingId, originalFilename, contentType, byteCount, contentHash, pageCount, relativePath, state,
             createdAt, syncState, remoteVersion, updatedAt, protection
    }

    /// True while the row's file has not been hashed: the container migration moves files
    /// without reading them and the hashing pass (`AttachmentHashing`) records their hashes after
    /// the container is published. Whoever needs the hash meanwhile hashes the file on the spot.
    /// `contentHash` is `null` in the JSON contract while this lasts.
    public var hashIsUnverified: Bool { contentHash.isPending && state != .missing }

    public init(id: ID, bookingId: Booking.ID, originalFilename: String, contentType: String, byteCount: Int64, contentHash: ContentHash,
                pageCount: Int64?, relativePath: String, state: State, createdAt: Timestamp, syncState: SyncState,
                remoteVersion: Int64?, updatedAt: Timestamp, trashedAt: Timestamp? = nil, protection: ProtectionClass = .completeUnlessOpen) {
        self.id = id
        self.bookingId = bookingId
        self.originalFilename = originalFilename
        self.contentType = contentType
        self.byteCount = byteCount
        self.contentHash = contentHash
        self.pageCount = pageCount
        self.relativePath = relativePath
        self.state = state
        self.createdAt = createdAt
        self.syncState = syncState
        self.remoteVersion = remoteVersion
        self.updatedAt = updatedAt
        self.trashedAt = trashedAt
        self.protection = protection
    }

    /// Reads the JSON contract; a `null` `contentHash` (not hashed yet) is a pending hash.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(ID.self, forKey: .id), bookingId: try container.decode(Booking.ID.self, forKey: .bookingId),
                  originalFilename: try container.decode(String.self, forKey: .originalFilename),
                  contentType: try container.decode(String.self, forKey: .contentType),
                  byteCount: try container.decode(Int64.self, forKey: .byteCount),
                  contentHash: ContentHash(stored: try container.decodeIfPresent(String.self, forKey: .contentHash) ?? ""),
                  pageCount: try container.decodeIfPresent(Int64.self, forKey: .pageCount),
                  relativePath: try container.decode(String.self, forKey: .relativePath), state: try container.decode(State.self, forKey: .state),
                  createdAt: try container.decode(Timestamp.self, forKey: .createdAt),
                  syncState: try container.decode(SyncState.self, forKey: .syncState),
                  remoteVersion: try container.decodeIfPresent(Int64.self, forKey: .remoteVersion),
                  updatedAt: try container.decode(Timestamp.self, forKey: .updatedAt))
        if let name = try container.decodeIfPresent(String.self, forKey: .protection) {
            guard let protection = ProtectionClass(fileClassName: name) else {
                throw DecodingError.dataCorruptedError(forKey: .protection, in: container, debugDescription: "not a protection class")
            }
            self.protection = protection
        }
    }

    // By hand for what the encoder cannot know: an unhashed file's pending `contentHash` is
    // written as `null` (`hashIsUnverified`); a lost file's, as the empty text the store keeps. A
    // nil optional is `null` by the encoder itself.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(bookingId, forKey: .bookingId)
        try container.encode(originalFilename, forKey: .originalFilename)
        try container.encode(contentType, forKey: .contentType)
        try container.encode(byteCount, forKey: .byteCount)
        if hashIsUnverified {
            try container.encodeNil(forKey: .contentHash)
        } else {
            try container.encode(contentHash.stored, forKey: .contentHash)
        }
        try container.encode(pageCount, forKey: .pageCount)
        try container.encode(relativePath, forKey: .relativePath)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(syncState, forKey: .syncState)
        try container.encode(remoteVersion, forKey: .remoteVersion)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(protection.fileClassName, forKey: .protection)
    }
}

extension Attachment.State {
    /// The state a `state` column holds. The schema's CHECK admits only the three states; a row
    /// that breaks it (a damaged page) claims no file.
    package init(column text: String) {
        self = Self(rawValue: text) ?? .missing
    }
}

extension Store {
    package static let attachmentColumns = """
        id, booking_id, original_filename, content_type, byte_count, content_hash, page_count, relative_path, state,
        created_at, sync_state, remote_version, updated_at, trashed_at, protection
        """
    /// How many `attachmentColumns` there are: a query that selects more after them reads those
    /// from this index on.
    package static let attachmentColumnCount: Int32 = 15

    /// An attachment row followed by its booking's title and its trip's name.
    static func attachmentListing(from row: Statement) -> AttachmentListing {
        AttachmentListing(attachment: attachment(from: row), bookingTitle: row.optionalText(attachmentColumnCount) ?? "",
                          tripName: row.optionalText(attachmentColumnCount + 1) ?? "")
    }

    package static func attachment(from row: Statement) -> Attachment {
        Attachment(id: Attachment.ID(row.text(0)), bookingId: Booking.ID(row.text(1)), originalFilename: row.text(2), contentType: row.text(3),
                   byteCount: row.integer(4), contentHash: ContentHash(stored: row.text(5)), pageCount: row.optionalInteger(6),
                   relativePath: row.text(7), state: Attachment.State(column: row.text(8)), createdAt: Timestamp(stored: row.text(9)),
                   syncState: SyncState(rawValue: row.text(10)) ?? .failed, remoteVersion: row.optionalInteger(11),
                   updatedAt: Timestamp(stored: row.text(12)), trashedAt: row.optionalText(13).map(Timestamp.init(stored:)),
                   protection: ProtectionClass(fileClassName: row.text(14)) ?? .completeUnlessOpen)
    }

    /// Inserts an attachment row in the form `validated()` gives it, refusing an id any record
    /// has; call inside the transaction that may also create its booking, after the file is
    /// durable at `relativePath`.
    package func insert(_ attachment: Attachment) throws {
        let attachment = try attachment.validated()
        try requireUnusedID(attachment.id.text, for: .attachment)
        try connection.statement("INSERT INTO attachments (\(Self.attachmentColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").run([
            .text(attachment.id.text), .text(attachment.bookingId.text), .text(attachment.originalFilename), .text(attachment.contentType),
            .integer(attachment.byteCount), .text(attachment.contentHash.stored), .optional(attachment.pageCount),
            .text(attachment.relativePath), .text(attachment.state.rawValue), .text(attachment.createdAt.utcStamp),
            .text(attachment.syncState.rawValue), .optional(attachment.remoteVersion), .text(attachment.updatedAt.utcStamp),
            .optional(attachment.trashedAt?.utcStamp), .text(attachment.protection.fileClassName),
        ])
    }

    /// The live attachment of `bookingId` with these exact bytes, if any (the same ticket shared twice).
    public func attachment(bookingId: Booking.ID, contentHash: String) throws -> Attachment? {
        try connection.statement("""
            SELECT \(Self.attachmentColumns) FROM attachments
            WHERE booking_id = ? AND content_hash = ? AND \(Store.liveAttachment)
            """).rows([.text(bookingId.text), .text(contentHash)], Self.attachment(from:)).first
    }

    /// Every attachment row that has a file, or is on its way to losing it — live, in the trash,
    /// missing, queued for deletion — for integrity checks. A tombstone whose file the deletion
    /// queue removed (`deleting`, out of the trash, waiting for the server) names no file any more
    /// and is left out, as a trip's tombstone would be.
    public func allAttachments() throws -> [Attachment] {
        try connection.statement("""
            SELECT \(Self.attachmentColumns) FROM attachments
            WHERE NOT (state = 'deleting' AND trashed_at IS NULL AND sync_state = 'pendingDeletion') ORDER BY created_at, id
            """).rows(Self.attachment(from:))
    }
}

extension Store {
    /// Every attachment whose file is in the container — live, in the trash, or waiting for its
    /// deletion to sync — in the order they were written.
    package func presentAttachments() throws -> [Attachment] {
        try connection.statement("SELECT \(Self.attachmentColumns) FROM attachments WHERE state = 'present' ORDER BY rowid")
            .rows(Self.attachment(from:))
    }

    /// The classes the present attachments' rows name (their files are sealed so, or are to be).
    public func protectionClassesInUse() throws -> [ProtectionClass] {
        try connection.statement("SELECT DISTINCT protection FROM attachments WHERE state = 'present' ORDER BY protection")
            .rows { ProtectionClass(fileClassName: $0.text(0)) ?? .completeUnlessOpen }
    }

    /// Live attachments, of one trip or all, oldest first.
    public func attachments(tripId: Trip.ID? = nil) throws -> [Attachment] { try attachmentRows(tripId: tripId).collect() }

    /// `attachments(tripId:)` one at a time as they are read; the trip, if any, is looked up
    /// (`.notFound`) when the cursor is walked.
    public func attachmentRows(tripId: Trip.ID? = nil) -> StoreCursor<Attachment> {
        StoreCursor(RowCursor(connection: connection, prepare: { [self] in
            guard let tripId else {
                return (try connection.statement("""
                    SELECT \(Self.attachmentColumns) FROM attachments
                    WHERE \(Store.liveAttachment) ORDER BY created_at, id
                    """), [])
            }
            _ = try trip(id: tripId)
            let columns = Self.attachmentColumns.split(separator: ",").map { "a." + String($0).trimmingWhitespace() }.joined(separator: ", ")
            return (try connection.statement("""
                SELECT \(columns) FROM attachments a JOIN bookings b ON b.id = a.booking_id
                WHERE b.trip_id = ? AND a.state <> 'deleting' AND a.sync_state <> 'pendingDeletion' AND a.trashed_at IS NULL
                ORDER BY a.created_at, a.id
                """), [.text(tripId.text)])
        }, transform: Self.attachment(from:)))
    }

    /// The live attachments (of `tripId`, or all) with the title of each one's booking and the
    /// name of its trip, streamed in the order of `attachmentRows`: `attachment list`'s rows.
    public func attachmentListingRows(tripId: Trip.ID? = nil) -> StoreCursor<AttachmentListing> {
        let columns = Self.attachmentColumns.split(separator: ",").map { "a." + String($0).trimmingWhitespace() }.joined(separator: ", ")
        let select = """
            SELECT \(columns), b.title, t.name FROM attachments a
            LEFT JOIN bookings b ON b.id = a.booking_id LEFT JOIN trips t ON t.id = b.trip_id
            WHERE a.state <> 'deleting' AND a.sync_state <> 'pendingDeletion' AND a.trashed_at IS NULL
            """
        return StoreCursor(RowCursor(connection: connection, prepare: { [self] in
            guard let tripId else { return (try connection.statement(select + " ORDER BY a.created_at, a.id"), []) }
            _ = try trip(id: tripId)
            return (try connection.statement(select + " AND b.trip_id = ? ORDER BY a.created_at, a.id"), [.text(tripId.text)])
        }, transform: Self.attachmentListing(from:)))
    }

    /// The live attachment with exactly this id (deliberately like `booking(id:)`: one query a table).
    public func attachment(id: Attachment.ID) throws -> Attachment {
        guard let found = try connection.statement("""
            SELECT \(Self.attachmentColumns) FROM attachments WHERE id = ? AND \(Store.liveAttachment)
            """).rows([.text(id.text)], Self.attachment(from:)).first else {
            throw StoreError.notFound(kind: .attachment, id: id.text)
        }
        return found
    }

    /// Deletes an attachment: it goes to the trash, its file kept until the purge (see `moveToTrash`).
    @discardableResult
    public func deleteAttachment(id: Attachment.ID) throws -> TrashEntry { try trash.moveToTrash(.attachment, id: id.text) }

    /// Records that a `missing` attachment's file is back in place with its recorded size and hash.
    public func markAttachmentPresent(id: Attachment.ID) throws {
        try connection.writeTransaction {
            try connection.statement("UPDATE attachments SET state = 'present', updated_at = ? WHERE id = ? AND state = 'missing'")
                .run([.text(stamp()), .text(id.text)])
        }
    }

    /// Records that an attachment's file is gone (never invented again): the row stays, `missing`.
    public func markAttachmentMissing(id: Attachment.ID) throws {
        try connection.writeTransaction {
            try connection.statement("UPDATE attachments SET state = 'missing', updated_at = ? WHERE id = ? AND state = 'present'")
                .run([.text(stamp()), .text(id.text)])
        }
    }
}

extension Store {
    /// The live attachment of any live booking of `tripId` with these exact bytes, if any.
    public func attachment(tripId: Trip.ID, contentHash: String) throws -> Attachment? {
        let columns = Self.attachmentColumns.split(separator: ",").map { "a." + String($0).trimmingWhitespace() }.joined(separator: ", ")
        return try connection.statement("""
            SELECT \(columns) FROM attachments a JOIN bookings b ON b.id = a.booking_id
            WHERE b.trip_id = ? AND a.content_hash = ? AND b.sync_state <> 'pendingDeletion' AND b.trashed_at IS NULL
              AND a.state <> 'deleting' AND a.sync_state <> 'pendingDeletion' AND a.trashed_at IS NULL
            ORDER BY a.created_at, a.id LIMIT 1
            """).rows([.text(tripId.text), .text(contentHash)], Self.attachment(from:)).first
    }
}

extension Store {
    /// The oldest live attachment that lost its file (`missing`) and whose file had exactly these
    /// bytes, anywhere in the container (`attachments_missing`: the few missing rows, by hash).
    public func missingAttachment(contentHash: String, byteCount: Int64) throws -> Attachment? {
        try connection.statement("""
            SELECT \(Self.attachmentColumns) FROM attachments
            WHERE content_hash = ?1 AND state = 'missing' AND byte_count = ?2 AND sync_state <> 'pendingDeletion' AND trashed_at IS NULL
            ORDER BY created_at, id LIMIT 1
            """).rows([.text(contentHash), .integer(byteCount)], Self.attachment(from:)).first
    }
}

/// An attachment with the names `attachment list` shows beside it.
public struct AttachmentListing: Sendable, Equatable {
    public var attachment: Attachment
    public var bookingTitle: String
    public var tripName: String
}
