import Glibc
import Testing
@testable import TripBoardMigration
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardTestSupport

/// The plan's file list in SQLite (`migration/plan-files.sqlite`): what the plan writes reads
/// back exactly, a page at a time, and a file is recognised by its identity — never by a hash.
@Suite struct MigrationFileListTests {
    @Test func filesReadBackInOrderAPageAtATime() throws {
        let temporary = try TemporaryDirectory()
        let directory = try Directory.open(path: temporary.path)
        let list = try MigrationFileList.create(in: directory)
        let count = MigrationFileList.pageSize * 2 + 7
        try list.writing {
            for index in 0..<count {
                try list.add(PlannedFile(number: 0, source: "\(index) \"é\"\t\n.pdf", destination: "attachments/\(index % 100)/\(index).pdf",
                                         byteCount: Int64(index), device: UInt64.max - UInt64(index), inode: UInt64(index) << 40,
                                         modified: -Int64(index), attachmentID: index % 3 == 0 ? nil : "id-\(index)", copyInode: nil))
            }
        }
        let reopened = try MigrationFileList.open(in: directory)
        var seen: [PlannedFile] = []
        try reopened.forEach { seen.append($0) }
        #expect(seen.count == count)
        #expect(seen.map(\.number) == (1...Int64(count)).map { $0 })
        #expect(seen[5].source == "5 \"é\"\t\n.pdf" && seen[5].device == UInt64.max - 5 && seen[5].inode == 5 << 40)
        #expect(seen[5].modified == -5 && seen[5].attachmentID == "id-5" && seen[3].attachmentID == nil)
        #expect(try reopened.file(attachmentID: "id-8")?.byteCount == 8)
        #expect(try reopened.byteCount == Int64(count * (count - 1) / 2))
    }

    @Test func aCopyIsKnownByItsRecordedInodeAndSizeAndTheSourceByItsIdentity() throws {
        let temporary = try TemporaryDirectory()
        let directory = try Directory.open(path: temporary.path)
        try directory.writeAtomically(Array("ticket".utf8), to: "a.pdf", staging: directory)
        let status = try #require(try directory.status(of: "a.pdf"))
        let list = try MigrationFileList.create(in: directory)
        let number = try list.writing { try list.add(PlannedFile(source: "a.pdf", destination: "attachments/ab/ab.pdf", status: status, attachmentID: "ab")) }
        var file = try #require(try list.file(attachmentID: "ab"))
        #expect(file.number == number && file.isPlannedFile(status) && !file.isRecordedCopy(status))
        try list.recordCopies([(number, 4242)])
        file = try #require(try list.file(attachmentID: "ab"))
        #expect(file.copyInode == 4242)
        // The same name rewritten (another inode, or the same size at another time) is not the planned file.
        try directory.writeAtomically(Array("tickex".utf8), to: "a.pdf", staging: directory)
        #expect(!file.isPlannedFile(try #require(try directory.status(of: "a.pdf"))))
    }
}
