public import TripBoardDevice
import TripBoardModel
public import TripBoardStorage
public import TripBoardKeychain
import TripBoardSodium
public import TripBoardKeys
public import TripBoardSystem

/// What `app restore` did (or, with `--dry-run`, would do).
public struct RestoreSummary: Sendable, Codable {
    public var container: String
    public var dryRun: Bool
    /// Where the container that was there is now (with `--replace`); `null` otherwise.
    public var replacedContainerKeptAt: String?
    /// A dry run into a path that holds a container, without `--replace`: the restore itself
    /// would need it (the container is moved aside, never deleted).
    public var wouldNeedReplace = false
    public var counts: StoreCounts
    public var attachmentFiles: Int
    public var attachmentBytes: Int64
    /// Rows whose file was lost before the backup (or is not in the archive): kept, `missing`.
    public var missingAttachments: Int
    /// Files in `attachments/<xx>/` that no row names: restored; `container check --repair`
    /// moves them to `attachments/recovered/`.
    public var filesNoRowNames: Int
    public var recoveredFiles: Int
    public var preferences: Bool
    /// The keychain as this device sees it after the restore; `null` when the backup has none.
    public var keychain: KeychainBackupState?
    public var durationSeconds: Double
}

/// `app restore`: verifies a backup whole, builds the container in a staging directory beside
/// the target, and only then puts it in place — a kill at any moment leaves either the old
/// container intact or the new one complete. Into a missing or empty target by default; over an
/// existing container only with `replace`, which moves the old one aside (`DIR.replaced-<stamp>`).
public struct ContainerRestore {
    public let target: String
    public let passphrase: SecureBytes
    public let device: DeviceLocation
    public var replace = false
    public var dryRun = false
    public var options = ContainerOptions()
    public var maximumWorkFactor = AgeReader.defaultMaximumWorkFactor
    /// Where this device's unlocked class keys are held (`TRIPBOARD_KEYRING`).
    public var keyring: KernelKeyring.Anchor = .user
    public var progress: (Int64, Int64) -> Void = { _, _ in }

    public init(target: String, passphrase: SecureBytes, device: DeviceLocation) {
        self.target = target
        self.passphrase = passphrase
        self.device = device
    }

    /// Restores the backup in `file` (opened by the caller).
    public func run(from file: FileDescriptor) throws -> RestoreSummary {
        let started = MonotonicClock.now()
        var summary = try staged(from: file) { place, stagingName, summary, _ in
            if dryRun {
                try place.parent.removeTree(stagingName)
            } else {
                summary.replacedContainerKeptAt = try place.publish(stagingName, stamp: options.clock().utcStamp, lockTimeout: options.lockTimeout)
            }
            return summary
        }
        summary.durationSeconds = ((MonotonicClock.now() - started) * 1000).rounded() / 1000
        return summary
    }

    /// `app backup verify`: the dry run, then what a user sees of the staged container compared
    /// with `live` (the container at `target`), then the staging directory removed — nothing is
    /// published, nothing written outside the staging directory.
    public func verify(from file: FileDescriptor, against live: Container, liveKeychain: Keychain?) throws -> BackupComparison {
        let started = MonotonicClock.now()
        var restore = self
        restore.dryRun = true
        restore.replace = false
        var comparison = try restore.staged(from: file) { place, stagingName, summary, transient in
            var setup = options
            setup.createsContainer = false
            setup.storeRequirement = .required
            // Its databases' key files are sealed under the staging's transient keys.
            setup.fileKeys = DeviceAndTransientFileKeys(device: options.fileKeys, transient: transient)
            // Brought to this build's schema in the staging directory, as a restore would.
            let staged = try Container.openForWriting(at: place.parent.childPath(stagingName), options: setup)
            // What expired in the backup's trash is gone from it as from the live container,
            // which its command's chores tidied (`Trash.tidyUp`): the two compare alike.
            Trash.tidyUp(container: staged)
            let comparison = try BackupComparison(summary: summary, live: live, liveKeychain: liveKeychain, backup: staged)
            try place.parent.removeTree(stagingName)
            return comparison
        }
        comparison.backup.wouldNeedReplace = false  // nothing is to be restored
        comparison.backup.durationSeconds = ((MonotonicClock.now() - started) * 1000).rounded() / 1000
        return comparison
    }

    /// Checks the target, takes the restore lock, stages and verifies the archive, then hands the
    /// staging directory to `finish`; on any failure before `finish` is done, the staging
    /// directory is removed.
    private func staged<T>(from file: FileDescriptor,
                           _ finish: (RestoreTarget, String, inout RestoreSummary, EphemeralFileKeys) throws -> T) throws -> T {
        // A dry run over a container reports that the restore would need --replace.
        let found = try RestoreTarget(path: target, replace: replace || dryRun)
        let total = try file.status().size
        let available = try found.parent.availableBytes()
        guard available > total + (1 << 20) else {
            throw RestoreError.insufficientSpace(path: found.parent.path, needed: total, available: available)
        }
        // The passphrase and the header are checked before anything is created.
        let age = try AgeReader(passphrase: passphrase, input: file, maximumWorkFactor: maximumWorkFactor)
        // The target is this restore's alone from here to the end; what it holds is looked at
        // again under the lock (another restore may have published there meanwhile).
        let hold = try found.holdForRestore(timeout: options.lockTimeout)
        defer { hold.unlock() }
        let place = try RestoreTarget(path: target, replace: replace || dryRun)
        try place.removeLeftoversOfEarlierRestores()
        let stagingName = try place.makeStaging(stamp: options.clock().utcStamp)
        do {
            // Staged under keys of this process's memory: nothing is written in the device
            // directory before every check has passed (a refused restore, a dry run write nothing
            // there), and no byte of a ticket or a database page is in the clear on disk meanwhile.
            let transient = try EphemeralFileKeys()
            var summary = try build(in: place, stagingName: stagingName, age: age, total: total, transient: transient)
            return try finish(place, stagingName, &summary, transient)
        } catch {
            // Staged files only: once the exchange happened, the staging name holds the old
            // container, and that error says so.
            if case .replacedButUnsettled? = error as? RestoreError { throw error }
            try? place.parent.removeTree(stagingName)
            throw error
        }
    }

