import TripBoardKeychain
public import TripBoardStorage
public import TripBoardDevice
import TripBoardSQLite
public import TripBoardSystem
import TripBoardModel

/// How far a long step has got, for a progress bar.
public struct MigrationProgress: Sendable, Equatable {
    /// `planning`, `store`, `attachments`, `finishing`, `hashing`.
    public var step: String
    public var done: Int64
    public var total: Int64

    public init(step: String, done: Int64, total: Int64) {
        self.step = step
        self.done = done
        self.total = total
    }
}

/// What to migrate where.
public struct MigrationOptions {
    /// The version-1 directory (`LegacyLayout.resolve`).
    public var legacyPath: String
    /// True for `--from DIR`: a missing directory is an error, not "nothing to migrate".
    public var legacyPathIsExplicit: Bool
    public var containerPath: String
    /// Add the legacy records whose ids the destination does not have, instead of refusing a
    /// destination that already holds trips.
    public var merge = false
    /// Plan and report; change nothing.
    public var dryRun = false
    public var container = ContainerOptions(durability: .full, processName: "container-migration")
    /// This device's key, for the tokens; called only when there are tokens to move.
    public var deviceKey: () throws -> DeviceKey
    /// Where this device's unlocked class keys are held (`TRIPBOARD_KEYRING`).
    public var keyring: KernelKeyring.Anchor = .user
    public var progress: (MigrationProgress) -> Void = { _ in }

    public init(legacyPath: String, legacyPathIsExplicit: Bool, containerPath: String, deviceKey: @escaping () throws -> DeviceKey) {
        self.legacyPath = legacyPath
        self.legacyPathIsExplicit = legacyPathIsExplicit
        self.containerPath = containerPath
        self.deviceKey = deviceKey
    }
}

/// How long one step of a run took.
public struct MigrationStepTime: Sendable, Codable, Equatable {
    public var step: String
    public var seconds: Double

    init(_ step: String, since started: Double) {
        self.step = step
        seconds = ((MonotonicClock.now() - started) * 1000).rounded() / 1000
    }
}

/// What a run did (or, for a dry run, would do). The `--json` summary; keys documented in
/// docs/migration.md.
public struct MigrationSummary: Sendable, Codable, Equatable {
    /// What the run came to; the raw values are the JSON contract's `outcome`.
    public enum Outcome: String, Sendable, Codable {
        case migrated
        case nothingToMigrate = "nothing to migrate"
        case dryRun = "dry run"
    }

    public var outcome: Outcome
    /// Why there was nothing to do, or what a dry run found in progress; empty otherwise.
    public var note = ""
    public var from: String
    public var container: String
    /// Rows in the legacy store.
    public var legacyCounts = MigrationCounts()
    /// Rows added to the destination (fewer than `legacyCounts` only with `--merge`).
    public var added = MigrationCounts()
    public var storeBytes: Int64 = 0
    /// Bytes of attachment and recovered files moved or copied.
    public var attachmentBytes: Int64 = 0
    public var sameFilesystem = false
    public var durationSeconds = 0.0
    /// Wall time until the container was usable: the migration committed and its exclusive lock
    /// released (`durationSeconds` less the hashing pass).
    public var usableSeconds = 0.0
    /// The hashing pass this run made after publishing (`AttachmentHashing`): files hashed, and
    /// files left unverified (missing, or not the size their row says: `container check` reports them).
    public var hashedFiles = 0
    public var unverifiedFiles = 0
    /// Wall time of each step this run performed, in order (`plan`, `store`, `attachments`,
    /// `preferences`, `verify`, `commit`, `delete`, then `hash`, the hashing pass after the
    /// container is usable); a resumed run lists only the steps it did.
    public var steps: [MigrationStepTime] = []
    /// True when this run finished a migration that an earlier, interrupted run had started.
    public var resumed = false
    /// Attachment rows whose file was missing: `<id> <legacy path>`; migrated as `missing`.
    public var missing: [String] = []
    /// Files with no row, moved to `attachments/recovered/`: their paths in the container.
    public var recovered: [String] = []
    public var preferencesMigrated: [String] = []
    /// Legacy preferences whose value the typed key refused (names only).
    public var preferencesRefused: [String] = []
    /// Legacy preferences the destination had set already: its values were kept.
    public var preferencesKept: [String] = []
    public var preferencesUnknown: [String] = []
    /// Tokens moved into the keychain (0, 1 or 2).
    public var tokensMoved = 0
    /// Tokens found but not stored, because the destination was signed in already.
    public var tokensDiscarded = 0
    public var bookingKindsChangedToOther = 0
    /// What was left in the old location because version 1 did not write it.
    public var leftBehind: [String] = []

