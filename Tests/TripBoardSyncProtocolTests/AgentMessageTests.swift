import Testing
import TripBoardSystem
@testable import TripBoardSyncProtocol

/// Requests and answers are typed inside and the same JSON on the wire as they have always
/// been: every operation's frame is pinned here byte for byte. Frames carry every member of
/// their side, `null` where the message has none (as `JSON.encode` writes an absent optional);
/// the expectations below list the others, and `framed` adds the nulls.
@Suite struct AgentMessageTests {
    static let requestMembers = ["operation", "conninfo", "password", "zone", "keyWrap", "mutationId", "records", "afterSequence",
                                 "liveOnly", "limit", "blob", "byteCount", "chunkCount", "chunkIndex", "data", "waitSeconds",
                                 "checkMutation", "checkRecord", "checkRecordStamps", "horizonDays", "afterKey", "clientVersion"]
    static let answerMembers = ["failure", "serverTime", "schemaVersion", "upgraded", "zone", "results", "replayed", "records",
                                "highSequence", "more", "blobExists", "changed", "chunkCount", "data", "mutationKnown", "recordKnown",
                                "purged", "missingBlobs", "collected", "unnamedBlobRecords", "named"]

    /// `frame`'s members and `null` for each of `members` it lacks, compact, keys sorted.
    static func framed(_ frame: String, _ members: [String]) throws -> String {
        guard case .object(let given) = try JSONValue.parse(Array(frame.utf8)) else { return frame }
        let present = Set(given.map(\.key))
        let all = given + members.filter { !present.contains($0) }.map { (key: $0, value: JSONValue.null) }
        return String(decoding: JSONValue.object(all).serialized(pretty: false), as: UTF8.self)
    }

