import Foundation
import Testing

/// The failure policy for the store and the container (architecture §5): say what, where and what
/// to do; exit non-zero; leave every byte in place; never create an empty store instead.
@Suite struct StoreFailureTests {
    @Test func garbageStoreIsReportedAndLeftByteForByte() throws {
        let container = try TestContainer()
        try container.addTrip()
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try FileManager.default.removeItem(atPath: container.storePath + "-wal")
        try FileManager.default.removeItem(atPath: container.storePath + "-shm")
        try garbage.write(to: URL(fileURLWithPath: container.storePath))
        for arguments in [["trip", "list"], ["trip", "add", "--name", "X", "--start", "2026-01-01", "--end", "2026-01-02"], ["export"]] {
            let result = try container.app(arguments: arguments)
            #expect(result.status == 65, "\(result)")
            #expect(result.stderr.contains("cannot be read") && result.stderr.contains(container.storePath), "\(result)")
            #expect(result.stderrLines.count == 1)
        }
        // Commands that do not need the store work without it, and leave it as it is.
        #expect(try container.appOK("prefs", "get", "theme") == "system")
        #expect(try Data(contentsOf: URL(fileURLWithPath: container.storePath)) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container.path + "/store").sorted() == ["TripBoard.sqlite", "TripBoard.sqlite-key"])
    }

    @Test func newerSchemaIsRefusedAndLeftAsIs() throws {
        let container = try TestContainer()
        try container.addTrip()
        _ = try container.sqlite("PRAGMA user_version = 42")
        let before = try container.state()
        let result = try container.app("trip", "list")
        #expect(result.status == 65)
        #expect(result.stderr.contains("schema version 42, newer than this build understands"), "\(result)")
        #expect(try container.state() == before)
    }

    @Test func missingStoreIsNeverReplacedByAnEmptyOne() throws {
        let container = try TestContainer()
        try container.addTrip()
        for suffix in ["", "-wal", "-shm"] { try FileManager.default.removeItem(atPath: container.storePath + suffix) }
        let result = try container.app("trip", "list")
        #expect(result.status == 66, "\(result)")
        #expect(result.stderr.contains("refusing to create an empty store"))
        #expect(!FileManager.default.fileExists(atPath: container.storePath))
    }

    @Test func storeThatIsADirectoryIsRefused() throws {
        let container = try TestContainer()
        try container.addTrip()
        for suffix in ["", "-wal", "-shm"] { try FileManager.default.removeItem(atPath: container.storePath + suffix) }
        try FileManager.default.createDirectory(atPath: container.storePath, withIntermediateDirectories: false)
        let result = try container.app("trip", "list")
        #expect(result.status != 0)
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(result)")
    }

    @Test func damagedManifestIsReportedAndLeftAlone() throws {
        let container = try TestContainer()
        try container.addTrip()
        let manifest = URL(fileURLWithPath: container.path + "/container.json")
        try Data("{\"layoutVersion\": 99, \"createdAt\": \"x\", \"createdBy\": \"y\", \"storeCreated\": true}".utf8).write(to: manifest)
        let before = try container.state()
        let result = try container.app("trip", "list")
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("layout version 99"))
        #expect(try container.state() == before)
    }

    @Test(arguments: ["store", "preferences", "tmp"])
    func symbolicLinksInsideTheContainerAreNotFollowed(directory: String) throws {
        let container = try TestContainer()
        try container.addTrip()
        let elsewhere = container.root.appendingPathComponent("elsewhere").path
        let target = container.path + "/" + directory
        try FileManager.default.moveItem(atPath: target, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: elsewhere)
        let arguments = directory == "preferences" ? ["prefs", "set", "theme", "dark"]
            : directory == "tmp" ? ["prefs", "set", "theme", "light"] : ["trip", "list"]
        let result = try container.app(arguments: arguments)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("symbolic links are not followed"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere + "/preferences.json"))
    }

    @Test func symbolicLinkAsTheStoreFileIsRefused() throws {
        let container = try TestContainer()
        try container.addTrip()
        let elsewhere = container.root.appendingPathComponent("other.sqlite").path
        try FileManager.default.moveItem(atPath: container.storePath, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: container.storePath, withDestinationPath: elsewhere)
        let result = try container.app("trip", "list")
        #expect(result.status != 0, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
    }

    @Test func filesAreOwnerOnlyWhateverTheUmask() throws {
        let container = try TestContainer()
        // Run through sh so the child starts with a permissive umask.
        let app = ProcessRunner.executable("app")
        let result = try ProcessRunner.run("/bin/sh", ["-c", "umask 000; \"$0\" trip add --name A --start 2026-01-01 --end 2026-01-02 && \"$0\" prefs set theme dark", app],
                                           environment: container.environment)
        #expect(result.status == 0, "\(result)")
        let enumerator = try #require(FileManager.default.enumerator(atPath: container.path))
        var checked = 0
        while let relative = enumerator.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: container.path + "/" + relative)
            let mode = (attributes[.posixPermissions] as? Int) ?? -1
            let isDirectory = attributes[.type] as? FileAttributeType == .typeDirectory
            #expect(mode == (isDirectory ? 0o700 : 0o600), "\(relative) has mode \(String(mode, radix: 8))")
            checked += 1
        }
        #expect(checked >= 12)
        let rootMode = try FileManager.default.attributesOfItem(atPath: container.path)[.posixPermissions] as? Int
        #expect(rootMode == 0o700)
    }

    @Test func lockedContainerFailsAsBusyNamingTheHolder() throws {
        let container = try TestContainer()
        try container.addTrip()
        let holder = try ProcessRunner.start("/usr/bin/flock", ["-x", container.path + "/container.lock", "sleep", "5"],
                                             environment: ProcessRunner.environment(container: nil))
        defer { holder.kill(); _ = holder.wait() }
        usleep(200_000)
        let started = Date()
        let result = try container.app(arguments: ["trip", "list"], environment: ["TRIPBOARD_LOCK_TIMEOUT": "0.5"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("busy") && result.stderr.contains("pid \(holder.processIdentifier)"), "\(result)")
        #expect(elapsed < 3)
    }
}
