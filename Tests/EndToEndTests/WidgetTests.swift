import Foundation
import Testing

/// `widget`: the next trip, read-only, never blocking, never creating a file.
@Suite struct WidgetTests {
    func widget(_ container: TestContainer, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try ProcessRunner.run("widget", arguments, environment: container.environment(environment))
    }

    func widgetJSON(_ container: TestContainer, now: String, environment: [String: String] = [:]) throws -> [String: Any] {
        let result = try widget(container, ["--json", "--now", now], environment: environment)
        #expect(result.status == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test func upcomingTripWithItsNextBooking() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        try container.addTrip("Later", start: "2027-03-01", end: "2027-03-02")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351",
                            "--starts-at", "2026-12-12T07:35+00:00", "--reference", "X7K2QP")
        let result = try widget(container, ["--now", "2026-11-30T10:00:00Z"], environment: ["LANG": "C.UTF-8"])
        #expect(result.status == 0)
        #expect(result.stdoutLines == ["Lisbon — in 12 days · Sat 12 Dec → Tue 15 Dec 2026", "✈ TP 1351 · Sat 12 Dec 07:35 · ref X7K2QP"])
        let ascii = try widget(container, ["--now", "2026-11-30T10:00:00Z"], environment: ["LANG": "C"])
        #expect(ascii.stdoutLines == ["Lisbon - in 12 days - Sat 12 Dec -> Tue 15 Dec 2026", "[flight] TP 1351 - Sat 12 Dec 07:35 - ref X7K2QP"])
        #expect(!ascii.stdout.contains("\u{1B}"), "no colour when not a terminal")
    }

    @Test func ongoingTripComesBeforeAnUpcomingOne() throws {
        let container = try TestContainer()
        try container.addTrip("Soon", start: "2026-12-14", end: "2026-12-16")
        try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let result = try widget(container, ["--now", "2026-12-13T09:00:00Z"], environment: ["LANG": "C.UTF-8"])
        #expect(result.stdoutLines == ["Lisbon — day 2 of 4"])
        let json = try widgetJSON(container, now: "2026-12-13T09:00:00Z")
        #expect(json["status"] as? String == "ongoing")
        #expect(json["dayOfTrip"] as? Int == 2)
        #expect(json["tripLength"] as? Int == 4)
        #expect(json["daysUntilStart"] is NSNull)
    }

    @Test(arguments: [
        // (now, TZ, expected status, expected days until / day of trip)
        ("2026-12-15T23:59:00Z", "UTC0", "ongoing", 4),       // the last day still counts
        ("2026-12-16T00:00:00Z", "UTC0", "none", 0),          // the day after: over
        ("2026-12-11T12:00:00Z", "UTC0", "upcoming", 1),      // starts tomorrow
        ("2026-12-11T20:00:00Z", "JST-9", "ongoing", 1),      // already the 12th in Tokyo
        ("2026-12-12T03:00:00Z", "EST5", "upcoming", 1),      // still the 11th in New York
    ])
    func localDateDecidesBoundaries(now: String, zone: String, status: String, number: Int) throws {
        let container = try TestContainer()
        try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let json = try widgetJSON(container, now: now, environment: ["TZ": zone])
        #expect(json["status"] as? String == status, "\(now) in \(zone): \(json)")
        switch status {
        case "ongoing": #expect(json["dayOfTrip"] as? Int == number)
        case "upcoming": #expect(json["daysUntilStart"] as? Int == number)
        default: #expect(json["trip"] is NSNull)
        }
    }

    @Test func jsonHasTheDocumentedKeys() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Avenida", "--starts-at", "2026-12-12T15:00+00:00")
        let json = try widgetJSON(container, now: "2026-12-01T00:00:00Z")
        #expect(Set(json.keys) == ["status", "trip", "daysUntilStart", "dayOfTrip", "tripLength", "nextBooking", "nextBookingUnderWay"])
        let tripJSON = try #require(json["trip"] as? [String: Any])
        #expect(Set(tripJSON.keys) == ["id", "name", "startDate", "endDate", "notes", "syncState", "remoteVersion", "updatedAt"])
        let booking = try #require(json["nextBooking"] as? [String: Any])
        #expect(booking["title"] as? String == "Avenida")
    }

    /// On a day of travel: the flight that left an hour ago until it lands, then the hotel night
    /// of that day (all day, in Tokyo's zone) read from New York — not "no booking".
    @Test func aDayOfTravelShowsWhatIsUnderWay() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Japan", start: "2027-03-20", end: "2027-03-25")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "NH 10",
                            "--starts-at", "2027-03-21T10:00", "--ends-at", "2027-03-21T14:00", "--zone", "Asia/Tokyo")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "Ryokan Sawaya",
                            "--starts-at", "2027-03-21", "--zone", "Asia/Tokyo")
        let unicode = ["LANG": "C.UTF-8", "TZ": "America/New_York"]
        let flying = try widget(container, ["--now", "2027-03-21T11:00+09:00"], environment: unicode)
        #expect(flying.status == 0 && flying.stdout.hasSuffix("✈ NH 10 · now, until Sun 21 Mar 14:00 JST\n"), "\(flying.stdout)")
        let json = try widgetJSON(container, now: "2027-03-21T11:00+09:00", environment: unicode)
        #expect((json["nextBooking"] as? [String: Any])?["title"] as? String == "NH 10" && json["nextBookingUnderWay"] as? Bool == true)

        let evening = try widget(container, ["--now", "2027-03-21T20:00+09:00"], environment: unicode)
        #expect(evening.stdout.hasSuffix("🏨 Ryokan Sawaya · today\n"), "\(evening.stdout)")
        let over = try widgetJSON(container, now: "2027-03-22T00:00:01+09:00", environment: unicode)
        #expect(over["nextBooking"] is NSNull && over["nextBookingUnderWay"] is NSNull, "the night is over at midnight in Tokyo: \(over)")
    }

    @Test func pastBookingsAndTombstonesAreNotShown() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "Out", "--starts-at", "2026-12-12T07:00+00:00")
        try container.appOK("booking", "add", "--trip", trip, "--kind", "flight", "--title", "Back", "--starts-at", "2026-12-15T18:00+00:00")
        let json = try widgetJSON(container, now: "2026-12-13T10:00:00Z")
        #expect((json["nextBooking"] as? [String: Any])?["title"] as? String == "Back")

        let uploaded = try container.addTrip("Uploaded", start: "2026-12-01", end: "2026-12-02")
        try container.appOK("sync", "ack", uploaded, "--version", "1")
        try container.appOK("trip", "delete", uploaded)
        let before = try widgetJSON(container, now: "2026-11-30T10:00:00Z")
        #expect((before["trip"] as? [String: Any])?["name"] as? String == "Lisbon", "the tombstone is hidden")
    }

    @Test func noContainerMeansNoTripsAndNothingCreated() throws {
        let container = try TestContainer()
        let before = try FileManager.default.contentsOfDirectory(atPath: container.root.path)
        let result = try widget(container, [])
        #expect(result.status == 0)
        #expect(result.trimmedStdout == "No upcoming trips")
        let json = try widget(container, ["--json"])
        #expect(json.stdout.contains("\"status\" : \"none\""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: container.root.path) == before)
    }

    @Test func widgetNeverCreatesOrChangesFiles() throws {
        let container = try TestContainer()
        try container.addTrip()
        // Remove -wal/-shm the way a foreign tool does when it closes last; the widget must still
        // read, and must not recreate them.
        _ = try ProcessRunner.run("app", ["container", "sqlite", "SELECT count(*) FROM trips"], environment: container.environment)
        let before = container.files()
        #expect(!before.keys.contains { $0.hasSuffix("-wal") })
        let result = try widget(container, ["--json", "--now", "2026-12-01T00:00:00Z"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Lisbon"))
        #expect(container.files() == before)
    }

    @Test func exclusiveLockHolderShowsTheUpdatingPlaceholderQuickly() throws {
        let container = try TestContainer()
        try container.addTrip()
        let holder = try ProcessRunner.start("/usr/bin/flock", ["-x", container.path + "/container.lock", "sleep", "5"],
                                             environment: container.environment)
        defer { holder.kill(); _ = holder.wait() }
        usleep(200_000)
        let started = Date()
        let result = try widget(container, [], environment: ["LANG": "C.UTF-8"])
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(result.status == 75)
        #expect(result.trimmedStdout == "TripBoard is updating…")
        let json = try widget(container, ["--json"])
        #expect(json.status == 75)
        #expect(json.stdout.contains("\"status\" : \"updating\""))
    }

    @Test func corruptOrNewerStoreIsAnErrorAndUntouched() throws {
        let container = try TestContainer()
        try container.addTrip()
        _ = try container.sqlite("PRAGMA user_version = 99")
        let newer = try widget(container, [])
        #expect(newer.status == 65)
        #expect(newer.stderr.contains("newer"))

        let garbage = Data(repeating: 0x5a, count: 4096)
        try garbage.write(to: URL(fileURLWithPath: container.storePath))
        let corrupt = try widget(container, [])
        #expect(corrupt.status == 65, "\(corrupt)")
        #expect(corrupt.stderrLines.count == 1 && corrupt.stderr.hasPrefix("error: "))
        #expect(try Data(contentsOf: URL(fileURLWithPath: container.storePath)) == garbage)
    }

    @Test(arguments: [["--now", "tomorrow"], ["--colour"], ["extra"], ["--container"]])
    func badArgumentsAreUsageErrors(arguments: [String]) throws {
        let container = try TestContainer()
        let result = try widget(container, arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.hasPrefix("error: "))
        #expect(!FileManager.default.fileExists(atPath: container.path))
    }

    /// Timeline:
    ///   app    ── import {trip gen-N starting earlier than gen-N-1, booking gen-N} ×∞ (one transaction each)
    ///   widget ── 500 runs, each must show trip gen-K together with booking gen-K
    @Test func readersNeverSeeHalfAnEdit() throws {
        let container = try TestContainer()
        try container.addTrip("seed", start: "2099-01-01", end: "2099-01-02")
        let script = """
            n=0
            while [ ! -e "$1/stop" ]; do
              day=$(( 10000 - n ))
              start=$(date -u -d "2020-01-01 + $day days" +%F)
              id=$(printf '%08d-0000-4000-8000-000000000000' $n)
              printf '{"trips":[{"id":"%s","name":"gen-%d","startDate":"%s","endDate":"%s"}],"bookings":[{"tripId":"%s","kind":"train","title":"gen-%d","startsAt":"%sT09:00:00Z"}]}' "$id" $n "$start" "$start" "$id" $n "$start" | "$0" import - || exit 1
              n=$((n+1))
            done
            """
        let writer = try ProcessRunner.start("/bin/sh", ["-c", script, ProcessRunner.executable("app"), container.root.path],
                                             environment: container.environment)
        var inconsistent: [String] = []
        var distinct = Set<String>()
        for _ in 0..<500 {
            let result = try widget(container, ["--json", "--now", "2020-01-01T00:00:00Z"])
            guard result.status == 0, let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
                inconsistent.append("\(result)")
                continue
            }
            let tripName = (json["trip"] as? [String: Any])?["name"] as? String
            let bookingTitle = (json["nextBooking"] as? [String: Any])?["title"] as? String
            distinct.insert(tripName ?? "")
            if tripName != "seed" && tripName != bookingTitle { inconsistent.append("\(tripName ?? "nil") / \(bookingTitle ?? "nil")") }
        }
        _ = FileManager.default.createFile(atPath: container.root.path + "/stop", contents: nil)
        let writerResult = writer.wait()
        #expect(writerResult.status == 0, "\(writerResult)")
        #expect(inconsistent.isEmpty, "\(inconsistent.prefix(5))")
        #expect(distinct.count > 5, "the writer must have changed the answer while the widget ran (saw \(distinct.count))")
    }

    @Test func watchPrintsOnlyWhenTheAnswerChanges() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon", start: "2026-12-12", end: "2026-12-15")
        let other = try container.addTrip("Far", start: "2031-01-01", end: "2031-01-02")
        let watcher = try ProcessRunner.start("widget", ["--watch", "--json", "--now", "2026-12-01T00:00:00Z"],
                                              environment: container.environment)
        defer { watcher.kill() }
        func lines() throws -> [String] {
            try String(contentsOf: watcher.outputURL, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        func waitFor(_ count: Int, within seconds: Double) throws -> [String] {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let current = try lines()
                if current.count >= count { return current }
                usleep(20_000)
            }
            return try lines()
        }
        #expect(try waitFor(1, within: 5).count == 1)

        // 1,000 commits that do not change the answer: no output.
        let noise = (0..<1000).map { "INSERT INTO places (id, trip_id, name, updated_at) VALUES ('p\($0)', '\(other)', 'x', 'now');" }
        let sqlite = try ProcessRunner.run("app", ["container", "sqlite"],
                                           environment: container.environment,
                                           stdin: Array(("PRAGMA synchronous=OFF;\n" + noise.joined(separator: "\n")).utf8))
        #expect(sqlite.status == 0, "\(sqlite)")
        usleep(500_000)
        #expect(try lines().count == 1)

        // An edit of the next trip: printed within a second.
        let started = Date()
        try container.appOK("trip", "edit", trip, "--name", "Lisboa")
        let after = try waitFor(2, within: 1)
        #expect(after.count == 2, "printed after \(Date().timeIntervalSince(started)) s: \(after)")
        #expect(after.last?.contains("Lisboa") == true)

        // CPU stays idle while nothing changes.
        let before = try cpuTicks(watcher.processIdentifier)
        sleep(2)
        let idle = try cpuTicks(watcher.processIdentifier) - before
        #expect(idle <= 2, "\(idle) clock ticks of CPU in 2 s of idleness")

        watcher.kill(signal: SIGTERM)
        let result = watcher.wait(timeout: 5)
        #expect(result.status == 0 && !result.wasSignaled, "\(result)")
    }

    @Test func watchNoticesAContainerCreatedAfterItStarted() throws {
        let container = try TestContainer()
        let watcher = try ProcessRunner.start("widget", ["--watch", "--json", "--now", "2026-12-01T00:00:00Z"],
                                              environment: container.environment)
        defer { watcher.kill() }
        func lines() throws -> [String] {
            try String(contentsOf: watcher.outputURL, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        let deadline = Date().addingTimeInterval(5)
        while try lines().isEmpty && Date() < deadline { usleep(20_000) }
        #expect(try lines().first?.contains("\"status\":\"none\"") == true)
        try container.addTrip("Lisbon")
        let seen = Date().addingTimeInterval(3)
        while try lines().count < 2 && Date() < seen { usleep(20_000) }
        #expect(try lines().count == 2, "the new container was noticed well before the 30 s fallback")
        #expect(try lines().last?.contains("Lisbon") == true)
    }

    func cpuTicks(_ pid: Int32) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return Int(fields[11])! + Int(fields[12])!
    }
}
