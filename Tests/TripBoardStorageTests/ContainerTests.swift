import Foundation
import Synchronization
import Testing
@testable import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel
import TripBoardTestSupport

struct ContainerTests {
    static let storeRelativePath = "container/store/TripBoard.sqlite"

    /// A manifest as a writer leaves it once the store exists.
    static let setUpManifest = """
        {"createdAt":"2026-11-30T23:12:17.123Z","createdBy":"app","layoutVersion":1,"storeCreated":true}
        """

    private func options(lockTimeout: Double = 5, processName: String = "app",
                         durability: Durability = .normal, clock: TestClock = TestClock()) -> ContainerOptions {
        ContainerOptions(lockTimeout: lockTimeout, durability: durability, clock: { clock.now() }, processName: processName,
                         fileKeys: TestClock.fileKeys)
    }

    /// Creates a container, adds a trip so the store has content, and releases it.
    private func makeContainer(_ temporary: TemporaryDirectory) throws {
        let container = try Container.openForWriting(at: temporary.child("container"), options: options())
        _ = try container.store.addTrip(TripDraft(name: "Lisbon", startDate: try day("2026-12-12"), endDate: try day("2026-12-15")))
    }

    /// Path → bytes of every regular file under `relative`, and the kind of everything else.
    private func snapshot(_ temporary: TemporaryDirectory, _ relative: String = "container") throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let root = temporary.child(relative)
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return result }
        while let name = enumerator.nextObject() as? String {
            let kind = try FileManager.default.attributesOfItem(atPath: root + "/" + name)[.type] as? FileAttributeType
            // The -shm file is SQLite's shared-memory index, rewritten by any reader: not content.
            if kind == .typeRegular && !name.hasSuffix("-shm") {
                result[name] = try temporary.bytes(relative + "/" + name)
            } else {
                result[name] = Array("<\(kind?.rawValue ?? "?")>".utf8)
            }
        }
        return result
    }

    // MARK: - Creating

    @Test func createsTheLayoutWithPrivateModesWhateverTheUmask() throws {
        let temporary = try TemporaryDirectory()
        let container = try Container.openForWriting(at: temporary.child("container"), options: options())
        let umask = String(currentUmask() ?? 0, radix: 8)

        #expect(try temporary.entries("container") == [
            "attachments", "caches", "container.json", "container.lock", "keychain", "preferences", "store", "tmp",
        ])
        #expect(try temporary.permissions("container") == 0o700)
        for directory in ContainerLayout.directories {
            #expect(try temporary.permissions("container/" + directory) == 0o700, "\(directory), umask \(umask)")
        }
        #expect(try temporary.entries("container/store") == ["TripBoard.sqlite", "TripBoard.sqlite-key", "TripBoard.sqlite-shm", "TripBoard.sqlite-wal"])
        for file in ["container.lock", "container.json", "store/TripBoard.sqlite", "store/TripBoard.sqlite-wal", "store/TripBoard.sqlite-shm"] {
            #expect(try temporary.permissions("container/" + file) == 0o600, "\(file), umask \(umask)")
        }
        #expect(try temporary.entries("container/tmp") == [])
        #expect(try temporary.entries("container/caches") == ["thumbnails"])
        #expect(container.path == temporary.child("container"))
    }

    @Test func manifestRecordsLayoutCreationAndCreator() throws {
        let temporary = try TemporaryDirectory()
        let clock = TestClock()
        let container = try Container.openForWriting(at: temporary.child("container"),
                                                     options: options(processName: "share-extension", clock: clock))

        let expected = Manifest(layoutVersion: ContainerLayout.version, createdAt: "2026-11-30T23:12:17.123Z",
                                createdBy: "share-extension", storeCreated: true)
        #expect(try container.manifest() == expected)
        let text = String(decoding: try temporary.bytes("container/container.json"), as: UTF8.self)
        #expect(text == """
            {
              "createdAt" : "2026-11-30T23:12:17.123Z",
              "createdBy" : "share-extension",
              "layoutVersion" : 1,
              "storeCreated" : true
            }

            """)
    }

    @Test func storeIsConfiguredForSharing() throws {
        let temporary = try TemporaryDirectory()
        let container = try Container.openForWriting(at: temporary.child("container"), options: options())
        let connection = try container.store.connection
        #expect(try connection.text("PRAGMA journal_mode") == "wal")
        #expect(try connection.integer("PRAGMA foreign_keys") == 1)
        #expect(try connection.userVersion() == Schema.currentVersion)
        #expect(try container.store.integrityProblems() == [])
    }

    @Test(arguments: [(Durability.normal, 1 as Int64), (.full, 2)])
    func durabilityChoosesTheSynchronousSetting(durability: Durability, synchronous: Int64) throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        let container = try Container.openForWriting(at: temporary.child("container"), options: options(durability: durability))
        #expect(try container.store.connection.integer("PRAGMA synchronous") == synchronous)
    }

    @Test func reopeningIsIdempotent() throws {
        let temporary = try TemporaryDirectory()
        let clock = TestClock()
        try makeContainer(temporary)
        let manifest = try temporary.bytes("container/container.json")
        let storeInode = try #require(try Directory.open(path: temporary.child("container/store")).status(of: "TripBoard.sqlite")).inode

        clock.advance(milliseconds: 86_400_000)
        let reopened = try Container.openForWriting(at: temporary.child("container"),
                                                    options: options(processName: "widget", clock: clock))

        #expect(try temporary.bytes("container/container.json") == manifest, "not rewritten")
        #expect(try reopened.status(of: "store/TripBoard.sqlite")?.inode == storeInode)
        #expect(try reopened.store.trips().map(\.name) == ["Lisbon"])
        #expect(try temporary.entries("container/tmp") == [])
        #expect(try reopened.manifest()?.createdBy == "app")
    }

    /// An empty directory the user made is theirs: used, never chmod'ed (a 1777 directory would
    /// lose its sticky bit); what the container puts in it is 0700 and 0600 all the same.
    @Test func anExistingEmptyRootKeepsItsModeAndItsEntriesArePrivate() throws {
        let temporary = try TemporaryDirectory()
        try #require(mkdir(temporary.child("container"), 0o755) == 0)
        try #require(chmod(temporary.child("container"), 0o1777) == 0)
        _ = try Container.openForWriting(at: temporary.child("container"), options: options())
        #expect(try temporary.permissions("container") == 0o1777)
        for name in ["store", "keychain", "attachments", "preferences", "caches", "tmp"] {
            #expect(try temporary.permissions("container/" + name) == 0o700, "\(name)")
        }
        #expect(try temporary.permissions("container/store/TripBoard.sqlite") == 0o600)
        #expect(try temporary.permissions("container/container.lock") == 0o600)
    }

    /// A first setup that fails after creating the store (here SQLite cannot make its `-wal`,
    /// a directory stands in its place) takes back the store and the directories it made, so no
    /// empty store is left to pass for a real one; what was there before stays.
    @Test func aFailedFirstSetUpLeavesNoStore() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("container")
        try temporary.makeDirectory("container/store")
        try temporary.makeDirectory("container/store/TripBoard.sqlite-wal")
        #expect(throws: (any Error).self) { try Container.openForWriting(at: temporary.child("container"), options: options()) }
        #expect(try temporary.entries("container") == ["container.lock", "store"])
        #expect(try temporary.entries("container/store") == ["TripBoard.sqlite-wal"])
        var readOnly = options()
        readOnly.createsContainer = false
        #expect(throws: ContainerError.self) { try Container.openForWriting(at: temporary.child("container"), options: readOnly) }
    }

    @Test func aRootTripBoardCreatesIsPrivate() throws {
        let temporary = try TemporaryDirectory()
        _ = try Container.openForWriting(at: temporary.child("new/container"), options: options())
        #expect(try temporary.permissions("new") == 0o700)
        #expect(try temporary.permissions("new/container") == 0o700)
    }

    @Test func directoryAndStatusReachInsideTheContainer() throws {
        let temporary = try TemporaryDirectory()
        let container = try Container.openForWriting(at: temporary.child("container"), options: options())
        #expect(try container.directory("caches/thumbnails").path == temporary.child("container/caches/thumbnails"))
        #expect(try container.stagingDirectory().path == temporary.child("container/tmp"))
        #expect(try container.status(of: "store/TripBoard.sqlite")?.kind == .regular)
        #expect(try container.status(of: "store")?.kind == .directory)
        #expect(try container.status(of: "missing/file") == nil)
        #expect(throws: FileSystemError.self) { try container.directory("missing") }
    }

    /// Four threads open the same fresh container at once: setup runs under the exclusive lock,
    /// so exactly one of them creates it and every one of them ends up with a working store.
    @Test func concurrentFirstOpensAllSucceed() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.child("container")
        let failures = Mutex<[String]>([])
        let tripIDs = Mutex<[String]>([])
        let date = try day("2026-12-12")
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            do {
                let clock = TestClock()
                let container = try Container.openForWriting(at: path, options: ContainerOptions(lockTimeout: 30, clock: { clock.now() }, fileKeys: TestClock.fileKeys))
                let trip = try container.store.addTrip(TripDraft(name: "Trip \(index)", startDate: date, endDate: date))
                tripIDs.withLock { $0.append(trip.id.text) }
            } catch {
                failures.withLock { $0.append("\(index): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let container = try Container.openForWriting(at: path, options: options())
        #expect(try Set(container.store.trips().map(\.id.text)) == Set(tripIDs.withLock { $0 }))
        #expect(try container.store.trips().count == 4)
        #expect(try temporary.entries("container/store") == ["TripBoard.sqlite", "TripBoard.sqlite-key", "TripBoard.sqlite-shm", "TripBoard.sqlite-wal"])
    }

    // MARK: - Locking

    @Test func twoWritersHoldTheSharedLockTogether() throws {
        let temporary = try TemporaryDirectory()
        let first = try Container.openForWriting(at: temporary.child("container"), options: options())
        let second = try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.5))
        let trip = try first.store.addTrip(TripDraft(name: "Porto", startDate: try day("2026-05-01"), endDate: try day("2026-05-03")))
        #expect(try second.store.trip(id: trip.id) == trip)
    }

    @Test func exclusiveLockHeldElsewhereMakesOpeningBusy() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        let holder = FileLock(descriptor: try Directory.open(path: temporary.child("container"))
            .openFile("container.lock", .readWrite))
        try holder.lock(.exclusive, timeout: 0)

        let started = MonotonicClock.now()
        let error = try #require(throws: LockBusyError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.2))
        }
        #expect(MonotonicClock.now() - started < 2)
        #expect(error.wanted == .shared)
        #expect(error.path == temporary.child("container/container.lock"))

        holder.unlock()
        _ = try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.2))
    }

    /// Timeline:
    ///   reader:  shared lock ─────────────────────────────────────────────
    ///   writer:    shared ✓ → store not set up → unlock → exclusive … busy (nothing created)
    @Test func setupWaitsForTheExclusiveLockAndCreatesNothingWhenBusy() throws {
        let temporary = try TemporaryDirectory()
        let root = try Directory.create(path: temporary.child("container"))
        let reader = FileLock(descriptor: try root.openFile("container.lock", .readWrite, creating: .ifAbsent))
        try reader.lock(.shared, timeout: 0)

        let error = try #require(throws: LockBusyError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.2))
        }
        #expect(error.wanted == .exclusive)
        #expect(try temporary.entries("container") == ["container.lock"])
    }

    @Test(.enabled(if: ForeignLockHolder.isAvailable, "needs flock(1) from util-linux"))
    func sharedLockHeldByAnotherProcessDoesNotBlockOpening() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        let holder = try ForeignLockHolder(path: temporary.child("container/container.lock"), exclusive: false)
        let container = try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.5))
        #expect(try container.store.trips().map(\.name) == ["Lisbon"])
        holder.release()
    }

    @Test(.enabled(if: ForeignLockHolder.isAvailable, "needs flock(1) from util-linux"))
    func busyOpeningNamesTheOtherProcess() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        let holder = try ForeignLockHolder(path: temporary.child("container/container.lock"), exclusive: true)
        let error = try #require(throws: LockBusyError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.2))
        }
        #expect(error.holders.contains { $0.processID == holder.processID && $0.isExclusive })
        #expect(error.description.contains("pid \(holder.processID)"))
    }

    @Test func withExclusiveLockRunsTheBodyAndReturnsToShared() throws {
        let temporary = try TemporaryDirectory()
        let container = try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.2))
        let probe = FileLock(descriptor: try Directory.open(path: temporary.child("container")).openFile("container.lock", .readWrite))

        let value = try container.withExclusiveLock { () throws -> Int in
            #expect(container.lock.mode == .exclusive)
            #expect(throws: LockBusyError.self) { try probe.lock(.shared, timeout: 0) }
            return 7
        }

        #expect(value == 7)
        #expect(container.lock.mode == .shared)
        try probe.lock(.shared, timeout: 0)
    }

    @Test func withExclusiveLockIsBusyWhileAnotherWriterIsOpenAndKeepsTheSharedLock() throws {
        let temporary = try TemporaryDirectory()
        let container = try Container.openForWriting(at: temporary.child("container"), options: options(lockTimeout: 0.2))
        var other: Container? = try Container.openForWriting(at: temporary.child("container"), options: options())
        var ran = false

        #expect(throws: LockBusyError.self) { try container.withExclusiveLock { ran = true } }
        #expect(!ran)
        #expect(container.lock.mode == .shared)
        #expect(try container.store.trips() == [])

        other = nil
        try container.withExclusiveLock { ran = true }
        #expect(ran)
        #expect(other == nil)
    }

    // MARK: - Refusing to touch a store that is not ours to fix

    @Test(arguments: [
        (Array(repeating: UInt8(ascii: "x"), count: 8_192), true),
        (Array(repeating: UInt8(ascii: "x"), count: 8_192), false),
        (Array("this is a text file, not a database\n".utf8), true),
        ((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }, true),
    ])
    func garbageInTheStoreIsCorruptAndLeftAsItWas(garbage: [UInt8], withManifest: Bool) throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("container/store")
        try temporary.write(garbage, to: Self.storeRelativePath)
        if withManifest { try temporary.write(Self.setUpManifest, to: "container/container.json") }
        let storeEntries = try temporary.entries("container/store")

        let error = try #require(throws: StoreError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options())
        }
        guard case .corrupt(let path, _) = error else {
            Issue.record("expected .corrupt, got \(error)")
            return
        }
        #expect(path == temporary.child(Self.storeRelativePath))
        #expect(error.description.contains("left untouched"))
        #expect(try temporary.bytes(Self.storeRelativePath) == garbage)
        #expect(try temporary.entries("container/store") == storeEntries, "no -wal, -journal or second store")
        #expect(temporary.exists("container/container.json") == withManifest)
    }

    @Test func newerSchemaIsRefusedAndLeftAsItWas() throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        try openDatabaseFile(temporary.child(Self.storeRelativePath)).execute("PRAGMA user_version = 99")
        let before = try snapshot(temporary)

        let error = try #require(throws: StoreError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options())
        }
        #expect(error == .newerSchema(path: temporary.child(Self.storeRelativePath), found: 99, supported: Schema.currentVersion))
        #expect(error.description.contains("update TripBoard"))
        #expect(try snapshot(temporary) == before)
    }

    @Test(arguments: [["TripBoard.sqlite"], ["TripBoard.sqlite", "TripBoard.sqlite-wal", "TripBoard.sqlite-shm"]])
    func deletedStoreIsMissingAndNothingIsCreated(deleted: [String]) throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        for name in deleted { try FileManager.default.removeItem(atPath: temporary.child("container/store/" + name)) }
        let before = try snapshot(temporary)

        let error = try #require(throws: StoreError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options())
        }
        #expect(error == .missing(path: temporary.child(Self.storeRelativePath)))
        #expect(try snapshot(temporary) == before)
        #expect(!temporary.exists(Self.storeRelativePath))
    }

    @Test(arguments: [true, false])
    func storeThatIsASymbolicLinkIsRefused(withManifest: Bool) throws {
        let temporary = try TemporaryDirectory()
        try Connection(path: temporary.child("elsewhere.sqlite"), mode: .readWriteCreate).execute("CREATE TABLE planted (x)")
        let target = try temporary.bytes("elsewhere.sqlite")
        try temporary.makeDirectory("container/store")
        try temporary.makeSymbolicLink(Self.storeRelativePath, to: temporary.child("elsewhere.sqlite"))
        if withManifest { try temporary.write(Self.setUpManifest, to: "container/container.json") }

        #expect {
            try Container.openForWriting(at: temporary.child("container"), options: options())
        } throws: { error in
            switch error {
            case StoreError.unreadable(let path, _), ContainerError.unusable(let path, _):
                path == temporary.child(Self.storeRelativePath)
            default: false
            }
        }
        #expect(try Directory.open(path: temporary.child("container/store")).status(of: "TripBoard.sqlite")?.kind == .symbolicLink)
        #expect(try temporary.bytes("elsewhere.sqlite") == target)
        #expect(try temporary.entries() == ["container", "elsewhere.sqlite"])
    }

    @Test func storeDirectoryThatIsASymbolicLinkIsRefused() throws {
        let temporary = try TemporaryDirectory()
        try temporary.makeDirectory("elsewhere")
        try temporary.makeDirectory("container")
        try temporary.makeSymbolicLink("container/store", to: temporary.child("elsewhere"))

        #expect(throws: FileSystemError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options())
        }
        #expect(try temporary.entries("elsewhere") == [])
    }

    @Test(arguments: ["container", "container/inside"])
    func containerPathThatIsARegularFileIsUnusable(containerPath: String) throws {
        let temporary = try TemporaryDirectory()
        try temporary.write("my notes", to: "container")

        let error = try #require(throws: ContainerError.self) {
            try Container.openForWriting(at: temporary.child(containerPath), options: options())
        }
        guard case .unusable(_, let reason) = error else {
            Issue.record("expected .unusable, got \(error)")
            return
        }
        #expect(reason == "it is not a directory")
        #expect(try temporary.bytes("container") == Array("my notes".utf8))
    }

    @Test(arguments: [
        ("{not json", "not valid JSON"),
        (#"{"createdAt":"x","createdBy":"app","layoutVersion":2,"storeCreated":true}"#, "newer"),
        (#"{"layoutVersion":1}"#, "not valid JSON"),
    ])
    func unusableManifestIsRefusedAndLeftAsItWas(manifest: String, reason: String) throws {
        let temporary = try TemporaryDirectory()
        try makeContainer(temporary)
        try temporary.write(manifest, to: "container/container.json")
        let before = try snapshot(temporary)

        let error = try #require(throws: ContainerError.self) {
            try Container.openForWriting(at: temporary.child("container"), options: options())
        }
        guard case .badManifest(let path, let message) = error else {
            Issue.record("expected .badManifest, got \(error)")
            return
        }
        #expect(path == temporary.child("container/container.json"))
        #expect(message.contains(reason), "\(message)")
        #expect(try snapshot(temporary) == before)
    }

    // MARK: - Location

    @Test(arguments: [
        ("/explicit", ["TRIPBOARD_CONTAINER": "/env", "HOME": "/home/u"], "/explicit"),
        (nil, ["TRIPBOARD_CONTAINER": "/env", "XDG_DATA_HOME": "/data", "HOME": "/home/u"], "/env"),
        ("", ["TRIPBOARD_CONTAINER": "/env"], "/env"),
        (nil, ["TRIPBOARD_CONTAINER": "", "XDG_DATA_HOME": "/data", "HOME": "/home/u"], "/data/tripboard/shared-container"),
        (nil, ["XDG_DATA_HOME": "relative/data", "HOME": "/home/u"], "/home/u/.local/share/tripboard/shared-container"),
        (nil, ["HOME": "/home/u"], "/home/u/.local/share/tripboard/shared-container"),
    ] as [(String?, [String: String], String)])
    func locationFollowsFlagThenEnvironmentThenXDG(explicit: String?, environment: [String: String], expected: String) throws {
        #expect(try ContainerLocation.resolve(explicit: explicit, environment: environment) == expected)
    }

    @Test(arguments: [[:], ["HOME": "relative"], ["XDG_DATA_HOME": "relative"]])
    func noUsableLocationIsAnError(environment: [String: String]) {
        #expect(throws: ContainerError.self) { try ContainerLocation.resolve(explicit: nil, environment: environment) }
    }
}
