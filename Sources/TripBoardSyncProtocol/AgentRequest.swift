public import TripBoardSystem

/// One request to the agent: its operation (`AgentOperation`, which says what each does) and
/// exactly what that operation needs. On the wire it is one JSON object, `operation` and the
/// payload's members side by side (`AgentRequestFields`).
public enum AgentRequest: Sendable, Equatable {
    /// `password` comes from the keychain; never logged, never echoed.
    case connect(conninfo: String, password: String?)
    case initServer
    case zone(String, check: ZoneCheck = ZoneCheck())
    case createZone(String, keyWrap: String)
    case push(zone: String, mutationID: String, records: [WireRecord])
    case pullBegin(zone: String, afterSequence: Int64, liveOnly: Bool)
    /// `limit` nil: `AgentLimits.batchRecords`.
    case pullPage(limit: Int?)
    case pullEnd
    /// `blob` is the blob's name (a keyed hash, hex); `byteCount` its size in ciphertext.
    case blobBegin(zone: String, blob: String, chunkCount: Int, byteCount: Int64)
    /// `data`: the chunk's bytes in base64, unpadded.
    case blobChunk(index: Int, data: String)
    case blobEnd
    case listen
    case awaitChange(zone: String, waitSeconds: Double)
    case blobRead(zone: String, blob: String, chunkIndex: Int)
    /// `horizonDays` nil: `AgentLimits.tombstoneDays`.
    case purgeTombstones(zone: String, horizonDays: Int?)
    case collectBlobs(zone: String)
    case nameBlobs(zone: String, records: [WireRecord])
    case fetch(zone: String, records: [WireRecord])
    case requireClientVersion(zone: String, clientVersion: Int)
    /// `afterKey`: the last `kind/id` of the previous page (nil: from the start).
    case listRecords(zone: String, afterKey: String?, limit: Int?)

    public var operation: AgentOperation {
        switch self {
        case .connect: .connect
        case .initServer: .initServer
        case .zone: .zone
        case .createZone: .createZone
        case .push: .push
        case .pullBegin: .pullBegin
        case .pullPage: .pullPage
        case .pullEnd: .pullEnd
        case .blobBegin: .blobBegin
        case .blobChunk: .blobChunk
        case .blobEnd: .blobEnd
        case .listen: .listen
        case .awaitChange: .awaitChange
        case .blobRead: .blobRead
        case .purgeTombstones: .purgeTombstones
        case .collectBlobs: .collectBlobs
        case .nameBlobs: .nameBlobs
        case .fetch: .fetch
        case .requireClientVersion: .requireClientVersion
        case .listRecords: .listRecords
        }
    }
}

/// What a `zone` request asks besides the zone: whether the server still has what this device
/// last saw of it (`SyncCheck`).
public struct ZoneCheck: Sendable, Equatable {
    /// A mutation id to look up (`ZoneAnswer.mutationKnown`).
    public var mutation: String?
    /// A record (kind, id, version) whose server copy must be at least that version
    /// (`ZoneAnswer.recordKnown`).
    public var record: WireRecord?
    /// The fields' stamps `record` carried (`field=stamp,…` in byte order of the names), which
    /// the server's copy at that version and sequence must still carry.
    public var recordStamps: String?

    public init(mutation: String? = nil, record: WireRecord? = nil, recordStamps: String? = nil) {
        self.mutation = mutation
        self.record = record
        self.recordStamps = recordStamps
    }
}

/// A request whose operation the agent knows but which lacks what that operation needs: the
/// agent answers it as a bad request (and stays up), as it does a request out of order.
public struct IncompleteAgentRequest: Error, Sendable {
    public var message: String
}

extension AgentRequest: Codable {
    public init(from decoder: any Decoder) throws {
        self = try AgentRequestFields(from: decoder).request()
    }

    public func encode(to encoder: any Encoder) throws {
        try AgentRequestFields(self).encode(to: encoder)
    }
}

/// A request as it travels: every member any operation uses, each optional — the form
/// `AgentRequest` is written as and read from, and nothing else.
struct AgentRequestFields: Codable {
    var operation: AgentOperation
    var conninfo: String?
    var password: String?
    var zone: String?
    var keyWrap: String?
    var mutationId: String?
    var records: [WireRecord]?
    var afterSequence: Int64?
    var liveOnly: Bool?
    var limit: Int?
    var blob: String?
    var byteCount: Int64?
    var chunkCount: Int?
    var chunkIndex: Int?
    var data: String?
    var waitSeconds: Double?
    var checkMutation: String?
    var checkRecord: WireRecord?
    var checkRecordStamps: String?
    var horizonDays: Int?
    var afterKey: String?
    var clientVersion: Int?

