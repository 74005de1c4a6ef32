import Testing
@testable import TripBoardStorage

/// `plan.json` keeps each planned file as one string (fields joined by U+0000) and still reads
/// the keyed form that earlier plans used.
@Suite struct MigrationPlanCodingTests {
    @Test(arguments: [
        PlannedFile(source: "a b\t\"c\".pdf", destination: "attachments/ab/ab12.pdf", byteCount: 100_000,
                    contentHash: String(repeating: "f", count: 64), device: 64_769, inode: 1 << 40, attachmentID: "ab12"),
        PlannedFile(source: "stray.png", destination: "attachments/recovered/stray.png", byteCount: 0, contentHash: "",
                    device: 0, inode: 0, attachmentID: nil),
    ])
    func aPlannedFileRoundTrips(file: PlannedFile) throws {
        let bytes = try JSON.encode([file], pretty: false)
        #expect(try JSON.decode([PlannedFile].self, from: bytes) == [file])
        #expect(!String(decoding: bytes, as: UTF8.self).contains("\"source\""), "one string per file, not an object")
    }

    @Test func theKeyedFormOfEarlierPlansIsStillRead() throws {
        let keyed = #"[{"source":"x.pdf","destination":"attachments/12/12.pdf","byteCount":3,"contentHash":"abc","device":1,"inode":2,"attachmentID":"12"}]"#
        let files = try JSON.decode([PlannedFile].self, from: Array(keyed.utf8))
        #expect(files == [PlannedFile(source: "x.pdf", destination: "attachments/12/12.pdf", byteCount: 3, contentHash: "abc",
                                      device: 1, inode: 2, attachmentID: "12")])
    }

    /// `writePlan` streams the files (the plan is never one document in memory); what it writes
    /// reads back as the plan, with 2,000 files — several times the output's buffer — and
    /// awkward names in both lists.
    @Test func aStreamedPlanReadsBackAsThePlan() throws {
        let temporary = try TemporaryDirectory()
        let directory = try Directory.open(path: temporary.path)
        let attachments = (0..<2_000).map { index in
            PlannedFile(source: "\(index) \"é\"\n.pdf", destination: "attachments/\(index % 100)/\(index).pdf", byteCount: Int64(index),
                        contentHash: String(repeating: "a", count: 64), device: 7, inode: UInt64(index), attachmentID: "\(index)")
        }
        let recovered = [PlannedFile(source: "stray\t.png", destination: "attachments/recovered/stray\t.png", byteCount: 1,
                                     contentHash: "b", device: 7, inode: 9, attachmentID: nil)]
        var preferences = PreferencePlan()
        preferences.refused = ["theme"]
        preferences.tokens = 2
        var counts = MigrationCounts()
        counts.attachments = 2_000
        let plan = MigrationPlan(legacyPath: "/old \"place\"", containerPath: "/new", migratedAt: "2026-12-01T10:00:00.000Z",
                                 merge: false, sameFilesystem: true, storeBytes: 4096, counts: counts, attachments: attachments,
                                 missing: ["x Attachments/x.pdf"], recovered: recovered, preferences: preferences,
                                 bookingKindsChangedToOther: 3, foreign: ["notes.txt"], recordDigest: "d1")
        try MigrationJournal.writePlan(plan, in: directory)
        let read = try #require(try MigrationJournal.read(MigrationPlan.self, MigrationJournal.planFile, in: directory))
        #expect(read.attachments == attachments)
        #expect(read.recovered == recovered)
        #expect(try JSON.encode(read) == JSON.encode(plan))
        #expect(try directory.entries() == [MigrationJournal.planFile], "no temporary file left")
    }

    @Test func aDamagedEntryIsRefused() {
        #expect(throws: (any Error).self) { try JSON.decode([PlannedFile].self, from: Array(#"["x.pdf\u0000only two"]"#.utf8)) }
    }
}
