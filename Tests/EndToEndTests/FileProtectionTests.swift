import Foundation
import Testing
import TripBoardSystem

/// Tickets sealed by protection class (docs/security.md, "Sealed files") with the built
/// executables, the run's session keyring and a real PostgreSQL: each lock state × operation
/// (share, export, thumbnail, sync up and down, backup, restore, migration), the canary no byte of
/// which may reach the container in the clear, a copy of the container on another device, and
/// the format read by a second implementation (`tools/lib/sealed_file.py`, PyNaCl).
@Suite(.serialized) struct FileProtectionTests {
    typealias State = KeychainAccessibilityTests.State
    static let passcode = KeychainAccessibilityTests.passcode

    /// Whether `complete` and `complete-unless-open` files open in `state`.
    static func unlocked(_ state: State) -> Bool { KeychainAccessibilityTests.unlocked(state) }

    /// A ticket whose text carries `marker`, shared into `trip` of `device`; its attachment id.
    static func share(_ device: SyncDevice, trip: String, marker: String, extra: [String] = []) throws -> (ProcessResult, String?) {
        let pdf = TicketPDF.make(lines: ["BOARDING PASS", marker, "TP 1351 LIS CDG", "12 DEC 2026 07:35"])
        let path = try device.container.input(pdf, as: marker + ".pdf")
        let result = try device.container.share([path, "--trip", trip, "--json"] + extra)
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (result, (object?["attachment"] as? [String: Any])?["id"] as? String)
    }

    /// Every file under `attachments/`, `caches/` and `tmp/` of `container` that holds one of
    /// `needles` (the canaries, `%PDF-`, the PNG signature).
    static func plaintextFiles(_ container: TestContainer, _ needles: [Data]) -> [String] {
        var found: [String] = []
        for directory in ["attachments", "caches", "tmp"] {
            let base = container.path + "/" + directory
            guard let enumerator = FileManager.default.enumerator(atPath: base) else { continue }
            while let relative = enumerator.nextObject() as? String {
                guard let data = FileManager.default.contents(atPath: base + "/" + relative) else { continue }
                if needles.contains(where: { data.range(of: $0) != nil }) { found.append(directory + "/" + relative) }
            }
        }
        return found
    }

    /// The whole eight-byte PNG signature: a shorter needle turns up in ciphertext by chance.
    static let png = Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

