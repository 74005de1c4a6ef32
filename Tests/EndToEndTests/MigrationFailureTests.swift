import Foundation
import Testing
import TripBoardModel

/// `container-migration` refusing bad input: one `error:` line, a documented exit status, and
/// neither the old location nor the container changed.
@Suite struct MigrationFailureTests {
    @Test func aMissingFromDirectoryIsNotFound() throws {
        let setup = try MigrationSetup()
        let result = try ProcessRunner.run("container-migration", ["--from", setup.legacy + "-nowhere"], environment: setup.environment)
        #expect(result.status == 66, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: there is no version-1 TripBoard directory"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: setup.container.path))
    }

    /// A record the new store would refuse is found by the plan, after the lock was taken and
    /// while the new store was already being built beside it: refused with nothing left behind.
    @Test func aRecordTheNewStoreWouldRefuseStopsThePlanAndLeavesNothing() throws {
        var fixture = LegacyFixture.standard()
        fixture.trips[1].end_date = "2027-02-01"  // before its start
        let setup = try MigrationSetup(fixture)
        let before = try setup.legacySnapshot()
        let result = try setup.migrate()
        #expect(result.status == 65, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains("is before the start date"), "\(result)")
        #expect(try setup.legacySnapshot() == before)
        for name in ["migration", "store", "attachments"] {
            #expect(!FileManager.default.fileExists(atPath: setup.container.path + "/" + name), "\(name) was left")
        }
    }

    @Test func withoutAnyVersionOneDataThereIsNothingToMigrate() throws {
        let setup = try MigrationSetup()
        let result = try setup.migrate(from: false, environment: ["TRIPBOARD_LEGACY_DIR": setup.legacy + "-nowhere"])
        #expect(result.status == 0 && result.stdout.contains("Nothing to migrate"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: setup.container.path))
    }

    @Test func usageErrorsAreRefusedBeforeAnythingIsTouched() throws {
        let setup = try MigrationSetup()
        for arguments in [["--bogus"], ["extra"], ["--from"]] {
            let result = try ProcessRunner.run("container-migration", arguments, environment: setup.environment)
            #expect(result.status == 64, "\(arguments): \(result)")
        }
        let help = try ProcessRunner.run("container-migration", ["--help"], environment: setup.environment)
        #expect(help.status == 0 && help.stdout.contains("usage: container-migration"))
        #expect(!FileManager.default.fileExists(atPath: setup.container.path))
    }

