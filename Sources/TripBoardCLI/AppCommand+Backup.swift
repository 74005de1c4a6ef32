import TripBoardBackup
import TripBoardDevice
import TripBoardKeychain
import TripBoardMigration
import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine

extension AppCommand {
    static var backupCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["backup"],
                        options: [
                            .value("--output", "FILE", "the backup file to write (age v1 around a POSIX tar)", required: true, completion: .file),
                            .json,
                        ],
                        summary: """
                        Writes the whole container — store, attachments, preferences, keychain items (sealed) — as one \
                        consistent snapshot to FILE: an age-encrypted tar (`age -d FILE | tar x` restores it by hand). \
                        The passphrase comes from standard input, or is asked for twice on a terminal. Other processes \
                        keep working meanwhile. Never in a backup: caches, tmp/, the lock, the device key.
                        """, run: takingSecrets(backup)),
            AppCommandSpec(words: ["backup", "verify"],
                        options: [.json],
                        arguments: [
                            .required("FILE", "the backup to verify", completion: .file),
                        ],
                        summary: """
                        The restore drill: runs every check of restore's dry run on FILE, then compares what a user sees                         in it with the container — records by id and their fields, attachment hashes, preferences,                         keychain items — and says what differs. Publishes nothing. Exit 0 when the backup holds what the                         container holds, 3 when it differs, 65 when it is damaged. The passphrase comes from standard                         input, or is asked for on a terminal.
                        """, run: takingSecrets(verifyBackup)),
            AppCommandSpec(words: ["restore"],
                        options: [
                            .flag("--replace", "move an existing container aside (never deleted) and restore in its place"),
                            .flag("--dry-run", "verify the backup and report; change nothing"),
                            .json,
                        ],
                        arguments: [
                            .required("FILE", "the backup to restore", completion: .file),
                        ],
                        summary: """
                        Restores a backup into the container (--container DIR, else as usual), which must not exist or \
                        be empty; --replace restores over an existing one, which is moved aside to DIR.replaced-<time> \
                        (never deleted). Everything is verified before anything is put in place; --dry-run verifies and \
                        changes nothing. The passphrase comes from standard input, or is asked for on a terminal.
                        """, run: takingSecrets(restore), createsContainer: true, store: .none),
        ]
    }

    /// The work factor of new backups: age's 2^18, or (tests only) `TRIPBOARD_BACKUP_WORK_FACTOR`.
    static func backupWorkFactor(_ context: CommandContext) throws -> Int {
        guard let text = context.environment["TRIPBOARD_BACKUP_WORK_FACTOR"], !text.isEmpty else { return AgeWriter.defaultWorkFactor }
        guard let value = Int(text), AgeWriter.workFactors.contains(value) else {
            throw CommandLineError.usage("TRIPBOARD_BACKUP_WORK_FACTOR must be a whole number 1–22")
        }
        return value
    }

    static func backup(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let output = try context.arguments.requiredOption("--output")
        try context.finishArguments()
        let (directory, name) = try outputDestination(output)
        let workFactor = try backupWorkFactor(context)
        let container = try context.container()
        try refuseOutputInside(directory, container: container.path, device: try context.deviceLocation().directory)
        let hasKeychain = try container.status(of: ContainerLayout.keychainDirectory + "/Keychain.sqlite") != nil
        let keychain = hasKeychain ? try context.keychain() : nil
        var backup = try ContainerBackup(container: container, keychain: keychain, passphrase: try readSecret("backup passphrase", confirm: true))
        backup.workFactor = workFactor
        let bar = ProgressBar(isEnabled: StandardStream.error.isTerminal && !context.console.isQuiet)
        backup.progress = { done, total in bar.update(MigrationProgress(step: "backup", done: done, total: total)) }
        let summary = try backup.write(to: directory, as: name)
        bar.finish()
        summary.warnings.forEach { context.console.warning(terminalSafe($0)) }
        if json { return try context.console.printJSON(summary) }
        let counts = summary.counts
        context.console.print(terminalSafe("Backed up \(container.path) to \(summary.file) (\(ProgressBar.bytes(summary.bytes))):"))
        context.console.print("  \(counts.trips) trips, \(counts.places) places, \(counts.bookings) bookings, "
            + "\(summary.attachmentFiles) attachment files (\(ProgressBar.bytes(summary.attachmentBytes)))")
        if summary.missingAttachments > 0 { context.console.print("  attachments whose file was already lost (rows kept): \(summary.missingAttachments)") }
        if summary.recoveredFiles > 0 { context.console.print("  files of attachments/recovered/: \(summary.recoveredFiles)") }
        if let keychain = summary.keychain { printKeychain(keychain, context: context, restoring: false) }
    }

    /// A backup written into the container (over its store, say) or the device directory would
    /// overwrite what it backs up, or be part of the next one: refused (73), whatever the
    /// spelling of the path (`Directory.isInside`), before the passphrase is asked for.
    static func refuseOutputInside(_ directory: Directory, container: String, device: String) throws {
        for (place, what) in [(container, "the container"), (device, "this device's key directory")] {
            let root: Directory
            do {
                root = try Directory.open(path: place)
            } catch {
                if error.code == .notFound { continue }  // no device directory yet: nothing to write into
                throw error
            }
            guard try directory.isInside(root) else { continue }
            throw CommandLineError(.cannotCreate, terminalSafe("--output names a file inside \(what) (\(place)): a backup there would "
                                                               + "overwrite what it backs up; write it elsewhere. Nothing was written"))
        }
    }

    static func restore(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let replace = context.arguments.flag("--replace")
        let dryRun = context.arguments.flag("--dry-run")
        let source = try context.arguments.positional("FILE (the backup)")
        try context.finishArguments()
        let file = try FileDescriptor.openForReading(path: source)
        var restore = ContainerRestore(target: try context.containerPath, passphrase: try readSecret("backup passphrase"),
                                       device: try context.deviceLocation())
        restore.replace = replace
        restore.dryRun = dryRun
        restore.options = try context.containerOptions()
        restore.keyring = try DeviceLock.anchor(environment: context.environment)
        let bar = ProgressBar(isEnabled: StandardStream.error.isTerminal && !context.console.isQuiet)
        restore.progress = { done, total in bar.update(MigrationProgress(step: "restore", done: done, total: total)) }
        let summary = try restore.run(from: file)
        bar.finish()
        if json { return try context.console.printJSON(summary) }
        describe(summary, context: context)
    }

    static func verifyBackup(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let source = try context.arguments.positional("FILE (the backup)")
        try context.finishArguments()
        let file = try FileDescriptor.openForReading(path: source)
        let container = try context.container()
        let hasKeychain = try container.status(of: ContainerLayout.keychainDirectory + "/Keychain.sqlite") != nil
        let keychain = hasKeychain ? try context.keychain() : nil
        var restore = ContainerRestore(target: container.path, passphrase: try readSecret("backup passphrase"),
                                       device: try context.deviceLocation())
        restore.options = try context.containerOptions()
        let bar = ProgressBar(isEnabled: StandardStream.error.isTerminal && !context.console.isQuiet)
        restore.progress = { done, total in bar.update(MigrationProgress(step: "verify", done: done, total: total)) }
        let comparison = try restore.verify(from: file, against: container, liveKeychain: keychain)
        bar.finish()
        let differences = describeDifferences(comparison)
        if json {
            try context.console.printJSON(comparison)
        } else {
            let counts = comparison.backup.counts
            context.console.print("The backup is sound: \(counts.trips) trips, \(counts.places) places, \(counts.bookings) bookings, "
                + "\(comparison.backup.attachmentFiles) attachment files (\(ProgressBar.bytes(comparison.backup.attachmentBytes))), "
                + "every one checked against its row.")
            context.console.print(differences.isEmpty ? "It holds what the container holds."
                                  : "It differs from the container:\n" + differences.map { "  " + $0 }.joined(separator: "\n"))
        }
        guard differences.isEmpty else {
            throw CommandLineError(.differs, terminalSafe("the backup does not hold what \(container.path) holds: " + differences.joined(separator: "; ")))
        }
    }

    /// One line per sort of record, the preferences and the keychain that differ, in the
    /// container's terms ("changed since the backup").
    static func describeDifferences(_ comparison: BackupComparison) -> [String] {
        func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        func line(_ noun: String, _ difference: RecordDifference) -> String? {
            var parts: [String] = []
            if difference.changed > 0 { parts.append("\(plural(difference.changed, noun)) changed since the backup") }
            if difference.onlyHere > 0 { parts.append("\(plural(difference.onlyHere, noun)) added since the backup") }
            if difference.onlyThere > 0 { parts.append("\(plural(difference.onlyThere, noun)) gone since the backup") }
            return parts.isEmpty ? nil : parts.joined(separator: ", ")
        }
        var lines = [("trips", "trip"), ("places", "place"), ("bookings", "booking"), ("attachments", "attachment")].compactMap { table, noun in
            comparison.records[table].flatMap { line(noun, $0) }
        }
        if !comparison.preferencesChanged.isEmpty {
            lines.append("preferences changed since the backup: " + comparison.preferencesChanged.joined(separator: ", "))
        }
        if let keychain = line("keychain item", comparison.keychain) { lines.append(keychain) }
        return lines
    }

    static func describe(_ summary: RestoreSummary, context: CommandContext) {
        let console = context.console
        let counts = summary.counts
        console.print(terminalSafe(summary.dryRun ? "Dry run: the backup is sound and would restore into \(summary.container):"
                                                  : "Restored into \(summary.container):"))
        console.print("  \(counts.trips) trips, \(counts.places) places, \(counts.bookings) bookings, "
            + "\(summary.attachmentFiles) attachment files (\(ProgressBar.bytes(summary.attachmentBytes))), every one checked against its row")
        if summary.missingAttachments > 0 { console.print("  attachments without their file (kept, marked missing): \(summary.missingAttachments)") }
        if summary.filesNoRowNames > 0 {
            console.print("  files no row names: \(summary.filesNoRowNames) (`app container check --repair` moves them to attachments/recovered/)")
        }
        if let kept = summary.replacedContainerKeptAt { console.print(terminalSafe("  the container that was there is kept at \(kept)")) }
        if summary.wouldNeedReplace {
            console.print("  the path holds a container: the restore needs --replace, which moves it aside (never deletes it)")
        }
        if let keychain = summary.keychain { printKeychain(keychain, context: context, restoring: true) }
    }

    static func printKeychain(_ keychain: KeychainBackupState, context: CommandContext, restoring: Bool) {
        let console = context.console
        console.print("  keychain: \(keychain.migratable) migratable item\(keychain.migratable == 1 ? "" : "s")"
            + (keychain.migratableUnlockable ? "" : " (locked: this device cannot unwrap the container key; a recovery passphrase unlocks them)")
            + ", \(keychain.thisDeviceOnly) this-device-only")
        if !restoring && keychain.thisDeviceOnly > 0 {
            console.print("  this-device-only items come back only on this device; elsewhere they stay invisible")
        }
    }
}
