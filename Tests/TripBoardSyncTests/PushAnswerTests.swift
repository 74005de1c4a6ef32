import Testing
@testable import TripBoardSync
import TripBoardSyncProtocol
import TripBoardSystem

/// A push's answer read by hand (`WireJSON.pushAnswer`) against the `Codable` reading it stands
/// in for (`AgentResponse(decoding:answering:)`): the same answer whenever the hand reading
/// gives one, and it gives one for every shape the agent writes.
@Suite struct PushAnswerTests {
    static let results: [PushResult] = [
        PushResult(kind: "trip", id: "a1", status: .applied, version: 3, sequence: 17),
        PushResult(kind: "place", id: "b2", status: .conflict, version: 9, sequence: nil),
        PushResult(kind: "secret", id: String(repeating: "f", count: 64), status: .applied, version: Int64.max, sequence: 1),
    ]

    /// What the agent writes (`AgentService`): fresh, with blobs missing, and replayed from the
    /// stored results (jsonb gives them back with its own spacing and key order).
    static let agentShapes: [String] = [
        #"{"replayed":false,"results":\#(String(decoding: WireJSON.results(results), as: UTF8.self))}"#,
        #"{"replayed":false,"results":[],"missingBlobs":["x1","y2"]}"#,
        #"{"results": [{"id": "a1", "kind": "trip", "status": "applied", "version": 3, "sequence": 17}], "replayed": true}"#,
        #"{"replayed":true,"results":[{"kind":"trip","id":"a1","status":"conflict","version":2,"sequence":null}]}"#,
    ]

    @Test(arguments: agentShapes)
    func theAgentsAnswersAreReadByHandAsCodableReadsThem(text: String) throws {
        let bytes = Array(text.utf8)
        let byHand = try #require(WireJSON.pushAnswer(try JSONValue.parse(bytes)))
        guard case .pushed(let expected) = try AgentResponse(decoding: bytes, answering: .push) else {
            Issue.record("not a push answer")
            return
        }
        #expect(byHand == expected)
    }

    /// Anything else is left to the `Codable` reading (nil here): a failure, a member twice or
    /// of another type, an unknown status, a version that is no integer, another member.
    @Test(arguments: [
        #"{"failure":{"kind":"server","message":"no"}}"#,
        #"{"replayed":false,"replayed":true,"results":[]}"#,
        #"{"replayed":"no","results":[]}"#,
        #"{"replayed":false}"#,
        #"{"replayed":false,"results":[{"kind":"trip","id":"a","status":"lost","version":1}]}"#,
        #"{"replayed":false,"results":[{"kind":"trip","id":"a","status":"applied","version":1.5}]}"#,
        #"{"replayed":false,"results":[{"kind":"trip","id":"a","status":"applied"}]}"#,
        #"{"replayed":false,"results":[{"kind":"trip","id":"a","status":"applied","version":1,"extra":0}]}"#,
        #"{"replayed":false,"results":[],"serverTime":"2026-12-07T10:00:00Z"}"#,
        #"{"replayed":false,"results":[],"missingBlobs":[1]}"#,
        #"[]"#,
    ])
    func anythingElseGoesToTheCodableReading(text: String) throws {
        #expect(WireJSON.pushAnswer(try JSONValue.parse(Array(text.utf8))) == nil)
    }
}
