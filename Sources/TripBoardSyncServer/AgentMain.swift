import TripBoardSyncProtocol
import TripBoardSystem

/// `sync-agent`'s loop: frames in on stdin, frames out on stdout (`HelperSession` is the other
/// end), until stdin closes. Exit statuses: 0 at end of input (and for `--version`, alone or with
/// `-q`), 64 when started with other arguments or sent a frame that is not a request, 74 when a
/// pipe fails. It stops itself after
/// `AgentLimits.lifetimeSeconds` (SIGALRM) whatever its client does, holds at most
/// `AgentLimits.addressSpaceBytes` of address space (`RLIMIT_AS`), and it handles secret
/// material (a server password), so it makes no core dump.
public enum AgentMain {
    /// What `sync-agent --version` prints.
    public static let version = "TripBoard sync-agent 1.0"

    public static func main(arguments: [String]) -> Int32 {
        if arguments.contains("--version"), arguments.allSatisfy({ ["--version", "-q", "--quiet"].contains($0) }) {
            _ = StandardStream.output.write(Array((version + "\n").utf8))
            return 0
        }
        guard arguments.isEmpty else {
            StandardStream.error.write(Array("sync-agent: takes no arguments; `app sync …` starts it and speaks to it on stdin and stdout\n".utf8))
            return 64
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
            let request: AgentRequest
            do {
                request = try JSON.decode(AgentRequest.self, from: frame)
            } catch {
                return 64
            }
            do {
                let bytes = try service.answer(request)
                try output.write(all: HelperSession.header(bytes.count) + bytes)
            } catch {
                return 74
            }
        }
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
