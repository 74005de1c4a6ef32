import Foundation
import Testing
import TripBoardSystem

/// A server that breaks the protocol, or whose tables hold what no device wrote (docs/sync.md,
/// "What the server can and cannot do"): the agent bounds what it reads in the query itself,
/// reads results a row at a time, caps its address space, and calls anything beyond the bounds
/// damaged server data (65), once; a password never gets into the store in any spelling.
@Suite struct SyncServerLimitsTests {
    /// `sync-agent` spoken to directly, frame by frame, as `app` does: what it answers and how
    /// much memory it took, read from /proc while it still runs.
    final class AgentConversation {
        let process = Process()
        let input = Pipe()
        private let output = Pipe()

        init() throws {
            process.executableURL = URL(fileURLWithPath: ProcessRunner.executable("sync-agent"))
            process.environment = ProcessRunner.environment(container: nil)
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        deinit {
            // The agent ends at the end of its input; SIGKILL in case (SIGTERM may be inherited blocked).
            try? input.fileHandleForWriting.close()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        func send(_ request: [String: Any]) throws -> [String: Any] {
            let body = try JSONSerialization.data(withJSONObject: request)
            let count = UInt32(body.count).bigEndian
            input.fileHandleForWriting.write(withUnsafeBytes(of: count) { Data($0) } + body)
            let header = try #require(try output.fileHandleForReading.read(upToCount: 4))
            try #require(header.count == 4, "the agent ended without answering")
            let length = header.reduce(0) { $0 << 8 | Int($1) }
            var answer = Data()
            while answer.count < length {
                answer += try #require(try output.fileHandleForReading.read(upToCount: length - answer.count))
            }
            return try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any])
        }

        /// The agent's peak resident set so far, in KiB (`VmHWM`).
        func peakKiB() throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }

