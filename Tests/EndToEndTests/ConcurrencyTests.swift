import Foundation
import Testing

/// Several processes on one container at once, as the app, widget and extension run.
@Suite struct ConcurrencyTests {
    /// Timeline:
    ///   sqlite3 ─ BEGIN IMMEDIATE ─ INSERT ─────── 1 s ─────── COMMIT
    ///   app ×4     ─ 50 × trip add (each waits on the write lock, busy_timeout 5 s) ─────────▶
    /// All 4 × 50 adds succeed; the foreign transaction's row is there too.
    @Test func fourWritersAndAForeignLockHolderLoseNothing() throws {
        let container = try TestContainer()
        try container.addTrip("seed")
        let script = """
            BEGIN IMMEDIATE;
            INSERT INTO trips (id, name, start_date, end_date, updated_at) VALUES ('00000000-0000-4000-8000-000000000000', 'foreign', '2026-01-01', '2026-01-02', '2026-01-01T00:00:00.000Z');
            .shell sleep 1
            COMMIT;
            """
        // The foreign writer: the sqlite3 shell on the sealed store (`app container sqlite`).
        let holder = try ProcessRunner.start("app", ["container", "sqlite"], environment: container.environment,
                                             stdin: Array(script.utf8))
        usleep(100_000)
        let shell = """
            i=0; while [ $i -lt 50 ]; do "$0" trip add --name "w$1-$i" --start 2026-12-01 --end 2026-12-02 >/dev/null || exit 1; i=$((i+1)); done
            """
        let writers = try (0..<4).map { writer in
            try ProcessRunner.start("/bin/sh", ["-c", shell, ProcessRunner.executable("app"), String(writer)], environment: container.environment)
        }
        for writer in writers {
            let result = writer.wait(timeout: 120)
            #expect(result.status == 0, "\(result)")
        }
        #expect(holder.wait().status == 0)
        #expect(try container.sqlite("SELECT count(*) FROM trips WHERE name LIKE 'w%'").trimmedStdout == "200")
        #expect(try container.sqlite("SELECT count(DISTINCT name) FROM trips").trimmedStdout == "202")
        #expect(try container.integrity() == "ok")
    }

    /// A write command's connection checkpoints before it closes only when it is the store's last
    /// (SQLite's close would checkpoint then, under its exclusive lock, which is what a reader
    /// opening the store would wait on): alone it fsyncs; beside another process that has the
    /// store open it makes no fsync (NORMAL durability: commits are not fsynced).
    @Test func aWriteCheckpointsOnItsWayOutOnlyWhenItIsTheLastConnection() throws {
        let container = try TestContainer()
        try container.addTrip("seed", start: "2027-01-01", end: "2027-01-02")
        func fsyncs(_ name: String) throws -> Int {
            let log = container.root.appendingPathComponent("strace-\(name).log").path
            let added = try ProcessRunner.run("/usr/bin/strace", ["-f", "-o", log, "-e", "trace=fsync,fdatasync,syncfs",
                                                                  ProcessRunner.executable("app"), "trip", "add", "--name", name,
                                                                  "--start", "2027-02-01", "--end", "2027-02-02"],
                                              environment: container.environment)
            #expect(added.status == 0, "\(added)")
            return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("sync(") }.count
        }
        let alone = try fsyncs("alone")
        let marker = container.root.appendingPathComponent("reading").path
        // Another process with the store open: the sqlite3 shell on it (read-only), idle.
        let reader = try ProcessRunner.start("app", ["container", "sqlite", "--readonly", "--", "-cmd", "SELECT count(*) FROM trips;",
                                                     "-cmd", ".shell touch '\(marker)'", "-cmd", ".shell sleep 60"],
                                             environment: container.environment)
        defer { reader.kill() }
        waitUntilFileExists(marker, within: 30, polling: 10_000)
        // The first write after a checkpoint starts the WAL again from its header, which SQLite
        // syncs (with the directory, once): the second shows what a write costs beside a reader.
        _ = try fsyncs("first-beside")
        let beside = try fsyncs("beside")
        #expect(alone > 0, "the last connection checkpoints: \(alone) fsyncs")
        #expect(beside == 0, "another process has the store open: no checkpoint, no fsync (\(beside))")
        #expect(try container.appOK("trip", "list").contains("beside"))
    }

    /// 10 processes open a container that does not exist yet, at the same moment; 20 times over.
    /// Setup runs under the exclusive lock, so exactly one creates it and the others wait.
    @Test func tenProcessesCreatingOneContainerAllSucceed() throws {
        let base = try TestContainer()
        var failures: [String] = []
        for round in 0..<20 {
            let path = base.root.appendingPathComponent("round-\(round)").path
            let environment = ProcessRunner.environment(container: path)
            let processes = try (0..<10).map { index in
                try ProcessRunner.start("app", ["trip", "add", "--name", "p\(index)", "--start", "2026-01-01", "--end", "2026-01-03"],
                                        environment: environment)
            }
            for process in processes {
                let result = process.wait()
                if result.status != 0 { failures.append("round \(round): \(result)") }
            }
            let count = try ProcessRunner.run("app", ["--container", path, "container", "sqlite", "SELECT count(*) FROM trips"],
                                              environment: environment)
            #expect(count.trimmedStdout == "10", "round \(round)")
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(3))")
    }

    /// Two processes set different preferences at once, many times: the read-modify-write lock
    /// keeps both changes.
    @Test func concurrentPreferenceWritesKeepEveryKey() throws {
        let container = try TestContainer()
        try container.appOK("container", "init")
        for round in 0..<10 {
            let theme = round % 2 == 0 ? "dark" : "light"
            let style = round % 2 == 0 ? "satellite" : "hybrid"
            let first = try ProcessRunner.start("app", ["prefs", "set", "theme", theme], environment: container.environment)
            let second = try ProcessRunner.start("app", ["prefs", "set", "mapStyle", style], environment: container.environment)
            #expect(first.wait().status == 0)
            #expect(second.wait().status == 0)
            #expect(try container.appOK("prefs", "get", "theme") == theme)
            #expect(try container.appOK("prefs", "get", "mapStyle") == style)
        }
    }
}