    init(outcome: Outcome, from: String, container: String) {
        self.outcome = outcome
        self.from = from
        self.container = container
    }
}

/// The one-shot, resumable move of a version-1 directory into the shared container
/// (docs/migration.md): plan → store → attachments → preferences and tokens → verify → commit
/// marker → delete the old location, under the container's exclusive lock, with a journal in
/// `migration/` that a re-run resumes from.
public enum ContainerMigration {
    /// Runs (or resumes, or with `dryRun` plans) the migration.
    /// Then, the container published and its exclusive lock released, the hashing pass
    /// (`AttachmentHashing`) under the shared lock — the container is usable meanwhile — also when
    /// this run found the migration done but a killed pass left its marker.
    public static func run(_ options: MigrationOptions) throws -> MigrationSummary {
        let started = MonotonicClock.now()
        var summary = try runSteps(options)
        summary.usableSeconds = ((MonotonicClock.now() - started) * 1000).rounded() / 1000
        if !options.dryRun, summary.outcome != .dryRun, try FirstLaunchMigration.state(containerPath: options.containerPath) == .finished {
            try hashPendingFiles(options, into: &summary)
        }
        summary.durationSeconds = ((MonotonicClock.now() - started) * 1000).rounded() / 1000
        return summary
    }

    /// The hashing pass, if one is due, with the container opened as any process opens it.
    private static func hashPendingFiles(_ options: MigrationOptions, into summary: inout MigrationSummary) throws {
        var containerOptions = options.container
        containerOptions.durability = .normal  // a hash lost with the power is only hashed again
        let root = try Directory.open(path: options.containerPath)
        guard try AttachmentHashing.isPending(in: root) else { return }
        let container = try Container.openForWriting(at: options.containerPath, options: containerOptions)
        if containerOptions.storeRequirement == .required { Trash.tidyUp(container: container) }  // a writer's chore, as `app` runs it
        let started = MonotonicClock.now()
        guard let outcome = try AttachmentHashing.finishPending(container: container, progress: { done, total in
            options.progress(MigrationProgress(step: "hashing", done: done, total: total))
        }) else { return }
        summary.steps.append(MigrationStepTime("hash", since: started))
        summary.hashedFiles = outcome.hashed
        summary.unverifiedFiles = outcome.unverifiable
    }

    private static func runSteps(_ options: MigrationOptions) throws -> MigrationSummary {
        if let settled = try settledByState(options, holding: nil) { return settled }
        guard try FirstLaunchMigration.legacyDirectoryExists(at: options.legacyPath) else {
            if options.legacyPathIsExplicit { throw MigrationError.legacyNotFound(path: options.legacyPath) }
            return nothingToMigrate(options, "there is no version-1 directory at \(options.legacyPath)")
        }
        let legacyRoot = try Directory.open(path: options.legacyPath)
        // Checked before the destination is touched: a refused store changes nothing anywhere.
        let legacy = try LegacyStore(directory: legacyRoot)
        try legacy.check()
        if options.dryRun { return try dryRun(options, legacy: legacy, legacyRoot: legacyRoot) }

        let (root, lock) = try Container.lockExclusively(at: options.containerPath, options: options.container)
        // Decided again under the lock: another run may have started or finished meanwhile.
        if let settled = try settledByState(options, holding: lock) { return settled }
        let destinationStore = try Self.destinationStore(root: root, keys: options.container.fileKeys)
        let trips = try destinationStore?.verification.rowCounts().trips ?? 0
        if trips > 0 && !options.merge {
            throw MigrationError.destinationHasTrips(container: options.containerPath, legacy: options.legacyPath, trips: trips)
        }
        let planStarted = MonotonicClock.now()
        let migratedAt = options.container.clock().utcStamp
        let planner = MigrationPlanner(legacy: legacy, legacyRoot: legacyRoot, containerRoot: root, containerPath: options.containerPath,
                                       merge: options.merge, migratedAt: migratedAt,
                                       destinationStore: destinationStore, progress: options.progress)
        // Into a container with no record, the new store is built whole: its trips, places and
        // bookings are converted on a second thread while the plan lists the files.
        let buildsWhole = try destinationStore?.verification.holdsNoRow() ?? true
        let (plan, fileList, prebuilt) = try makePlan(planner, buildsWhole: buildsWhole, legacy: legacy, legacyRoot: legacyRoot,
                                                      root: root, options: options, migratedAt: migratedAt)
        let directory = try MigrationJournal.openDirectory(in: root, create: true)!
        try MigrationJournal.write(plan, MigrationJournal.planFile, in: directory)
        try MigrationJournal.write(MigrationJournal.Record(finished: .planned), MigrationJournal.journalFile, in: directory)
        try root.synchronize()
        CrashPoint.reach("migration.plan")
        let run = MigrationRun(options: options, plan: plan, files: fileList, root: root, lock: lock, migrationDirectory: directory,
                               legacyRoot: legacyRoot, legacy: legacy, record: MigrationJournal.Record(finished: .planned))
        run.prebuilt = prebuilt
        run.stepTimes.append(MigrationStepTime("plan", since: planStarted))
        return try run.finish()
    }

