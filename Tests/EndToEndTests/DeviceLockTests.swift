import Foundation
import Testing
import TripBoardSystem

/// The device lock with the built executables (docs/security.md, "The device lock"): a passcode,
/// the keybag in the device directory, the unlocked keys in the kernel keyring — here the run's
/// session keyring (`TRIPBOARD_KEYRING=session`, tools/test), except where a test says otherwise.
@Suite(.enabled(if: KernelKeyring.unavailability(anchor: .session) == nil, "the kernel keyring is unavailable here"))
struct DeviceLockTests {
    /// A container and a device of its own.
    final class Device: @unchecked Sendable {
        // @unchecked: immutable after init.
        let test: TestContainer
        let environment: [String: String]
        let directory: String

        init(_ name: String = "phone", environment extra: [String: String] = [:]) throws {
            test = try TestContainer()
            environment = try BackupRestoreTests.device(test, name).merging(extra) { $1 }
            directory = environment["TRIPBOARD_DEVICE_DIR"]!
        }

        deinit { try? dropKeyring() }

        @discardableResult
        func app(_ arguments: String..., stdin: String? = nil, environment extra: [String: String] = [:]) throws -> ProcessResult {
            try test.app(arguments: arguments, stdin: stdin, environment: environment.merging(extra) { $1 })
        }

        func status() throws -> [String: Any] {
            let result = try app("device", "status", "--json")
            try #require(result.status == 0, "\(result)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        }

        func state() throws -> String? { try status()["state"] as? String }

        /// What a reboot does to the device: its keyring is gone (docs/security.md says how).
        func dropKeyring(anchor: KernelKeyring.Anchor = .session) throws {
            guard let fingerprint = try? status()["device"] as? String,
                  let keyring = try KernelKeyring.search(anchor.serial, type: "keyring", description: "tripboard:device:\(fingerprint)") else { return }
            try KernelKeyring.unlink(keyring, from: anchor.serial)
        }

        func file(_ name: String) -> Data? { FileManager.default.contents(atPath: directory + "/" + name) }
    }

    @Test func theLockGoesFromStateToStateAsAPhoneDoes() throws {
        let device = try Device()
        #expect(try device.state() == "no-passcode")
        #expect(try device.status()["readableClasses"] as? [String] == ["complete", "complete-unless-open", "until-first-unlock", "always"])
        #expect(try device.app("device", "lock").status == 64, "no passcode: nothing to lock")

        // Too short: refused before anything exists, the device key included.
        let short = try device.app("device", "passcode", "set", stdin: "12345\n")
        #expect(short.status == 64 && short.stderr.contains("at least 6 characters"), "\(short)")
        #expect(!FileManager.default.fileExists(atPath: device.directory))

        let set = try device.app("device", "passcode", "set", stdin: "river-stone\n")
        #expect(set.status == 0 && set.stderr.contains("passcode set; unlocked until"), "\(set)")
        var status = try device.status()
        #expect(status["state"] as? String == "unlocked" && status["passcode"] as? Bool == true && status["autoLockSeconds"] as? Int == 300)
        let locksAt = try #require(status["locksAt"] as? String)
        let deadline = try #require(Timestamp(iso8601: locksAt)).secondsSinceEpoch - Timestamp.now().secondsSinceEpoch
        #expect((290...301).contains(deadline), "locks five minutes after the unlock: \(locksAt)")
        #expect(try device.app("device", "passcode", "set", stdin: "other-stone\n").status == 64, "set twice")
        let keybag = try #require(device.file("keybag.json"))

        #expect(try device.app("device", "lock").status == 0)
        status = try device.status()
        #expect(status["state"] as? String == "locked" && status["locksAt"] is NSNull)
        #expect(status["readableClasses"] as? [String] == ["until-first-unlock", "always"])

        let wrong = try device.app("device", "unlock", stdin: "river-stones\n")
        #expect(wrong.status == 65 && wrong.stderr == "error: wrong passcode (1 failed attempt in a row)\n", "\(wrong)")
        #expect(try device.status()["failedAttempts"] as? Int == 1)
        #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 0)
        status = try device.status()
        #expect(status["state"] as? String == "unlocked" && status["failedAttempts"] as? Int == 0)

        // A reboot: the keyring goes, and with it even the until-first-unlock key.
        try device.dropKeyring()
        status = try device.status()
        #expect(status["state"] as? String == "locked-since-start" && status["readableClasses"] as? [String] == ["always"])
        // The keychain says so rather than list every item as locked, with --json too.
        for json in [false, true] {
            let list = try json ? device.app("keychain", "list", "--json") : device.app("keychain", "list")
            #expect(list.status == 69 && list.stdout.isEmpty
                    && list.stderr == "error: the device has not been unlocked since it started; `app device unlock`\n", "\(list)")
        }
        #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 0)
        let unlocked = try device.app("keychain", "list")
        #expect(unlocked.status != 69, "unlocked: no longer refused for the lock (this device has no container: 66) \(unlocked)")
        #expect(try device.state() == "unlocked")
        #expect(device.file("keybag.json") == keybag, "locking and unlocking never write the keybag")