    /// A damaged page, a file of garbage, a newer schema, a directory that is not version 1.
    @Test(arguments: ["damaged page", "garbage", "newer schema", "no store"])
    func anUnusableLegacyStoreIsRefusedUntouched(damage: String) throws {
        var fixture = LegacyFixture.standard(trips: 40)
        fixture.walOnly = false
        let setup = try MigrationSetup(fixture)
        let store = setup.legacy + "/TripBoard.sqlite"
        switch damage {
        case "damaged page":
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
            try handle.seek(toOffset: 4096 + 8)
            handle.write(Data(repeating: 0xA5, count: 3000))
            try handle.close()
        case "garbage":
            try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: store))
        case "newer schema":
            #expect(try ProcessRunner.run("/usr/bin/sqlite3", [store, "PRAGMA user_version = 2"], environment: ProcessRunner.environment(container: nil)).status == 0)
        default:
            try FileManager.default.removeItem(atPath: store)
        }
        let before = try setup.legacySnapshot()
        let result = try setup.migrate()
        #expect(result.status == 65, "\(damage): \(result)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(result)")
        #expect(try setup.legacySnapshot() == before, "\(damage): the old location must be left byte for byte")
        #expect(!FileManager.default.fileExists(atPath: setup.container.path), "\(damage): no container is created")
    }

    /// A container's own store named as TripBoard 1's data (`--from CONTAINER/store`) is refused as
    /// what it is, not as "a newer schema: update TripBoard", which would send the user astray.
    @Test func aContainersStoreNamedAsTheOldDataIsRefusedAsWhatItIs() throws {
        let setup = try MigrationSetup()
        let other = try TestContainer()
        _ = try other.addTrip("Lisbon")
        let store = other.path + "/store"
        let before = try Data(contentsOf: URL(fileURLWithPath: store + "/TripBoard.sqlite"))
        let result = try ProcessRunner.run("container-migration", ["--from", store], environment: setup.environment)
        #expect(result.status == 65 && result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.contains("is not a version-1 TripBoard store (it is a TripBoard container's sealed store, not TripBoard 1's data)"),
                "\(result)")
        #expect(!result.stderr.contains("update TripBoard"), "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/TripBoard.sqlite")) == before)
        #expect(!FileManager.default.fileExists(atPath: setup.container.path), "no container is created")
    }

    @Test func aContainerWithTripsIsRefusedUnlessMerging() throws {
        let setup = try MigrationSetup()
        let existing = try setup.container.addTrip("Already here")
        let before = try setup.legacySnapshot()
        let refused = try setup.migrate()
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains(setup.container.path) && refused.stderr.contains(setup.legacy) && refused.stderr.contains("--merge"),
                "both paths named: \(refused)")
        #expect(try setup.legacySnapshot() == before)

        let merged = try setup.migrate(["--merge", "--json"])
        #expect(merged.status == 0, "\(merged)")
        #expect(merged.stdout.contains(#""trips" : 3"#), "\(merged)")
        let trips = try setup.container.app(arguments: ["trip", "list"], environment: setup.environment)
        #expect(trips.stdout.contains("Already here") && trips.stdout.contains("Trip 2"), "\(trips)")
        #expect(!FileManager.default.fileExists(atPath: setup.legacy))
        #expect(try setup.container.integrity() == "ok")
        _ = existing
    }

    @Test func aLockedContainerIsBusy() throws {
        let setup = try MigrationSetup()
        try setup.container.addTrip()
        #expect(try setup.container.sqlite("DELETE FROM trips").status == 0)
        let holder = try ProcessRunner.start("/usr/bin/flock", ["-x", setup.container.path + "/container.lock", "sleep", "5"],
                                             environment: ProcessRunner.environment(container: nil))
        defer { holder.kill(); _ = holder.wait() }
        usleep(200_000)
        let before = try setup.legacySnapshot()
        let result = try setup.migrate(environment: ["TRIPBOARD_LOCK_TIMEOUT": "0.3"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("container is busy"), "\(result)")
        #expect(try setup.legacySnapshot() == before)
        #expect(!FileManager.default.fileExists(atPath: setup.container.path + "/migration"))
    }

    /// ENOSPC on a small tmpfs: refused cleanly before anything is written when the plan sees too
    /// little space; and when the disk fills during the copy, the run fails, the old location stays
    /// complete, and a re-run after freeing space finishes.
    @Test func aFullDiskFailsCleanlyAndARerunAfterFreeingSpaceFinishes() throws {
        let mountPoint = NSTemporaryDirectory() + "tripboard-tmpfs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let mount = try ProcessRunner.run("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint],
                                          environment: ProcessRunner.environment(container: nil))
        guard mount.status == 0 else {
            print("skipping the ENOSPC test: mount -t tmpfs is not allowed here (\(mount.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
            return
        }
        defer { _ = try? ProcessRunner.run("/bin/umount", ["-l", mountPoint], environment: ProcessRunner.environment(container: nil)) }
        // The legacy directory is on /dev/shm, another filesystem: every file is copied onto the small tmpfs.
        let setup = try MigrationSetup(.standard(trips: 4, fileSize: 120_000), crossDevice: true, containerBase: mountPoint)
        let filler = mountPoint + "/filler"
        func fill(leaving bytes: Int64) throws {
            try? FileManager.default.removeItem(atPath: filler)
            let attributes = try FileManager.default.attributesOfFileSystem(forPath: mountPoint)
            let free = (attributes[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
            let size = max(0, free - bytes)
            _ = FileManager.default.createFile(atPath: filler, contents: Data(count: Int(size)))
        }
        let before = try setup.legacySnapshot()

        try fill(leaving: 200_000)
        let refused = try setup.migrate()
        #expect(refused.status == 74, "\(refused)")
        #expect(refused.stderr.contains("not enough free space"), "\(refused)")
        #expect(try setup.legacySnapshot() == before)
        #expect(!FileManager.default.fileExists(atPath: setup.container.path + "/migration/journal.json"))

        try FileManager.default.removeItem(atPath: filler)
        let crashed = try setup.migrate(environment: ["TRIPBOARD_CRASH_AT": "migration.store"])
        #expect(crashed.wasSignaled, "\(crashed)")
        // Less room than the resumed run writes (the copies are staged already; the store, the
        // preferences and the keychain remain): 100 KB was enough once sign-in became one transaction.
        try fill(leaving: 40_000)
        let full = try setup.migrate()
        #expect(full.status == 74, "ENOSPC during the copy: \(full)")
        #expect(full.stderrLines.count == 1, "\(full)")
        #expect(try setup.problems(final: false) == [], "the old location is still complete")

        try FileManager.default.removeItem(atPath: filler)
        let finished = try setup.migrate()
        #expect(finished.status == 0, "\(finished)")
        #expect(try setup.problems(final: true) == [])
    }
}
