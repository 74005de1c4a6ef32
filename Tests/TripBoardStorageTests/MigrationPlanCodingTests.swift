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

    @Test func aDamagedEntryIsRefused() {
        #expect(throws: (any Error).self) { try JSON.decode([PlannedFile].self, from: Array(#"["x.pdf\u0000only two"]"#.utf8)) }
    }
}