    /// `value` without members that are `null`, at any depth.
    static func withoutNulls(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.filter { $0.value != .null }.map { ($0.key, withoutNulls($0.value)) })
        case .array(let elements): .array(elements.map(withoutNulls))
        default: value
        }
    }

    static let record = WireRecord(kind: "trip", id: "t1", version: 3, deleted: false, fields: [:])
    static let sealed = WireRecord(kind: "place", id: "p1", expectedVersion: 2, deleted: false,
                                   fields: ["name": SealedField(stamp: "s", nonce: "n", ciphertext: "c")], blob: nil)
    static let blob = String(repeating: "ab", count: 32)

    static let requests: [(AgentRequest, String)] = [
        (.connect(conninfo: "host=/tmp", password: "pw"), #"{"conninfo":"host=/tmp","operation":"connect","password":"pw"}"#),
        (.connect(conninfo: "host=/tmp", password: nil), #"{"conninfo":"host=/tmp","operation":"connect"}"#),
        (.initServer, #"{"operation":"initServer"}"#),
        (.zone("default"), #"{"operation":"zone","zone":"default"}"#),
        (.zone("default", check: ZoneCheck(mutation: "m1", record: record, recordStamps: "name=s")),
         #"{"checkMutation":"m1","checkRecord":{"blob":null,"deleted":false,"expectedVersion":null,"fields":{},"id":"t1","kind":"trip","sequence":null,"version":3,"written":null},"checkRecordStamps":"name=s","operation":"zone","zone":"default"}"#),
        (.createZone("z", keyWrap: "w"), #"{"keyWrap":"w","operation":"createZone","zone":"z"}"#),
        (.push(zone: "z", mutationID: "m", records: [sealed]),
         #"{"mutationId":"m","operation":"push","records":[{"blob":null,"deleted":false,"expectedVersion":2,"fields":{"name":{"ciphertext":"c","nonce":"n","stamp":"s"}},"id":"p1","kind":"place","sequence":null,"version":null,"written":null}],"zone":"z"}"#),
        (.pullBegin(zone: "z", afterSequence: 0, liveOnly: false), #"{"afterSequence":0,"liveOnly":false,"operation":"pullBegin","zone":"z"}"#),
        (.pullPage(limit: 2000), #"{"limit":2000,"operation":"pullPage"}"#),
        (.pullEnd, #"{"operation":"pullEnd"}"#),
        (.blobBegin(zone: "z", blob: blob, chunkCount: 1, byteCount: 100),
         #"{"blob":"\#(blob)","byteCount":100,"chunkCount":1,"operation":"blobBegin","zone":"z"}"#),
        (.blobChunk(index: 0, data: "QUJD"), #"{"chunkIndex":0,"data":"QUJD","operation":"blobChunk"}"#),
        (.blobEnd, #"{"operation":"blobEnd"}"#),
        (.listen, #"{"operation":"listen"}"#),
        (.awaitChange(zone: "z", waitSeconds: 2.5), #"{"operation":"awaitChange","waitSeconds":2.5,"zone":"z"}"#),
        (.awaitChange(zone: "z", waitSeconds: 30), #"{"operation":"awaitChange","waitSeconds":30,"zone":"z"}"#),
        (.blobRead(zone: "z", blob: blob, chunkIndex: 4), #"{"blob":"\#(blob)","chunkIndex":4,"operation":"blobRead","zone":"z"}"#),
        (.purgeTombstones(zone: "z", horizonDays: nil), #"{"operation":"purgeTombstones","zone":"z"}"#),
        (.purgeTombstones(zone: "z", horizonDays: 500), #"{"horizonDays":500,"operation":"purgeTombstones","zone":"z"}"#),
        (.collectBlobs(zone: "z"), #"{"operation":"collectBlobs","zone":"z"}"#),
        (.nameBlobs(zone: "z", records: [record]),
         #"{"operation":"nameBlobs","records":[{"blob":null,"deleted":false,"expectedVersion":null,"fields":{},"id":"t1","kind":"trip","sequence":null,"version":3,"written":null}],"zone":"z"}"#),
        (.fetch(zone: "z", records: []), #"{"operation":"fetch","records":[],"zone":"z"}"#),
        (.requireClientVersion(zone: "z", clientVersion: 7), #"{"clientVersion":7,"operation":"requireClientVersion","zone":"z"}"#),
        (.listRecords(zone: "z", afterKey: nil, limit: nil), #"{"operation":"listRecords","zone":"z"}"#),
        (.listRecords(zone: "z", afterKey: "trip/t1", limit: 10), #"{"afterKey":"trip/t1","limit":10,"operation":"listRecords","zone":"z"}"#),
    ]

    @Test func everyOperationHasAFrameOfItsOwnHere() {
        let covered = Set(Self.requests.map { $0.0.operation.rawValue })
        let all: [AgentOperation] = [.connect, .initServer, .zone, .createZone, .push, .pullBegin, .pullPage, .pullEnd, .blobBegin,
                                     .blobChunk, .blobEnd, .listen, .awaitChange, .blobRead, .purgeTombstones, .collectBlobs,
                                     .nameBlobs, .fetch, .requireClientVersion, .listRecords]
        #expect(covered == Set(all.map(\.rawValue)))
    }

    @Test(arguments: requests)
    func aRequestIsWrittenAsItAlwaysWasAndReadBack(request: AgentRequest, frame: String) throws {
        let bytes = try JSON.encode(request, pretty: false)
        #expect(String(decoding: bytes, as: UTF8.self) == (try Self.framed(frame, Self.requestMembers)))
        #expect(try JSON.decode(AgentRequest.self, from: bytes) == request)
    }

    /// The push written straight into bytes is the same document, `records` last and without
    /// the members a push has none of.
    @Test func aPushWrittenByHandIsThePushEncoded() throws {
        let records = WireJSON.records([Self.sealed, Self.record])
        let byHand = WireJSON.push(zone: "z\"1", mutationID: "m", records: records)
        let encoded = try JSON.encode(AgentRequest.push(zone: "z\"1", mutationID: "m", records: [Self.sealed, Self.record]), pretty: false)
        #expect(try JSONValue.parse(byHand) == Self.withoutNulls(JSONValue.parse(encoded)))
        #expect(String(decoding: byHand, as: UTF8.self).hasPrefix(#"{"mutationId":"m","operation":"push","zone":"z\"1","records":[{"#))
    }

    /// The agent reads a push's records straight from the parsed frame (`AgentRequest.decoding`):
    /// every frame here, well formed or not, reads as the decoder reads it — the same request,
    /// or an error where the decoder has one (an incomplete request where it has that).
    @Test func aPushsRecordsReadAsTheDecoderReadsThem() throws {
        let sealed = #"{"stamp":"s","nonce":"n","ciphertext":"c"}"#
        let push = { (records: String) in #"{"operation":"push","zone":"z","mutationId":"m","records":"# + records + "}" }
        var frames = Self.requests.map(\.1) + [
            push(#"[{"kind":"trip","id":"t","deleted":false,"fields":{"name":\#(sealed)}}]"#),
            push(#"[{"kind":"trip","id":"t","deleted":true,"fields":{},"version":null,"expectedVersion":4,"sequence":2.0,"written":1e3,"blob":null,"extra":[1]}]"#),
            push(#"[{"kind":"trip","id":"t","id":"u","deleted":false,"fields":{"a":\#(sealed),"a":{"stamp":"2","nonce":"n","ciphertext":"c"}}}]"#),
            push(#"[{"kind":"attachment","id":"a","deleted":false,"fields":{},"blob":"b"}]"#),
            push("[]"), push("null"),
            #"{"operation":"push","zone":"z","records":[{"kind":"trip","id":"t","deleted":false,"fields":{}}]}"#,
            #"{"operation":"push","zone":"z","mutationId":"m","records":[],"records":[{"kind":"trip","id":"t","deleted":false,"fields":{}}]}"#,
            #"{"operation":"nameBlobs","zone":"z","records":[{"kind":"attachment","id":"a","deleted":false,"fields":{},"blob":"b"}]}"#,
        ]
        for bad in [#"{"id":"t","deleted":false,"fields":{}}"#, #"{"kind":"trip","id":"t","fields":{}}"#, #"{"kind":"trip","id":"t","deleted":false}"#,
                    #"{"kind":1,"id":"t","deleted":false,"fields":{}}"#, #"{"kind":"trip","id":"t","deleted":"no","fields":{}}"#,
                    #"{"kind":"trip","id":"t","deleted":false,"fields":[]}"#, #"{"kind":"trip","id":"t","deleted":false,"fields":{"a":{"stamp":"s"}}}"#,
                    #"{"kind":"trip","id":"t","deleted":false,"fields":{"a":{"stamp":"s","nonce":1,"ciphertext":"c"}}}"#,
                    #"{"kind":"trip","id":"t","deleted":false,"fields":{},"version":"3"}"#, #"{"kind":"trip","id":"t","deleted":false,"fields":{},"version":1.5}"#,
                    #"{"kind":"trip","id":"t","deleted":false,"fields":{},"version":1e30}"#, #"{"kind":"trip","id":"t","deleted":false,"fields":{},"blob":7}"#,
                    #"[]"#, #""trip""#, "null"] {
            frames.append(push("[" + bad + "]"))
        }
        for frame in frames {
            let value = try JSONValue.parse(Array(frame.utf8))
            let expected: Result<AgentRequest, any Error> = Result { try JSON.decode(AgentRequest.self, from: value) }
            let read: Result<AgentRequest, any Error> = Result { try AgentRequest.decoding(value) }
            switch (expected, read) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(frame)")
            case (.failure(let a), .failure(let b)): #expect((a is IncompleteAgentRequest) == (b is IncompleteAgentRequest), "\(frame): \(a) / \(b)")
            default: Issue.record("\(frame): the decoder gives \(expected), the fast read \(read)")
            }
        }
    }

    /// An operation the agent knows, without what it needs, is an incomplete request (answered
    /// as a bad one); a defaulted member may be left out, as clients of earlier builds did.
    @Test func whatAnOperationNeedsMustBeThere() throws {
        for (frame, message) in [(#"{"operation":"pullBegin"}"#, "pullBegin needs a zone"),
                                 (#"{"operation":"push","zone":"z","records":[]}"#, "push needs a mutation id"),
                                 (#"{"operation":"blobChunk","chunkIndex":0}"#, "blobChunk needs the chunk's data"),
                                 (#"{"operation":"connect"}"#, "connect needs a conninfo")] {
            #expect {
                try JSON.decode(AgentRequest.self, from: Array(frame.utf8))
            } throws: { ($0 as? IncompleteAgentRequest)?.message == message }
        }
        #expect(try JSON.decode(AgentRequest.self, from: Array(#"{"operation":"pullBegin","zone":"z"}"#.utf8))
                == .pullBegin(zone: "z", afterSequence: 0, liveOnly: false))
        #expect(try JSON.decode(AgentRequest.self, from: Array(#"{"operation":"awaitChange","zone":"z"}"#.utf8))
                == .awaitChange(zone: "z", waitSeconds: 1))
        #expect(throws: (any Error).self) { try JSON.decode(AgentRequest.self, from: Array(#"{"operation":"drop"}"#.utf8)) }
        #expect(throws: (any Error).self) { try JSON.decode(AgentRequest.self, from: Array(#"{"operation":"zone","zone":5}"#.utf8)) }
    }

    static let zone = ZoneInfo(name: "z", epoch: "e", changeSequence: 9, keyWrap: "k", minClientVersion: 3, purgedThrough: 0)

    static let answers: [(AgentResponse, AgentOperation, String)] = [
        (.failed(.badRequest, "no"), .zone, #"{"failure":{"kind":"badRequest","message":"no"}}"#),
        (.connected(serverTime: "2026-12-05T10:00:00.000Z"), .connect, #"{"serverTime":"2026-12-05T10:00:00.000Z"}"#),
        (.connected(serverTime: nil), .connect, "{}"),
        (.schemaInstalled(version: 5, upgraded: true), .initServer, #"{"schemaVersion":5,"upgraded":true}"#),
        (.zone(ZoneAnswer(zone: zone, mutationKnown: true, recordKnown: false)), .zone,
         #"{"mutationKnown":true,"recordKnown":false,"zone":{"changeSequence":9,"epoch":"e","keyWrap":"k","minClientVersion":3,"name":"z","purgedThrough":0}}"#),
        (.zone(ZoneAnswer(zone: nil)), .createZone, "{}"),
        (.pushed(PushAnswer(results: [PushResult(kind: "trip", id: "t1", status: .applied, version: 4, sequence: 10)], replayed: true)), .push,
         #"{"replayed":true,"results":[{"id":"t1","kind":"trip","sequence":10,"status":"applied","version":4}]}"#),
        (.pushed(PushAnswer(results: [], replayed: false, missingBlobs: [blob])), .push,
         #"{"missingBlobs":["\#(blob)"],"replayed":false,"results":[]}"#),
        (.pullBegun(highSequence: 42), .pullBegin, #"{"highSequence":42}"#),
        (.recordList([record], more: true), .listRecords,
         #"{"more":true,"records":[{"blob":null,"deleted":false,"expectedVersion":null,"fields":{},"id":"t1","kind":"trip","sequence":null,"version":3,"written":null}]}"#),
        (.blobBegun(exists: true), .blobBegin, #"{"blobExists":true}"#),
        (.blobChunk(nil), .blobRead, #"{"blobExists":false}"#),
        (.blobChunk(BlobChunk(chunkCount: 3, data: "QUJD")), .blobRead, #"{"blobExists":true,"chunkCount":3,"data":"QUJD"}"#),
        (.changeAwaited(changed: true), .awaitChange, #"{"changed":true}"#),
        (.tombstonesPurged(2), .purgeTombstones, #"{"purged":2}"#),
        (.blobsCollected(3, unnamed: nil), .collectBlobs, #"{"collected":3}"#),
        (.blobsCollected(0, unnamed: [record]), .collectBlobs,
         #"{"collected":0,"unnamedBlobRecords":[{"blob":null,"deleted":false,"expectedVersion":null,"fields":{},"id":"t1","kind":"trip","sequence":null,"version":3,"written":null}]}"#),
        (.blobsNamed(1), .nameBlobs, #"{"named":1}"#),
        (.done, .pullEnd, "{}"),
        (.done, .requireClientVersion, "{}"),
    ]

    @Test(arguments: answers)
    func anAnswerIsWrittenAsItAlwaysWasAndReadForItsOperation(answer: AgentResponse, operation: AgentOperation, frame: String) throws {
        let bytes = try JSON.encode(answer, pretty: false)
        #expect(String(decoding: bytes, as: UTF8.self) == (try Self.framed(frame, Self.answerMembers)))
        #expect(try AgentResponse(decoding: bytes, answering: operation) == answer)
    }

    /// An answer without what its operation always answers is not an answer; a failure is one
    /// to any operation.
    @Test func anAnswerMustHoldWhatItsOperationAnswers() throws {
        for operation: AgentOperation in [.initServer, .push, .pullBegin, .listRecords, .blobBegin, .blobRead, .awaitChange,
                                          .purgeTombstones, .collectBlobs, .nameBlobs] {
            #expect(throws: MalformedAgentAnswer.self) { try AgentResponse(decoding: Array("{}".utf8), answering: operation) }
        }
        let failure = Array(#"{"failure":{"kind":"temporary","message":"later"}}"#.utf8)
        #expect(try AgentResponse(decoding: failure, answering: .push) == .failed(.temporary, "later"))
    }
}
