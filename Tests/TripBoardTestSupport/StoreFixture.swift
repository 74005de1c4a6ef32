import Synchronization
import Testing
package import TripBoardStorage
package import TripBoardSystem
package import TripBoardModel

/// A `CivilDate` from a literal the test knows is valid.
package func day(_ text: String) throws -> CivilDate { try #require(CivilDate(text)) }

/// A container with an injected clock in a fresh temp directory, for store tests.
package struct StoreFixture {
    package let temporary: TemporaryDirectory
    package let clock: TestClock
    package let container: Container
    package let store: Store

    package init() throws {
        temporary = try TemporaryDirectory()
        clock = TestClock()
        container = try Container.openForWriting(at: temporary.child("container"), options: clock.options)
        store = try container.store
    }

    @discardableResult
    package func addTrip(_ name: String = "Lisbon", from start: String = "2026-12-12", to end: String = "2026-12-15",
                 notes: String = "") throws -> Trip {
        try store.addTrip(TripDraft(name: name, startDate: day(start), endDate: day(end), notes: notes))
    }

    /// Inserts a trip with a chosen id (for prefix tests), as an import would.
    @discardableResult
    package func insertTrip(id: String, name: String = "Fixed", state: SyncState = .pendingUpload, remoteVersion: Int64? = nil) throws -> Trip {
        let trip = Trip(id: RecordID(id), name: name, startDate: try day("2026-01-01"), endDate: try day("2026-01-02"), notes: "",
                        syncState: state, remoteVersion: remoteVersion, updatedAt: clock.now())
        try store.connection.writeTransaction { try store.insert(trip) }
        return trip
    }

    /// Rows in `table`, tombstones included.
    package func rowCount(_ table: String) throws -> Int64 {
        try store.connection.integer("SELECT count(*) FROM \(table)")
    }
}

/// A clock for `updatedAt` stamps that only moves when a test says so.
package final class TestClock: Sendable {
    private let current: Mutex<Timestamp>

    /// Starts at 2026-11-30T23:12:17.123Z.
    package init(_ start: Timestamp = Timestamp(secondsSinceEpoch: 1_796_080_337, milliseconds: 123)) {
        current = Mutex(start)
    }

    package func now() -> Timestamp { current.withLock { $0 } }

    /// Moves the clock forward and returns the new time.
    @discardableResult
    package func advance(milliseconds: Int64 = 1_000) -> Timestamp {
        current.withLock { time in
            let total = time.secondsSinceEpoch * 1_000 + Int64(time.milliseconds) + milliseconds
            time = Timestamp(secondsSinceEpoch: total / 1_000, milliseconds: Int(total % 1_000))
            return time
        }
    }

    /// The `updatedAt` text the store writes for the current time.
    package var stamp: String { now().utcStamp }

    /// With sealed files' keys in memory (`MemoryFileKeys`): no device directory, no keyring.
    package var options: ContainerOptions {
        ContainerOptions(lockTimeout: 5, clock: { [self] in now() }, fileKeys: TestClock.fileKeys)
    }

    /// One set of keys for the test process: every fixture's files open with it.
    package static let fileKeys: MemoryFileKeys = try! MemoryFileKeys()
}
