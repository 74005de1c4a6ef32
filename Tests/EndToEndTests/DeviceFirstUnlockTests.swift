import Foundation
import Testing
import TripBoardSystem
import TripBoardTestSupport

/// What waits for the device's first unlock since the computer started, and what a lock takes out
/// of running processes (docs/security.md, "The device lock"): the widget's placeholder, `widget
/// --watch` and `sync watch` carrying on once unlocked, and no `complete` class key left in the
/// memory of a running `sync watch` or `widget --watch` after a lock.
@Suite(.serialized) struct DeviceFirstUnlockTests {
    static let passcode = "river-stone"

    static func within(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        try SyncWatchTests.within(seconds, condition) != nil
    }

    static func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    @Test func theWidgetShowsAPlaceholderUntilTheFirstUnlockAndThenTheTrip() throws {
        let device = try SyncDevice()
        try device.container.addTrip("Lisbon", start: "2027-03-27", end: "2027-03-30")
        let now = ["--now", "2027-03-01T09:00:00Z"]
        let widget = { (arguments: [String]) throws -> ProcessResult in
            try ProcessRunner.run("widget", arguments + now, environment: device.container.environment)
        }
        #expect(try widget([]).stdout.contains("Lisbon"), "no passcode: always unlocked")
        try device.ok("device", "passcode", "set", stdin: Self.passcode + "\n")
        defer { try? KeychainAccessibilityTests.restart(device) }
        #expect(try widget([]).stdout.contains("Lisbon"))
        try device.ok("device", "lock")
        #expect(try widget([]).stdout.contains("Lisbon"), "locked after a first unlock: the store (until-first-unlock) reads")

        try KeychainAccessibilityTests.restart(device)
        let placeholder = try widget([])
        #expect(placeholder.status == 0 && placeholder.stdout == "Unlock to see your next trip\n", "\(placeholder)")
        let json = try widget(["--json"])
        #expect(json.status == 0 && json.stdout.contains("\"status\" : \"locked\"") && !json.stdout.contains("Lisbon"), "\(json)")

        let watch = try ProcessRunner.start("widget", ["--watch"] + now, environment: device.container.environment)
        defer { watch.kill() }
        #expect(Self.within(10) { Self.text(watch.outputURL).contains("Unlock to see your next trip") }, "\(Self.text(watch.outputURL))")
        try device.ok("device", "unlock", stdin: Self.passcode + "\n")
        #expect(Self.within(5) { Self.text(watch.outputURL).contains("Lisbon") }, "the watch carries on after the unlock: \(Self.text(watch.outputURL))")
        watch.kill(signal: SIGTERM)
        #expect(watch.wait(timeout: 10).status == 0)
    }

