import Glibc
import Testing
@testable import TripBoardMigration
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardTestSupport

/// `migration/staged/`: a per-thread directory for each copying thread; emptying it removes what
/// an interrupted attempt left, in either layout, and never follows a link planted there.
@Suite struct MigrationStagingTests {
    @Test func emptyingRemovesThreadDirectoriesAndFilesOfEitherLayout() throws {
        let temporary = try TemporaryDirectory()
        let migration = try Directory.open(path: temporary.path)
        let staged = try migration.openDirectory(MigrationRun.stagedDirectory, create: true)
        for worker in 0..<2 {
            let directory = try MigrationRun.workerDirectory(worker, in: staged)
            _ = try directory.openFile("import.\(worker).tmp", .writeOnly, creating: .newFile)
        }
        _ = try staged.openFile("import.earlier-layout.tmp", .writeOnly, creating: .newFile)
        let outside = try migration.openDirectory("outside", create: true)
        _ = try outside.openFile("keep.pdf", .writeOnly, creating: .newFile)
        #expect(symlink(outside.path, staged.childPath("planted")) == 0)

        let emptied = try MigrationRun.emptyStagedDirectory(in: migration)
        #expect(try emptied.entries().isEmpty)
        #expect(try outside.entries() == ["keep.pdf"], "the link is removed, not followed")
    }
}
