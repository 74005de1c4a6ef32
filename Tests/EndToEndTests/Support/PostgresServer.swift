import Foundation
import Testing
import TripBoardStorage
import TripBoardSystem

/// A throw-away PostgreSQL 15 cluster for one test: `initdb` into a temp directory, `pg_ctl
/// start` listening only on a Unix socket in that directory (no TCP port to collide on), stopped
/// (`-m immediate`) and removed when released — also when the test failed. As root, the
/// PostgreSQL tools run as the `postgres` user (`runuser`), which owns the directory.
final class PostgresServer: @unchecked Sendable {
    // @unchecked: immutable after init.
    static let binaries = "/usr/lib/postgresql/15/bin"
    let directory: String
    let port: Int
    let user = "tripboard"
    let database = "postgres"

    /// The conninfo `app sync … --server` is given.
    var conninfo: String { "host=\(directory) port=\(port) dbname=\(database) user=\(user)" }

    /// With `durable`, a commit is on disk (its WAL written) before the server answers, so an
    /// immediate stop loses no acknowledged transaction; without, tests run faster
    /// (`synchronous_commit=off`) and an immediate stop may lose the last commits.
    let durable: Bool

    init(durable: Bool = false) throws {
        self.durable = durable
        directory = "/tmp/tb-pg-\(UUID().uuidString.prefix(8).lowercased())"
        port = Int.random(in: 20_000...60_000)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        if getuid() == 0 {
            let chown = try ProcessRunner.run("/bin/chown", ["postgres", directory], environment: ProcessRunner.environment(container: nil))
            try #require(chown.status == 0, "chown: \(chown)")
        }
        let initdb = try Self.tool("initdb", ["-D", directory + "/data", "-A", "trust", "-U", user, "--no-sync", "-E", "UTF8", "--locale=C"])
        try #require(initdb.status == 0, "initdb: \(initdb)")
        try start()
    }

    deinit {
        _ = try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func start() throws {
        let options = "-c listen_addresses='' -k \(directory) -p \(port) -c fsync=off" + (durable ? "" : " -c synchronous_commit=off")
        // Through ChildProcess, which closes every descriptor above 2 in the child: the server
        // that pg_ctl leaves running would otherwise inherit Foundation's descriptor for watching
        // the child, and Process would wait for pg_ctl for ever.
        let arguments = ["-D", directory + "/data", "-o", options, "-l", directory + "/server.log", "-w", "-t", "30", "start"]
        let (executable, prefix) = getuid() == 0
            ? ("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", Self.binaries + "/pg_ctl"])
            : (Self.binaries + "/pg_ctl", [])
        let outcome = try ChildProcess.run(executable: executable, arguments: prefix + arguments,
                                           environment: ProcessRunner.environment(container: nil, extra: ["HOME": "/tmp"]), timeout: 60)
        let started = String(decoding: outcome.output, as: UTF8.self)
        try #require(outcome.termination == .exited(0), "pg_ctl start: \(started)\n\((try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "")")
    }