    /// What a migration already recorded in the container decides: the summary to return, or nil
    /// when none has started. Without the lock (`lock` nil) a finished one's leftovers are swept
    /// and a dry run only reports an interrupted one; holding it, an interrupted one is resumed
    /// after the lock is let go (the resumed run takes it again).
    private static func settledByState(_ options: MigrationOptions, holding lock: FileLock?) throws -> MigrationSummary? {
        switch try FirstLaunchMigration.state(containerPath: options.containerPath) {
        case .notStarted:
            return nil
        case .finished:
            if lock == nil && !options.dryRun { removeLeftovers(containerPath: options.containerPath) }
            return nothingToMigrate(options, "the container was migrated already")
        case .unfinished:
            if let lock {
                lock.unlock()
            } else if options.dryRun {
                var summary = MigrationSummary(outcome: .dryRun, from: options.legacyPath, container: options.containerPath)
                summary.note = "an interrupted migration is recorded in the container; running container-migration finishes it"
                return summary
            }
            return try resume(options)
        }
    }

    /// Lists the files into the plan's file list (and, when the store is built whole, converts the
    /// records on a second thread meanwhile), then checks the space the plan needs and
    /// checkpoints the legacy store. Whatever fails, the staging files are discarded.
    private static func makePlan(_ planner: MigrationPlanner, buildsWhole: Bool, legacy: LegacyStore, legacyRoot: Directory,
                                 root: Directory, options: MigrationOptions,
                                 migratedAt: String) throws -> (MigrationPlan, MigrationFileList, MigrationStoreBuilder?) {
        if buildsWhole {
            // Checked before the store is copied and built (the files, when copied, after the plan).
            let needed = MigrationPlanner.neededBytes(storeBytes: try MigrationPlanner.storeBytes(in: legacyRoot), fileBytes: 0, fileCount: 0)
            try requireSpace(needed, in: root, options)
        }
        do {
            let migrationDirectory = try MigrationJournal.openDirectory(in: root, create: true)!
            let list = try MigrationFileList.create(in: migrationDirectory)
            var plan: MigrationPlan?
            var prebuilt: MigrationStoreBuilder?
            if buildsWhole {
                try ParallelLoop.run(count: 2, threads: 2) { _, index in
                    if index == 0 {
                        plan = try planner.make(into: list)
                    } else {
                        // Its own connection to the legacy store: the planner's is in use on the other thread.
                        let builder = try MigrationStoreBuilder(legacy: LegacyStore(directory: legacyRoot).connection,
                                                                migrationDirectory: migrationDirectory, keys: options.container.fileKeys)
                        try builder.convertRecordsBeforeFiles(migratedAt: migratedAt)
                        prebuilt = builder
                    }
                }
            } else {
                plan = try planner.make(into: list)
            }
            guard let plan else { preconditionFailure("the plan ran") }
            try requireSpace(MigrationPlanner.neededBytes(storeBytes: plan.storeBytes, fileBytes: plan.fileBytes,
                                                          fileCount: Int64(plan.fileCount)), in: root, options)
            // Once every refusal is behind, the first write outside migration/: committed frames
            // move from the legacy -wal into its main file (the copy would read them either way).
            try legacy.checkpoint()
            return (plan, list, prebuilt)
        } catch {
            MigrationRun.discardStaging(in: root)
            throw error
        }
    }

    private static func requireSpace(_ needed: Int64, in root: Directory, _ options: MigrationOptions) throws {
        let available = try root.availableBytes()
        if available < needed {
            throw MigrationError.insufficientSpace(path: options.containerPath, needed: needed, available: available)
        }
    }

    /// A finished migration's last run removes journal.json (from then on it is finished), then
    /// plan.json and the temporary files of interrupted atomic writes; killed in between, those
    /// stay until a later run finds them here. Best effort: they are never read again.
    private static func removeLeftovers(containerPath: String) {
        do {
            guard let directory = try MigrationJournal.openDirectory(in: Directory.open(path: containerPath)) else { return }
            for name in try directory.entries()
            where name == MigrationJournal.planFile || name.hasPrefix(MigrationFileList.fileName) || name.hasSuffix(".tmp") {
                try directory.removeFile(name)
            }
        } catch {
            // Left for the next run; nothing reads them.
        }
    }

