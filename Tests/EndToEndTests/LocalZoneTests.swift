import Foundation
import Testing

/// `TZ` is read as `date` reads it, except that a value naming no zone is refused (64, one line,
/// nothing written) instead of silently meaning UTC, as glibc would have it.
struct LocalZoneTests {
    @Test(arguments: ["Europe/Lisbn", "Nowhere/Invalid", "../../etc/passwd", ":Mars"])
    func aTZThatNamesNoZoneIsRefusedBeforeAnythingIsWritten(zone: String) throws {
        let test = try TestContainer()
        let trip = try test.addTrip()
        let before = try test.state()
        let writes: [[String]] = [
            ["booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351", "--starts-at", "2026-12-12T07:35"],
            ["trip", "add", "--name", "Porto", "--start", "2027-01-01", "--end", "2027-01-02"],
            ["trip", "list"],
        ]
        for arguments in writes {
            let result = try test.app(arguments: arguments, environment: ["TZ": zone])
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("error: TZ='\(zone)' names no time zone") && result.stderr.split(separator: "\n").count == 1,
                    "\(result.stderr)")
        }
        let widget = try ProcessRunner.run("widget", [], environment: test.environment(["TZ": zone]))
        #expect(widget.status == 64 && widget.stderr.contains("names no time zone"), "\(widget)")
        #expect(try test.state() == before)
        // --help and --version need no zone.
        #expect(try test.app(arguments: ["--version"], environment: ["TZ": zone]).status == 0)
        #expect(try test.app(arguments: ["trip", "list", "--help"], environment: ["TZ": zone]).status == 0)
    }

    @Test(arguments: ["Europe/Lisbon", ":America/New_York", "UTC0", "EST5EDT,M3.2.0,M11.1.0", "<+0530>-5:30", ""])
    func aTZThatNamesAZoneOrARuleIsUsed(zone: String) throws {
        let test = try TestContainer()
        let trip = try test.addTrip()
        let result = try test.app(arguments: ["booking", "add", "--trip", trip, "--kind", "flight", "--title", "TP 1351",
                                              "--starts-at", "2026-12-12T07:35"], environment: ["TZ": zone])
        #expect(result.status == 0, "\(zone): \(result)")
        let stored = try test.sqlite("SELECT starts_at FROM bookings").trimmedStdout
        let expected = ["Europe/Lisbon": "+00:00", ":America/New_York": "-05:00", "UTC0": "+00:00", "EST5EDT,M3.2.0,M11.1.0": "-05:00",
                        "<+0530>-5:30": "+05:30", "": "+00:00"][zone]!
        #expect(stored == "2026-12-12T07:35:00" + expected, "\(zone)")
    }
}
