import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

/// The zone rules TripBoard reads from the system's TZif files, against glibc's own reading of the
/// same files (`localtime` in a Python process with that `TZ`), at instants from 1900 to 2100 — past
/// the files' last transition (2037), where the footer rule takes over.
struct TimeZoneRulesTests {
    static let zones = ["Europe/Lisbon", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Asia/Kolkata",
                        "America/Sao_Paulo", "Pacific/Apia", "Europe/Dublin", "Africa/Casablanca", "America/St_Johns", "UTC"]

    /// (offset, abbreviation) glibc gives each instant under `TZ=zone`.
    static func glibc(_ zone: String, _ instants: [Int64]) throws -> [(Int, String)] {
        // The instants go in a file: written to a pipe while the answers fill the other, they
        // would deadlock both processes once each pipe is full.
        let directory = try TemporaryDirectory()
        try Data(instants.map(String.init).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: directory.child("instants")))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sys, time
            for line in open(sys.argv[1]):
                t = time.localtime(int(line))
                print(t.tm_gmtoff, t.tm_zone)
            """, directory.child("instants")]
        process.environment = ["TZ": zone, "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            return (Int(parts[0])!, String(parts[1]))
        }
    }

    /// Every few days from 1900 to 2100, and a second either side of each of the file's transitions.
    static func instants(for rules: TimeZoneRules) -> [Int64] {
        var instants = stride(from: Int64(-2_208_988_800), to: 4_102_444_800, by: 86_400 * 3 + 3_607).map { $0 }
        for transition in rules.transitions where transition > -2_208_988_800 { instants += [transition - 1, transition] }
        return instants
    }

    @Test(arguments: zones)
    func offsetsAndAbbreviationsAgreeWithGlibc(zone: String) throws {
        let rules = try TimeZoneRules.named(zone)
        let instants = Self.instants(for: rules)
        let expected = try Self.glibc(zone, instants)
        #expect(expected.count == instants.count)
        var mismatches: [String] = []
        for (instant, (offset, abbreviation)) in zip(instants, expected) {
            let type = rules.localType(at: instant)
            if type.offset != offset || type.abbreviation != abbreviation {
                mismatches.append("\(instant): \(type.offset) \(type.abbreviation), glibc \(offset) \(abbreviation)")
            }
        }
        #expect(mismatches.isEmpty, "\(zone): \(mismatches.count) of \(instants.count) differ, first \(mismatches.prefix(3))")
    }

    @Test func aPosixRuleReadsAsGlibcReadsIt() throws {
        let value = "EST5EDT,M3.2.0,M11.1.0"
        let rules = try TimeZoneRules.fromEnvironmentValue(value)
        let instants = stride(from: Int64(0), to: 4_102_444_800, by: 86_400 * 5 + 1_801).map { $0 }
        let expected = try Self.glibc(value, instants)
        for (instant, (offset, abbreviation)) in zip(instants, expected) {
            #expect(rules.localType(at: instant).offset == offset && rules.localType(at: instant).abbreviation == abbreviation, "\(instant)")
        }
        #expect(try TimeZoneRules.fromEnvironmentValue("UTC0").offset(at: 0) == 0)
        #expect(try TimeZoneRules.fromEnvironmentValue("<+0530>-5:30").offset(at: 0) == 19_800)
        #expect(try TimeZoneRules.fromEnvironmentValue(":Europe/Lisbon").name == "Europe/Lisbon")
    }

    @Test(arguments: ["Mars/Olympus_Mons", "Europe/Lisbo", "../etc/passwd", "/usr/share/zoneinfo/UTC", "Europe//Lisbon", "", "zoneinfo.default",
                      "Lisbon time"])
    func aValueThatNamesNoZoneIsAnError(value: String) {
        #expect(throws: TimeZoneError.self) { try TimeZoneRules.fromEnvironmentValue(value) }
    }

    /// Local seconds of a wall-clock time.
    static func local(_ text: String) -> Int64 {
        let date = CivilDate(String(text.prefix(10)))!
        let hour = Int(text.dropFirst(11).prefix(2))!, minute = Int(text.dropFirst(14).prefix(2))!
        return Int64(date.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60)
    }

    @Test func aTimeTheClocksSkipIsAGapWithTheJumpAndBothSides() throws {
        let lisbon = try TimeZoneRules.named("Europe/Lisbon")
        // 2026-03-29: 01:00 WET becomes 02:00 WEST (01:00 UTC).
        guard case .gap(let transition, let before, let after) = lisbon.resolve(localSeconds: Self.local("2026-03-29T01:30")) else {
            Issue.record("01:30 on 2026-03-29 in Lisbon is skipped")
            return
        }
        #expect(transition == Self.local("2026-03-29T01:00"))
        #expect(before.abbreviation == "WET" && before.offset == 0)
        #expect(after.abbreviation == "WEST" && after.offset == 3600)
        let newYork = try TimeZoneRules.named("America/New_York")
        guard case .gap(let jump, _, _) = newYork.resolve(localSeconds: Self.local("2026-03-08T02:30")) else {
            Issue.record("02:30 on 2026-03-08 in New York is skipped")
            return
        }
        #expect(jump == Self.local("2026-03-08T07:00"))
    }

    @Test func aTimeTheClocksShowTwiceIsAnOverlapWithBothOffsets() throws {
        #expect(try TimeZoneRules.named("Europe/Lisbon").resolve(localSeconds: Self.local("2026-10-25T01:30"))
                == .overlap(earlier: 3600, later: 0))
        #expect(try TimeZoneRules.named("America/New_York").resolve(localSeconds: Self.local("2026-11-01T01:30"))
                == .overlap(earlier: -14_400, later: -18_000))
        #expect(try TimeZoneRules.named("Australia/Lord_Howe").resolve(localSeconds: Self.local("2026-04-05T01:45"))
                == .overlap(earlier: 39_600, later: 37_800))
    }

    @Test func anOrdinaryTimeHasOneOffset() throws {
        #expect(try TimeZoneRules.named("Europe/Lisbon").resolve(localSeconds: Self.local("2026-12-12T07:35")) == .unique(offset: 0))
        #expect(try TimeZoneRules.named("Europe/Lisbon").resolve(localSeconds: Self.local("2026-07-12T07:35")) == .unique(offset: 3600))
        #expect(try TimeZoneRules.named("Asia/Kolkata").resolve(localSeconds: Self.local("2026-12-12T07:35")) == .unique(offset: 19_800))
        // Samoa skipped 2011-12-30 whole.
        guard case .gap = try TimeZoneRules.named("Pacific/Apia").resolve(localSeconds: Self.local("2011-12-30T12:00")) else {
            Issue.record("2011-12-30 did not happen in Samoa")
            return
        }
    }

    @Test func damagedZoneFilesAreRefusedNotMisread() throws {
        let directory = try TemporaryDirectory()
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: TimeZoneRules.databaseDirectory + "/Europe/Lisbon")))
        for (name, bytes) in [("Short", Array(original.prefix(60))), ("Empty", []), ("Text", Array("TZif? no".utf8))] {
            try Data(bytes).write(to: URL(fileURLWithPath: directory.child(name)))
            #expect(throws: TimeZoneError.self, "\(name)") { try TimeZoneRules.named(name, in: directory.path) }
        }
        try Data(original).write(to: URL(fileURLWithPath: directory.child("Copy")))
        #expect(try TimeZoneRules.named("Copy", in: directory.path).offset(at: 1_783_000_000) == 3600)
    }
}
