import TripBoardSystem

/// The agent's answer to one request: what that operation answers, or why it did nothing. On
/// the wire it is one JSON object of the payload's members (`AgentResponseFields`), with no
/// name of its own: the side that asked knows which operation it awaits an answer to
/// (`init(decoding:answering:)`). A pull's pages and a `fetch`'s answer are written and read as
/// bytes of their own (`WireJSON.page`), not as one of these.
public enum AgentResponse: Sendable, Equatable {
    /// The operation did nothing: `failure` says why.
    case failed(AgentFailure)
    /// `connect`: the server's clock (ISO 8601, UTC), if it said.
    case connected(serverTime: String?)
    /// `initServer`: the schema's version now, and whether this request raised it.
    case schemaInstalled(version: Int, upgraded: Bool)
    /// `zone` and `createZone`.
    case zone(ZoneAnswer)
    /// `push`.
    case pushed(PushAnswer)
    /// `pullBegin`: the zone's sequence in the pull's snapshot.
    case pullBegun(highSequence: Int64)
    /// `listRecords`: one page of the zone's records (no fields), and whether more follow.
    case recordList([WireRecord], more: Bool)
    /// `blobBegin`: whether the server has the blob complete already (the upload then ended).
    case blobBegun(exists: Bool)
    /// `blobRead`: the chunk, or nil when the server has no complete blob of that name.
    case blobChunk(BlobChunk?)
    /// `awaitChange`: whether the zone changed.
    case changeAwaited(changed: Bool)
    /// `purgeTombstones`: how many were removed.
    case tombstonesPurged(Int)
    /// `collectBlobs`: how many blobs were removed, and the live attachment records that keep
    /// it from removing any until a device names their blobs (`nameBlobs`).
    case blobsCollected(Int, unnamed: [WireRecord]?)
    /// `nameBlobs`: how many records now say which blob they name.
    case blobsNamed(Int)
    /// `pullEnd`, `blobChunk`, `blobEnd`, `listen`, `requireClientVersion`: done, nothing to say.
    case done

    public static func failed(_ kind: AgentFailure.Kind, _ message: String) -> AgentResponse {
        .failed(AgentFailure(kind: kind, message: message))
    }

    /// The answer in `bytes` to a request of `operation`. Throws `JSONSyntaxError`,
    /// `DecodingError` or `MalformedAgentAnswer` for bytes that are not such an answer.
    public init(decoding bytes: [UInt8], answering operation: AgentOperation) throws {
        self = try JSON.decode(AgentResponseFields.self, from: bytes).response(answering: operation)
    }
}

/// What `zone` and `createZone` answer.
public struct ZoneAnswer: Sendable, Equatable {
    /// The zone as the server has it; nil when there is none.
    public var zone: ZoneInfo?
    /// With `ZoneCheck.mutation`: whether the server has applied that batch.
    public var mutationKnown: Bool?
    /// With `ZoneCheck.record`: whether the server's copy of that record is at least that version.
    public var recordKnown: Bool?

    public init(zone: ZoneInfo?, mutationKnown: Bool? = nil, recordKnown: Bool? = nil) {
        self.zone = zone
        self.mutationKnown = mutationKnown
        self.recordKnown = recordKnown
    }
}

/// What `push` answers.
public struct PushAnswer: Sendable, Equatable {
    public var results: [PushResult]
    /// The mutation id was applied before: these are the stored results, nothing written again.
    public var replayed: Bool
    /// Blobs the batch's attachment records name that the server does not have (removed while
    /// the batch waited on the device): the pushing device uploads them again.
    public var missingBlobs: [String]

    public init(results: [PushResult], replayed: Bool, missingBlobs: [String] = []) {
        self.results = results
        self.replayed = replayed
        self.missingBlobs = missingBlobs
    }
}

/// One chunk of a complete blob (`blobRead`).
public struct BlobChunk: Sendable, Equatable {
    /// How many chunks the blob has.
    public var chunkCount: Int
    /// The chunk's bytes in base64, unpadded; nil when the blob has no chunk of that index.
    public var data: String?