    /// Every file under `container`'s root (the container, the device directory, archives) with
    /// its bytes: what a refused command must leave as it was.
    static func snapshot(_ container: TestContainer) -> [String: Data] {
        var files: [String: Data] = [:]
        let root = container.root.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [:] }
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory) else { continue }
            files[relative] = isDirectory.boolValue ? Data() : FileManager.default.contents(atPath: root + "/" + relative) ?? Data()
        }
        return files
    }

    /// The store's class (`until-first-unlock`) across the device's states, with the paths that
    /// open the store besides the widget and `sync watch` (above): locked after a first unlock,
    /// the widget, `backup`, `container salvage` and `container info` work, and `restore` once
    /// unlocked (it seals `complete` data); before the first unlock since start the widget shows
    /// its placeholder, `container info` says why the store is unreadable, and `backup`, `restore`
    /// and `salvage` are 69 with the hint, every file as it was.
    @Test(arguments: ["locked", "not unlocked since start"])
    func everyPathThatOpensTheStoreFollowsItsClass(state: String) throws {
        let (container, _) = try DamagedStoreTests.seeded(trips: 300, device: "a")
        let passphrase = BackupRestoreTests.passphrase
        let archive = container.root.path + "/before.age"
        #expect(try container.app(arguments: ["backup", "--output", archive], stdin: passphrase + "\n",
                                  environment: BackupRestoreTests.fast).status == 0)
        let damaged = try DamagedStoreTests.pages(of: "trips_live_by_start", type: "leaf", in: container)
        try container.appOK("device", "passcode", "set", stdin: Self.passcode + "\n")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try container.appOK("device", "status", "--json").utf8)) as? [String: Any])
        let fingerprint = try #require(status["device"] as? String)
        let anchor = KernelKeyring.Anchor.session
        defer {
            if let keyring = try? KernelKeyring.search(anchor.serial, type: "keyring", description: "tripboard:device:\(fingerprint)") {
                try? KernelKeyring.unlink(keyring, from: anchor.serial)
            }
        }
        let opens = state == "locked"
        if opens {
            try container.appOK("device", "lock")
        } else if let keyring = try KernelKeyring.search(anchor.serial, type: "keyring", description: "tripboard:device:\(fingerprint)") {
            try KernelKeyring.unlink(keyring, from: anchor.serial)  // as after a restart: no key in the kernel
        }
        func refused(_ result: ProcessResult, _ what: String) {
            #expect(result.status == 69 && result.stderrLines.count == 1 && result.stderr.contains("has not been unlocked since it started"),
                    "\(what) before the first unlock: \(result)")
        }
        var before = Self.snapshot(container)

        let widget = try ProcessRunner.run("widget", ["--now", "2027-01-01T09:00:00Z"], environment: container.environment)
        #expect(widget.status == 0 && widget.stdout.contains(opens ? "Trip " : "Unlock to see your next trip"), "widget \(state): \(widget)")

        // `container info` reads the store when it can, and says why not when it cannot.
        let info = try container.app("container", "info")
        #expect(info.status == 0 && info.stdout.contains(opens ? "store sealed (until-first-unlock)" : "the device has not been unlocked since it started"),
                "container info \(state): \(info)")

        let later = container.root.path + "/later.age"
        let backup = try container.app(arguments: ["backup", "--output", later], stdin: passphrase + "\n", environment: BackupRestoreTests.fast)
        if opens { #expect(backup.status == 0, "backup \(state): \(backup)") } else { refused(backup, "backup") }

        let target = container.root.path + "/restored"
        let restore = try container.app(arguments: ["restore", archive], stdin: passphrase + "\n", environment: ["TRIPBOARD_CONTAINER": target])
        // A restore seals the tickets and keychain items again under the device's class keys,
        // `complete` among them: refused while locked, as documented (docs/backup.md), then done
        // once unlocked; the restored store reads while locked again.
        if opens {
            #expect(restore.status == 69 && restore.stderr == "error: the device is locked; `app device unlock`\n", "restore \(state): \(restore)")
            #expect(!FileManager.default.fileExists(atPath: target), "restore made nothing")
            try container.appOK("device", "unlock", stdin: Self.passcode + "\n")
            let unlocked = try container.app(arguments: ["restore", archive], stdin: passphrase + "\n", environment: ["TRIPBOARD_CONTAINER": target])
            #expect(unlocked.status == 0, "restore once unlocked: \(unlocked)")
            try container.appOK("device", "lock")
            let listed = try container.app(arguments: ["trip", "list"], environment: ["TRIPBOARD_CONTAINER": target])
            #expect(listed.status == 0 && listed.stdout.contains("Trip 299"), "the restored store reads while locked: \(listed)")
        } else {
            refused(restore, "restore")
            #expect(!FileManager.default.fileExists(atPath: target), "restore made nothing")
            #expect(Self.snapshot(container) == before, "nothing written before the first unlock")
        }

        try DamagedStoreTests.damage(container, pages: damaged)
        before = Self.snapshot(container)
        let salvage = try container.app("container", "salvage", "--json")
        if opens {
            #expect(salvage.status == 0 && salvage.stdout.contains("\"salvaged\""), "salvage \(state): \(salvage)")
            #expect(try container.appOK("trip", "list").contains("Trip 299"))
        } else {
            refused(salvage, "salvage")
        }
        if !opens { #expect(Self.snapshot(container) == before, "nothing written before the first unlock") }
    }

    @Test func syncWatchStartedBeforeTheFirstUnlockWaitsThenSyncs() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("device", "passcode", "set", stdin: Self.passcode + "\n")
        defer { try? KeychainAccessibilityTests.restart(a) }
        try KeychainAccessibilityTests.restart(a)
        let trip = try b.container.addTrip("Porto")
        try b.sync()

        let watch = try ProcessRunner.start("app", ["sync", "watch", "--json"], environment: a.container.environment)
        defer { watch.kill() }
        #expect(Self.within(10) { Self.text(watch.errorURL).contains("has not been unlocked since it started") }, "\(Self.text(watch.errorURL))")
        usleep(1_500_000)
        #expect(try SyncTests.tripName(a, trip).isEmpty, "nothing synced before the unlock")
        #expect(!Self.text(watch.errorURL).contains("error:"))

        try a.ok("device", "unlock", stdin: Self.passcode + "\n")
        #expect(try SyncWatchTests.within(10) { try SyncTests.tripName(a, trip) == "Porto" } != nil, "\(Self.text(watch.errorURL))")
        watch.kill(signal: SIGTERM)
        let result = watch.wait(timeout: 10)
        #expect(result.status == 0 && result.stderr.contains("stopped watching"), "\(result)")
    }

    /// A SIGTERM while waiting for the first unlock ends the watch cleanly.
    @Test func aWatchWaitingForTheFirstUnlockStopsOnSIGTERM() throws {
        let (server, a, _) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("device", "passcode", "set", stdin: Self.passcode + "\n")
        try KeychainAccessibilityTests.restart(a)
        let watch = try ProcessRunner.start("app", ["sync", "watch"], environment: a.container.environment)
        defer { watch.kill() }
        #expect(Self.within(10) { Self.text(watch.errorURL).contains("has not been unlocked since it started") })
        watch.kill(signal: SIGTERM)
        let result = watch.wait(timeout: 5)
        #expect(result.status == 0 && !result.wasSignaled && result.stderr.contains("stopped watching"), "\(result)")
    }

    /// After `device lock`, the bytes of the `complete` class key are in no running TripBoard
    /// process: `gcore` of a `sync watch` that used the key while unlocked (it synced a
    /// when-unlocked keychain item) and of a `widget --watch`, searched for the key read from the
    /// kernel before the lock.
    @Test func aLockLeavesNoCompleteClassKeyInARunningProcess() throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        try a.ok("device", "passcode", "set", stdin: Self.passcode + "\n")
        defer { try? KeychainAccessibilityTests.restart(a) }
        try a.ok("keychain", "set", "svc.when-unlocked", "ana", "--accessibility", "when-unlocked", stdin: "first\n")
        try a.container.addTrip("Lisbon", start: "2027-03-27", end: "2027-03-30")

        let status = try #require(try JSONSerialization.jsonObject(with: Data(try a.ok("device", "status", "--json").utf8)) as? [String: Any])
        let keybag = try #require(status["keybag"] as? String)
        let serial = try #require(try KernelKeyring.search(KernelKeyring.Anchor.session.serial, type: "user", description: "tripboard:\(keybag):complete"))
        var canary = [UInt8](repeating: 0, count: 32)
        #expect(try canary.withUnsafeMutableBytes { try KernelKeyring.read(serial, into: $0) } == 32)

        let watch = try ProcessRunner.start("app", ["sync", "watch", "--json"], environment: a.container.environment)
        defer { watch.kill() }
        let widget = try ProcessRunner.start("widget", ["--watch", "--now", "2027-03-01T09:00:00Z"], environment: a.container.environment)
        defer { widget.kill() }
        // The watch's first sync pushes the when-unlocked item: it opened the item with the class key.
        #expect(try SyncWatchTests.within(20) { try server.psql("SELECT count(*) FROM tripboard.records WHERE kind = 'secret'") == "1" } != nil,
                "\(Self.text(watch.errorURL))")
        #expect(Self.within(10) { Self.text(widget.outputURL).contains("Lisbon") })

        try a.ok("device", "lock")
        // Another sync while locked (B's change announced): the keychain waits, the store syncs.
        let trip = try b.container.addTrip("Porto")
        try b.sync()
        #expect(try SyncWatchTests.within(20) { try SyncTests.tripName(a, trip) == "Porto" } != nil, "\(Self.text(watch.errorURL))")

        let cores = a.container.root.path + "/cores"
        try FileManager.default.createDirectory(atPath: cores, withIntermediateDirectories: true)
        // Each core holds what the process surely has in memory (the search works), and not the key.
        for (name, process, marker) in [("sync-watch", watch, "Porto"), ("widget", widget, "Lisbon")] {
            let prefix = cores + "/" + name
            let dumped = try ProcessRunner.run("/usr/bin/gcore", ["-o", prefix, String(process.processIdentifier)],
                                               environment: ProcessRunner.environment(container: nil))
            let core = prefix + "." + String(process.processIdentifier)
            let bytes = try #require(FileManager.default.contents(atPath: core), "gcore of \(name): \(dumped)")
            #expect(bytes.count > 1 << 20, "a real core of \(name): \(bytes.count) bytes")
            #expect(bytes.range(of: Data(marker.utf8)) != nil, "\(name)'s core holds \(marker)")
            #expect(bytes.range(of: Data(canary)) == nil, "the complete class key is in \(name)'s memory after the lock")
            try FileManager.default.removeItem(atPath: core)
        }
        watch.kill(signal: SIGTERM)
        widget.kill(signal: SIGTERM)
    }
}
