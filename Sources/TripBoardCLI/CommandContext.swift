import TripBoardDevice
import TripBoardKeychain
import TripBoardMigration
import TripBoardStorage
import TripBoardSystem
import TripBoardCommandLine

/// What every command gets: its arguments, the environment, the console, and the container,
/// opened on first use (so `--help` and usage errors never touch the disk).
final class CommandContext {
    var arguments: Arguments
    let environment: [String: String]
    let console: Console
    /// Where the container is, or why that cannot be told (no HOME): found before the command
    /// runs, thrown only when the command needs it (`container init DIR` may name another place).
    private var containerLocation: Result<String, any Error>
    /// Where the container is; throws (exit 64) when no rule of docs/cli.md applies.
    var containerPath: String { get throws { try containerLocation.get() } }
    /// Whether this command may create a container where there is none (`AppCommandSpec.createsContainer`).
    var createsContainer = true
    /// What this command needs of the store (`AppCommandSpec.store`).
    var storeRequirement = StoreRequirement.required
    /// True when the command line named the container (`--container DIR`, `container init DIR`):
    /// TripBoard 1's data is then never migrated into it on the app's first launch, since a
    /// one-off or mistyped path must not carry the user's old data away from where they expect it.
    var containerIsExplicit = false
    /// Recorded in the manifest of a container this process creates.
    var processName = "app"
    /// What the command does besides its own work (`AppCommandSpec.chores`).
    var chores = Chore.ofAWriter
    private var openedContainer: Container?

    init(arguments: Arguments, environment: [String: String], console: Console, containerLocation: Result<String, any Error>) {
        self.arguments = arguments
        self.environment = environment
        self.console = console
        self.containerLocation = containerLocation
    }

    convenience init(arguments: Arguments, environment: [String: String], console: Console, containerPath: String) {
        self.init(arguments: arguments, environment: environment, console: console, containerLocation: .success(containerPath))
    }

    /// Names the container (`container init DIR`) before it is opened.
    func relocateContainer(to path: String) { containerLocation = .success(path) }

    /// The container, opened for writing with the shared lock held from here to the end, with
    /// the command's chores around the opening: TripBoard 1's data migrated into it the first
    /// time, before; the trash tidied, after (`Chore`).
    func container() throws -> Container {
        if let openedContainer { return openedContainer }
        if chores.contains(.firstLaunchMigration) { try MigrationCommand.runOnFirstLaunch(self) }
        let container = try Container.openForWriting(at: try containerPath, options: try containerOptions())
        if container.wasCreated { console.diagnostic(terminalSafe("created a new TripBoard container at \(container.path)")) }
        for notice in container.setUpNotices { console.warning(notice) }
        if chores.contains(.trashPurge), storeRequirement == .required { Trash.tidyUp(container: container) }
        openedContainer = container
        return container
    }

    func store() throws -> Store { try container().store }

    /// Where this device's key lives (outside the container), from the environment.
    func deviceLocation() throws -> DeviceLocation { try DeviceLocation(environment: environment) }

    /// This device's key, created if it has none: for a writer that needs it before it opens the
    /// keychain (the migration, moving tokens in).
    func deviceKey() throws -> DeviceKey { try DeviceKey.loadOrCreate(at: try deviceLocation()) }

    /// The container's keychain as this device sees it (nothing is created outside the container
    /// until a write needs the device key); its warnings go to stderr.
    func keychain() throws -> Keychain {
        let location = try deviceLocation()
        return try Keychain(container: try container(), device: location, keyring: try DeviceLock.anchor(environment: environment),
                            notice: console.warning)
    }

    /// Called with the error a command failed with: a damaged page met in the store is recorded
    /// (`Container.recordStoreDamage`), so that writers refuse the store until it is checked.
    func noteFailure(_ error: any Error) {
        guard let openedContainer, Store.isDamagedPage(error) else { return }
        openedContainer.recordStoreDamage(detail: Store.damageDetail(error))
    }

    /// After a command that wrote to the store: the hashing pass the container migration leaves
    /// due (`AttachmentHashing`), when the migration's own run of it was killed. The command has
    /// succeeded by then; a pass that fails is a warning (it stays due, for the next write).
    func finishPendingHashing() {
        guard chores.contains(.finishHashing), let openedContainer, let store = try? openedContainer.store, store.hasWritten else { return }
        do {
            guard try AttachmentHashing.isPending(in: openedContainer) else { return }
            let bar = ProgressBar()
            defer { bar.finish() }
            if let outcome = try AttachmentHashing.finishPending(container: openedContainer, progress: { done, total in
                bar.update(MigrationProgress(step: "hashing", done: done, total: total))
            }), outcome.hashed > 0 {
                console.diagnostic("hashed \(outcome.hashed) migrated attachment files (the migration's hashing pass had not finished)")
            }
        } catch {
            console.warning("the migration's hashing pass did not finish (it runs again with the next change): \(errorMessage(for: error))")
        }
    }

    /// Releases the container and its lock (before a long wait such as `$EDITOR`).
    func closeContainer() { openedContainer = nil }

    func containerOptions() throws -> ContainerOptions {
        var options = try ContainerOptions(processName: processName, environment: environment)
        options.createsContainer = createsContainer
        options.storeRequirement = storeRequirement
        return options
    }

    /// Now: `TRIPBOARD_NOW` when set (tests; `ContainerOptions.fixedNow`), else the clock.
    func now() throws -> Timestamp { try ContainerOptions.fixedNow(environment: environment) ?? Timestamp.now() }

    /// Today's date where the user is (`TZ`), as the widget counts it.
    func today() throws -> CivilDate {
        let now = try now()
        return now.inLocalZone.localDate
    }

    /// Takes `--json`.
    func wantsJSON() -> Bool { arguments.flag("--json") }

    /// Fails on unconsumed arguments; call before doing any work.
    func finishArguments() throws { try arguments.finish() }
}
