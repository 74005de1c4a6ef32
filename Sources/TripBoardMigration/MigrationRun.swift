import TripBoardStorage
import TripBoardSystem

/// One run of the step machine, from whatever step the journal says was finished last. Every
/// step can be repeated: a step's work is recorded in the journal only once it is durable, and a
/// step that finds its work already done (rows present, files in place) does not do it again.
final class MigrationRun {
    let options: MigrationOptions
    let plan: MigrationPlan
    /// The planned files (`migration/plan-files.sqlite`), read a page at a time.
    let files: MigrationFileList
    let root: Directory
    /// The exclusive container lock, held from the plan to the end; handed to the container once
    /// it is set up (which keeps it exclusive until it is released).
    let lock: FileLock
    let migrationDirectory: Directory
    var legacyRoot: Directory?
    /// The legacy store; closed before the old location is deleted.
    var legacy: LegacyStore?
    var record: MigrationJournal.Record
    var resumed = false
    private(set) var openedContainer: Container?
    /// Across filesystems: the planned files up to this number were copied into
    /// `migration/staged/0/<number>` while the store step ran, their sizes checked; the
    /// attachments step makes them durable and publishes them (0: none).
    var copiedAheadThrough: Int64 = 0
    /// The new store, started while the plan listed the files (a fresh run into a container with
    /// no record); the store step finishes and publishes it.
    var prebuilt: MigrationStoreBuilder?
    /// What each step of this run took, for the summary.
    var stepTimes: [MigrationStepTime] = []

    init(options: MigrationOptions, plan: MigrationPlan, files: MigrationFileList, root: Directory, lock: FileLock, migrationDirectory: Directory,
         legacyRoot: Directory?, legacy: LegacyStore?, record: MigrationJournal.Record) {
        self.options = options
        self.plan = plan
        self.files = files
        self.root = root
        self.lock = lock
        self.migrationDirectory = migrationDirectory
        self.legacyRoot = legacyRoot
        self.legacy = legacy
        self.record = record
    }

    /// The destination, set up (layout, store, manifest) under the lock this run holds.
    func container() throws -> Container {
        if let openedContainer { return openedContainer }
        var containerOptions = options.container
        containerOptions.durability = .full  // every commit of the migration is on disk before the journal says so
        let container = try Container.setUpHoldingExclusiveLock(path: options.containerPath, root: root, lock: lock,
                                                                options: containerOptions)
        openedContainer = container
        return container
    }

    /// The legacy store and directory, which every step before the commit marker needs.
    func legacySource() throws -> (LegacyStore, Directory) {
        guard let legacy, let legacyRoot else { throw MigrationError.legacyNotFound(path: plan.legacyPath) }
        return (legacy, legacyRoot)
    }

    /// A step before the commit marker: run (and timed as `name`) unless the journal says it is
    /// done, then the named crash point, then the journal records it.
    private func step(_ done: MigrationJournal.Step, _ name: String, crashPoint: String,
                      _ body: () throws -> Void) throws {
        guard record.finished < done else { return }
        try timed(name, body)
        CrashPoint.reach(crashPoint)
        try save(done)
    }

    func finish() throws -> MigrationSummary {
        try step(.storePublished, "store", crashPoint: "migration.store") {
            (record.added, record.storeDigest) = try copyingFilesAlongside { try publishStore() }
        }
        try step(.attachmentsMoved, "attachments", crashPoint: "migration.attachments") { try moveFiles() }
        try step(.preferencesMerged, "preferences", crashPoint: "migration.preferences") { try mergePreferences() }
        try step(.verified, "verify", crashPoint: "migration.verify") { try verify() }
        if record.finished < .committed {
            // The decision point: from here on the destination is the copy, whatever happens next.
            try timed("commit") {
                // The rows' hashes are still to be read: the pass is due from the moment they are visible.
                if plan.fileCount > 0 { try AttachmentHashing.markPending(in: migrationDirectory) }
                try MigrationJournal.write(Self.summary(plan: plan, outcome: .migrated), MigrationJournal.commitMarkerFile,
                                           in: migrationDirectory)
            }
            CrashPoint.reach("migration.commit")
            record.finished = .committed
        }
        let leftBehind = try timed("delete") {
            let leftBehind = try deleteOldLocation()
            // The journal first: from then on the migration is finished for everyone. Then the
            // plan, and the temporary files of atomic writes a kill cut short (a later run removes
            // any of these that a kill here leaves: `ContainerMigration.removeLeftovers`).
            try migrationDirectory.removeFile(MigrationJournal.journalFile)
            try migrationDirectory.removeFile(MigrationJournal.planFile)
            try MigrationFileList.removeFiles(in: migrationDirectory)
            for name in try migrationDirectory.entries() where name.hasSuffix(".tmp") {
                try migrationDirectory.removeFile(name)
            }
            try migrationDirectory.synchronize()
            return leftBehind
        }

        var summary = Self.summary(plan: plan, outcome: .migrated)
        summary.resumed = resumed
        summary.added = record.added ?? MigrationCounts()
        summary.tokensMoved = record.tokensMoved ?? 0
        summary.tokensDiscarded = record.tokensDiscarded ?? 0
        summary.preferencesKept = record.preferencesKept ?? []
        let kept = Set(summary.preferencesKept)
        summary.preferencesMigrated = plan.preferences.values.keys.map(\.rawValue).filter { !kept.contains($0) }.sorted()
        summary.leftBehind = leftBehind
        summary.steps = stepTimes
        return summary
    }

    /// Runs one step and records its wall time.
    private func timed<Result>(_ step: String, _ body: () throws -> Result) rethrows -> Result {
        let started = MonotonicClock.now()
        defer { stepTimes.append(MigrationStepTime(step, since: started)) }
        return try body()
    }

    /// Records `step` as finished: journal replaced atomically and durably.
    private func save(_ step: MigrationJournal.Step) throws {
        record.finished = step
        try MigrationJournal.write(record, MigrationJournal.journalFile, in: migrationDirectory)
    }

    /// The parts of the summary that come from the plan alone.
    static func summary(plan: MigrationPlan, outcome: MigrationSummary.Outcome) -> MigrationSummary {
        var summary = MigrationSummary(outcome: outcome, from: plan.legacyPath, container: plan.containerPath)
        summary.legacyCounts = plan.counts
        summary.storeBytes = plan.storeBytes
        summary.attachmentBytes = plan.fileBytes
        summary.sameFilesystem = plan.sameFilesystem
        summary.missing = plan.missing
        summary.recovered = plan.recovered
        summary.preferencesRefused = plan.preferences.refused
        summary.preferencesUnknown = plan.preferences.unknown
        summary.bookingKindsChangedToOther = plan.bookingKindsChangedToOther
        summary.leftBehind = plan.foreign.map { plan.legacyPath + "/" + $0 }
        return summary
    }

    func report(_ step: String, done: Int64, total: Int64) {
        options.progress(MigrationProgress(step: step, done: done, total: total))
    }
}
