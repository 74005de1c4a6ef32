import TripBoardSystem
import TripBoardSyncProtocol

extension WireJSON {
    /// A push's answer, read from its JSON value tree by hand when it has the shape the agent
    /// writes (`AgentService`, `WireJSON.results`): `results`, `replayed`, `missingBlobs`, each
    /// once, every result an object of `kind`, `id`, `status`, `version` and an optional
    /// `sequence`. Anything else — a failure, another member, a value of another type — goes to
    /// `SyncAgentClient.response`, the `Codable` reading, which answers or throws exactly as
    /// before. Decoding 2,500 results through `Codable` cost about 21,000 instructions a result.
    static func pushAnswer(_ answer: [UInt8], _ agent: SyncAgentClient) throws -> PushAnswer {
        if let value = try? JSONValue.parse(answer), let read = pushAnswer(value) { return read }
        guard case .pushed(let read) = try agent.response(answer, answering: .push) else { throw agent.unexpectedAnswer() }
        return read
    }

    /// The answer in `value` when it has exactly the agent's shape; nil otherwise.
    static func pushAnswer(_ value: JSONValue) -> PushAnswer? {
        guard case .object(let members) = value else { return nil }
        var results: [PushResult]?, replayed: Bool?, missingBlobs: [String]?
        for (key, member) in members {
            switch (key, member) {
            case ("replayed", .bool(let flag)) where replayed == nil: replayed = flag
            case ("results", .array(let elements)) where results == nil:
                var read: [PushResult] = []
                read.reserveCapacity(elements.count)
                for element in elements {
                    guard let result = pushResult(element) else { return nil }
                    read.append(result)
                }
                results = read
            case ("missingBlobs", .array(let elements)) where missingBlobs == nil:
                var names: [String] = []
                for element in elements {
                    guard case .string(let name) = element else { return nil }
                    names.append(name)
                }
                missingBlobs = names
            default: return nil
            }
        }
        guard let results, let replayed else { return nil }
        return PushAnswer(results: results, replayed: replayed, missingBlobs: missingBlobs ?? [])
    }

    private static func pushResult(_ value: JSONValue) -> PushResult? {
        guard case .object(let members) = value else { return nil }
        var kind: String?, id: String?, status: PushResult.Status?, version: Int64?, sequence: Int64??
        for (key, member) in members {
            switch (key, member) {
            case ("kind", .string(let text)) where kind == nil: kind = text
            case ("id", .string(let text)) where id == nil: id = text
            case ("status", .string(let text)) where status == nil:
                guard let known = PushResult.Status(rawValue: text) else { return nil }
                status = known
            case ("version", .number(let text)) where version == nil:
                guard let number = Int64(text) else { return nil }
                version = number
            case ("sequence", .number(let text)) where sequence == nil:
                guard let number = Int64(text) else { return nil }
                sequence = .some(number)
            case ("sequence", .null) where sequence == nil: sequence = .some(nil)
            default: return nil
            }
        }
        guard let kind, let id, let status, let version else { return nil }
        return PushResult(kind: kind, id: id, status: status, version: version, sequence: sequence ?? nil)
    }
}
