/// The conversation between `app sync …` and `sync-agent` (docs/sync.md §5): JSON documents in
/// frames (`HelperSession`), one request, one answer, in turn. The agent holds the libpq
/// connection and the server schema's SQL; it never sees a key or a plaintext field — what it
/// moves is sealed by `app` before it is sent.
public enum AgentOperation: String, Sendable, Codable {
    /// Connects (`conninfo`, `password`); answers `serverTime`.
    case connect
    /// Creates or upgrades the server schema; answers `schemaVersion` and `upgraded`.
    case initServer
    /// The zone `zone`: `zone` in the answer, or none.
    case zone
    /// Creates `zone` with `keyWrap` unless it exists; answers the zone as it is (the first
    /// device's wrap wins a race).
    case createZone
    /// Writes `records` in one transaction under `mutationId`; answers `results` (`replayed`
    /// when that mutation id was applied before: the stored results, nothing written again).
    case push
    /// Opens one consistent read (REPEATABLE READ) of the zone's changes after `afterSequence`;
    /// answers `highSequence`, the zone's sequence in that snapshot.
    case pullBegin
    /// The next page (at most `limit` records, `liveOnly` leaving tombstones out) of the read.
    case pullPage
    /// Ends the read.
    case pullEnd
    /// Opens one transaction that uploads blob `blob` of `zone` (`chunkCount` chunks,
    /// `byteCount` bytes of ciphertext), its row locked: answers `blobExists` true (and ends the
    /// transaction) when the server has it complete already — two devices with the same file
    /// upload it once.
    case blobBegin
    /// Chunk `chunkIndex` (the next one, from 0) of the blob being uploaded, `data` in base64.
    case blobChunk
    /// Marks the uploaded blob complete once every chunk is there, and commits.
    case blobEnd
    /// Listens for the server's change notifications (`LISTEN tripboard_changes`) on this connection.
    case listen
    /// Waits at most `waitSeconds` (≤ 30) for a change notification naming `zone`: answers `changed`.
    case awaitChange
    /// Chunk `chunkIndex` of the complete blob `blob`: `data`, with `chunkCount`; `blobExists`
    /// false when the server has no complete blob of that name.
    case blobRead
    /// Removes the zone's tombstones older than the horizon (`horizonDays`, never under
    /// `AgentLimits.tombstoneDays`), raising the zone's `purgedThrough`.
    case purgeTombstones
    /// Removes the zone's blobs that no live record names and nothing has named or uploaded for
    /// `AgentLimits.blobGraceDays`, answering `collected`; or, while some live attachment
    /// records do not say which blob they name (pushed by a client older than the server's
    /// schema 3), collects nothing and answers those records (`unnamedBlobRecords`: id, version).
    case collectBlobs
    /// Records which blob each of `records` names (attachment id, version, `blob`), where the
    /// server's copy is still at that version and did not say: answers `named`.
    case nameBlobs
    /// The server's current copies of `records` (kind and id each; at most
    /// `AgentLimits.batchRecords`), fields included, answered like a page of a pull (`more`
    /// false): what a device merges after a push met versions its feed did not bring.
    case fetch
    /// Raises `zone`'s `min_client_version` to `clientVersion` (never lowers it): devices of
    /// earlier builds then only receive (docs/sync.md, Devices of an earlier build).
    case requireClientVersion
    /// One page of every record of `zone` (kind, id, version, deleted; no fields), in (kind, id)
    /// order after `afterKey` (`kind/id`), at most `limit`: what a device compares with what it
    /// holds to notice rows the server lost (docs/sync.md, When the server forgets).
    case listRecords
}