        // Change: the old passcode no longer opens, the new one does; new class keys (a new
        // keybag id), the old ones kept in it, and the device left unlocked.
        let change = try device.app("device", "passcode", "change", stdin: "river-stone\nsea-glass-7\n")
        #expect(change.status == 0, "\(change)")
        #expect(try device.status()["keybag"] as? String != status["keybag"] as? String, "new class keys")
        #expect(try device.state() == "unlocked")
        try device.app("device", "lock")
        #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 65)
        #expect(try device.app("device", "unlock", stdin: "sea-glass-7\n").status == 0)

        // Remove: always unlocked again, the kernel's copies gone.
        #expect(try device.app("device", "passcode", "remove", stdin: "sea-glass-7\n").status == 0)
        #expect(try device.state() == "no-passcode")
        #expect(try device.app("device", "unlock", stdin: "sea-glass-7\n").status == 64)
        #expect(try device.app("device", "passcode", "set", stdin: "third-time\n").status == 0)
        #expect(try device.state() == "unlocked")
    }

    /// The kernel locks the device at the deadline: no TripBoard process runs meanwhile.
    @Test func theAutoLockHoldsWithNoProcessRunning() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", "--auto-lock", "2s", stdin: "river-stone\n").status == 0)
        #expect(try device.state() == "unlocked")
        Thread.sleep(forTimeInterval: 3)
        #expect(try device.state() == "locked")

