import Foundation
import Testing

/// kill -9 at random moments: SQLite's WAL must leave either all of a transaction or none of it.
@Suite struct CrashTests {
    /// Each round imports a batch of 300 trips (one transaction) and kills the importer after a
    /// random delay. Afterwards: integrity ok, and each batch is entirely present or entirely absent.
    @Test func killedImporterLeavesWholeTransactionsOnly() throws {
        let container = try TestContainer()
        try container.addTrip("seed")
        var generator = SystemRandomNumberGenerator()
        var completed = 0
        var killed = 0
        for round in 0..<120 {
            let trips = (0..<300).map { index in
                #"{"name": "batch-\#(round)-\#(index)", "startDate": "2026-01-01", "endDate": "2026-01-02"}"#
            }
            let document = #"{"trips": [\#(trips.joined(separator: ","))]}"#
            let importer = try ProcessRunner.start("app", ["import", "-"], environment: container.environment, stdin: Array(document.utf8))
            usleep(UInt32.random(in: 0...60_000, using: &generator))
            importer.kill()
            let result = importer.wait()
            if result.wasSignaled { killed += 1 } else {
                #expect(result.status == 0, "\(result)")
                completed += 1
            }
            let count = try container.sqlite("SELECT count(*) FROM trips WHERE name LIKE 'batch-\(round)-%'").trimmedStdout
            #expect(count == "0" || count == "300", "round \(round): partial transaction with \(count) rows")
            if round % 10 == 0 { #expect(try container.integrity() == "ok") }
        }
        #expect(try container.integrity() == "ok")
        #expect(killed > 10, "the kill must land mid-run often enough to mean something (killed \(killed), completed \(completed))")
        // The container still works after all that.
        try container.addTrip("after")
    }

    /// A writer killed while it holds the container lock and an open write transaction blocks
    /// nobody: the kernel drops the flock, and SQLite rolls the transaction back.
    @Test func killedLockHolderLeavesNoStaleLock() throws {
        let container = try TestContainer()
        try container.addTrip()
        let trips = (0..<20000).map { #"{"name": "big-\#($0)", "startDate": "2026-01-01", "endDate": "2026-01-02"}"# }
        let importer = try ProcessRunner.start("app", ["import", "-"], environment: container.environment,
                                               stdin: Array(#"{"trips": [\#(trips.joined(separator: ","))]}"#.utf8))
        usleep(150_000)
        importer.kill()
        _ = importer.wait()
        let result = try container.app(arguments: ["trip", "add", "--name", "next", "--start", "2026-02-01", "--end", "2026-02-02"],
                                       environment: ["TRIPBOARD_LOCK_TIMEOUT": "1"])
        #expect(result.status == 0, "\(result)")
        #expect(try container.integrity() == "ok")
    }
}