/// Why the agent could not do what was asked. Messages name no secret and no conninfo password.
public struct AgentFailure: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// The server cannot be reached, refused the connection or the login.
        case unavailable
        /// The server timed out, is shutting down, or a serialization failure: try again.
        case temporary
        /// The server schema is missing or older than this client needs (`app sync init-server`).
        case schema
        /// A request this agent does not understand, or out of order.
        case badRequest
        /// Anything else the server reported.
        case server
        /// What the server answered breaks the protocol: a record whose sealed fields exceed
        /// `AgentLimits.recordBytes`, a result beyond `AgentLimits.resultBytes` or
        /// `resultRows`, a version or sequence out of `AgentLimits.counterRange`, an answer the
        /// agent could not hold within its address space. Damaged server data (65), said once.
        case damaged
        /// The request carries something the agent will not send: a conninfo that holds a
        /// password (in any spelling libpq reads) or that libpq cannot parse (64).
        case refused
    }

    public var kind: Kind
    public var message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }
}

/// A zone as the server keeps it.
public struct ZoneInfo: Sendable, Codable, Equatable {
    public var name: String
    /// Changes when the zone is recreated (a server reset): a device whose token names another
    /// epoch syncs from the start.
    public var epoch: String
    public var changeSequence: Int64
    /// The zone key wrapped under the sync passphrase (`ZoneKeyWrap`, as JSON).
    public var keyWrap: String
    /// Clients older than this may only read (schema skew).
    public var minClientVersion: Int
    /// The highest change sequence of a tombstone the server no longer keeps (older than the
    /// horizon): a device whose token is below it may have missed deletions and reconciles.
    public var purgedThrough: Int64?

    public init(name: String, epoch: String, changeSequence: Int64, keyWrap: String, minClientVersion: Int, purgedThrough: Int64? = nil) {
        self.name = name
        self.epoch = epoch
        self.changeSequence = changeSequence
        self.keyWrap = keyWrap
        self.minClientVersion = minClientVersion
        self.purgedThrough = purgedThrough
    }
}

/// One record on the wire: identity and versions in the clear, every field sealed.
public struct WireRecord: Sendable, Codable, Equatable {
    public var kind: String
    public var id: String
    /// The server's version (answers), absent in pushes.
    public var version: Int64?
    /// Pushes: the version this change was made against; `nil` for a record the server must not have yet.
    public var expectedVersion: Int64?
    /// The change sequence number of the record's last change (answers).
    public var sequence: Int64?
    public var deleted: Bool
    /// Field name → sealed value. A push carries only the fields it changes; the server keeps the others.
    public var fields: [String: SealedField]
    /// Pushes of a live attachment: the name of the blob its file is in, in the clear (the server
    /// has the blob under that name already), so that the server knows which blobs are still in
    /// use (`collectBlobs`). Absent in pulls.
    public var blob: String?
    /// Answers: when the server wrote this version, in its own clock's microseconds since 1970
    /// (`records.updated_at`). A restore keeps it for what the dump held; any write renews it —
    /// so a record sent again after a restore is told from the one a device saw, even at the
    /// same version, sequence and stamps (the zone check, `ZoneCheck.record`).
    public var written: Int64?

    public init(kind: String, id: String, version: Int64? = nil, expectedVersion: Int64? = nil, sequence: Int64? = nil,
                deleted: Bool, fields: [String: SealedField], blob: String? = nil, written: Int64? = nil) {
        self.kind = kind
        self.id = id
        self.version = version
        self.expectedVersion = expectedVersion
        self.sequence = sequence
        self.deleted = deleted
        self.fields = fields
        self.blob = blob
        self.written = written
    }
}

/// A field sealed with XChaCha20-Poly1305 under the zone key; the associated data binds it to
/// zone, kind, id, field name and `stamp` (its hybrid-clock stamp, in the clear for merging).
public struct SealedField: Sendable, Codable, Equatable {
    public var stamp: String
    /// Base64 (unpadded) nonce and ciphertext.
    public var nonce: String
    public var ciphertext: String

    public init(stamp: String, nonce: String, ciphertext: String) {
        self.stamp = stamp
        self.nonce = nonce
        self.ciphertext = ciphertext
    }
}

