import Foundation
import Testing

/// Input past its limit is bad data (exit 65, the limit named), found without buffering it:
/// an import over 1 GiB, an edited trip file over 1 MiB. And an import FILE that never ends, or
/// has no writer yet, holds up nobody else.
@Suite struct OversizeInputTests {
    @Test func anImportFileOver1GiBIsRefusedByItsSize() throws {
        let container = try TestContainer()
        try container.addTrip()
        // Outside the test's root, whose every file state() reads to fingerprint it.
        let file = NSTemporaryDirectory() + "tripboard-huge-\(UUID().uuidString.prefix(8)).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data("{\"trips\": [".utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.truncate(atOffset: (1 << 30) + 1)  // sparse: nothing to write, nothing to read
        try handle.close()
        let before = try container.state()
        let result = try container.app("import", file)
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr == "error: \(file) is larger than the import limit of 1 GiB; nothing was imported\n", "\(result)")
        #expect(try container.state() == before)
    }

    /// A device that never ends is read up to the limit, counted as it comes, and refused there.
    @Test func importingDevZeroStopsAtTheLimit() throws {
        let container = try TestContainer()
        try container.addTrip()
        let before = try container.state()
        let started = Date()
        let result = try container.app("import", "/dev/zero")
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr == "error: /dev/zero is larger than the import limit of 1 GiB; nothing was imported\n", "\(result)")
        #expect(Date().timeIntervalSince(started) < 30, "bounded in time")
        #expect(try container.state() == before)
    }

    /// A FIFO named as FILE is read like `cat` reads it: the import waits for a writer, and holds
    /// no lock meanwhile (the document is read before the container is opened), so the app and
    /// the widget go on working.
    ///
    ///     import FIFO:  open(FIFO) waits ...................... reads, imports, exits 0
    ///     trip add:              runs, exits 0
    ///     widget:                   runs, exits 0
    ///     test:                          opens FIFO for writing, writes the document, closes
    @Test func anImportFromAFIFOWaitsForItsWriterHoldingNoLock() throws {
        let container = try TestContainer()
        try container.addTrip()
        let fifo = container.root.appendingPathComponent("incoming.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let importer = try ProcessRunner.start("app", ["import", fifo], environment: container.environment)
        usleep(200_000)
        let added = try container.app("trip", "add", "--name", "Meanwhile", "--start", "2027-01-01", "--end", "2027-01-02",
                                      environment: ["TRIPBOARD_LOCK_TIMEOUT": "1"])
        #expect(added.status == 0, "\(added)")
        let widget = try ProcessRunner.run("widget", ["--now", "2026-12-01T10:00Z"], environment: container.environment)
        #expect(widget.status == 0, "\(widget)")

        // O_NONBLOCK: the open fails (ENXIO) instead of hanging if the importer is not reading.
        var writer: Int32 = -1
        for _ in 0..<100 where writer < 0 {
            writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer < 0 { usleep(50_000) }
        }
        try #require(writer >= 0, "the importer never opened the FIFO")
        let document = Array(#"{"trips": [{"name": "Through a FIFO", "startDate": "2027-02-01", "endDate": "2027-02-02"}]}"#.utf8)
        #expect(write(writer, document, document.count) == document.count)
        close(writer)
        let result = importer.wait(timeout: 30)
        #expect(result.status == 0, "\(result)")
        #expect(try container.sqlite("SELECT name FROM trips ORDER BY start_date").stdoutLines == ["Lisbon", "Meanwhile", "Through a FIFO"])
    }

    @Test func anEditedTripFileOver1MiBIsRefusedNamingTheLimit() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let kept = container.root.appendingPathComponent("kept").path
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: false)
        let before = try container.state()
        let result = try container.app("trip", "edit", trip, environment: ["EDITOR": "truncate -s 2M", "TMPDIR": kept])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.hasPrefix("error: the edited file is larger than the limit of 1 MiB; nothing was changed; your edit is kept in \(kept)/"),
                "\(result)")
        #expect(result.stderrLines.count == 1)
        #expect(try container.state().files.filter { !$0.key.hasPrefix("kept/") } == before.files)
        #expect(try container.state().storeDump == before.storeDump)
    }
}
