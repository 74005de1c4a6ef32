import Foundation
import Testing

/// `share-extension` killed (SIGKILL) at named steps and at random moments, and run four at once
/// beside the app: never a row without its file, never a partial file under `attachments/`, and
/// `container check --repair` leaves a clean container.
@Suite struct ShareExtensionCrashTests {
    /// Every attachment row has its file, with the recorded size and hash; every file under
    /// attachments/ is whole (its hash is one of the tickets imported). Returns (rows, files).
    @discardableResult
    static func checkInvariants(_ container: TestContainer, tickets: Set<String>, context: String) throws -> (Int, Int) {
        let rows = try container.sqlite("SELECT relative_path || '|' || byte_count || '|' || content_hash FROM attachments").stdoutLines
        for row in rows {
            let parts = row.split(separator: "|").map(String.init)
            let data = try container.unsealed("container/" + parts[0])
            #expect(data.count == Int(parts[1]) && blake2bHex(data) == parts[2], "\(context): row \(parts[0]) does not match its file")
        }
        let files = container.regularFiles(under: "attachments")
        for file in files {
            #expect(tickets.contains(blake2bHex(try container.unsealed("container/" + file))), "\(context): partial file \(file)")
        }
        #expect(try container.integrity() == "ok", "\(context)")
        return (rows.count, files.count)
    }

    static func repairAndExpectClean(_ container: TestContainer) throws {
        let repair = try container.app("container", "check", "--repair", "--grace", "0")
        #expect(repair.status == 0, "\(repair)")
        #expect(try container.appOK("container", "check", "--grace", "0").hasSuffix("The container is consistent."), "kept in recovered/ is listed before it")
        #expect(container.regularFiles(under: "tmp").isEmpty)
        let rows = try container.sqlite("SELECT count(*) FROM attachments").trimmedStdout
        // An orphan (a file published by an import killed before its commit) is quarantined in
        // attachments/recovered/, never deleted: every other file has its row.
        let files = container.regularFiles(under: "attachments")
        let recovered = files.filter { $0.hasPrefix("attachments/recovered/") }
        #expect(rows == String(files.count - recovered.count), "\(files)")
    }