    /// Stops the server at once, as a crash would (`-m immediate`).
    @discardableResult
    func stop() throws -> ProcessResult {
        try Self.tool("pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// `psql -At -c SQL` on the database: rows separated by newlines, columns by '|'.
    func psql(_ sql: String) throws -> String {
        let result = try Self.tool("psql", ["-h", directory, "-p", String(port), "-U", user, "-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
        #expect(result.status == 0, "psql: \(result)")
        return result.trimmedStdout
    }

    /// The whole database as `pg_dump` writes it (plain SQL).
    func dump() throws -> String {
        let result = try Self.tool("pg_dump", ["-h", directory, "-p", String(port), "-U", user, database])
        #expect(result.status == 0, "pg_dump: \(result)")
        return result.stdout
    }

    /// Saves the `tripboard` schema (`pg_dump -Fc -n tripboard`) to `file`, as an operator's backup would.
    func backUp(to file: String) throws {
        let result = try Self.tool("pg_dump", ["-h", directory, "-p", String(port), "-U", user, "-Fc", "-n", "tripboard", "-f", file, database])
        #expect(result.status == 0, "pg_dump: \(result)")
    }

    /// Puts the `tripboard` schema back as `backUp` saved it: everything since is gone.
    func restore(from file: String) throws {
        _ = try psql("DROP SCHEMA tripboard CASCADE")
        let result = try Self.tool("pg_restore", ["-h", directory, "-p", String(port), "-U", user, "-d", database, "--exit-on-error", file])
        #expect(result.status == 0, "pg_restore: \(result)")
    }

    private static func tool(_ name: String, _ arguments: [String]) throws -> ProcessResult {
        let environment = ProcessRunner.environment(container: nil, extra: ["HOME": "/tmp"])
        if getuid() == 0 {
            // setpriv execs the tool itself as postgres (runuser forks and waits under PAM, and
            // its exit went unnoticed by Foundation's Process here: the test hung on a zombie).
            return try ProcessRunner.run("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", binaries + "/" + name] + arguments,
                                         environment: environment, timeout: 60)
        }
        return try ProcessRunner.run(binaries + "/" + name, arguments, environment: environment, timeout: 60)
    }
}

/// One device: a container and a device directory of its own, in one temp root.
final class SyncDevice: @unchecked Sendable {
    // @unchecked: immutable after init.
    let container: TestContainer
    static let passphrase = "correct horse battery staple"

    init(extra: [String: String] = [:]) throws {
        let root = try TestContainer()
        container = try TestContainer(extraEnvironment: ["TRIPBOARD_DEVICE_DIR": root.root.path + "/device"].merging(extra) { $1 })
        keepAlive = root
    }

    private let keepAlive: TestContainer

    @discardableResult
    func app(_ arguments: String..., stdin: String? = nil, environment: [String: String] = [:]) throws -> ProcessResult {
        try container.app(arguments: arguments, stdin: stdin, environment: environment)
    }

    @discardableResult
    func ok(_ arguments: String..., stdin: String? = nil, environment: [String: String] = [:]) throws -> String {
        let result = try container.app(arguments: arguments, stdin: stdin, environment: environment)
        #expect(result.status == 0, "app \(arguments.joined(separator: " ")): \(result)")
        return result.trimmedStdout
    }

    func join(_ server: PostgresServer, zone: String = "default", passphrase: String = SyncDevice.passphrase) throws -> ProcessResult {
        try container.app(arguments: ["sync", "setup", "--server", server.conninfo, "--zone", zone], stdin: passphrase + "\n")
    }

    /// `sync now --json`, required to succeed.
    @discardableResult
    func sync(environment: [String: String] = [:]) throws -> [String: Any] {
        let result = try container.app(arguments: ["sync", "now", "--json"], environment: environment)
        #expect(result.status == 0, "sync now: \(result)")
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// `sync now --json` in a run that refuses what the server served (older values, deletions no
    /// device sealed, deleted records live again): everything else done, a `warning:` line per
    /// cause, then 65 with the one refusal line; the report.
    @discardableResult
    func syncRefusing(environment: [String: String] = [:]) throws -> [String: Any] {
        let result = try container.app(arguments: ["sync", "now", "--json"], environment: environment)
        let lines = result.stderr.split(separator: "\n")
        #expect(result.status == 65 && lines.filter { $0.hasPrefix("error: ") }.count == 1
                && lines.allSatisfy { $0.hasPrefix("error: this device refused") || $0.hasPrefix("warning: ") }, "sync now: \(result)")
        let report = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect((report["refused"] as? Int ?? 0) >= 1, "\(report)")
        return report
    }

    func json(_ arguments: String...) throws -> Any {
        let result = try container.app(arguments: arguments + ["--json"])
        #expect(result.status == 0, "app \(arguments.joined(separator: " ")): \(result)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    /// The export of everything, without the sync metadata that differs between devices.
    func content() throws -> String {
        let trips = try container.sqlite("SELECT id, name, start_date, end_date, notes, trashed_at IS NOT NULL FROM trips ORDER BY id").stdout
        let places = try container.sqlite("SELECT id, trip_id, name, ifnull(city, '-'), visited, trashed_at IS NOT NULL FROM places ORDER BY id").stdout
        let bookings = try container.sqlite("SELECT id, trip_id, kind, title, ifnull(starts_at, '-'), ifnull(reference, '-'), ifnull(ends_at, '-'), ifnull(zone, '-'), trashed_at IS NOT NULL FROM bookings ORDER BY id").stdout
        return trips + "--\n" + places + "--\n" + bookings
    }
}