        #expect(try device.app("device", "unlock", "--auto-lock", "never", stdin: "river-stone\n").status == 0)
        var status = try device.status()
        #expect(status["state"] as? String == "unlocked" && status["locksAt"] is NSNull && status["autoLockSeconds"] as? Int == 2,
                "an unlock's --auto-lock is for that unlock only")
        #expect(try device.app("device", "auto-lock", "1h").status == 0)
        try device.app("device", "lock")
        #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 0)
        status = try device.status()
        let locksAtText = try #require(status["locksAt"] as? String)
        let locksAt = try #require(Timestamp(iso8601: locksAtText))
        #expect(abs(locksAt.secondsSinceEpoch - Timestamp.now().secondsSinceEpoch - 3600) < 10)
        for bad in ["0s", "8d", "5", "five minutes", "1.5m", "99999999999999999999s"] {
            let refused = try device.app("device", "auto-lock", bad)
            #expect(refused.status == 64 && refused.stderr.contains("must be a duration"), "\(bad): \(refused)")
        }
    }

    /// After five wrong passcodes each attempt waits, longer and longer, and the wait survives a
    /// restart; during it even the right passcode is not tried (no Argon2id runs).
    @Test func wrongPasscodesWaitLongerAndLonger() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        try device.app("device", "lock")
        for attempt in 1...4 {
            let wrong = try device.app("device", "unlock", stdin: "wrong-\(attempt)\n")
            #expect(wrong.status == 65 && !wrong.stderr.contains("next attempt"), "\(wrong)")
        }
        let fifth = try device.app("device", "unlock", stdin: "wrong-5\n")
        #expect(fifth.status == 65 && fifth.stderr.contains("5 failed attempts in a row; the next attempt is possible at"), "\(fifth)")
        let started = Date()
        let waiting = try device.app("device", "unlock", stdin: "river-stone\n")
        #expect(waiting.status == 75 && waiting.stderr.contains("too many wrong passcodes (5 in a row): try again at"), "\(waiting)")
        #expect(Date().timeIntervalSince(started) < 0.3, "refused without deriving anything")
        let status = try device.status()
        #expect(status["failedAttempts"] as? Int == 5 && status["nextAttemptAt"] is String && status["state"] as? String == "locked")
        #expect(try device.app("device", "passcode", "change", stdin: "river-stone\nnew-stone\n").status == 75, "change waits too")

        // The minute passes (the record's last failure moved back): the right passcode opens.
        let path = device.directory + "/passcode-attempts.json"
        var record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        record["lastFailure"] = (record["lastFailure"] as! Int) - 61
        try JSONSerialization.data(withJSONObject: record).write(to: URL(fileURLWithPath: path))
        #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 0)
        #expect(try device.status()["failedAttempts"] as? Int == 0)
        #expect(!FileManager.default.fileExists(atPath: path))

        // A damaged record is the longest wait, not a way around it.
        try Data("{".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 75)
    }

    /// In the user keyring (the default), another login session of the user sees the unlock and
    /// can lock the device.
    @Test func anotherSessionOfTheUserSeesTheUnlock() throws {
        let device = try Device(environment: ["TRIPBOARD_KEYRING": "user"])
        defer { try? device.dropKeyring(anchor: .user) }
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        func inNewSession(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run("/bin/keyctl", ["session", "-", ProcessRunner.executable("app")] + arguments,
                                  environment: device.test.environment(device.environment))
        }
        let elsewhere = try inNewSession(["device", "status", "--json"])
        #expect(elsewhere.status == 0 && elsewhere.stdout.contains("\"state\" : \"unlocked\""), "\(elsewhere)")
        #expect(try inNewSession(["device", "lock"]).status == 0)
        #expect(try device.state() == "locked")
    }

    /// Where the kernel keyring is refused (a seccomp profile), nothing is pretended: the status
    /// says so, a passcode is not set, and no key goes to disk instead.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")))
    func withoutTheKernelKeyringNothingIsPretended() throws {
        let device = try Device()
        func refused(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
            try ProcessRunner.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "-e", "inject=add_key,keyctl:error=EPERM",
                                                      ProcessRunner.executable("app")] + arguments,
                                  environment: device.test.environment(device.environment), stdin: stdin.map { Array($0.utf8) })
        }
        let status = try refused(["device", "status"])
        #expect(status.status == 0 && status.stdout.contains("Keyring: unavailable: keyctl(GET_KEYRING_ID): Operation not permitted"), "\(status)")
        let set = try refused(["device", "passcode", "set"], stdin: "river-stone\n")
        #expect(set.status == 69 && set.stderr.contains("the kernel keyring is unavailable"), "\(set)")
        #expect(device.file("keybag.json") == nil)

        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        let json = try refused(["device", "status", "--json"])
        #expect(json.stdout.contains("\"state\" : \"keyring-unavailable\"") && json.stdout.contains("\"keyringAvailable\" : false"), "\(json)")
        let unlock = try refused(["device", "unlock"], stdin: "river-stone\n")
        #expect(unlock.status == 69, "\(unlock)")
        #expect(try device.status()["failedAttempts"] as? Int == 0, "not counted as a wrong passcode")
    }

    @Test func aForgottenPasscodeMakesANewKeybagAndKeepsTheOld() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        let old = try #require(try device.status()["keybag"] as? String)
        let unconfirmed = try device.app("device", "passcode", "reset", stdin: "new-stone-1\n")
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed)")
        #expect(try device.status()["keybag"] as? String == old)

        let reset = try device.app("device", "passcode", "reset", "--yes", stdin: "new-stone-1\n")
        #expect(reset.status == 0 && reset.stderr.contains("the old keybag is kept as keybag.\(old).retired.json"), "\(reset)")
        #expect(device.file("keybag.\(old).retired.json") != nil)
        let status = try device.status()
        #expect(status["keybag"] as? String != old && status["state"] as? String == "unlocked")
        try device.app("device", "lock")
        #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 65)
        #expect(try device.app("device", "unlock", stdin: "new-stone-1\n").status == 0)
    }

    /// Passcodes come from standard input or the terminal, never the command line; what is
    /// refused changes nothing.
    @Test func passcodesNeverComeFromTheCommandLine() throws {
        let device = try Device()
        let argv = try device.app("device", "passcode", "set", "river-stone")
        #expect(argv.status == 64 && !argv.stderr.contains("river-stone"), "\(argv)")
        let empty = try device.app("device", "passcode", "set", stdin: "\n")
        #expect(empty.status == 64, "\(empty)")
        let control = try device.app("device", "passcode", "set", stdin: "river\u{1b}stone\n")
        #expect(control.status == 64 && control.stderr.contains("without control characters"), "\(control)")
        #expect(!FileManager.default.fileExists(atPath: device.directory))
        #expect(try device.app("device", "passcode", "set", stdin: "ŕîvéř-štøñé\n").status == 0, "any text of six characters or more")
        let oneLine = try device.app("device", "passcode", "change", stdin: "ŕîvéř-štøñé\n")
        #expect(oneLine.status == 64 && oneLine.stderr.contains("two lines"), "\(oneLine)")
    }

    @Test func aDamagedOrForeignKeybagIsRefusedAndKept() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        let path = device.directory + "/keybag.json"
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data("{\"format\":1}".utf8).write(to: URL(fileURLWithPath: path))
        let damaged = try device.app("device", "unlock", stdin: "river-stone\n")
        #expect(damaged.status == 65 && damaged.stderr.contains("is damaged"), "\(damaged)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("{\"format\":1}".utf8))

        // The same directory on another machine: another device key.
        try original.write(to: URL(fileURLWithPath: path))
        let foreign = try device.app("device", "status", environment: ["TRIPBOARD_MACHINE_ID_FILE": device.test.root.path + "/other-machine"])
        #expect(foreign.status == 65 && foreign.stderr.contains("belongs to another device key"), "\(foreign)")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// The kernel's keys of this device's keybag: description → timeout (`perm`: none), from /proc/keys.
    static func kernelKeys(_ device: Device) throws -> [String: String] {
        let keybag = try #require(try device.status()["keybag"] as? String)
        var found: [String: String] = [:]
        for line in try String(contentsOfFile: "/proc/keys", encoding: .utf8).split(separator: "\n") {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 9, let name = columns.last.map(String.init), name.hasPrefix("tripboard:\(keybag):") else { continue }
            found[String(name.dropFirst("tripboard:\(keybag):".count).prefix { $0 != ":" })] = String(columns[3])
        }
        return found
    }

    /// An unlock that fails at any of its kernel calls leaves no key of `complete` data without
    /// its expiry, and the status says what can be read.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")))
    func anUnlockFailingAtAnyStepLeavesNoKeyWithoutItsExpiry() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        var failures = 0
        for call in 1...16 {
            try device.dropKeyring()
            let result = try ProcessRunner.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "-e", "trace=keyctl,add_key",
                                                                   "-e", "inject=keyctl,add_key:error=EIO:when=\(call)",
                                                                   ProcessRunner.executable("app"), "device", "unlock"],
                                               environment: device.test.environment(device.environment), stdin: Array("river-stone\n".utf8))
            if result.status != 0 { failures += 1 }
            let keys = try Self.kernelKeys(device)
            for name in ["complete", "complete-unless-open", "unlocked"] {
                #expect(keys[name] != "perm", "call \(call): \(name) without an expiry: \(keys) \(result)")
            }
            let state = try device.state()
            if keys["complete"] != nil || keys["complete-unless-open"] != nil {
                #expect(state == "unlocked", "call \(call): what can be read is said: \(keys)")
            }
        }
        #expect(failures > 5, "the injected failures reached the unlock")
    }

    /// A reset killed at any moment leaves a device with a passcode — the old one or the new — and
    /// never over an earlier retired copy.
    @Test func aResetKilledAtAnyMomentLeavesAPasscode() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "old-stone\n").status == 0)
        for round in 0..<8 {
            let running = try ProcessRunner.start(ProcessRunner.executable("app"), ["device", "passcode", "reset", "--yes"],
                                                  environment: device.test.environment(device.environment), stdin: Array("new-stone-\(round)\n".utf8))
            Thread.sleep(forTimeInterval: Double(round) * 0.07)
            running.kill()
            _ = running.wait()
            let status = try device.status()
            #expect(status["passcode"] as? Bool == true, "round \(round): \(status)")
            try device.app("device", "lock")
            // Each candidate tried afresh (the wrong ones would otherwise start the waits).
            let candidates = ["old-stone"] + (0...round).map { "new-stone-\($0)" }
            let opened = try candidates.contains { candidate in
                try? FileManager.default.removeItem(atPath: device.directory + "/passcode-attempts.json")
                return try device.app("device", "unlock", stdin: candidate + "\n").status == 0
            }
            #expect(opened, "round \(round): one of the passcodes opens it")
        }
        let retired = try FileManager.default.contentsOfDirectory(atPath: device.directory).filter { $0.hasSuffix(".json") && $0.contains("retired") }
        #expect(Set(retired).count == retired.count)
    }

    /// A keybag changed by hand is damaged (65), found before any passcode is tried and never
    /// counted as a wrong passcode; the attempt record's extremes neither crash nor lock for good.
    @Test func tamperingIsDamageNotAWrongPasscode() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        let path = device.directory + "/keybag.json"
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        var document = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        document["autoLockSeconds"] = 604_800
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
        let damaged = try device.app("device", "unlock", stdin: "river-stone\n")
        #expect(damaged.status == 65 && damaged.stderr.contains("MAC does not match"), "\(damaged)")
        try original.write(to: URL(fileURLWithPath: path))
        #expect(try device.status()["failedAttempts"] as? Int == 0)

        let attempts = URL(fileURLWithPath: device.directory + "/passcode-attempts.json")
        try device.app("device", "lock")
        for record in ["{\"failures\":9223372036854775807,\"lastFailure\":0}", "{\"failures\":5,\"lastFailure\":9223372036854775807}"] {
            try Data(record.utf8).write(to: attempts)
            let status = try device.app("device", "status", "--json")
            #expect(status.status == 0, "\(record): \(status)")
            let waited = try device.app("device", "unlock", stdin: "wrong-stone\n")
            #expect(waited.status == 75 || waited.status == 65, "\(record): \(waited)")
            let next = try #require(try JSONSerialization.jsonObject(with: Data(device.app("device", "status", "--json").stdout.utf8)) as? [String: Any])
            let atText = try #require(next["nextAttemptAt"] as? String)
            let at = try #require(Timestamp(iso8601: atText))
            #expect(at.secondsSinceEpoch - Timestamp.now().secondsSinceEpoch <= 3660, "never more than the longest wait: \(record)")
        }
        try? FileManager.default.removeItem(at: attempts)
        try FileManager.default.createSymbolicLink(atPath: attempts.path, withDestinationPath: "/etc/passwd")
        let linked = try device.app("device", "unlock", stdin: "river-stone\n")
        #expect(linked.status == 75, "a record that cannot be read is the longest wait: \(linked)")
        #expect(try String(contentsOf: attempts, encoding: .utf8).contains("\"failures\" : 9"), "and it is written so, to end")
    }

    @Test func lockingALockedDeviceSaysSoAndTheAutoLockChangesOnlyWhileUnlocked() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        #expect(try device.app("device", "lock").stderr == "locked\n")
        #expect(try device.app("device", "lock").stderr.contains("nothing to lock"))
        let locked = try device.app("device", "auto-lock", "never")
        #expect(locked.status == 69 && locked.stderr.contains("locked"), "\(locked)")
        #expect(try device.status()["autoLockSeconds"] as? Int == 300)
        let secret = try device.app("device", "unlock", "--auto-lock", "Hunter2Secret", stdin: "river-stone\n")
        #expect(secret.status == 64 && !secret.stderr.contains("Hunter2"), "\(secret)")
        for bad in ["+5m", "5M", "٥m"] {
            #expect(try device.app("device", "auto-lock", bad).status == 64, "\(bad)")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") {
            #expect(try device.app("device", "unlock", stdin: "river-stone\n").status == 0)
            let refused = try ProcessRunner.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "-e", "inject=add_key,keyctl:error=EPERM",
                                                                    ProcessRunner.executable("app"), "device", "lock"],
                                                environment: device.test.environment(device.environment))
            #expect(refused.status == 69, "a lock that could not be made is not said to be: \(refused)")
            #expect(try device.state() == "unlocked")
        }
    }

    /// The class keys never reach a file: with the device unlocked, the kernel's class keys (read
    /// as canaries) are in no file of the test's directory — the device directory and the
    /// container — and after a lock the kernel serves `complete` no more.
    @Test func noClassKeyReachesAFile() throws {
        let device = try Device()
        #expect(try device.app("device", "passcode", "set", stdin: "river-stone\n").status == 0)
        try device.app("trip", "add", "--name", "Lisbon", "--start", "2027-03-27", "--end", "2027-03-30")
        let keybag = try #require(try device.status()["keybag"] as? String)
        var canaries: [Data] = []
        for name in ["complete", "until-first-unlock", "complete-unless-open"] {
            let serial = try #require(try KernelKeyring.search(KernelKeyring.Anchor.session.serial, type: "user",
                                                               description: "tripboard:\(keybag):\(name)"))
            var bytes = [UInt8](repeating: 0, count: 32)
            #expect(try bytes.withUnsafeMutableBytes { try KernelKeyring.read(serial, into: $0) } == 32)
            canaries.append(Data(bytes))
        }
        for root in [device.test.root.path] {
            guard let files = FileManager.default.enumerator(atPath: root) else { continue }
            while let relative = files.nextObject() as? String {
                let path = root + "/" + relative
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                      attributes[.type] as? FileAttributeType == .typeRegular, (attributes[.size] as? Int ?? 0) < 64 << 20,
                      let contents = FileManager.default.contents(atPath: path) else { continue }
                for canary in canaries { #expect(contents.range(of: canary) == nil, "a class key in \(path)") }
            }
        }
        try device.app("device", "lock")
        #expect(try KernelKeyring.search(KernelKeyring.Anchor.session.serial, type: "user", description: "tripboard:\(keybag):complete") == nil)
    }
}