    /// Fills the staging directory, verifies it, and (unless a dry run) sets it up as a container
    /// for this device.
    private func build(in place: RestoreTarget, stagingName: String, age: AgeReader, total: Int64,
                       transient: EphemeralFileKeys) throws -> RestoreSummary {
        let stagingRoot = try place.parent.openDirectory(stagingName)
        // The files end sealed under this device's class keys: a locked device is told so before
        // anything is read (a restore needs them open to seal each file as its row says).
        if !dryRun, let refusal = try options.fileKeys.refusal(.complete) { throw refusal }
        // A dry run keeps no ticket: each is hashed and checked as it goes by, never written.
        // Tickets are sealed to this device's `complete-unless-open` key as they are staged when
        // it has a keybag already (its public key: nothing to unlock, nothing written): only the
        // files whose rows ask another class are sealed a second time. A device whose keys cannot
        // be asked (none named, a keybag that does not read) stages under the transient keys, as
        // before: a restore has had its keys asked just above, and a dry run needs none.
        let attachmentKeys: any FileKeys = (try? options.fileKeys.hasKeys()) == true ? options.fileKeys : transient
        let staging = RestoreStaging(root: stagingRoot, keys: transient, attachmentKeys: attachmentKeys, keepsAttachments: !dryRun)
        // Stages on two cores, as `age -d | tar x`: the relay's thread reads and decrypts, this
        // one unpacks, seals and writes (a dry run's tickets: unpacks only), a third hashes the
        // tickets, and a fourth checks the store while the tickets are staged
        // (`RestoreStaging.storeChecks`).
        let decrypted = ReadAheadSource(upstream: age)
        try staging.fill(from: TarReader(input: decrypted, isAllowed: RestoreLayout.isAllowed)) { progress(min($0, total), total) }
        CrashPoint.reach("restore.staged")
        // Every check, the dry run's too, before anything is written outside the staging
        // directory (the device key, the keychain's generation): a refused restore writes nothing.
        var (summary, backupKey) = try RestoreVerification(staging: staging, passphrase: passphrase).verify(storeChecks: staging.storeChecks)
        // The container key is wrapped under this device's class keys: a locked device is told so
        // now, by the dry run too, before anything is restored.
        if backupKey != nil { try Keychain.requireClassKeys(device: device, keyring: keyring) }
        summary.container = place.canonicalPath
        summary.dryRun = dryRun
        summary.wouldNeedReplace = dryRun && !replace && place.kind == .container
        guard !dryRun else { return summary }
        let hasKeychain = try Container.status(of: ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile, in: stagingRoot) != nil
        // An archive need not hold every directory of the layout (caches/ and tmp/ never travel).
        try Container.createLayoutDirectories(in: stagingRoot)
        summary.keychain = try setUp(stagingPath: stagingRoot.path, hasKeychain: hasKeychain, backupKey: backupKey, transient: transient)
        // The databases' key files from the transient keys to the device's, last: the restored
        // container opens with this device's keys alone.
        try staging.writeKeyFiles(under: options.fileKeys)
        try stagingRoot.synchronizeFileSystem()
        CrashPoint.reach("restore.built")
        return summary
    }

    /// Sets the staged directory up as a container (WAL, layout, manifest) and adopts its
    /// keychain for this device: the container key re-wrapped from the backup passphrase, a new
    /// keychain identity, so a restore is never taken for a rollback; and a new sync identity
    /// (clock node), so the restored container is a device of its own.
    private func setUp(stagingPath: String, hasKeychain: Bool, backupKey: Keychain.BackupKey?,
                       transient: EphemeralFileKeys) throws -> KeychainBackupState? {
        var setup = options
        setup.createsContainer = true
        setup.storeRequirement = .required
        setup.fileKeys = DeviceAndTransientFileKeys(device: options.fileKeys, transient: transient)
        let container = try Container.openForWriting(at: stagingPath, options: setup)
        // A writer's chore, as every command that writes runs it: what expired in the backup's
        // trash is purged before the restored container is published.
        Trash.tidyUp(container: container)
        // Every file sealed under this device's keys, as its row says.
        try AttachmentProtection(container: container).resealEverything()
        try container.store.syncLedger.takeNewSyncIdentity()
        guard hasKeychain else { return nil }
        return try Keychain.adoptRestored(container: container, device: try DeviceKey.loadOrCreate(at: device), keyring: keyring, backupKey: backupKey)
    }
}