        static func failureKind(_ answer: [String: Any]) -> String? {
            (answer["failure"] as? [String: Any])?["kind"] as? String
        }
    }

    /// A small frame of very many tiny values (`[[],[],…]`, 7 MiB) is not a request: the agent
    /// refuses it (64) without building its tree, where it used to run out of its address space
    /// and abort. A request of many values that stays under the bound is still answered.
    @Test func aFrameOfTooManyValuesEndsTheAgentWithoutGrowingIt() throws {
        let agent = try AgentConversation()
        let answer = try agent.send(["operation": "listen", "padding": Array(repeating: [Any](), count: 900_000)])
        #expect(AgentConversation.failureKind(answer) == "unavailable", "\(answer)")
        let flood = try AgentConversation()
        let body = Array(#"{"operation":"listen","padding":["#.utf8) + Array(repeating: Array("[],".utf8), count: 2_500_000).joined() + Array("[]]}".utf8)
        let count = UInt32(body.count).bigEndian
        flood.input.fileHandleForWriting.write(withUnsafeBytes(of: count) { Data($0) } + Data(body))
        try flood.input.fileHandleForWriting.close()
        flood.process.waitUntilExit()
        #expect(flood.process.terminationReason == .exit && flood.process.terminationStatus == 64,
                "\(flood.process.terminationReason.rawValue) \(flood.process.terminationStatus)")
    }

    /// A record whose sealed fields the server grew past 8 MiB never leaves the server: the
    /// agent's peak memory stays under 64 MiB, the answer is damaged server data, and `sync now`
    /// on the device that pulls it says so in one line, exits 65, and still pushes its own.
    @Test func aRecordGrownBeyondTheBoundIsDamagedDataNeverMemory() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try a.sync()
        _ = try server.psql("""
            UPDATE tripboard.records SET fields = jsonb_set(fields, '{name,ciphertext}', to_jsonb(repeat('QUFB', 12 * 1024 * 1024 / 4))),
                change_sequence = (SELECT change_sequence + 1 FROM tripboard.zones WHERE name = 'default') WHERE id = '\(trip)';
            UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = 'default'
            """)

        let agent = try AgentConversation()
        #expect(try agent.send(["operation": "connect", "conninfo": server.conninfo])["failure"] is NSNull)
        #expect(try agent.send(["operation": "pullBegin", "zone": "default", "afterSequence": 0])["failure"] is NSNull)
        let page = try agent.send(["operation": "pullPage", "limit": 2000])
        #expect(AgentConversation.failureKind(page) == "damaged", "\(page)")
        let message = (page["failure"] as? [String: Any])?["message"] as? String
        #expect(message?.contains("more than the 8 MiB") == true)
        let peak = try agent.peakKiB()
        #expect(peak < 64 * 1024, "the agent's peak resident set: \(peak) KiB")

        let own = try b.ok("trip", "add", "--name", "Porto", "--start", "2027-05-01", "--end", "2027-05-03")
        let pulled = try b.app("sync", "now")
        #expect(pulled.status == 65, "\(pulled)")
        #expect(pulled.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }.count == 1, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("more than the 8 MiB a record may have"))
        #expect(try server.psql("SELECT count(*) FROM tripboard.records WHERE id = '\(own)'") == "1")
    }

    /// A version beyond 2^53 − 1 is damaged server data: one error line and 65, on the device
    /// that pulls it and on the one that pushes against it, every run — never a record skipped
    /// and then conflicts that never end.
    @Test func aVersionOutOfRangeIsDamagedDataSaidOnce() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        let trip = try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try a.sync()
        _ = try server.psql("""
            UPDATE tripboard.records SET version = 9007199254740993,
                change_sequence = (SELECT change_sequence + 1 FROM tripboard.zones WHERE name = 'default') WHERE id = '\(trip)';
            UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = 'default'
            """)
        for _ in 0..<2 {
            let pulled = try b.app("sync", "now")
            #expect(pulled.status == 65, "\(pulled)")
            #expect(pulled.stderr.split(separator: "\n").count == 1 && pulled.stderr.contains("outside 1…2^53 − 1"), "\(pulled.stderr)")
        }
        try a.ok("trip", "edit", trip, "--notes", "an edit pushed against it")
        let pushed = try a.app("sync", "now")
        #expect(pushed.status == 65, "\(pushed)")
        #expect(!pushed.stderr.contains("conflict"), "\(pushed.stderr)")
    }

    /// A password in `--server`, in any spelling libpq reads, is refused (64) before anything is
    /// stored or said: not echoed, not kept. `sync-agent` refuses it too, by libpq's own parser,
    /// whoever asks it to connect.
    @Test func aPasswordInTheConninfoIsRefusedInEverySpelling() throws {
        let server = try PostgresServer()
        let device = try SyncDevice()
        let spellings = [
            server.conninfo + " password=hunter2",
            server.conninfo + " password = 'hunter2'",
            "postgresql://\(server.user):hunter2@/\(server.database)?host=\(server.directory)&port=\(server.port)",
            "postgresql://\(server.user)@/\(server.database)?host=\(server.directory)&port=\(server.port)&pass%77ord=hunter2",
            "postgresql:///\(server.database)?%70%61%73%73%77%6f%72%64=hunter2&host=\(server.directory)&port=\(server.port)",
        ]
        for conninfo in spellings {
            for command in [["sync", "init-server", "--server", conninfo], ["sync", "setup", "--server", conninfo]] {
                let refused = try device.app(command[0], command[1], command[2], command[3], stdin: SyncDevice.passphrase + "\n")
                #expect(refused.status == 64, "\(conninfo): \(refused)")
                #expect(!(refused.stdout + refused.stderr).contains("hunter2"))
            }
            let agent = try AgentConversation()
            let answer = try agent.send(["operation": "connect", "conninfo": conninfo])
            #expect(AgentConversation.failureKind(answer) == "refused", "\(conninfo): \(answer)")
            #expect(!"\(answer)".contains("hunter2"))
        }
        // Not even a container was made.
        #expect(try device.app("sync", "status").status == 66)
        #expect(try server.psql("SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'tripboard'") == "0")
    }

    /// A conninfo with a password that an earlier build kept in the store (through the
    /// percent-encoded spelling it did not catch) is taken out the first time this build opens
    /// the container, said once on stderr, and gone from the store's files; sync goes on.
    @Test func aPasswordAnEarlierBuildStoredIsRemovedOnFirstOpenAndSaidOnce() throws {
        let (server, a, _) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        try a.sync()
        let kept = "postgresql://\(server.user)@/\(server.database)?host=\(server.directory)&port=\(server.port)&pass%77ord=hunter2"
        // The store as the earlier build left it: schema 9, the conninfo with its password.
        #expect(try a.container.sqlite(BookingZoneTests.stepsAfterNineUndone
                                       + "UPDATE sync_account SET server = '\(kept)'; PRAGMA user_version = 9").status == 0)

        let first = try a.app("trip", "list")
        #expect(first.status == 0, "\(first)")
        let warnings = first.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(warnings.count == 1 && warnings[0].contains("held a password") && !first.stderr.contains("hunter2"), "\(first.stderr)")
        let second = try a.app("trip", "list")
        #expect(second.status == 0 && !second.stderr.contains("password"), "\(second)")

        let status = try a.app("sync", "status", "--json")
        #expect(status.status == 0 && !status.stdout.contains("hunter2") && status.stdout.contains("host=\(server.directory)"), "\(status)")
        for name in ["TripBoard.sqlite", "TripBoard.sqlite-wal"] {
            let path = a.container.root.appendingPathComponent("store/" + name).path
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            #expect(bytes.range(of: Data("hunter2".utf8)) == nil, "\(name) still holds the password")
        }
        try a.ok("trip", "add", "--name", "Porto", "--start", "2027-05-01", "--end", "2027-05-03")
        try a.sync()
    }

    /// A server that breaks the protocol itself (`Tests/Fixtures/servers/broken_postgres.py`):
    /// one that answers a query with rows for ever, and one whose row claims almost 2 GiB. The
    /// agent reads a row at a time and stops at the result's bound, or libpq cannot hold the row
    /// within the agent's address space (`RLIMIT_AS`): 65, one line, in a few seconds.
    @Test(arguments: ["endless", "huge"])
    func aServerThatBreaksTheProtocolEndsWith65InBoundedTime(mode: String) throws {
        let directory = "/tmp/tb-broken-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/servers/broken_postgres.py").path
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [script, directory, "5432", mode]
        try server.run()
        // SIGKILL: a child of the test runner may inherit SIGTERM blocked.
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: directory + "/.s.PGSQL.5432") && Date() < deadline { usleep(20_000) }

        let device = try SyncDevice()
        let started = Date()
        let result = try device.app("sync", "init-server", "--server", "host=\(directory) port=5432 dbname=postgres user=tripboard")
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.hasPrefix("error: the sync server holds data TripBoard cannot trust"),
                "\(result.stderr)")
        #expect(elapsed < 10, "took \(elapsed) s")
    }

    /// A `fetch` answer is bounded like a page: asked for 200 records of 100 KB of fields each,
    /// the agent answers those that fit in 8 MiB, says how many of the records asked it settles
    /// (`covered`), and the rest come when asked again — never one frame beyond the limit.
    @Test func aFetchAnswersAtMostAPageAndSaysHowFarItGot() throws {
        let server = try PostgresServer()
        let device = try SyncDevice()
        try device.ok("sync", "init-server", "--server", server.conninfo)
        _ = try server.psql("""
            INSERT INTO tripboard.zones (name, epoch, key_wrap, change_sequence) VALUES ('default', 'e', 'w', 200);
            INSERT INTO tripboard.records (zone, kind, id, version, change_sequence, fields)
            SELECT 'default', 'trip', 'id-' || lpad(n::text, 3, '0'), 1, n,
                   jsonb_build_object('name', jsonb_build_object('stamp', 's', 'nonce', 'n', 'ciphertext', repeat('A', 100000)))
            FROM generate_series(1, 200) AS n
            """)
        let agent = try AgentConversation()
        #expect(try agent.send(["operation": "connect", "conninfo": server.conninfo])["failure"] is NSNull)
        let keys = (1...200).map { ["kind": "trip", "id": "id-" + String(format: "%03d", $0), "deleted": false, "fields": [:]] as [String: Any] }
        var start = 0
        var answered: [String] = []
        var requests = 0
        while start < keys.count {
            let answer = try agent.send(["operation": "fetch", "zone": "default", "records": Array(keys[start...])])
            requests += 1
            let records = try #require(answer["records"] as? [[String: Any]], "\(answer)")
            let covered = try #require(answer["covered"] as? Int)
            #expect(covered >= 1 && covered == records.count && (answer["more"] as? Bool) == (start + covered < keys.count))
            answered += records.compactMap { $0["id"] as? String }
            start += covered
        }
        #expect(answered == keys.map { $0["id"] as! String })
        #expect(requests == 3, "\(requests) requests")
    }
}