/// What became of one pushed record.
public struct PushResult: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable {
        /// Written: the record is now at `version`.
        case applied
        /// Not written: the server's version (`version`) is not the expected one. Pull, merge, push again.
        case conflict
    }

    public var kind: String
    public var id: String
    public var status: Status
    public var version: Int64
    public var sequence: Int64?

    public init(kind: String, id: String, status: Status, version: Int64, sequence: Int64?) {
        self.kind = kind
        self.id = id
        self.status = status
        self.version = version
        self.sequence = sequence
    }
}

/// The limits both sides hold to.
public enum AgentLimits {
    /// Records per push batch and per pulled page, at most.
    public static let batchRecords = 2500
    /// Records per page a pull asks for: while a page is applied it is held as its frame, its
    /// JSON tree and its records, and the next one is on its way, so pages stay small enough to
    /// keep a first sync's memory low (about 30 MB at 100,000 records).
    public static let pageRecords = 2000
    /// Records in one page of `listRecords` (kind, id, version and deleted only: about 100 bytes
    /// each in the frame).
    public static let listRecords = 20_000
    /// How often a device compares the server's list of records with what it holds, to notice
    /// rows the server lost that no change feed announces (docs/sync.md, When the server forgets).
    public static let comparisonHours = 24
    /// Bytes of sealed fields per push batch and per pulled page, beyond which it ends (after its
    /// first record): with the JSON around them, a frame stays well below the 32 MiB limit.
    public static let batchBytes = 8 << 20
    /// Seconds a statement may run on the server (`statement_timeout`), and libpq's `connect_timeout`.
    public static let statementSeconds = 15
    public static let connectSeconds = 5
    /// Seconds `app` waits for any one answer before killing the agent: a dead server never hangs a command.
    public static let answerSeconds = 30.0
    /// Plaintext bytes per blob chunk (each chunk is one secretstream message; the first also
    /// holds the stream's header).
    public static let blobChunkBytes = 1 << 20
    /// Chunks a blob may have (an attachment of at most 1 GiB).
    public static let blobChunksMaximum = 1024
    /// Seconds the agent lives at most (it stops itself with `alarm`), whatever `app` does.
    public static let lifetimeSeconds: UInt32 = 900
    /// How long the server keeps a tombstone, at least (docs/sync.md, Tombstones and the horizon).
    public static let tombstoneDays = 400
    /// How long the server keeps a blob that no live record names, at least, counted from the
    /// last time one was uploaded, named by a push, or unnamed by a deletion: longer than the
    /// trash keeps what was deleted, so a restore on any device finds the file still there.
    public static let blobGraceDays = 31
    /// Blobs one `collectBlobs` removes at most, and unnamed records it answers at most.
    public static let blobsCollectedMaximum = 500
    /// JSON values (members and elements at any depth) a request may hold: a push of
    /// `batchRecords` records of every field holds under 200,000. A frame of more is not a
    /// request (64), however few its bytes: the agent never builds its tree.
    public static let requestValues = 1_000_000
    /// Bytes of sealed fields one record may have on the server: more is damaged server data.
    /// The queries measure it themselves, so such a record never leaves the server.
    public static let recordBytes = 8 << 20
    /// Bytes and rows one query's result may bring, at most (results are read a row at a time,
    /// libpq's single-row mode): a page is at most `batchBytes` plus one record of `recordBytes`.
    public static let resultBytes = 24 << 20
    public static let resultRows = 25_000
    /// Versions and change sequences a server may hand out: 1 through 2^53 − 1, exact in every
    /// JSON reader and far beyond any zone's life (a million changes a day for 24 million years).
    public static let counterRange: ClosedRange<Int64> = 1...((1 << 53) - 1)
    /// The agent's address space (`RLIMIT_AS`): an answer that would need more fails inside
    /// libpq ("out of memory"), which the agent reports as damaged server data.
    public static let addressSpaceBytes = 256 << 20
}