    init(_ request: AgentRequest) {
        operation = request.operation
        switch request {
        case .connect(let conninfo, let password):
            self.conninfo = conninfo
            self.password = password
        case .initServer, .pullEnd, .blobEnd, .listen:
            break
        case .zone(let zone, let check):
            self.zone = zone
            checkMutation = check.mutation
            checkRecord = check.record
            checkRecordStamps = check.recordStamps
        case .createZone(let zone, let keyWrap):
            self.zone = zone
            self.keyWrap = keyWrap
        case .push(let zone, let mutationID, let records):
            self.zone = zone
            mutationId = mutationID
            self.records = records
        case .pullBegin(let zone, let afterSequence, let liveOnly):
            self.zone = zone
            self.afterSequence = afterSequence
            self.liveOnly = liveOnly
        case .pullPage(let limit):
            self.limit = limit
        case .blobBegin(let zone, let blob, let chunkCount, let byteCount):
            self.zone = zone
            self.blob = blob
            self.chunkCount = chunkCount
            self.byteCount = byteCount
        case .blobChunk(let index, let data):
            chunkIndex = index
            self.data = data
        case .awaitChange(let zone, let waitSeconds):
            self.zone = zone
            self.waitSeconds = waitSeconds
        case .blobRead(let zone, let blob, let chunkIndex):
            self.zone = zone
            self.blob = blob
            self.chunkIndex = chunkIndex
        case .purgeTombstones(let zone, let horizonDays):
            self.zone = zone
            self.horizonDays = horizonDays
        case .collectBlobs(let zone):
            self.zone = zone
        case .nameBlobs(let zone, let records), .fetch(let zone, let records):
            self.zone = zone
            self.records = records
        case .requireClientVersion(let zone, let clientVersion):
            self.zone = zone
            self.clientVersion = clientVersion
        case .listRecords(let zone, let afterKey, let limit):
            self.zone = zone
            self.afterKey = afterKey
            self.limit = limit
        }
    }

    /// The request these members make, or what its operation lacks.
    func request() throws(IncompleteAgentRequest) -> AgentRequest {
        switch operation {
        case .connect: return .connect(conninfo: try need(conninfo, "a conninfo"), password: password)
        case .initServer: return .initServer
        case .zone:
            return .zone(try need(zone, "a zone"), check: ZoneCheck(mutation: checkMutation, record: checkRecord, recordStamps: checkRecordStamps))
        case .createZone: return .createZone(try need(zone, "a zone"), keyWrap: try need(keyWrap, "a key wrap"))
        case .push:
            return .push(zone: try need(zone, "a zone"), mutationID: try need(mutationId, "a mutation id"), records: try need(records, "records"))
        case .pullBegin: return .pullBegin(zone: try need(zone, "a zone"), afterSequence: afterSequence ?? 0, liveOnly: liveOnly ?? false)
        case .pullPage: return .pullPage(limit: limit)
        case .pullEnd: return .pullEnd
        case .blobBegin:
            return .blobBegin(zone: try need(zone, "a zone"), blob: try need(blob, "a blob name"),
                              chunkCount: try need(chunkCount, "a chunk count"), byteCount: try need(byteCount, "a size"))
        case .blobChunk: return .blobChunk(index: try need(chunkIndex, "a chunk index"), data: try need(data, "the chunk's data"))
        case .blobEnd: return .blobEnd
        case .listen: return .listen
        case .awaitChange: return .awaitChange(zone: try need(zone, "a zone"), waitSeconds: waitSeconds ?? 1)
        case .blobRead:
            return .blobRead(zone: try need(zone, "a zone"), blob: try need(blob, "a blob name"), chunkIndex: try need(chunkIndex, "a chunk index"))
        case .purgeTombstones: return .purgeTombstones(zone: try need(zone, "a zone"), horizonDays: horizonDays)
        case .collectBlobs: return .collectBlobs(zone: try need(zone, "a zone"))
        case .nameBlobs: return .nameBlobs(zone: try need(zone, "a zone"), records: try need(records, "records"))
        case .fetch: return .fetch(zone: try need(zone, "a zone"), records: try need(records, "records"))
        case .requireClientVersion:
            return .requireClientVersion(zone: try need(zone, "a zone"), clientVersion: try need(clientVersion, "a client version"))
        case .listRecords: return .listRecords(zone: try need(zone, "a zone"), afterKey: afterKey, limit: limit)
        }
    }