    @Test(arguments: State.allCases)
    func eachOperationInEachState(state: State) throws {
        let (server, a, b) = try SyncTests.twoDevices()
        defer { withExtendedLifetime(server) {} }
        defer { try? KeychainAccessibilityTests.restart(a) }
        if state.hasPasscode { try a.ok("device", "passcode", "set", stdin: Self.passcode + "\n") }
        let trip = try a.container.addTrip("Lisbon")
        let (sharedOpen, openID) = try Self.share(a, trip: trip, marker: "OPEN-TICKET")
        let (sharedComplete, completeID) = try Self.share(a, trip: trip, marker: "COMPLETE-TICKET", extra: ["--protection", "complete"])
        #expect(sharedOpen.status == 0 && sharedComplete.status == 0, "\(sharedOpen) \(sharedComplete)")
        let (openTicket, completeTicket) = (try #require(openID), try #require(completeID))
        try a.sync()
        try b.sync()
        let early = a.container.root.path + "/early.age"
        try a.ok("backup", "--output", early, stdin: BackupRestoreTests.passphrase + "\n", environment: BackupRestoreTests.fast)

        switch state {
        case .noPasscode, .unlocked: break
        case .lockedAfterFirstUnlock: try a.ok("device", "lock")
        case .beforeFirstUnlock: try KeychainAccessibilityTests.restart(a)
        case .unlockedAfterRestart:
            try KeychainAccessibilityTests.restart(a)
            try a.ok("device", "unlock", stdin: Self.passcode + "\n")
        }
        let open = Self.unlocked(state)

        // share: complete-unless-open in every state the store opens in — the store itself is
        // until-first-unlock data, so before the first unlock since a start nothing is filed
        let (sharedNow, sharedNowID) = try Self.share(a, trip: trip, marker: "SHARED-IN-\(state)")
        if state == .beforeFirstUnlock {
            KeychainAccessibilityTests.expectLockedRefusal(sharedNow, state, "share")
        } else {
            #expect(sharedNow.status == 0 && sharedNowID != nil, "share in \(state): \(sharedNow)")
        }
        let (refusedOrNot, _) = try Self.share(a, trip: trip, marker: "COMPLETE-IN-\(state)", extra: ["--protection", "complete"])
        if open {
            #expect(refusedOrNot.status == 0, "share --protection complete in \(state): \(refusedOrNot)")
        } else {
            KeychainAccessibilityTests.expectLockedRefusal(refusedOrNot, state, "share --protection complete")
        }

        // export and thumbnail: only while unlocked; nothing written when refused
        for id in [openTicket, completeTicket] {
            let out = a.container.root.path + "/export-\(id.prefix(8)).pdf"
            let exported = try a.app("attachment", "export", id, out)
            let thumbnail = a.container.root.path + "/thumb-\(id.prefix(8)).png"
            let drawn = try a.app("attachment", "thumbnail", id, thumbnail)
            if open {
                #expect(exported.status == 0 && drawn.status == 0, "\(state): \(exported) \(drawn)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: out)).prefix(5) == Data("%PDF-".utf8))
                #expect(try Data(contentsOf: URL(fileURLWithPath: thumbnail)).prefix(8) == Self.png)
            } else {
                KeychainAccessibilityTests.expectLockedRefusal(exported, state, "export")
                KeychainAccessibilityTests.expectLockedRefusal(drawn, state, "thumbnail")
                #expect(!FileManager.default.fileExists(atPath: out) && !FileManager.default.fileExists(atPath: thumbnail))
            }
        }

        // sync down and up: B's ticket arrives in every state a sync runs in (not before the
        // first unlock: the zone key is after-first-unlock); A's new ticket waits for the unlock
        let (fromB, fromBID) = try Self.share(b, trip: trip, marker: "FROM-B-\(state)")
        #expect(fromB.status == 0)
        try b.sync()
        let synced = try a.app("sync", "now", "--json")
        if state == .beforeFirstUnlock {
            KeychainAccessibilityTests.expectLockedRefusal(synced, state, "sync now")
        } else {
            let report = try #require(try JSONSerialization.jsonObject(with: Data(synced.stdout.utf8)) as? [String: Any], "\(synced)")
            #expect(synced.status == 0 && report["blobsDownloaded"] as? Int == 1, "\(state): \(report)")
            #expect((report["uploadsAwaitingUnlock"] as? Int ?? 0) == (open ? 0 : 1), "\(state): \(report)")
            let path = try a.container.sqlite("SELECT relative_path FROM attachments WHERE id = '\(try #require(fromBID))'").trimmedStdout
            #expect(try a.container.bytes("container/" + path).prefix(8) == Data("TBSEALED".utf8), "downloaded sealed")
        }

        // backup: refused whole while locked, no file left
        let file = a.container.root.path + "/backup.age"
        let backup = try a.app("backup", "--output", file, stdin: BackupRestoreTests.passphrase + "\n", environment: BackupRestoreTests.fast)
        if open {
            #expect(backup.status == 0, "backup in \(state): \(backup)")
        } else {
            KeychainAccessibilityTests.expectLockedRefusal(backup, state, "backup")
            #expect(!FileManager.default.fileExists(atPath: file))
        }

        // restore of the early backup into a new container of this device: refused while locked
        let target = a.container.root.path + "/restored"
        let restored = try a.app("restore", early, stdin: BackupRestoreTests.passphrase + "\n", environment: ["TRIPBOARD_CONTAINER": target])
        if open {
            #expect(restored.status == 0, "restore in \(state): \(restored)")
            let there = ["TRIPBOARD_CONTAINER": target]
            #expect(try a.app("attachment", "export", completeTicket, "-", environment: there).stdout.hasPrefix("%PDF-"))
            let classes = try a.container.sqlite("SELECT protection FROM attachments ORDER BY protection", database: target + "/store/TripBoard.sqlite")
            #expect(classes.stdoutLines == ["complete", "complete-unless-open"], "\(classes)")
            // Each file ends sealed in its row's class under this device's keybag (sealed once
            // for `complete-unless-open`: to the device's public key as it was staged).
            let keybagFile = a.container.extraEnvironment["TRIPBOARD_DEVICE_DIR"]! + "/keybag.json"
            let keybag = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: keybagFile))) as? [String: Any])
            let rows = try a.container.sqlite("SELECT protection, relative_path FROM attachments", database: target + "/store/TripBoard.sqlite")
            for row in rows.stdoutLines {
                let (protection, path) = (String(row.split(separator: "|")[0]), String(row.split(separator: "|")[1]))
                let head = try Data(contentsOf: URL(fileURLWithPath: target + "/" + path)).prefix(26)
                #expect(head.prefix(8) == Data("TBSEALED".utf8) && head[9] == (protection == "complete" ? 1 : 2), "\(state): \(path) as \(protection)")
                #expect(head[10..<26].map { String(format: "%02x", $0) }.joined() == keybag["id"] as? String, "\(state): \(path)'s keybag")
            }
        } else {
            KeychainAccessibilityTests.expectLockedRefusal(restored, state, "restore")
            #expect(!FileManager.default.fileExists(atPath: target))
        }

        // migration of TripBoard 1's files: sealed on the way in every state (to
        // complete-unless-open's public key); readable once unlocked
        let setup = try MigrationSetup(.standard(trips: 1), containerBase: a.container.root.path)
        let migrated = try setup.migrate(environment: ["TRIPBOARD_DEVICE_DIR": a.container.extraEnvironment["TRIPBOARD_DEVICE_DIR"]!,
                                                       "TRIPBOARD_MACHINE_ID_FILE": "/etc/machine-id"])
        if state == .beforeFirstUnlock || state == .lockedAfterFirstUnlock {
            // The tokens go into the keychain, which needs the device's class keys.
            #expect(migrated.status == 0 || migrated.status == 69, "migration in \(state): \(migrated)")
        } else {
            #expect(migrated.status == 0, "migration in \(state): \(migrated)")
        }
        #expect(Self.plaintextFiles(setup.container, [Data("%PDF-".utf8)]).isEmpty, "\(state): a migrated file in the clear")

        // Unlocked again, everything opens, and what waited goes up.
        if !open {
            try a.ok("device", "unlock", stdin: Self.passcode + "\n")
            #expect(try a.app("attachment", "export", completeTicket, "-").stdout.hasPrefix("%PDF-"))
            let after = try a.sync()
            // (Before the first unlock nothing was filed: the store did not open.)
            #expect((after["uploadsAwaitingUnlock"] as? Int ?? 0) == 0 && (after["blobsUploaded"] as? Int ?? 0) >= (state == .beforeFirstUnlock ? 0 : 1),
                    "\(state): \(after)")
        }
        let needles = ["OPEN-TICKET", "COMPLETE-TICKET", "SHARED-IN", "FROM-B"].map { Data($0.utf8) } + [Data("%PDF-".utf8), Self.png]
        #expect(Self.plaintextFiles(a.container, needles).isEmpty, "\(state): \(Self.plaintextFiles(a.container, needles))")
    }

    /// A ticket's text, name and thumbnail carry a canary: no byte of it, no `%PDF-` and no PNG
    /// signature is anywhere under `attachments/`, `caches/` or `tmp/` — after a share, after a
    /// share killed at each step, and after `container protect` is killed while sealing an earlier
    /// build's files and then run again to completion.
    @Test func noTicketByteReachesTheContainerInTheClear() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let canary = "CANARY-7Q2-\(UUID().uuidString.prefix(6))"
        let pdf = TicketPDF.make(lines: ["BOARDING PASS " + canary, "TP 1351 LIS CDG", "12 DEC 2026 07:35"])
        let needles = [Data(canary.utf8), Data("%PDF-".utf8), Self.png]
        for point in ["import.staged", "import.inspected", "import.published"] {
            let killed = try container.share([try container.input(pdf, as: canary + "-\(point).pdf"), "--trip", trip],
                                             environment: ["TRIPBOARD_CRASH_AT": point])
            #expect(killed.wasSignaled, "\(point): \(killed)")
            #expect(Self.plaintextFiles(container, needles).isEmpty, "after a kill at \(point)")
        }
        // What the kills left (an orphan, staged copies) is tidied: quarantined, never in the clear.
        #expect(try container.app("container", "check", "--repair", "--grace", "0").status == 0)
        #expect(Self.plaintextFiles(container, needles).isEmpty)
        let shared = try container.shareOK(try container.input(pdf, as: canary + ".pdf"), "--trip", trip)
        let id = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        #expect(Self.plaintextFiles(container, needles).isEmpty)
        // The ticket is whole inside, and its thumbnail too.
        let relative = try container.sqlite("SELECT relative_path FROM attachments WHERE id = '\(id)'").trimmedStdout
        #expect(try container.unsealed("container/" + relative) == pdf)
        #expect(try container.cachedThumbnail(id).prefix(8) == Self.png)

        // An earlier build's container: files and a thumbnail in the clear, one kept in recovered/.
        let clear = try Self.writtenByAnEarlierBuild(container, pdf: pdf, trip: trip, count: 3)
        #expect(Self.plaintextFiles(container, needles).count == 5, "the fixture is in the clear")
        #expect(try container.appOK("container", "info").contains("in the clear"))
        for point in ["protect.staged", "protect.replaced"] {
            let killed = try container.app("container", "protect", environment: ["TRIPBOARD_CRASH_AT": point])
            #expect(killed.wasSignaled, "\(point): \(killed)")
            // Every file whole and what its row says, sealed or not yet (a thumbnail in the clear
            // waits for the run that finishes).
            let check = try #require(try JSONSerialization.jsonObject(with: Data(container.app("container", "check", "--json").stdout.utf8))
                                        as? [String: Any])
            #expect((check["missingFiles"] as? [String])?.isEmpty == true && (check["damagedFiles"] as? [String])?.isEmpty == true,
                    "after a kill at \(point): \(check)")
        }
        let protected = try container.app("container", "protect", "--json")
        #expect(protected.status == 0, "\(protected)")
        #expect(Self.plaintextFiles(container, needles).isEmpty, "\(Self.plaintextFiles(container, needles))")
        for (id, relative) in clear {
            #expect(try container.unsealed("container/" + relative) == pdf, "\(id)")
            #expect(try container.app("attachment", "export", id, "-").stdout.hasPrefix("%PDF-"))
        }
        #expect(try container.unsealed("container/attachments/recovered/kept.pdf") == pdf)
        let info = try #require(try JSONSerialization.jsonObject(with: Data(container.appOK("container", "info", "--json").utf8)) as? [String: Any])
        let protection = try #require(info["protection"] as? [String: Any])
        #expect(protection["needsProtect"] as? Bool == false, "\(protection)")
        #expect(((protection["attachments"] as? [String: Any])?["sealed"] as? [String: Int])?["complete-unless-open"] == 4, "\(protection)")
        #expect(try container.app("container", "protect").trimmedStdout == "sealed 0 files", "a second run finds nothing to do")
        // The killed runs' staged copies (sealed) are tmp/ leftovers, which a repair removes.
        #expect(try container.app("container", "check", "--repair", "--grace", "0").status == 0)
        #expect(try container.appOK("container", "check", "--grace", "0").hasSuffix("The container is consistent."))
        #expect(Self.plaintextFiles(container, needles).isEmpty)
    }

    /// Attachments as an earlier build wrote them: `count` rows whose files are `pdf` in the clear
    /// (each with a thumbnail in the clear), and a file in `attachments/recovered/`. Their ids and paths.
    static func writtenByAnEarlierBuild(_ container: TestContainer, pdf: Data, trip: String, count: Int) throws -> [(String, String)] {
        let booking = try container.appOK("booking", "add", "--trip", trip, "--kind", "other", "--title", "Earlier")
        var made: [(String, String)] = []
        for index in 0..<count {
            let id = UUID().uuidString.lowercased()
            let relative = "attachments/\(id.prefix(2))/\(id).pdf"
            try FileManager.default.createDirectory(atPath: container.path + "/attachments/\(id.prefix(2))", withIntermediateDirectories: true)
            try pdf.write(to: URL(fileURLWithPath: container.path + "/" + relative))
            #expect(chmod(container.path + "/" + relative, 0o600) == 0)
            #expect(try container.sqlite("""
                INSERT INTO attachments (id, booking_id, original_filename, content_type, byte_count, content_hash, page_count, relative_path,
                                         state, created_at, sync_state, updated_at)
                VALUES ('\(id)', '\(booking)', 'earlier-\(index).pdf', 'application/pdf', \(pdf.count), '\(blake2bHex(pdf))', 1, '\(relative)',
                        'present', '2026-01-01T00:00:00.000Z', 'pendingUpload', '2026-01-01T00:00:00.000Z')
                """).status == 0)
            if index == 0 {
                try (Self.png + Data(repeating: 1, count: 64)).write(to: URL(fileURLWithPath: container.path + "/caches/thumbnails/\(id).png"))
            }
            made.append((id, relative))
        }
        try FileManager.default.createDirectory(atPath: container.path + "/attachments/recovered", withIntermediateDirectories: true)
        try pdf.write(to: URL(fileURLWithPath: container.path + "/attachments/recovered/kept.pdf"))
        return made
    }

    /// A copy of the container with another device directory opens no ticket: 66, naming the
    /// file, nothing written; and the original device still opens it.
    @Test func aCopiedContainerOnAnotherDeviceOpensNoTicket() throws {
        let container = try TestContainer(device: "a")
        let trip = try container.addTrip()
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let shared = try container.shareOK(try container.input(pdf, as: "t.pdf"), "--trip", trip)
        let id = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        let copy = container.root.path + "/copied"
        #expect(try ProcessRunner.run("/bin/cp", ["-a", container.path, copy], environment: ProcessRunner.environment(container: nil)).status == 0)
        let elsewhere = try BackupRestoreTests.device(container, "b", machine: "fedcba9876543210fedcba9876543210")
            .merging(["TRIPBOARD_CONTAINER": copy]) { $1 }
        for arguments in [["attachment", "export", id, container.root.path + "/out.pdf"], ["attachment", "thumbnail", id, container.root.path + "/out.png"],
                          ["attachment", "export", id, "-"]] {
            let result = try container.app(arguments: arguments, environment: elsewhere)
            #expect(result.status == 66 && result.stderrLines.count == 1 && result.stderr.contains("sealed on another device"), "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: container.root.path + "/out.pdf"))
        #expect(!FileManager.default.fileExists(atPath: container.root.path + "/out.png"))
        // A wrong device directory (a cron job's HOME) makes no keys of its own over the copy's
        // sealed tickets: a new ticket would be sealed where the real device cannot open it.
        // The copy's store is sealed too: refused before anything is read or made.
        let again = try container.share([try container.input(pdf, as: "again.pdf"), "--trip", trip], environment: elsewhere)
        #expect(again.status == 66 && again.stderrLines.count == 1 && again.stderr.contains("sealed on another device"), "\(again)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere["TRIPBOARD_DEVICE_DIR"]! + "/device.key"), "no device made")
        let check = try container.app(arguments: ["container", "check"], environment: elsewhere)
        #expect(check.status == 65 && (check.stdout + check.stderr).contains("sealed on another device"), "the check reports it: \(check)")
        #expect(try container.app(arguments: ["attachment", "export", id, "-"], environment: ["TRIPBOARD_CONTAINER": copy]).stdout.hasPrefix("%PDF-"),
                "the device that sealed it opens the copy")
    }

    /// The format as docs/security.md specifies it, read by a second implementation: Python with
    /// PyNaCl derives the device's class keys from its directory (and passcode) and opens a
    /// ticket and a thumbnail of every class, byte for byte.
    @Test func aSecondImplementationReadsEveryClass() throws {
        let container = try TestContainer(device: "a")
        let trip = try container.addTrip()
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let shared = try container.shareOK(try container.input(pdf, as: "t.pdf"), "--trip", trip)
        let id = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        let relative = try container.sqlite("SELECT relative_path FROM attachments WHERE id = '\(id)'").trimmedStdout
        func python(_ path: String, passcode: String? = nil) throws -> ProcessResult {
            var environment = container.environment
            environment["PYTHONPATH"] = LegacyFixture.toolsLibrary
            if let passcode { environment["TRIPBOARD_PASSCODE"] = passcode }
            return try ProcessRunner.run("/usr/bin/python3", [LegacyFixture.toolsLibrary + "/sealed_file.py", container.path + "/" + path],
                                         environment: environment)
        }
        for protection in ["complete-unless-open", "complete", "until-first-unlock", "none"] {
            try container.appOK("attachment", "protect", id, protection)
            let head = try container.bytes("container/" + relative)
            #expect(head.prefix(8) == Data("TBSEALED".utf8) && head[9] == ["complete": 1, "complete-unless-open": 2, "until-first-unlock": 3, "none": 4][protection])
            let read = try python(relative)
            #expect(read.status == 0 && Data(read.stdout.utf8).count > 0, "\(protection): \(read)")
            let thumbnail = try python("caches/thumbnails/\(id).png.sealed")
            #expect(thumbnail.status == 0, "\(protection): \(thumbnail)")
        }
        // Byte for byte (stdout as bytes: the helper's text decoding would not be).
        let out = container.root.path + "/python.pdf"
        var environment = container.environment
        environment["PYTHONPATH"] = LegacyFixture.toolsLibrary
        let exact = try ProcessRunner.run("/bin/sh", ["-c", "/usr/bin/python3 '\(LegacyFixture.toolsLibrary)/sealed_file.py' '\(container.path)/\(relative)' > '\(out)'"],
                                          environment: environment)
        #expect(exact.status == 0, "\(exact)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == pdf)

        // With a passcode: the keys need it (Argon2id), as the document says.
        try container.appOK("device", "passcode", "set", stdin: Self.passcode + "\n")
        // New class keys come with the passcode: sealed again under them.
        try container.appOK("attachment", "protect", id, "until-first-unlock")
        try container.appOK("attachment", "protect", id, "complete")
        #expect(try python(relative).status != 0, "no passcode, no key")
        let withPasscode = try ProcessRunner.run("/bin/sh", ["-c", "/usr/bin/python3 '\(LegacyFixture.toolsLibrary)/sealed_file.py' '\(container.path)/\(relative)' > '\(out)'"],
                                                 environment: environment.merging(["TRIPBOARD_PASSCODE": Self.passcode]) { $1 })
        #expect(withPasscode.status == 0, "\(withPasscode)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == pdf)
    }

    /// A DEST that is there and is not a file — a FIFO here, as `/dev/null` or a terminal would be —
    /// is written to as it is, never replaced by a rename (as root, a rename over `/dev/null` put
    /// a regular file in its place); `--output` refuses one (73), touching nothing.
    @Test func aDestinationThatIsNotAFileIsWrittenToAndNeverReplaced() throws {
        let container = try TestContainer()
        let trip = try container.addTrip()
        let pdf = TicketPDF.make(lines: TicketPDF.boardingPass)
        let shared = try container.shareOK(try container.input(pdf, as: "t.pdf"), "--trip", trip)
        let id = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
        let fifo = container.root.path + "/fifo", out = container.root.path + "/read.pdf"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try ProcessRunner.start("/bin/sh", ["-c", "cat '\(fifo)' > '\(out)'"], environment: ProcessRunner.environment(container: nil))
        let exported = try container.app("attachment", "export", id, fifo)
        _ = reader.wait()
        #expect(exported.status == 0, "\(exported)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == pdf)
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still the FIFO")
        let noReader = try container.app("attachment", "thumbnail", id, fifo)
        #expect(noReader.status == 74 && noReader.stderrLines.count == 1, "no reader: refused at once, \(noReader)")
        let backup = try container.app(arguments: ["backup", "--output", fifo], stdin: BackupRestoreTests.passphrase + "\n")
        #expect(backup.status == 73 && backup.stderr.contains("not a file"), "\(backup)")
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still the FIFO")
    }

    /// What an attack on the sealed files found: a thumbnail swapped for another attachment's is no
    /// entry of this one's (made again from its own ticket), and a file left in the clear under a
    /// `complete` row is not read, nor its class lowered, while the device is locked.
    @Test func aSwappedThumbnailOrAFileLeftInTheClearGivesNothingAway() throws {
        let container = try TestContainer(device: "a")
        let trip = try container.addTrip()
        let first = TicketPDF.make(lines: ["BOARDING PASS", "Flight TP 1351", "12 DEC 2026 07:35"])
        let second = TicketPDF.make(lines: ["BOARDING PASS", "Flight LH 9999", "13 DEC 2026 19:05", "SECOND"])
        func share(_ pdf: Data, _ name: String, _ extra: [String] = []) throws -> String {
            let result = try container.shareOK(try container.input(pdf, as: name), "--trip", trip)
            return try #require((result["attachment"] as? [String: Any])?["id"] as? String)
        }
        let a = try share(first, "a.pdf"), b = try share(second, "b.pdf")
        let cache = container.path + "/caches/thumbnails/"
        let own = try container.cachedThumbnail(a)
        try FileManager.default.removeItem(atPath: cache + a + ".png.sealed")
        try FileManager.default.copyItem(atPath: cache + b + ".png.sealed", toPath: cache + a + ".png.sealed")
        let out = container.root.path + "/a.png"
        #expect(try container.app("attachment", "thumbnail", a, out).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == own, "A's own page, made again: not B's")
        #expect(try container.cachedThumbnail(a) == own)

        // A `complete` ticket whose file an earlier build left in the clear, on a locked device.
        try container.appOK("attachment", "protect", b, "complete")
        try container.appOK("device", "passcode", "set", stdin: Self.passcode + "\n")
        let relative = try container.sqlite("SELECT relative_path FROM attachments WHERE id = '\(b)'").trimmedStdout
        try second.write(to: URL(fileURLWithPath: container.path + "/" + relative))
        try container.appOK("device", "lock")
        KeychainAccessibilityTests.expectLockedRefusal(try container.app("attachment", "export", b, "-"), .lockedAfterFirstUnlock, "export")
        KeychainAccessibilityTests.expectLockedRefusal(try container.app("attachment", "protect", b, "none"), .lockedAfterFirstUnlock, "protect")
        #expect(try container.sqlite("SELECT protection FROM attachments WHERE id = '\(b)'").trimmedStdout == "complete")
        try container.appOK("device", "unlock", stdin: Self.passcode + "\n")
        #expect(try container.app("attachment", "export", b, "-").stdout.contains("SECOND"))
    }
}
