import Foundation
import Testing
@testable import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

/// `ReadOnlyContainer`: the widget's view of the container. It never creates, writes or repairs
/// anything, and never waits long.
struct ReadOnlyContainerTests {
    static let lockTimeout = 0.25

    /// Creates a container whose store holds `trips`, then closes it as an exiting writer would
    /// (the -wal and -shm stay: TripBoard's writers persist them).
    private func makeContainer(_ temporary: TemporaryDirectory,
                               trips: [(String, String, String)] = [("Lisbon", "2026-12-12", "2026-12-15")]) throws {
        let clock = TestClock()
        let container = try Container.openForWriting(at: temporary.child("container"), options: clock.options)
        for (name, start, end) in trips {
            _ = try container.store.addTrip(TripDraft(name: name, startDate: try day(start), endDate: try day(end)))
        }
    }

    private func openReader(_ temporary: TemporaryDirectory) throws -> ReadOnlyContainer {
        try #require(try ReadOnlyContainer.open(at: temporary.child("container"), lockTimeout: Self.lockTimeout, keys: TestClock.fileKeys))
    }

    /// Every path under the temporary directory, sorted.
    private func listing(_ temporary: TemporaryDirectory) -> [String] {
        var paths: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: temporary.path)
        while let path = enumerator?.nextObject() as? String { paths.append(path) }
        return paths.sorted()
    }

    /// The next trip as the widget asks for it.
    private func nextTrip(_ reader: ReadOnlyContainer, today: String = "2026-12-13") throws -> (ReadOnlyContainer.Availability, NextTrip?) {
        let now = try #require(Timestamp(iso8601: today + "T12:00Z"))
        let (availability, found) = try reader.read { connection in
            try NextTrip.find(in: connection, today: day(today), now: now)
        }
        return (availability, found ?? nil)
    }

    // MARK: - Nothing there

    @Test(arguments: [false, true])
    func missingContainerIsNilAndNothingIsCreated(directoryExists: Bool) throws {
        let temporary = try TemporaryDirectory()
        if directoryExists { try temporary.makeDirectory("container") }  // but no container.lock
        let before = listing(temporary)

        #expect(try ReadOnlyContainer.open(at: temporary.child("container"), lockTimeout: Self.lockTimeout, keys: TestClock.fileKeys) == nil)
        #expect(listing(temporary) == before)
    }

    /// What a writer may leave behind before the store exists: just the lock, or the layout
    /// without a store, or a store file SQLite has not written to yet.
    @Test(arguments: [
        ["container/container.lock"],
        ["container/container.lock", "container/store/"],
        ["container/container.lock", "container/store/", "container/store/TripBoard.sqlite"],
    ])
    func containerWithoutAStoreIsEmptyAndNothingIsCreated(files: [String]) throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("container")
        for file in files {
            if file.hasSuffix("/") { try temporary.makeDirectory(String(file.dropLast())) } else { try temporary.write([], to: file) }
        }
        let before = listing(temporary)
        let reader = try openReader(temporary)
        var called = false

        let (availability, value) = try reader.read { _ -> Bool in
            called = true
            return true
        }

        #expect(availability == .empty)
        #expect(value == nil)
        #expect(!called)
        #expect(listing(temporary) == before)
    }

    @Test func storeMissingAfterTheManifestRecordedItIsAnError() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        for suffix in ["", "-wal", "-shm"] { try FileManager.default.removeItem(atPath: temporary.child("container/store/TripBoard.sqlite" + suffix)) }
        let reader = try openReader(temporary)

        let error = try #require(throws: StoreError.self) { try reader.read { _ in } }

        #expect(error == .missing(path: temporary.child("container/store/TripBoard.sqlite")))
        #expect(try temporary.entries("container/store") == ["TripBoard.sqlite-key"])
    }

    // MARK: - Reading

    @Test func readsTheNextTripAndCreatesNoFile() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary, trips: [("Lisbon", "2026-12-12", "2026-12-15"), ("Porto", "2027-01-10", "2027-01-12")])
        let reader = try expectNextTripIsLisbonAndNothingWritten(temporary)
        #expect(!reader.isImmutableSnapshot)
        #expect(reader.storeDirectoryPath == temporary.child("container/store"))
    }

    /// Opens the container read-only and reads the next trip: Lisbon, ongoing; no file created or
    /// changed, the store's bytes included. Returns the reader for what the caller checks next.
    private func expectNextTripIsLisbonAndNothingWritten(_ temporary: TemporaryDirectory) throws -> ReadOnlyContainer {
        let before = listing(temporary)
        let storeBytes = try temporary.bytes("container/store/TripBoard.sqlite")
        let reader = try openReader(temporary)
        let (availability, next) = try nextTrip(reader)
        #expect(availability == .ready)
        #expect(next?.trip.name == "Lisbon")
        #expect(next?.status == .ongoing)
        #expect(listing(temporary) == before)
        #expect(try temporary.bytes("container/store/TripBoard.sqlite") == storeBytes)
        return reader
    }

    /// A foreign tool (the sqlite3 shell) removed the -wal and -shm on close: the store is read as
    /// an immutable snapshot, and neither file is created again.
    @Test(arguments: [["-wal", "-shm"], ["-wal"], ["-shm"]])
    func storeWithoutItsWALFilesIsReadImmutablyAndCreatesNoFile(removed: [String]) throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        for suffix in removed { try FileManager.default.removeItem(atPath: temporary.child("container/store/TripBoard.sqlite" + suffix)) }
        let reader = try expectNextTripIsLisbonAndNothingWritten(temporary)
        #expect(reader.isImmutableSnapshot)
    }

    @Test func readyStoreWithNoTripToShowIsReadyWithNothing() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary, trips: [("Past", "2025-01-01", "2025-01-02")])
        let (availability, next) = try nextTrip(try openReader(temporary))
        #expect(availability == .ready)
        #expect(next == nil)
    }

    /// Timeline:
    ///   flock(1):  exclusive lock on container.lock ─────────────────────┐ release
    ///   reader:      read → waits 0.25 s → .updating (body not run)       │   read → .ready
    @Test(.enabled(if: ForeignLockHolder.isAvailable, "needs flock(1) from util-linux"))
    func exclusiveLockHeldByAnotherProcessIsUpdatingWithinAQuarterSecond() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        let reader = try openReader(temporary)
        let holder = try ForeignLockHolder(path: temporary.child("container/container.lock"), exclusive: true)
        var called = false

        let started = MonotonicClock.now()
        let (availability, value) = try reader.read { _ -> Bool in
            called = true
            return true
        }
        let waited = MonotonicClock.now() - started

        #expect(availability == .updating)
        #expect(value == nil)
        #expect(!called)
        #expect(waited >= 0.2, "it did wait for the lock: \(waited) s")
        #expect(waited < 1, "but not for long: \(waited) s")

        holder.release()
        #expect(try nextTrip(reader).0 == .ready)
    }

    /// Timeline:
    ///   writer:  open ── add Porto (commit) ───────────────── add Madeira (commit)
    ///   reader:         read → v1   read → v1 (own reads)           → v2 ≠ v1, sees Madeira
    @Test func dataVersionChangesWhenAnotherConnectionCommits() throws {
        let temporary = try TemporaryDirectory()
        let clock = TestClock()
        let writer = try Container.openForWriting(at: temporary.child("container"), options: clock.options)
        _ = try writer.store.addTrip(TripDraft(name: "Porto", startDate: try day("2027-01-10"), endDate: try day("2027-01-12")))
        let reader = try openReader(temporary)
        #expect(try reader.dataVersion() == nil, "no connection before the first read")

        #expect(try nextTrip(reader).1?.trip.name == "Porto")
        let first = try #require(try reader.dataVersion())
        #expect(try nextTrip(reader).1?.trip.name == "Porto")
        #expect(try reader.dataVersion() == first, "its own reads change nothing")

        _ = try writer.store.addTrip(TripDraft(name: "Madeira", startDate: try day("2026-12-20"), endDate: try day("2026-12-27")))

        #expect(try reader.dataVersion() != first)
        #expect(try nextTrip(reader).1?.trip.name == "Madeira")
    }
}
