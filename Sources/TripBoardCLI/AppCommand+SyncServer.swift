import TripBoardBackup
import TripBoardKeychain
import TripBoardStorage
import TripBoardSync
import TripBoardSyncProtocol
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardModel

/// `app sync init-server|setup|now|status|leave`: sync with a PostgreSQL server through
/// `sync-agent` (docs/sync.md). Passwords and the passphrase come from stdin or the terminal.
extension AppCommand {
    static var syncServerCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["sync", "init-server"],
                        options: [
                            .value("--server", "CONNINFO", "the server's PostgreSQL connection string (libpq conninfo or URI, without a password)", required: true),
                            .flag("--with-password", "read the server's password from standard input (asked for on a terminal)"),
                            .json,
                        ],
                        summary: """
                        Creates or upgrades TripBoard's schema on the PostgreSQL server CONNINFO (a libpq connection \
                        string or URI, without a password). Idempotent. --with-password reads the server password from \
                        standard input (asked for on a terminal); it is not kept.
                        """, run: takingSecrets(initServer), store: .none),
            AppCommandSpec(words: ["sync", "setup"],
                        options: [
                            .value("--server", "CONNINFO", "the server's PostgreSQL connection string (libpq conninfo or URI, without a password)", required: true),
                            .value("--zone", "NAME", "the zone to sync with (default: default)"),
                            .flag("--with-password", "read the server's password from standard input (asked for on a terminal)"),
                        ],
                        summary: """
                        Joins this container to zone NAME (default: "default") on the server. The first device makes the \
                        zone's key and keeps it on the server only wrapped under the sync passphrase (Argon2id); a later \
                        device unwraps it with the same passphrase (a wrong one: exit 65, nothing changed). The passphrase \
                        is read from standard input (asked for on a terminal); with --with-password, standard input holds \
                        the server password first, then the passphrase, one per line. Both are kept in the keychain, this device only.
                        """, run: takingSecrets(setUpSync), createsContainer: true),
            AppCommandSpec(words: ["sync", "now"],
                        options: [
                            .flag("--compare", "compare the server's list of records with this device's now, not only once a day"),
                            .json,
                        ],
                        summary: """
                        Sends a batch an interrupted sync left, then pulls, merges and pushes trips, places, bookings, \
                        attachments (their files sealed) and migratable keychain items (this-device-only ones never leave) \
                        until nothing is left, fetches the files of pulled attachments; prints what it did. Once a day (or \
                        with --compare) it also compares the server's list of records with this device's and sends again \
                        what the server lost.
                        """, run: handlingSecrets(syncNow)),
            AppCommandSpec(words: ["sync", "status"],
                        options: [
                            .json,
                        ],
                        summary: "Says which server and zone this container syncs with, the last sync, what is pending; contacts nothing.",
                        run: syncStatus),
            AppCommandSpec(words: ["sync", "leave"], summary: "Forgets the server and the zone's key on this device; local data and keychain items stay as they are.",
                        run: handlingSecrets(leaveSync)),
        ] + syncConflictCommands + syncFieldCommands + syncWatchCommands
    }

    /// Refuses a conninfo with a password in it (it would sit in argv and in the store) by the
    /// conninfo's own grammar (`ConninfoPassword`: a `password` keyword, `user:secret@`, a
    /// percent-encoded `pass%77ord=` parameter); `sync-agent` checks again with libpq's parser.
    static func checkedServer(_ conninfo: String) throws -> String {
        guard !conninfo.isEmpty, conninfo.utf8.count <= 1024 else { throw SyncError.invalidArgument("--server must be a libpq conninfo of at most 1024 bytes") }
        // Not echoed: it holds a password.
        guard !ConninfoPassword.isPresent(in: conninfo) else {
            throw SyncError.invalidArgument("--server must not contain a password (it would be visible in `ps` and kept in the store); use --with-password, which reads it from standard input")
        }
        return conninfo
    }

    static func checkedZone(_ zone: String) throws -> String {
        guard (1...64).contains(zone.utf8.count),
              zone.utf8.allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2d || $0 == 0x5f || $0 == 0x2e }) else {
            throw SyncError.invalidArgument("--zone must be 1–64 characters among a–z, 0–9, '.', '-' and '_'")
        }
        return zone
    }

    static func text(_ secret: SecureBytes) -> String {
        secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    static func initServer(_ context: CommandContext) throws {
        let server = try checkedServer(try context.arguments.requiredOption("--server"))
        let withPassword = context.arguments.flag("--with-password")
        let json = context.wantsJSON()
        try context.finishArguments()
        let password = withPassword ? text(try readSecret("server password")) : nil
        let agent = try SyncAgentClient()
        defer { agent.end() }
        _ = try agent.connect(conninfo: server, password: password)
        guard case .schemaInstalled(let version, let upgraded) = try agent.send(.initServer) else { throw agent.unexpectedAnswer() }
        struct Installed: Encodable { var schemaVersion: Int; var upgraded: Bool }
        if json { return try context.console.printJSON(Installed(schemaVersion: version, upgraded: upgraded)) }
        context.console.print(upgraded
            ? "The server's TripBoard schema is now at version \(version)."
            : "The server's TripBoard schema is already at version \(version); nothing was changed.")
    }

    static func setUpSync(_ context: CommandContext) throws {
        let server = try checkedServer(try context.arguments.requiredOption("--server"))
        let zoneName = try checkedZone(try context.arguments.option("--zone") ?? "default")
        let withPassword = context.arguments.flag("--with-password")
        try context.finishArguments()
        // An existing container is checked first; a new one is made only once the server has
        // said yes (a wrong passphrase or an unreachable server creates nothing).
        context.createsContainer = false
        var existing: SyncAccount?
        do {
            existing = try context.store().syncLedger.syncAccount()
        } catch ContainerError.notFound {
            existing = nil
        }
        if let account = existing {
            guard account.server == server, account.zone == zoneName else { throw SyncError.alreadySetUp(server: account.server, zone: account.zone) }
            do {
                _ = try ZoneKey.fromKeychain(try context.keychain(), zone: zoneName)
                return context.console.diagnostic("this container already syncs with zone \(zoneName) on that server; nothing was changed")
            } catch KeychainError.notFound, KeychainError.sealedOnAnotherDevice {
                // Joined, but this device has no zone key (a restore from another device): set it up again.
            }
        }
        let (password, passphrase) = try readSyncSecrets(withPassword: withPassword)
        let agent = try SyncAgentClient()
        defer { agent.end() }
        _ = try agent.connect(conninfo: server, password: password.map(text))
        let key: ZoneKey
        let created: Bool
        if let existing = try agent.zone(zoneName).zone {
            key = try ZoneKey.unwrap(existing.keyWrap, zone: zoneName, passphrase: passphrase)
            created = false
        } else {
            guard passphrase.count >= 8 else { throw SyncError.invalidArgument("the sync passphrase must be at least 8 bytes long; nothing was changed") }
            let fresh = try ZoneKey.make(zone: zoneName)
            let wrap = try fresh.wrapped(passphrase: passphrase)
            guard let made = try agent.zone(zoneName, creatingWith: wrap).zone else { throw SyncError.zoneMissing(zone: zoneName) }
            // Another device may have made the zone at the same moment: its key is the zone's.
            created = made.keyWrap == wrap
            key = created ? fresh : try ZoneKey.unwrap(made.keyWrap, zone: zoneName, passphrase: passphrase)
        }
        context.createsContainer = true
        let store = try context.store()
        let keychain = try context.keychain()
        try key.store(in: keychain)
        if let password { try keychain.set(service: ZoneKey.passwordService, account: zoneName, value: password, accessibility: .afterFirstUnlockThisDeviceOnly) }
        if try store.syncLedger.syncAccount() == nil { _ = try store.syncLedger.joinSync(server: server, zone: zoneName) }
        context.console.diagnostic(created
            ? "created zone \(zoneName) on the server; other devices join it with the same passphrase. `app sync now` synchronises"
            : "joined zone \(zoneName); `app sync now` synchronises")
    }

    /// The passphrase, and before it the server password when asked for: one line each from
    /// standard input, or asked for on a terminal.
    static func readSyncSecrets(withPassword: Bool) throws -> (SecureBytes?, SecureBytes) {
        guard withPassword else { return (nil, try readSecret("sync passphrase")) }
        let (password, passphrase) = try readTwoSecrets("server password", then: "sync passphrase")
        return (password, passphrase)
    }

    static func syncNow(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let compare = context.arguments.flag("--compare")
        try context.finishArguments()
        let (store, _, key, password) = try joinedZone(context)
        let report = try performSync(context, store: store, key: key, password: password, compare: compare)
        if report.readOnly { context.console.warning(readOnlyWarning) }
        if report.held > 0 { context.console.warning(heldWarning(report.held)) }
        if let skew = report.clockOffsetIgnored { context.console.warning(clockWarning(skew)) }
        for line in refusalWarnings(report) { context.console.warning(line) }
        if json {
            try context.console.printJSON(report)
        } else {
            context.console.print(summary(of: report))
            for trashed in report.trashedWithChangesHere { context.console.print(trashedNotice(trashed)) }
        }
        // Everything else went through; the refusal is the run's status (65), said once.
        if report.refused > 0 { throw SyncError.refusedServerData(count: report.refused) }
    }

    /// A deletion from another device that took work of this device's to the trash, and the way back.
    static func trashedNotice(_ trashed: TrashedWithChangesHere) -> String {
        var held: [String] = []
        for (count, noun) in [(trashed.contents.places, "place"), (trashed.contents.bookings, "booking"),
                              (trashed.contents.attachments, "attachment")] where count > 0 {
            held.append("\(count) \(noun)\(count == 1 ? "" : "s")")
        }
        let with = held.isEmpty ? "" : " with " + held.joined(separator: ", ")
        let records = trashed.changedHere == 1 ? "1 record" : "\(trashed.changedHere) records"
        let kind = trashed.kind.rawValue.prefix(1).uppercased() + trashed.kind.rawValue.dropFirst()
        return "\(kind) \(trashed.name) was deleted on another device: it went to the trash here\(with), taking \(records) "
            + "added or changed on this device; `\(trashed.restore)` brings it back."
    }

    /// The store of a device that has joined a zone, its account, and the zone's secrets
    /// (`syncSecrets`); `SyncError.notSetUp` before `sync setup`.
    static func joinedZone(_ context: CommandContext) throws -> (Store, SyncAccount, ZoneKey, String?) {
        let store = try context.store()
        guard let account = try store.syncLedger.syncAccount() else { throw SyncError.notSetUp }
        let (key, password) = try syncSecrets(context, account)
        return (store, account, key, password)
    }

    /// The zone key and the server password (nil when the server needs none) from this device's keychain.
    static func syncSecrets(_ context: CommandContext, _ account: SyncAccount) throws -> (ZoneKey, String?) {
        let keychain = try context.keychain()
        let key: ZoneKey
        do {
            key = try ZoneKey.fromKeychain(keychain, zone: account.zone)
        } catch KeychainError.notFound, KeychainError.sealedOnAnotherDevice {
            throw SyncError.zoneKeyMissing(zone: account.zone)
        }
        let password: String?
        do {
            password = text(try keychain.get(service: ZoneKey.passwordService, account: account.zone))
        } catch KeychainError.notFound, KeychainError.sealedOnAnotherDevice {
            password = nil  // the server needs none (trust, peer or a .pgpass of the user's)
        }
        return (key, password)
    }

    /// One sync with a fresh agent (its own connection, bounded by `AgentLimits`), from the
    /// change token the store has now, its outcome noted for `sync status`.
    static func performSync(_ context: CommandContext, store: Store, key: ZoneKey, password: String?, compare: Bool = false) throws -> SyncReport {
        guard let account = try store.syncLedger.syncAccount() else { throw SyncError.notSetUp }
        let report: SyncReport
        do {
            let agent = try SyncAgentClient()
            defer { agent.end() }
            let serverTime = try agent.connect(conninfo: account.server, password: password)
            // With the zone, whether the server still has what this device last saw of it.
            let check = try store.syncLedger.syncCheck()
            let answer = try agent.zone(account.zone, check: ZoneCheck(mutation: check.lastMutation, record: check.tokenRecord,
                                                                       recordStamps: check.tokenRecordStamps))
            guard let zone = answer.zone else { throw SyncError.zoneMissing(zone: account.zone) }
            report = try SyncEngine(store: store, files: try AttachmentFiles(container: try context.container()), key: key,
                                    keychain: try context.keychain(), agent: agent, account: account, zone: zone, serverTime: serverTime,
                                    serverHasLastMutation: answer.mutationKnown, serverHasTokenRecord: answer.recordKnown,
                                    compareNow: compare).run()
            try store.syncLedger.noteSyncEnded(error: nil)
            // A class an edit from another device changed, or a file downloaded while the device
            // was locked: sealed as its row says now, if its classes are open (else at the
            // next unlock). The sync itself is done: what fails here is a warning, and the next
            // sync or unlock tries again.
            let container = try context.container()
            do {
                let outcome = try AttachmentFiles(container: container).holdingDeletionsBack(timeout: container.options.lockTimeout) {
                    try AttachmentProtection(container: container).reconcile(includingClear: false)
                }
                if !outcome.damaged.isEmpty {
                    context.console.warning("\(outcome.damaged.count) attachment file\(outcome.damaged.count == 1 ? " is" : "s are") not what "
                                            + "\(outcome.damaged.count == 1 ? "its row says" : "their rows say") and stay as they are; `app container check` reports them")
                }
            } catch {
                context.console.warning("the sync is done, but sealing its files as their rows say failed (\(errorMessage(for: error))); "
                                        + "the next sync or unlock tries again")
            }
        } catch {
            try? store.syncLedger.noteSyncEnded(error: errorMessage(for: error))
            throw error
        }
        return report
    }

    static let readOnlyWarning = "the zone asks for a newer TripBoard than this one (sync client version \(SyncEngine.clientVersion)): "
        + "changes from other devices still arrive, but nothing made here is sent until TripBoard is updated"

    /// One line per cause of what this device refused of the server's (`SyncReport.refusedBecause`).
    static func refusalWarnings(_ report: SyncReport) -> [String] {
        RefusalCause.allCases.compactMap { cause in
            guard let count = report.refusedBecause[cause.rawValue], count > 0 else { return nil }
            let records = count == 1 ? "1 record" : "\(count) records"
            switch cause {
            case .olderValue:
                return "\(records) came back from the server with values older than this device holds (a server restored from an "
                    + "older backup, or one that serves old values again): not applied; this device's values were sent again"
            case .unsealedDeletion:
                return "\(records) marked deleted on the server by no device (no sealed deletion): not deleted here; sent again"
            case .replayedDeletion:
                return "\(records) came back deleted by a deletion this device had already seen, served again after the record was "
                    + "brought back: not deleted here; sent again"
            case .deletedIncarnation:
                return "\(records) deleted on some device came back live from the server: not brought back; the deletion was sent again"
            }
        }
    }

    /// Said after every sync that finds this device's clock more than an hour off the server's.
    static func clockWarning(_ skew: Int64) -> String {
        let minutes = abs(skew) / 60_000
        return "this device's clock is \(minutes) minutes \(skew > 0 ? "behind" : "ahead of") the server's, more than the "
            + "\(SyncEngine.clockCorrectionBound / 60_000) minutes sync corrects: edits are stamped with this device's clock; "
            + "set it right so that they order correctly against other devices' edits"
    }

    /// Said after every sync that leaves records waiting for their parent.
    static func heldWarning(_ count: Int) -> String {
        (count == 1 ? "1 record waits for the trip or booking it belongs to" : "\(count) records wait for the trip or booking they belong to")
            + ", which has not arrived from the server; applied as soon as it does (`app sync status` lists them)"
    }

    /// `sync now`'s line.
    static func summary(of report: SyncReport) -> String {
        ("Pulled \(report.pulled) (\(report.merged) merged, \(report.trashed) moved to the trash, \(report.skipped) skipped), "
            + "pushed \(report.pushed) (\(report.conflicts) conflicts, \(report.replayed) replayed); \(report.pending) pending."
            + (report.blobsUploaded + report.blobsDownloaded > 0
                ? " Files: \(report.blobsUploaded) uploaded, \(report.blobsDownloaded) downloaded." : "")
            + (report.blobsCollected > 0
                ? " \(report.blobsCollected) file\(report.blobsCollected == 1 ? "" : "s") no record names removed from the server." : "")
            + (report.attachmentsMissing > 0 ? " \(report.attachmentsMissing) attachment file\(report.attachmentsMissing == 1 ? "" : "s") not fetched yet." : "")
            + (report.uploadsAwaitingUnlock > 0
                ? " \(report.uploadsAwaitingUnlock) attachment file\(report.uploadsAwaitingUnlock == 1 ? " waits" : "s wait") for the device to unlock before "
                    + (report.uploadsAwaitingUnlock == 1 ? "it uploads" : "they upload") + " (`app device unlock`)." : "")
            + (report.conflictsKept > 0 ? " \(report.conflictsKept) losing value\(report.conflictsKept == 1 ? "" : "s") kept: `app sync conflicts`." : "")
            + (report.secretsPulled + report.secretsPushed + report.secretsDeleted + report.secretsPending > 0
                ? " Keychain items: \(report.secretsPulled) received, \(report.secretsPushed) sent, \(report.secretsDeleted) deleted; \(report.secretsPending) pending." : "")
            + (report.keychainLocked ? " Keychain items not synced: the container key is locked on this device (`app keychain recover`)." : "")
            + (report.keychainWaitsForUnlock ? " Keychain items not synced: the device is locked (`app device unlock`)." : ""))
    }

    /// `sync status --json`.
    struct SyncStatus: Encodable {
        var joined: Bool
        var account: SyncAccount?
        var pending: Int
        var pendingAttachments: Int
        /// Pulled attachments whose file is not fetched yet (`missing` until it is).
        var attachmentsAwaitingFile: Int
        var unconfirmedBatches: Int
        /// Values that lost a merge, kept (`sync conflicts`).
        var conflicts: Int
        /// Migratable keychain items (and deletions of them) waiting for the server; not in
        /// `pending`, which counts the store's records.
        var pendingKeychainItems: Int
        /// Pulled records waiting for the trip or booking they belong to, and which.
        var held: Int
        var heldRecords: [HeldRecord]
    }

    static func syncStatus(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let store = try context.store()
        let account = try store.syncLedger.syncAccount()
        let backlog = try store.syncLedger.syncBacklog()
        let held = try store.syncLedger.heldRecords()
        // The keychain is opened only for a container that syncs (it has one: the zone key is in it).
        let keychainBacklog = account == nil ? (items: 0, batches: 0) : try context.keychain().syncBacklog()
        let status = SyncStatus(joined: account != nil, account: account, pending: backlog.records,
                                pendingAttachments: backlog.attachments, attachmentsAwaitingFile: backlog.awaitingFile,
                                unconfirmedBatches: backlog.unconfirmedBatches + keychainBacklog.batches,
                                conflicts: try store.syncLedger.syncConflictCount(), pendingKeychainItems: keychainBacklog.items,
                                held: held.count, heldRecords: held)
        if json { return try context.console.printJSON(status) }
        guard let account else { return context.console.print("This container does not sync (`app sync setup` joins a server).") }
        context.console.printPairs([
            ("server", account.server),
            ("zone", account.zone),
            ("last sync", account.lastSyncAt ?? "never"),
            ("change token", account.epoch.map { "\($0) @ \(account.changeSequence)" } ?? "none yet"),
            ("clock", account.clockOffsetMilliseconds.map { "\($0 >= 0 ? "+" : "")\($0) ms to the server's (learned at the last syncs)" } ?? "not measured yet"),
            ("pending", "\(backlog.records) record\(backlog.records == 1 ? "" : "s")"
                + (status.unconfirmedBatches > 0 ? ", \(status.unconfirmedBatches) batch\(status.unconfirmedBatches == 1 ? "" : "es") to confirm" : "")),
            ("keychain items", keychainBacklog.items == 0 ? "-" : "\(keychainBacklog.items) to send"),
            ("attachments", backlog.attachments == 0 && backlog.awaitingFile == 0 ? "-"
                : "\(backlog.attachments) to upload, \(backlog.awaitingFile) waiting for their file"),
            ("conflicts", status.conflicts == 0 ? "-" : "\(status.conflicts) kept (`app sync conflicts`)"),
            ("held", held.isEmpty ? "-" : heldSummary(held)),
            ("last error", account.lastError ?? "-"),
        ])
    }

    /// `sync status`'s line for held records: the first few by name, then how many more.
    static func heldSummary(_ held: [HeldRecord]) -> String {
        let named = held.prefix(3).map { record in
            "\(record.kind.rawValue) \(record.id.prefix(8)) waits for \(record.parentKind.rawValue) \(record.parentId.prefix(8))"
                + (record.parentDeleted ? " (deleted on another device)" : "")
        }
        return "\(held.count) waiting: " + named.joined(separator: "; ") + (held.count > 3 ? "; and \(held.count - 3) more" : "")
    }

    static func leaveSync(_ context: CommandContext) throws {
        try context.finishArguments()
        let store = try context.store()
        guard let account = try store.syncLedger.syncAccount() else { return context.console.diagnostic("this container does not sync; nothing to leave") }
        let keychain = try context.keychain()
        for service in [ZoneKey.keychainService, ZoneKey.passwordService] {
            do { try keychain.delete(service: service, account: account.zone) } catch KeychainError.notFound {}
        }
        try keychain.forgetSync()
        let dropped = try store.syncLedger.leaveSync()
        context.console.diagnostic("left zone \(account.zone); local data stays as it is"
            + (dropped > 0 ? " (a batch the server never confirmed was dropped; its records stay pending)" : ""))
    }
}