    private func need<Value>(_ value: Value?, _ what: String) throws(IncompleteAgentRequest) -> Value {
        guard let value else { throw IncompleteAgentRequest(message: "\(operation.rawValue) needs \(what)") }
        return value
    }
}

extension AgentRequest {
    /// The request a parsed frame holds, as `JSON.decode(AgentRequest.self, from:)` reads it, but
    /// with a push's records (thousands of them) read straight from the parsed values
    /// (`WireRecord(wire:)`) rather than through the decoder, which was most of the agent's time
    /// in a push. Any member that is not what its type needs is an error, as it is there.
    public static func decoding(_ value: JSONValue) throws -> AgentRequest {
        guard case .object(let members) = value, let index = members.lastIndex(where: { $0.key == "records" }),
              case .array(let elements) = members[index].value else {
            return try JSON.decode(AgentRequest.self, from: value)
        }
        var fields = try JSON.decode(AgentRequestFields.self, from: .object(members.filter { $0.key != "records" }))
        fields.records = try elements.map(WireRecord.init(wire:))
        return try fields.request()
    }
}

extension WireRecord {
    /// A record from its parsed JSON object, member by member as its `Codable` form reads it:
    /// `kind`, `id` and `deleted` required, the numbers optional (absent or null), `fields` an
    /// object of sealed fields; other members ignored; a member given twice, the last. Each
    /// value is read by the decoder's own rules for its type (`ValueDecoder.decode`).
    init(wire value: JSONValue) throws {
        guard case .object(let members) = value else { throw Self.malformed("a record is not an object") }
        var kind: String?, id: String?, deleted: Bool?, fields: [String: SealedField]?, blob: String?
        var version: Int64?, expectedVersion: Int64?, sequence: Int64?, written: Int64?
        for (key, member) in members {
            switch key {
            case "kind": kind = try Self.read(String.self, member)
            case "id": id = try Self.read(String.self, member)
            case "deleted": deleted = try Self.read(Bool.self, member)
            case "version": version = try Self.read(Int64?.self, member)
            case "expectedVersion": expectedVersion = try Self.read(Int64?.self, member)
            case "sequence": sequence = try Self.read(Int64?.self, member)
            case "written": written = try Self.read(Int64?.self, member)
            case "blob": blob = try Self.read(String?.self, member)
            case "fields":
                guard case .object(let sealed) = member else { throw Self.malformed("fields is not an object") }
                var opened: [String: SealedField] = [:]
                opened.reserveCapacity(sealed.count)
                for (name, field) in sealed { opened[name] = try SealedField(wire: field) }
                fields = opened
            default: continue
            }
        }
        guard let kind, let id, let deleted, let fields else { throw Self.malformed("a record lacks its kind, id, deleted or fields") }
        self.init(kind: kind, id: id, version: version, expectedVersion: expectedVersion, sequence: sequence, deleted: deleted,
                  fields: fields, blob: blob, written: written)
    }

    static func malformed(_ what: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: what))
    }

    /// `value` as the decoder reads a `T`.
    static func read<T: Decodable>(_ type: T.Type, _ value: JSONValue) throws -> T {
        try ValueDecoder.decode(type, from: value, path: [])
    }

    /// `value` as the decoder reads an optional `T`: null is nil.
    static func read<T: Decodable>(_ type: T?.Type, _ value: JSONValue) throws -> T? {
        value == .null ? nil : try ValueDecoder.decode(T.self, from: value, path: [])
    }
}

extension SealedField {
    init(wire value: JSONValue) throws {
        guard case .object(let members) = value else { throw WireRecord.malformed("a sealed field is not an object") }
        var stamp: String?, nonce: String?, ciphertext: String?
        for (key, member) in members {
            switch key {
            case "stamp": stamp = try WireRecord.read(String.self, member)
            case "nonce": nonce = try WireRecord.read(String.self, member)
            case "ciphertext": ciphertext = try WireRecord.read(String.self, member)
            default: continue
            }
        }
        guard let stamp, let nonce, let ciphertext else { throw WireRecord.malformed("a sealed field lacks its stamp, nonce or ciphertext") }
        self.init(stamp: stamp, nonce: nonce, ciphertext: ciphertext)
    }
}
