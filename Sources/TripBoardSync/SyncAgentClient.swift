public import TripBoardSystem
public import TripBoardSyncProtocol

/// `app`'s end of the conversation with `sync-agent` (`AgentProtocol.swift`): starts it next to
/// the running executable (or where `TRIPBOARD_SYNC_AGENT` says), sends requests, turns failures
/// into `SyncError`. Every answer is awaited at most `AgentLimits.answerSeconds`; the agent is
/// killed when the client is released.
public final class SyncAgentClient {
    public static let environmentVariable = "TRIPBOARD_SYNC_AGENT"

    private let session: HelperSession
    /// A request was posted and its answer not collected yet.
    private var awaiting = false
    public let executablePath: String

    /// Starts the agent. Its environment: the library path and nothing else of ours (libpq
    /// reads PG* variables, which must not change what the conninfo says).
    public init(environment: [String: String] = ProcessSetup.environment([SyncAgentClient.environmentVariable, "LD_LIBRARY_PATH"])) throws {
        var path = environment[Self.environmentVariable] ?? ""
        if path.isEmpty {
            path = try ChildProcess.currentExecutableDirectory() + "/sync-agent"
        }
        executablePath = path
        var childEnvironment: [String: String] = [:]
        if let libraries = environment["LD_LIBRARY_PATH"] { childEnvironment["LD_LIBRARY_PATH"] = libraries }
        do {
            session = try HelperSession(executable: path, arguments: [], environment: childEnvironment)
        } catch {
            throw SyncError.agentMissing(path: path, detail: error.description)
        }
    }

    /// Sends `request` and returns the answer, or throws what its failure means.
    public func send(_ request: AgentRequest, timeout: Double = AgentLimits.answerSeconds) throws -> AgentResponse {
        let bytes = try JSON.encode(request, pretty: false)
        drain()
        let answer: [UInt8]
        do {
            answer = try session.exchange(bytes, timeout: timeout)
        } catch {
            throw SyncError.agentFailed(detail: error.description)
        }
        return try response(answer, answering: request.operation)
    }

    /// Sends `request` without waiting for the answer, which `collect` returns: the agent and
    /// the server work on it while this side does something else (applies the previous page).
    func post(_ request: AgentRequest) throws {
        try post(encoded: try JSON.encode(request, pretty: false))
    }

    /// `post` of a request already encoded as JSON (`WireJSON.push`).
    func post(encoded request: [UInt8]) throws {
        drain()
        do {
            try session.post(request)
        } catch {
            throw SyncError.agentFailed(detail: error.description)
        }
        awaiting = true
    }

    /// The answer to the request `post` sent, as it came (`response(_:)` reads it).
    func collect(timeout: Double = AgentLimits.answerSeconds) throws -> [UInt8] {
        awaiting = false
        do {
            return try session.receive(timeout: timeout)
        } catch {
            throw SyncError.agentFailed(detail: error.description)
        }
    }

    /// An answer posted for and never collected (its caller threw meanwhile) is read and
    /// dropped before the next request, so that answers stay in step with requests.
    private func drain() {
        guard awaiting else { return }
        awaiting = false
        _ = try? session.receive(timeout: AgentLimits.answerSeconds)
    }

    /// The answer in `answer` to a request of `operation`, or what its failure means, thrown.
    func response(_ answer: [UInt8], answering operation: AgentOperation) throws -> AgentResponse {
        let response: AgentResponse
        do {
            response = try AgentResponse(decoding: answer, answering: operation)
        } catch {
            session.end(grace: 0)
            throw SyncError.agentFailed(detail: "an answer that is not a response")
        }
        if case .failed(let failure) = response {
            switch failure.kind {
            case .unavailable: throw SyncError.serverUnavailable(failure.message)
            case .temporary: throw SyncError.serverBusy(failure.message)
            case .schema: throw SyncError.serverSchema(failure.message)
            case .badRequest, .server: throw SyncError.serverFailed(failure.message)
            case .damaged: throw SyncError.damagedServerData(failure.message)
            case .refused: throw SyncError.invalidArgument(failure.message)
            }
        }
        return response
    }

    /// An answer that is not the one its request awaits: the agent breaks the protocol.
    public func unexpectedAnswer() -> SyncError {
        session.end(grace: 0)
        return SyncError.agentFailed(detail: "an answer that is not a response")
    }

    /// Connects to `conninfo`; returns the server's clock.
    public func connect(conninfo: String, password: String?) throws -> Timestamp {
        guard case .connected(let serverTime) = try send(.connect(conninfo: conninfo, password: password)) else {
            throw unexpectedAnswer()
        }
        return serverTime.flatMap { Timestamp(iso8601: $0) } ?? Timestamp.now()
    }

    /// The zone `zone` as the server has it (made first with `keyWrap` when it has none), and
    /// the answers to `check`.
    public func zone(_ zone: String, creatingWith keyWrap: String? = nil, check: ZoneCheck = ZoneCheck()) throws -> ZoneAnswer {
        guard case .zone(let answer) = try send(keyWrap.map { .createZone(zone, keyWrap: $0) } ?? .zone(zone, check: check)) else {
            throw unexpectedAnswer()
        }
        return answer
    }

    /// Listens for the server's change notifications from now on (`sync watch`).
    public func listen() throws { _ = try send(.listen) }

    /// Asks whether the server announces a change in `zone` within `seconds` (since `listen`,
    /// any announcement not yet collected counts), without waiting for the answer: the caller
    /// waits on `answerDescriptor` with whatever else it waits for, then `collectChange`. The
    /// agent answers as soon as an announcement arrives.
    public func postAwaitChange(zone: String, seconds: Double) throws {
        try post(.awaitChange(zone: zone, waitSeconds: seconds))
    }

    /// The answer to `postAwaitChange`: whether the zone changed. Call it once `answerDescriptor`
    /// is readable; it waits at most `AgentLimits.answerSeconds` for the rest of the answer.
    public func collectChange() throws -> Bool {
        guard case .changeAwaited(let changed) = try response(try collect(), answering: .awaitChange) else { throw unexpectedAnswer() }
        return changed
    }

    /// The descriptor the agent's answers arrive on (`ChangeWatcher.wait(timeout:orInputOn:)`).
    public var answerDescriptor: Int32 { session.answerDescriptor }

    public func end() { session.end() }
}