    private static func nothingToMigrate(_ options: MigrationOptions, _ note: String) -> MigrationSummary {
        var summary = MigrationSummary(outcome: .nothingToMigrate, from: options.legacyPath, container: options.containerPath)
        summary.note = note
        return summary
    }

    /// Continues the migration the journal records, from the location the plan names.
    private static func resume(_ options: MigrationOptions) throws -> MigrationSummary {
        let (root, lock) = try Container.lockExclusively(at: options.containerPath, options: options.container)
        guard let directory = try MigrationJournal.openDirectory(in: root),
              let record = try MigrationJournal.read(MigrationJournal.Record.self, MigrationJournal.journalFile, in: directory)
        else {
            // Finished by another run while this one waited for the lock.
            return nothingToMigrate(options, "the container was migrated already")
        }
        guard let plan = try MigrationJournal.read(MigrationPlan.self, MigrationJournal.planFile, in: directory) else {
            throw MigrationError.damagedJournal(path: directory.childPath(MigrationJournal.planFile))
        }
        if options.legacyPathIsExplicit, try !samePlace(options.legacyPath, plan.legacyPath) {
            throw MigrationError.otherMigrationUnfinished(container: options.containerPath, recorded: plan.legacyPath,
                                                          requested: options.legacyPath)
        }
        let committed = try directory.status(of: MigrationJournal.commitMarkerFile) != nil
        var legacyRoot: Directory?
        var legacy: LegacyStore?
        if !committed {
            // Until the commit marker, the old location is complete: it must still be there.
            legacyRoot = try Directory.open(path: plan.legacyPath)
            legacy = try LegacyStore(directory: legacyRoot!)
        } else if try FirstLaunchMigration.legacyDirectoryExists(at: plan.legacyPath) {
            legacyRoot = try Directory.open(path: plan.legacyPath)
        }
        let run = MigrationRun(options: options, plan: plan, files: try MigrationFileList.open(in: directory), root: root, lock: lock,
                               migrationDirectory: directory, legacyRoot: legacyRoot, legacy: legacy, record: record)
        if committed { run.record.finished = .committed }
        run.resumed = true
        return try run.finish()
    }

    /// Whether two paths name the same directory (same device and inode), or the same text.
    private static func samePlace(_ first: String, _ second: String) throws -> Bool {
        if first == second { return true }
        guard try FirstLaunchMigration.legacyDirectoryExists(at: first), try FirstLaunchMigration.legacyDirectoryExists(at: second) else { return false }
        let a = try Directory.open(path: first).status(), b = try Directory.open(path: second).status()
        return a.device == b.device && a.inode == b.inode
    }

    /// The destination store for reading, if there is one; under the exclusive lock.
    private static func destinationStore(root: Directory, keys: any FileKeys) throws -> Store? {
        guard try root.status(of: ContainerLayout.storeDirectory)?.kind == .directory else { return nil }
        let storeDirectory = try root.openDirectory(ContainerLayout.storeDirectory)
        guard try Container.storeFileKind(in: storeDirectory) != nil else { return nil }
        let connection = try Container.openStoreConnection(storeDirectory: storeDirectory, keys: keys)
        return try Schema.version(of: connection) == 0 ? nil : Store(connection: connection)
    }

    /// Plans without taking the lock or writing anything, and reports what a run would do.
    private static func dryRun(_ options: MigrationOptions, legacy: LegacyStore, legacyRoot: Directory) throws -> MigrationSummary {
        var trips = 0
        var root: Directory?
        if let container = try ReadOnlyContainer.open(at: options.containerPath, lockTimeout: options.container.lockTimeout, keys: options.container.fileKeys) {
            trips = try container.read { try RecordRows.count(.trip, in: $0) }.1 ?? 0
            root = container.root
        }
        if trips > 0 && !options.merge {
            throw MigrationError.destinationHasTrips(container: options.containerPath, legacy: options.legacyPath, trips: trips)
        }
        let plan = try MigrationPlanner(legacy: legacy, legacyRoot: legacyRoot, containerRoot: root, containerPath: options.containerPath,
                                        merge: options.merge, migratedAt: options.container.clock().utcStamp,
                                        destinationStore: nil, progress: options.progress).make(into: MigrationFileList.create(in: nil))
        var summary = MigrationRun.summary(plan: plan, outcome: .dryRun)
        summary.added = plan.counts
        summary.preferencesMigrated = plan.preferences.values.keys.map(\.rawValue).sorted()
        summary.tokensMoved = plan.preferences.tokens
        return summary
    }
}
