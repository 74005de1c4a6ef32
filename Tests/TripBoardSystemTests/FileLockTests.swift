import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

/// flock(2) locks belong to an open file description, so two separate `open`s of the same file in
/// one process contend exactly as two processes would.
struct FileLockTests {
    private func openLocks(_ count: Int, in temporary: TemporaryDirectory) throws -> [FileLock] {
        let directory = try Directory.open(path: temporary.path)
        return try (0..<count).map { _ in
            FileLock(descriptor: try directory.openFile("container.lock", .readWrite, creating: .ifAbsent))
        }
    }

    @Test func sharedLocksAreCompatible() throws {
        let temporary = try TemporaryDirectory()
        let locks = try openLocks(3, in: temporary)
        for lock in locks { try lock.lock(.shared, timeout: 0.5) }
        #expect(locks.map(\.mode) == [.shared, .shared, .shared])
    }

    @Test(arguments: [
        (FileLock.Mode.exclusive, FileLock.Mode.shared),
        (.exclusive, .exclusive),
        (.shared, .exclusive),
    ])
    func conflictingLockTimesOutWithBusyWithinTheDeadline(held: FileLock.Mode, wanted: FileLock.Mode) throws {
        let temporary = try TemporaryDirectory()
        let locks = try openLocks(2, in: temporary)
        try locks[0].lock(held, timeout: 0)

        let started = MonotonicClock.now()
        let error = try #require(throws: LockBusyError.self) { try locks[1].lock(wanted, timeout: 0.2) }
        let elapsed = MonotonicClock.now() - started

        #expect(elapsed >= 0.2)
        #expect(elapsed < 1.5, "polled past its deadline: \(elapsed) s")
        #expect(error.wanted == wanted)
        #expect(error.waited == 0.2)
        #expect(error.path == temporary.child("container.lock"))
        #expect(error.cause == nil)
        #expect(error.holders == [], "this process is never named as a holder")
        #expect(error.description == "container is busy: could not take the \(wanted) lock on \(temporary.child("container.lock")) within 200 ms")
        #expect(locks[1].mode == nil)
        #expect(locks[0].mode == held)
    }

    @Test func zeroTimeoutTriesExactlyOnce() throws {
        let temporary = try TemporaryDirectory()
        let locks = try openLocks(2, in: temporary)
        try locks[0].lock(.exclusive, timeout: 0)
        let started = MonotonicClock.now()
        #expect(throws: LockBusyError.self) { try locks[1].lock(.shared, timeout: 0) }
        #expect(MonotonicClock.now() - started < 0.5)
    }

    @Test func waiterGetsTheLockWhenTheHolderReleasesBeforeTheDeadline() throws {
        let temporary = try TemporaryDirectory()
        let locks = try openLocks(2, in: temporary)
        try locks[0].lock(.exclusive, timeout: 0)
        let holder = locks[0]
        let started = MonotonicClock.now()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.15) { holder.unlock() }

        try locks[1].lock(.exclusive, timeout: 10)
        let elapsed = MonotonicClock.now() - started

        #expect(locks[1].mode == .exclusive)
        #expect(elapsed >= 0.1)
        #expect(elapsed < 5)
    }

    @Test func unlockAllowsTakingTheOtherMode() throws {
        let temporary = try TemporaryDirectory()
        let locks = try openLocks(2, in: temporary)
        try locks[0].lock(.shared, timeout: 0)
        try locks[1].lock(.shared, timeout: 0)
        locks[0].unlock()
        #expect(locks[0].mode == nil)
        #expect(throws: LockBusyError.self) { try locks[0].lock(.exclusive, timeout: 0.05) }
        locks[1].unlock()
        try locks[0].lock(.exclusive, timeout: 0)
        #expect(locks[0].mode == .exclusive)
        locks[0].unlock()
        locks[0].unlock()  // unlocking twice is harmless
        try locks[1].lock(.exclusive, timeout: 0)
    }

    @Test func closingTheDescriptorReleasesTheLock() throws {
        let temporary = try TemporaryDirectory()
        var holder: FileLock? = try openLocks(1, in: temporary)[0]
        try holder?.lock(.exclusive, timeout: 0)
        let waiter = try openLocks(1, in: temporary)[0]
        #expect(throws: LockBusyError.self) { try waiter.lock(.shared, timeout: 0) }
        holder = nil
        try waiter.lock(.exclusive, timeout: 0)
        #expect(holder == nil)
    }

    // MARK: - Another process

    /// Timeline:
    ///   flock(1):  ── takes LOCK_EX ─────────────────────────────── released (stdin closed)
    ///   this test:        └ lock(.shared, 0.3 s) … busy, names flock ┘  lock(.shared) succeeds
    @Test(.enabled(if: ForeignLockHolder.isAvailable, "needs flock(1) from util-linux"))
    func busyErrorNamesTheProcessHoldingTheLock() throws {
        let temporary = try TemporaryDirectory()
        let lock = try openLocks(1, in: temporary)[0]
        let holder = try ForeignLockHolder(path: temporary.child("container.lock"), exclusive: true)

        let error = try #require(throws: LockBusyError.self) { try lock.lock(.shared, timeout: 0.3) }
        let named = try #require(error.holders.first { $0.processID == holder.processID }, "\(error.holders)")
        #expect(named.command == "flock")
        #expect(named.isExclusive)
        #expect(error.description.contains("held by flock (pid \(holder.processID), exclusive)"))

        holder.release()
        try lock.lock(.shared, timeout: 5)
    }

    @Test(.enabled(if: ForeignLockHolder.isAvailable, "needs flock(1) from util-linux"))
    func sharedHolderInAnotherProcessAdmitsSharedAndBlocksExclusive() throws {
        let temporary = try TemporaryDirectory()
        let locks = try openLocks(2, in: temporary)
        let holder = try ForeignLockHolder(path: temporary.child("container.lock"), exclusive: false)

        try locks[0].lock(.shared, timeout: 1)
        let error = try #require(throws: LockBusyError.self) { try locks[1].lock(.exclusive, timeout: 0.2) }
        let named = try #require(error.holders.first { $0.processID == holder.processID }, "\(error.holders)")
        #expect(!named.isExclusive)
        #expect(!error.holders.contains { $0.processID == getpid() }, "our own shared lock is not listed")

        holder.release()
        locks[0].unlock()
        try locks[1].lock(.exclusive, timeout: 5)
    }
}
