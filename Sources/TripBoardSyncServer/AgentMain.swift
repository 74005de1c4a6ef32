import TripBoardSyncProtocol
import TripBoardSystem
package import TripBoardCommandLine

/// `sync-agent`'s loop: frames in on stdin, frames out on stdout (`HelperSession` is the other
/// end), until stdin closes. Exit statuses: 0 at end of input (and for `--version` and `--help`),
/// 64 when started with other arguments or sent a frame that is not a request, 74 when a pipe
/// fails. It stops itself after
/// `AgentLimits.lifetimeSeconds` (SIGALRM) whatever its client does, holds at most
/// `AgentLimits.addressSpaceBytes` of address space (`RLIMIT_AS`), and it handles secret
/// material (a server password), so it makes no core dump.
public enum AgentMain {
    /// The agent's command line, declared once: it takes only the common options.
    package static let program = ProgramSpec(
        name: "sync-agent", tagline: "speaks to the sync server for app",
        description: ["The only TripBoard program that links libpq. `app sync …` starts it and speaks to it in frames on standard input and output; it takes no arguments of its own."],
        globalOptions: [CommonOptions.quiet, CommonOptions.help, CommonOptions.version], commands: [],
        grammar: Grammar(options: [], positionals: []),
        exitStatuses: ["0  end of input", "64  usage, or a frame that is not a request", "74  a pipe failed"],
        versionDetail: nil)

    /// `main(arguments:)` with the command line as the kernel passed it (a word that is not
    /// valid UTF-8 is a usage error, `ProgramStart.words`).
    public static func main(rawArguments: [[UInt8]]) -> Int32 {
        do {
            return main(arguments: try ProgramStart.words(rawArguments))
        } catch {
            StandardStream.error.write(Array("error: \(error.message)\n".utf8))
            return ExitStatus.usage.rawValue
        }
    }

    public static func main(arguments: [String]) -> Int32 {
        do {
            switch try ProgramStart.parse(arguments, of: program) {
            case .help:
                return StandardStream.output.write(Array((HelpText.single(program) + "\n").utf8)) ? 0 : 74
            case .version:
                return StandardStream.output.write(Array((program.versionLine + "\n").utf8)) ? 0 : 74
            case .run(let parsed):
                try parsed.finish()
            }
        } catch {
            StandardStream.error.write(Array("error: \(errorMessage(for: error))\n".utf8))
            return ExitStatus.usage.rawValue
        }
        ProcessSetup.applyDefaults()
        do {
            try ProcessSetup.protectSecretsFromCoreDumps()
        } catch {
            // The agent holds the server's password: say so, and go on (it is the server's
            // password, not the keychain's keys, and `app` has refused core dumps itself).
            StandardStream.error.write(Array("sync-agent: warning: core dumps could not be turned off (\(error))\n".utf8))
        }
        ProcessSignal.scheduleAlarm(inSeconds: AgentLimits.lifetimeSeconds)
        // Whatever a server answers, the agent holds at most this much: an allocation beyond it
        // fails inside libpq, which the agent reports as damaged server data (65).
        ResourceLimit.addressSpaceBytes.lower(to: UInt64(AgentLimits.addressSpaceBytes))
        let input: FileDescriptor
        let output: FileDescriptor
        do {
            input = try FileDescriptor.standardInput()
            output = try FileDescriptor.standardOutput()
        } catch {
            return 74
        }
        let service = AgentService()
        while true {
            let frame: [UInt8]
            do {
                guard let header = try read(4, from: input) else { return 0 }
                let count = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
                guard count <= HelperSession.frameLimit, let body = try read(count, from: input) else { return 64 }
                frame = body
            } catch {
                return 74
            }
            do {
                guard let bytes = try answer(to: frame, service) else { return 64 }
                try output.write(all: HelperSession.header(bytes.count) + bytes)
            } catch {
                return 74
            }
        }
    }

    /// The answer to the request in `frame`, as the frame to send; nil when `frame` is not a
    /// request. One of an operation the agent knows, without what that operation needs, is
    /// answered as a bad request, as a request out of order is.
    private static func answer(to frame: [UInt8], _ service: AgentService) throws -> [UInt8]? {
        let request: AgentRequest
        do {
            request = try AgentRequest.decoding(try JSONValue.parse(frame, maximumValues: AgentLimits.requestValues))
        } catch let incomplete as IncompleteAgentRequest {
            return try JSON.encode(AgentResponse.failed(.badRequest, incomplete.message), pretty: false)
        } catch {
            return nil
        }
        return try service.answer(request)
    }

    /// Exactly `count` bytes, or nil at end of input before the first of them.
    private static func read(_ count: Int, from input: FileDescriptor) throws(AgentInputError) -> [UInt8]? {
        var bytes: [UInt8] = []
        while bytes.count < count {
            let chunk: [UInt8]
            do {
                chunk = try input.read(upTo: min(count - bytes.count, 1 << 20))
            } catch {
                throw .failed
            }
            if chunk.isEmpty {
                if bytes.isEmpty && count > 0 { return nil }
                throw .cutShort
            }
            bytes += chunk
        }
        return bytes
    }
}

/// Why the agent stopped reading its input.
enum AgentInputError: Error {
    case failed, cutShort
}
