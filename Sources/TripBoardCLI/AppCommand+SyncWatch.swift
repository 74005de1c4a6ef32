import TripBoardKeychain
import TripBoardStorage
import TripBoardSync
import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine
import TripBoardDevice

/// `app sync watch [--json]`: syncs at once, then again whenever the server announces a change
/// in the zone (LISTEN/NOTIFY), another process commits to this store, or a minute passes —
/// until SIGINT or SIGTERM (docs/sync.md §3, "Watching").
extension AppCommand {
    static var syncWatchCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["sync", "watch"], options: [.json],
                        summary: """
                        Syncs now, then again on a change announced by the server, a commit to this container, or \
                        every minute, printing a line for each sync that moved something (--json: one object per \
                        line). A server that cannot be reached is tried again, later each time. SIGINT or SIGTERM \
                        stops it after the step it is in (exit 0).
                        """, run: handlingSecrets(syncWatch)),
        ]
    }

    /// How long the listener's agent waits on LISTEN per request; it answers at once when an
    /// announcement arrives, and the next request follows each answer.
    static let watchListenSeconds = 30.0
    /// A sync at least this often, in case an announcement was missed (the listener was down).
    static let watchFallbackSeconds = 60.0

    static func syncWatch(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        // From here SIGINT and SIGTERM are read from a signalfd: they end the loop between steps.
        let watcher = try ChangeWatcher()
        guard let (store, account, key, password) = try afterFirstUnlock(context, watcher: watcher, { try joinedZone(context) }) else {
            return context.console.diagnostic("stopped watching")
        }
        watcher.watch(directory: try context.container().path + "/" + ContainerLayout.storeDirectory)
        context.console.diagnostic("watching zone \(account.zone); SIGINT or SIGTERM stops")
        context.console.flush()

        var listener = WatchListener(account: account, password: password)
        var due = true
        var syncRetryAt = 0.0
        var failures = 0
        var warnedReadOnly = false
        var lastSync = MonotonicClock.now()
        var seenVersion = try store.changeCounter()
        while true {
            // Listening before syncing: a change made meanwhile is announced, not missed.
            if listener.startIfDue() { due = true }
            if due && MonotonicClock.now() >= syncRetryAt {
                // Read before the sync: a commit another process makes while it runs is seen
                // after it (the sync's own commits, on this connection, do not count).
                seenVersion = try store.changeCounter()
                if let delay = try watchSync(context, store: store, key: key, password: password, json: json,
                                             failures: &failures, warnedReadOnly: &warnedReadOnly) {
                    syncRetryAt = MonotonicClock.now() + delay
                } else {
                    due = false
                }
                context.console.flush()
                lastSync = MonotonicClock.now()
            }
            // One wait on everything at once: the listener's answer, a commit here, a signal,
            // or the next thing due (the fallback sync, a retry).
            var deadline = lastSync + watchFallbackSeconds
            if due { deadline = min(deadline, syncRetryAt) }
            if let retryAt = listener.retryAt { deadline = min(deadline, retryAt) }
            let wake = watcher.wait(timeout: deadline - MonotonicClock.now(), orInputOn: listener.waitingDescriptor())
            if wake == .terminated { break }
            let announced = wake == .input && listener.collect()
            // data_version changes when another connection commits (this one's own, sync's, do not).
            let version = try store.changeCounter()
            if announced || version != seenVersion || MonotonicClock.now() - lastSync >= watchFallbackSeconds { due = true }
            seenVersion = version
        }
        listener.end()
        context.console.diagnostic("stopped watching")
    }

    /// `body`'s result once the device has been unlocked since it started: before that neither
    /// the store nor the zone key (both until-first-unlock) can be opened, so the watch says so
    /// once and waits, asking the kernel again every second, as a phone's background task waits
    /// for the first unlock. nil: SIGINT or SIGTERM came first.
    private static func afterFirstUnlock<T>(_ context: CommandContext, watcher: ChangeWatcher, _ body: () throws -> T) throws -> T? {
        var said = false
        while true {
            do {
                return try body()
            } catch let error where awaitsFirstUnlock(error) {
                if !said {
                    context.console.diagnostic("the device has not been unlocked since it started: waiting for `app device unlock`")
                    context.console.flush()
                    said = true
                }
                if watcher.wait(timeout: 1) == .terminated { return nil }
            }
        }
    }

    /// Whether `error` says the device has not been unlocked since it started: the store's key
    /// (`DeviceError`) or the zone key (`KeychainError`).
    private static func awaitsFirstUnlock(_ error: any Error) -> Bool {
        if case KeychainError.deviceLocked(_, _, sinceStart: true)? = error as? KeychainError { return true }
        if case DeviceError.notUnlockedSinceStart? = error as? DeviceError { return true }
        return false
    }

    /// One sync of the watch, printing a line when it moved something. A failure worth another
    /// try is reported, and returns how long to wait before it (nil: the sync succeeded).
    private static func watchSync(_ context: CommandContext, store: Store, key: ZoneKey, password: String?, json: Bool,
                                  failures: inout Int, warnedReadOnly: inout Bool) throws -> Double? {
        do {
            let report = try performSync(context, store: store, key: key, password: password)
            if failures > 0 { context.console.diagnostic("the sync server answers again") }
            if report.readOnly && !warnedReadOnly { context.console.warning(readOnlyWarning) }
            warnedReadOnly = report.readOnly
            // The watch goes on (this device's values went again): said as a warning each time.
            if let skew = report.clockOffsetIgnored { context.console.warning(clockWarning(skew)) }
            for line in refusalWarnings(report) { context.console.warning(line) }
            failures = 0
            if report.movedSomething {
                if json { try context.console.write(Console.json(report, pretty: false) + [0x0a]) } else {
                    context.console.print(Timestamp.now().utcStamp + " " + summary(of: report))
                }
            }
            return nil
        } catch {
            guard isWorthRetrying(error) else { throw error }
            failures += 1
            let delay = min(60.0, Double(1 << min(failures, 6)))
            context.console.diagnostic("error: \(errorMessage(for: error)); trying again in \(Int(delay)) s")
            return delay
        }
    }


    /// A server that is down, busy, or an agent that timed out: worth another try later. Anything
    /// else (damaged data, a missing zone or key) ends the watch with its exit status.
    private static func isWorthRetrying(_ error: any Error) -> Bool {
        guard let error = error as? SyncError else { return false }
        switch error {
        case .serverUnavailable, .serverBusy, .agentFailed: return true
        default: return false
        }
    }
}

