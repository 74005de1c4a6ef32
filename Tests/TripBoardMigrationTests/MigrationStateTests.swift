import Foundation
import Testing
@testable import TripBoardMigration
@testable import TripBoardStorage
import TripBoardModel
import TripBoardTestSupport

/// While a container migration has a journal and no commit marker, readers show "updating" and
/// processes that may not create refuse with `notReady`; neither creates anything.
struct MigrationStateTests {
    /// A container with a store and a trip, plus `migration/journal.json` (and optionally the marker).
    private func makeContainer(_ temporary: TemporaryDirectory, committed: Bool) throws -> String {
        let path = temporary.child("container")
        do {
            let container = try Container.openForWriting(at: path, options: TestClock().options)
            _ = try container.store.addTrip(TripDraft(name: "Lisbon", startDate: try day("2026-12-12"), endDate: try day("2026-12-15")))
        }
        try temporary.makeDirectory("container/migration")
        try temporary.write(#"{"finished":"storePublished"}"#, to: "container/migration/journal.json")
        if committed { try temporary.write("{}", to: "container/migration/committed.json") }
        return path
    }

    private func extensionOptions() -> ContainerOptions {
        var options = TestClock().options
        options.mayCreate = false
        options.processName = "share-extension"
        return options
    }

    @Test func anExtensionRefusesAnUnfinishedMigration() throws {
        let temporary = try TemporaryDirectory()
        let path = try makeContainer(temporary, committed: false)
        #expect(throws: StoreError.notReady(path: path)) { try Container.openForWriting(at: path, options: extensionOptions()) }
        #expect(try FirstLaunchMigration.state(containerPath: path) == .unfinished)
    }

    @Test func anExtensionRefusesAMigrationIntoAContainerNotYetSetUp() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("container/migration")
        try temporary.write(#"{"finished":"planned"}"#, to: "container/migration/journal.json")
        let path = temporary.child("container")
        #expect(throws: StoreError.notReady(path: path)) { try Container.openForWriting(at: path, options: extensionOptions()) }
        #expect(try temporary.entries("container") == ["migration"], "no store, lock or manifest created")
    }

    @Test func theWidgetShowsUpdatingUntilTheCommitMarker() throws {
        let temporary = try TemporaryDirectory()
        let path = try makeContainer(temporary, committed: false)
        let reader = try #require(try ReadOnlyContainer.open(at: path, lockTimeout: 0.25, keys: TestClock.fileKeys))
        let (availability, value) = try reader.read { try $0.integer("SELECT count(*) FROM trips") }
        #expect(availability == .updating && value == nil)
        try temporary.write("{}", to: "container/migration/committed.json")
        let (after, count) = try reader.read { try $0.integer("SELECT count(*) FROM trips") }
        #expect(after == .ready && count == 1)
    }

    @Test func aCommittedMigrationDoesNotStopAnyone() throws {
        let temporary = try TemporaryDirectory()
        let path = try makeContainer(temporary, committed: true)
        let container = try Container.openForWriting(at: path, options: extensionOptions())
        #expect(try container.store.counts().trips == 1)
        #expect(try FirstLaunchMigration.state(containerPath: path) == .unfinished, "deleting the old location is still to do")
    }

    @Test func aMigrationDirectoryThatIsAFileIsRefused() throws {
        let temporary = try TemporaryDirectory()
        let path = try makeContainer(temporary, committed: false)
        try FileManager.default.removeItem(atPath: temporary.child("container/migration"))
        try temporary.write("x", to: "container/migration")
        #expect(throws: ContainerError.self) { try Container.openForWriting(at: path, options: extensionOptions()) }
    }

    @Test func theLegacyLocationComesFromTheFlagThenTheEnvironmentThenHome() {
        #expect(LegacyLayout.resolve(explicit: "/a", environment: ["TRIPBOARD_LEGACY_DIR": "/b", "HOME": "/h"]) == "/a")
        #expect(LegacyLayout.resolve(explicit: nil, environment: ["TRIPBOARD_LEGACY_DIR": "/b", "HOME": "/h"]) == "/b")
        #expect(LegacyLayout.resolve(explicit: nil, environment: ["TRIPBOARD_LEGACY_DIR": "", "HOME": "/h/"]) == "/h/.tripboard")
        #expect(LegacyLayout.resolve(explicit: nil, environment: [:]) == nil)
    }
}