    public init(chunkCount: Int, data: String?) {
        self.chunkCount = chunkCount
        self.data = data
    }
}

extension AgentResponse: Encodable {
    public func encode(to encoder: any Encoder) throws {
        try AgentResponseFields(self).encode(to: encoder)
    }
}

/// An answer as it travels: every member any operation answers, each optional, and only those
/// of the answer present.
struct AgentResponseFields: Codable {
    var failure: AgentFailure?
    var serverTime: String?
    var schemaVersion: Int?
    var upgraded: Bool?
    var zone: ZoneInfo?
    var results: [PushResult]?
    var replayed: Bool?
    var records: [WireRecord]?
    var highSequence: Int64?
    var more: Bool?
    var blobExists: Bool?
    var changed: Bool?
    var chunkCount: Int?
    var data: String?
    var mutationKnown: Bool?
    var recordKnown: Bool?
    var purged: Int?
    var missingBlobs: [String]?
    var collected: Int?
    var unnamedBlobRecords: [WireRecord]?
    var named: Int?

    init(_ response: AgentResponse) {
        switch response {
        case .failed(let failure): self.failure = failure
        case .connected(let serverTime): self.serverTime = serverTime
        case .schemaInstalled(let version, let upgraded):
            schemaVersion = version
            self.upgraded = upgraded
        case .zone(let answer):
            zone = answer.zone
            mutationKnown = answer.mutationKnown
            recordKnown = answer.recordKnown
        case .pushed(let answer):
            results = answer.results
            replayed = answer.replayed
            missingBlobs = answer.missingBlobs.isEmpty ? nil : answer.missingBlobs
        case .pullBegun(let high): highSequence = high
        case .recordList(let records, let more):
            self.records = records
            self.more = more
        case .blobBegun(let exists): blobExists = exists
        case .blobChunk(let chunk):
            blobExists = chunk != nil
            chunkCount = chunk?.chunkCount
            data = chunk?.data
        case .changeAwaited(let changed): self.changed = changed
        case .tombstonesPurged(let count): purged = count
        case .blobsCollected(let count, let unnamed):
            collected = count
            unnamedBlobRecords = unnamed
        case .blobsNamed(let count): named = count
        case .done: break
        }
    }

    /// The answer these members make to a request of `operation`; one that lacks a member the
    /// agent always answers that operation with is not an answer.
    func response(answering operation: AgentOperation) throws(MalformedAgentAnswer) -> AgentResponse {
        if let failure { return .failed(failure) }
        switch operation {
        case .connect: return .connected(serverTime: serverTime)
        case .initServer: return .schemaInstalled(version: try need(schemaVersion), upgraded: try need(upgraded))
        case .zone, .createZone: return .zone(ZoneAnswer(zone: zone, mutationKnown: mutationKnown, recordKnown: recordKnown))
        case .push: return .pushed(PushAnswer(results: try need(results), replayed: try need(replayed), missingBlobs: missingBlobs ?? []))
        case .pullBegin: return .pullBegun(highSequence: try need(highSequence))
        case .listRecords, .pullPage, .fetch: return .recordList(try need(records), more: try need(more))
        case .blobBegin: return .blobBegun(exists: try need(blobExists))
        case .blobRead:
            guard try need(blobExists) else { return .blobChunk(nil) }
            return .blobChunk(BlobChunk(chunkCount: try need(chunkCount), data: data))
        case .awaitChange: return .changeAwaited(changed: try need(changed))
        case .purgeTombstones: return .tombstonesPurged(try need(purged))
        case .collectBlobs: return .blobsCollected(try need(collected), unnamed: unnamedBlobRecords)
        case .nameBlobs: return .blobsNamed(try need(named))
        case .pullEnd, .blobChunk, .blobEnd, .listen, .requireClientVersion: return .done
        }
    }

    private func need<Value>(_ value: Value?) throws(MalformedAgentAnswer) -> Value {
        guard let value else { throw MalformedAgentAnswer() }
        return value
    }
}

/// Bytes that parse as JSON but are not the answer to the operation asked.
public struct MalformedAgentAnswer: Error, Sendable {}