extension SyncReport {
    /// Whether this sync changed anything here or on the server.
    var movedSomething: Bool {
        pulled + trashed + pushed + replayed + blobsUploaded + blobsDownloaded + conflictsKept > 0
    }
}

/// `sync watch`'s listener: an agent of its own, connected and listening (LISTEN), with one
/// `awaitChange` request outstanding while the watch waits, so that an announcement wakes the
/// watch the moment the agent answers. One that cannot be started, or fails, is tried again
/// `retrySeconds` later; meanwhile the watch syncs on local commits and the fallback minute.
struct WatchListener {
    static let retrySeconds = 5.0
    let account: SyncAccount
    let password: String?
    private var agent: SyncAgentClient?
    private var asked = false
    /// When a listener is to be started again, while there is none.
    private(set) var retryAt: Double? = 0

    init(account: SyncAccount, password: String?) {
        self.account = account
        self.password = password
    }

    /// Starts the listener if there is none and its retry time has come: whether it did.
    mutating func startIfDue() -> Bool {
        guard agent == nil, let retryAt, MonotonicClock.now() >= retryAt else { return false }
        do {
            let started = try SyncAgentClient()
            do {
                _ = try started.connect(conninfo: account.server, password: password)
                try started.listen()
            } catch {
                started.end()
                throw error
            }
            agent = started
            self.retryAt = nil
            return true
        } catch {
            self.retryAt = MonotonicClock.now() + Self.retrySeconds
            return false
        }
    }

    /// The descriptor to wait on for the agent's answer, after asking it to wait for an
    /// announcement if it is not asked already; nil without a listener.
    mutating func waitingDescriptor() -> Int32? {
        guard let agent else { return nil }
        if !asked {
            do {
                try agent.postAwaitChange(zone: account.zone, seconds: AppCommand.watchListenSeconds)
                asked = true
            } catch {
                fail()
                return nil
            }
        }
        return agent.answerDescriptor
    }

    /// The agent's answer, once its descriptor is readable: whether the zone changed. A failed
    /// listener (the agent or the server gone) is ended and tried again later.
    mutating func collect() -> Bool {
        guard let agent, asked else { return false }
        asked = false
        do {
            return try agent.collectChange()
        } catch {
            fail()
            return false
        }
    }

    private mutating func fail() {
        agent?.end()
        agent = nil
        asked = false
        retryAt = MonotonicClock.now() + Self.retrySeconds
    }

    mutating func end() {
        agent?.end()
        agent = nil
    }
}
