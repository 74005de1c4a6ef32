import TripBoardStorage
import TripBoardSync
import TripBoardSystem
import TripBoardReadPath
import TripBoardCommandLine

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

    /// How long each wait for the server's announcement lasts: also how soon a local commit or
    /// a signal is noticed.
    static let watchWaitSeconds = 0.25
    /// A sync at least this often, in case an announcement was missed (the listener was down).
    static let watchFallbackSeconds = 60.0

    static func syncWatch(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let store = try context.store()
        guard let account = try store.syncAccount() else { throw SyncError.notSetUp }
        let (key, password) = try syncSecrets(context, account)
        // From here SIGINT and SIGTERM are read from a signalfd: they end the loop between steps.
        let watcher = try ChangeWatcher()
        watcher.watch(directory: try context.container().path + "/" + ContainerLayout.storeDirectory)
        context.console.diagnostic("watching zone \(account.zone); SIGINT or SIGTERM stops")
        context.console.flush()

        var listener: SyncAgentClient?
        var listenerRetryAt = 0.0
        var due = true
        var syncRetryAt = 0.0
        var failures = 0
        var warnedReadOnly = false
        var lastSync = MonotonicClock.now()
        var seenVersion = try store.connection.dataVersion()
        while true {
            if listener == nil && MonotonicClock.now() >= listenerRetryAt {
                // Listening before syncing: a change made meanwhile is announced, not missed.
                listener = try? startListener(account: account, password: password)
                if listener == nil { listenerRetryAt = MonotonicClock.now() + 5 } else { due = true }
            }
            if due && MonotonicClock.now() >= syncRetryAt {
                if let delay = try watchSync(context, store: store, key: key, password: password, json: json,
                                             failures: &failures, warnedReadOnly: &warnedReadOnly) {
                    syncRetryAt = MonotonicClock.now() + delay
                } else {
                    due = false
                }
                context.console.flush()
                lastSync = MonotonicClock.now()
                seenVersion = try store.connection.dataVersion()
            }
            var announced = false
            if let agent = listener {
                do {
                    announced = try agent.awaitChange(zone: account.zone, seconds: watchWaitSeconds)
                } catch {
                    agent.end()
                    listener = nil
                }
            }
            if watcher.wait(timeout: listener == nil ? watchWaitSeconds : 0) == .terminated { break }
            // data_version changes when another connection commits (this one's own, sync's, do not).
            let version = try store.connection.dataVersion()
            if announced || version != seenVersion || MonotonicClock.now() - lastSync >= watchFallbackSeconds { due = true }
            seenVersion = version
        }
        listener?.end()
        context.console.diagnostic("stopped watching")
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

    private static func startListener(account: SyncAccount, password: String?) throws -> SyncAgentClient {
        let agent = try SyncAgentClient()
        do {
            _ = try agent.connect(conninfo: account.server, password: password)
            try agent.listen()
            return agent
        } catch {
            agent.end()
            throw error
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