    @Test(arguments: ["import.staged", "import.inspected", "import.published", "import.committed"])
    func killedAtANamedStep(_ point: String) throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let ticket = try container.input(pdf, as: "ticket.pdf")
        let killed = try container.share([ticket, "--trip", trip], environment: ["TRIPBOARD_CRASH_AT": point])
        #expect(killed.wasSignaled && killed.status == SIGKILL, "\(point): \(killed)")
        let (rows, files) = try Self.checkInvariants(container, tickets: [blake2bHex(pdf)], context: point)
        #expect(rows == (point == "import.committed" ? 1 : 0), "\(point)")
        #expect(files == (point == "import.published" || point == "import.committed" ? 1 : 0), "\(point)")
        // What is left in tmp/: the staged (sealed) copy until it is published; the thumbnail comes
        // back on the worker's pipe and is sealed straight into the cache, never staged.
        let leftovers = ["import.staged": 1, "import.inspected": 1, "import.published": 0, "import.committed": 0][point]
        #expect(container.regularFiles(under: "tmp").count == leftovers, "\(point): \(container.regularFiles(under: "tmp"))")
        try Self.repairAndExpectClean(container)
        // The user shares it again: attached once, whatever happened before.
        let again = try container.shareOK(ticket, "--trip", trip)
        #expect(again["outcome"] as? String == (point == "import.committed" ? "alreadyAttached" : "attached"), "\(point)")
        #expect(try container.sqlite("SELECT count(*) FROM attachments").trimmedStdout == "1")
        try Self.repairAndExpectClean(container)
    }

    @Test func killedAtRandomMoments() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        var tickets: Set<String> = []
        var generator = SystemRandomNumberGenerator()
        var killed = 0
        var completed = 0
        // The kills land anywhere in an import as long as this machine takes for one: measured
        // first, so that a faster machine does not see most imports finish before the kill; the
        // median of three, since the first import of a run (cold caches) or a busy moment of a
        // shared machine takes much longer than the rest.
        var durations: [Double] = []
        for number in 1...3 {
            let calibration = TicketPDF.make(lines: ["Calibration", "12 DEC 2026"], padding: 2_000_000, salt: "calibration \(number)")
            tickets.insert(blake2bHex(calibration))
            let started = Date()
            _ = try container.shareOK(try container.input(calibration, as: "calibration-\(number).pdf"), "--trip", trip)
            durations.append(Date().timeIntervalSince(started))
        }
        // An import that finished before its kill shortens the window for the next rounds, so a
        // machine that got faster (a busy neighbour gone quiet) still sees its imports killed.
        var importMicroseconds = UInt32(max(20_000, durations.sorted()[1] * 1_000_000))
        for round in 0..<60 {
            // 2 MB each, so that the copy, the hash and the fsync take long enough to be hit.
            let pdf = TicketPDF.make(lines: ["Ticket \(round)", "12 DEC 2026"], padding: 2_000_000, salt: "round \(round)")
            tickets.insert(blake2bHex(pdf))
            let file = try container.input(pdf, as: "ticket-\(round).pdf")
            let importer = try ProcessRunner.start("share-extension", [file, "--trip", trip], environment: container.environment)
            usleep(UInt32.random(in: 0...importMicroseconds, using: &generator))
            importer.kill()
            let result = importer.wait()
            if result.wasSignaled { killed += 1 } else {
                #expect(result.status == 0, "round \(round): \(result)")
                completed += 1
                importMicroseconds = max(5_000, importMicroseconds / 4 * 3)
            }
            try Self.checkInvariants(container, tickets: tickets, context: "round \(round)")
            try FileManager.default.removeItem(atPath: file)
        }
        #expect(killed >= 20, "the kill must land mid-import often enough to mean something (killed \(killed), completed \(completed))")
        try Self.repairAndExpectClean(container)
    }

    /// Four extensions import ten PDFs each while the app edits trips: forty attachments, all verified.
    @Test func fourExtensionsAndTheAppAtOnce() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Shared", start: "2026-12-01", end: "2026-12-31")
        let other = try container.addTrip("Edited", start: "2027-03-01", end: "2027-03-05")
        var tickets: [String: Data] = [:]
        var lanes: [RunningProcess] = []
        let share = ProcessRunner.executable("share-extension")
        let app = ProcessRunner.executable("app")
        for lane in 0..<4 {
            var script = "set -e\n"
            for index in 0..<10 {
                let pdf = TicketPDF.make(lines: ["Lane \(lane) ticket \(index)", "Flight TP \(1300 + lane * 10 + index)",
                                                 "\(10 + index) DEC 2026 07:35"], salt: "\(lane)-\(index)")
                let file = try container.input(pdf, as: "lane\(lane)-\(index).pdf")
                tickets[file] = pdf
                script += "'\(share)' '\(file)'\n"
            }
            lanes.append(try ProcessRunner.start("/bin/sh", ["-c", script], environment: container.environment))
        }
        var editScript = "set -e\n"
        for index in 0..<40 { editScript += "'\(app)' trip edit \(other) --name 'Edited \(index)' --notes 'edit \(index)' >/dev/null\n" }
        let editor = try ProcessRunner.start("/bin/sh", ["-c", editScript], environment: container.environment)
        for lane in lanes {
            let result = lane.wait(timeout: 120)
            #expect(result.status == 0, "\(result)")
        }
        let edits = editor.wait(timeout: 120)
        #expect(edits.status == 0, "\(edits)")
        #expect(try container.sqlite("SELECT name FROM trips WHERE id = '\(other)'").trimmedStdout == "Edited 39")
        let (rows, files) = try Self.checkInvariants(container, tickets: Set(tickets.values.map(blake2bHex)), context: "concurrent")
        #expect(rows == 40 && files == 40)
        #expect(try container.sqlite("SELECT count(*) FROM bookings WHERE trip_id = '\(trip)'").trimmedStdout == "40")
        #expect(try container.appOK("container", "check") == "The container is consistent.")
    }
}
