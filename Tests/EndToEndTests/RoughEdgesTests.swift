import Foundation
import Testing

/// Small things a traveller meets, each as the docs say it.
@Suite struct RoughEdgesTests {
    /// `trash empty` with nothing in the trash asks nothing, from a script too: 0 and the
    /// sentence, where it used to refuse for want of a terminal (64).
    @Test func anEmptyTrashIsSaidWithoutATerminal() throws {
        let container = try TestContainer()
        try container.addTrip()
        let result = try container.app("trash", "empty", stdin: "")
        #expect(result.status == 0 && result.trimmedStdout == "The trash is empty." && result.stderr.isEmpty, "\(result)")
        let trip = try container.addTrip("Porto")
        try container.appOK("trip", "delete", trip)
        let refused = try container.app("trash", "empty", stdin: "")
        #expect(refused.status == 64 && refused.stderr.contains("pass --yes to confirm"), "a full trash still needs --yes: \(refused)")
        #expect(try container.appOK("trash", "list").contains("Porto"))
    }

    /// A date in the right form that names no day says so, wherever a date is typed.
    @Test(arguments: [
        (["trip", "add", "--name", "X", "--start", "2027-02-30", "--end", "2027-03-01"], "--start '2027-02-30' does not exist: 2027-02 has 28 days"),
        (["trip", "add", "--name", "X", "--start", "2027-01-01", "--end", "2027-13-01"], "--end '2027-13-01' does not exist: there is no month 13"),
        (["trip", "list", "--from", "2028-02-30"], "--from '2028-02-30' does not exist: 2028-02 has 29 days"),
        (["trip", "add", "--name", "X", "--start", "2027-2-01", "--end", "2027-03-01"], "is not a date: use YYYY-MM-DD"),
    ])
    func aDayThatDoesNotExistIsSaid(arguments: [String], message: String) throws {
        let container = try TestContainer()
        try container.addTrip()
        let result = try container.app(arguments: arguments)
        #expect(result.status == 64 && result.stderr.contains(message) && result.stderrLines.count == 1, "\(result)")
    }

    @Test func aBookingTimeOnADayThatDoesNotExistIsSaid() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        for time in ["2027-02-29", "2027-02-29T15:00"] {
            let result = try container.app("booking", "add", "--trip", trip, "--kind", "hotel", "--title", "H", "--starts-at", time)
            #expect(result.status == 64 && result.stderr.contains("'\(time)' does not exist: 2027-02 has 28 days"), "\(result)")
        }
    }

    /// A full disk is said as one, whatever write met it (the store's log, its `-shm`): exit 74,
    /// one line, nothing written. ENOSPC is injected by `strace` from the Nth `pwrite64` on.
    @Test(arguments: [1, 5, 9, 12])
    func aFullDiskIsSaidAsOne(from call: Int) throws {
        let container = try TestContainer()
        try container.addTrip("Lisbon")
        let before = try container.appOK("trip", "list")
        let result = try ProcessRunner.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "-e", "trace=pwrite64",
                                                               "-e", "inject=pwrite64:error=ENOSPC:when=\(call)+",
                                                               ProcessRunner.executable("app"), "trip", "add", "--name", "Porto",
                                                               "--start", "2027-05-01", "--end", "2027-05-02"],
                                           environment: container.environment)
        #expect(result.status == 74 && result.stderrLines.count == 1
                && result.stderr.hasPrefix("error: the disk is full: nothing was written"), "\(result)")
        #expect(try container.appOK("trip", "list") == before)
    }

    /// `showsVisitedPlaces` off hides visited places from `place list` and `trip show`, saying how
    /// many and how to show them; `--json` (for scripts) always has every place.
    @Test func showsVisitedPlacesOffHidesThemFromTheListsAPersonReads() throws {
        let container = try TestContainer()
        let trip = try container.addTrip("Lisbon")
        let belem = try container.appOK("place", "add", "--trip", trip, "--name", "Torre de Belém")
        try container.appOK("place", "add", "--trip", trip, "--name", "Alfama")
        try container.appOK("place", "visit", belem)
        try container.appOK("prefs", "set", "showsVisitedPlaces", "off")
        let list = try container.appOK("place", "list", "--trip", trip)
        #expect(!list.contains("Belém") && list.contains("Alfama")
                && list.hasSuffix("(1 visited place hidden: `app prefs set showsVisitedPlaces on` shows them)"), "\(list)")
        let shown = try container.appOK("trip", "show", trip)
        #expect(!shown.contains("Belém") && shown.contains("Alfama") && shown.contains("(1 visited hidden"), "\(shown)")
        #expect(try container.appOK("place", "list", "--trip", trip, "--json").contains("Belém"), "JSON is never filtered")
        #expect(try container.appOK("trip", "show", trip, "--json").contains("Belém"))
        try container.appOK("prefs", "set", "showsVisitedPlaces", "on")
        #expect(try container.appOK("place", "list", "--trip", trip).contains("Belém"))
    }
}
