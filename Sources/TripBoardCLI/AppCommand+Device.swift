import TripBoardDevice
import TripBoardKeychain
import TripBoardModel
import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardCommandLine

extension AppCommand {
    static var deviceCommands: [AppCommandSpec] {
        let autoLock = OptionSpec.value("--auto-lock", "DURATION", "lock by itself this long after unlocking: 90s, 5m, 1h, 2d (at most 7d) or never; default 5m")
        return [
            AppCommandSpec(words: ["device", "status"], options: [.json], summary: """
                        Says whether this device has a passcode and is locked or unlocked, when it locks by itself, where its \
                        unlocked keys are held (the kernel keyring) and how many wrong passcodes were given in a row.
                        """, run: handlingSecrets(deviceStatus), store: .none),
            AppCommandSpec(words: ["device", "unlock"], options: [autoLock], summary: """
                        Unlocks this device with its passcode (read from standard input or asked for on a terminal): the class \
                        keys go to the kernel keyring, where every process of the user finds them, until the auto-lock.
                        """, run: takingSecrets(unlockDevice), store: .none, takesSecrets: true),
            AppCommandSpec(words: ["device", "lock"], summary: "Locks this device now: the kernel forgets the keys of complete data.",
                        run: handlingSecrets(lockDevice), store: .none),
            AppCommandSpec(words: ["device", "auto-lock"], arguments: [.required("DURATION", "90s, 5m, 1h, 2d (at most 7d) or never")],
                        summary: "Sets how long after each unlock the device locks by itself (from the next unlock on).",
                        run: handlingSecrets(setAutoLock), store: .none),
            AppCommandSpec(words: ["device", "passcode", "set"], options: [autoLock], summary: """
                        Sets a passcode (at least 6 characters; one line of standard input, or asked for twice on a terminal) on \
                        a device without one. The device stays unlocked until the auto-lock.
                        """, run: takingSecrets(setPasscode), store: .none, takesSecrets: true),
            AppCommandSpec(words: ["device", "passcode", "change"], summary: """
                        Changes the passcode: the current one, then the new one (two lines of standard input, or asked for on a \
                        terminal), with new class keys: what is sealed on this device stays readable, and a copy of the \
                        old keybag opens nothing sealed from now on. The device is left unlocked.
                        """, run: takingSecrets(changePasscode), store: .none, takesSecrets: true),
            AppCommandSpec(words: ["device", "passcode", "remove"], summary: """
                        Removes the passcode (the current one is read as for unlock): the device is then always unlocked.
                        """, run: takingSecrets(removePasscode), store: .none, takesSecrets: true),
            AppCommandSpec(words: ["device", "passcode", "reset"], options: [.yes], summary: """
                        For a forgotten passcode: makes a new keybag under a new passcode. What was sealed under the old one \
                        cannot be read any more (the old keybag is kept beside the new one). On a terminal it asks you to \
                        type `reset` first; without one, --yes is required.
                        """, run: takingSecrets(resetPasscode), store: .none, takesSecrets: true),
        ]
    }

    /// This device's lock; the device key is created only by a command that sets a passcode.
    static func deviceLock(_ context: CommandContext, creating: Bool = false) throws -> DeviceLock? {
        let location = try context.deviceLocation()
        let anchor = try DeviceLock.anchor(environment: context.environment)
        guard let device = creating ? try DeviceKey.loadOrCreate(at: location) : try DeviceKey.existing(at: location) else { return nil }
        return try DeviceLock(device: device, anchor: anchor, passcodeDerivation: { try Argon2id.deriveKey(passphrase: $0, parameters: $1) })
    }

    /// `--auto-lock`'s value: `nil` when not given, `.some(nil)` for never.
    static func autoLockOption(_ context: CommandContext) throws -> UInt32?? {
        guard let text = try context.arguments.option("--auto-lock") else { return nil }
        return .some(try parseAutoLock(text, what: "--auto-lock"))
    }

    /// `90s`, `5m`, `1h`, `2d` or `never` (nil), within `Keybag.autoLockRange`.
    static func parseAutoLock(_ text: String, what: String) throws -> UInt32? {
        if text == "never" { return nil }
        let units: [Character: UInt64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let digits = text.dropLast()
        guard let unit = text.last.flatMap({ units[$0] }), !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }),
              let number = UInt64(digits),
              number.multipliedReportingOverflow(by: unit).overflow == false,
              let seconds = UInt32(exactly: number * unit), Keybag.autoLockRange.contains(seconds) else {
            // Not repeated: on `device unlock` it may be the passcode, typed in the wrong place.
            throw CommandLineError.usage("\(what) must be a duration from 1s to 7d (90s, 5m, 1h, 2d) or never")
        }
        return seconds
    }

    static func describeAutoLock(_ seconds: UInt32?) -> String {
        guard let seconds else { return "never" }
        if seconds % 86_400 == 0 { return "\(seconds / 86_400) day\(seconds == 86_400 ? "" : "s")" }
        if seconds % 3600 == 0 { return "\(seconds / 3600) hour\(seconds == 3600 ? "" : "s")" }
        if seconds % 60 == 0 { return "\(seconds / 60) minute\(seconds == 60 ? "" : "s")" }
        return "\(seconds) second\(seconds == 1 ? "" : "s")"
    }

    struct DeviceStatusOutput: Encodable {
        var device: String?
        var state: String
        var passcode: Bool
        var autoLockSeconds: UInt32?
        var locksAt: String?
        var failedAttempts: Int
        var nextAttemptAt: String?
        var keyring: String
        var keyringAvailable: Bool
        var readableClasses: [String]
        var keybag: String?
        var protection: String
    }

    static func deviceStatus(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let anchor = try DeviceLock.anchor(environment: context.environment)
        let lock = try deviceLock(context)
        let status = try lock?.status() ?? DeviceStatus.withoutDevice(anchor: anchor)
        if let lock, status.keybag == nil, let missing = try missingKeybag(context) {
            // Said, not hidden behind "no passcode": the keybag that sealed the keychain's items is gone.
            context.console.warning(KeychainError.keybagMissing(path: lock.device.location.directory + "/" + Keybag.fileName, keybag: missing).description)
        }
        let output = DeviceStatusOutput(
            device: lock?.device.fingerprint, state: status.state.name, passcode: status.state != DeviceStatus.State.noPasscode,
            autoLockSeconds: status.autoLockSeconds, locksAt: status.locksAt.map { $0.inLocalZone.iso8601() }, failedAttempts: status.failedAttempts,
            nextAttemptAt: status.nextAttemptAt.map { $0.inLocalZone.iso8601() }, keyring: status.keyring,
            keyringAvailable: !status.keyring.hasPrefix("unavailable"), readableClasses: status.readableClasses.map { $0.rawValue },
            keybag: status.keybag, protection: status.protection)
        if json { return try context.console.printJSON(output) }
        let state: String = switch status.state {
        case .noPasscode: "no passcode (always unlocked)"
        case .unlocked: "unlocked" + (status.locksAt.map { ", locks by itself at \($0.inLocalZone.clockText)" } ?? ", until locked")
        case .locked: "locked"
        case .lockedSinceStart: "locked, not unlocked since the computer started"
        case .keyringUnavailable: "locked: the kernel keyring is unavailable here"
        }
        var lines = ["Device: " + (lock.map { String($0.device.fingerprint.prefix(16)) } ?? "no device key yet"), "State: \(state)"]
        if status.state != DeviceStatus.State.noPasscode { lines.append("Auto-lock: \(describeAutoLock(status.autoLockSeconds)) after unlocking") }
        lines.append("Keyring: \(status.keyring)")
        lines.append("Protection: \(status.protection)")
        if status.failedAttempts > 0 {
            lines.append("Wrong passcodes in a row: \(status.failedAttempts)"
                         + (status.nextAttemptAt.map { "; next attempt at \($0.inLocalZone.clockText)" } ?? ""))
        }
        for line in lines { context.console.print(terminalSafe(line)) }
    }

    static func unlockDevice(_ context: CommandContext) throws {
        let autoLock = try autoLockOption(context)
        try context.finishArguments()
        guard let lock = try deviceLock(context), let keybag = try lock.keybag(), keybag.passcode != nil else { throw DeviceError.noPasscode }
        let status = try lock.unlock(try readSecret("passcode"), autoLockSeconds: autoLock)
        context.console.diagnostic(unlockedMessage(status))
        sealFilesFiledWhileLocked(context)
    }

    /// After an unlock: the files a locked device could seal only to `complete-unless-open`
    /// (a `complete` ticket downloaded by sync meanwhile) are sealed as their rows say, in the
    /// container this command names when there is one. Best effort: a failure is a warning, and
    /// the next unlock, sync or `container protect` tries again.
    static func sealFilesFiledWhileLocked(_ context: CommandContext) {
        do {
            let path = try context.containerPath
            guard try Container.hasManifest(at: path) else { return }
            var options = try context.containerOptions()
            options.createsContainer = false
            options.storeRequirement = .required  // the device commands themselves need none
            let container = try Container.openForWriting(at: path, options: options)
            let outcome = try AttachmentFiles(container: container).holdingDeletionsBack(timeout: options.lockTimeout) {
                try AttachmentProtection(container: container).reconcile(includingClear: false)
            }
            if outcome.sealed > 0 {
                context.console.diagnostic("sealed \(outcome.sealed) attachment file\(outcome.sealed == 1 ? "" : "s") as \(outcome.sealed == 1 ? "its row says" : "their rows say") (filed while the device was locked)")
            }
        } catch {
            context.console.warning("the files filed while the device was locked are not sealed as their rows say yet: \(errorMessage(for: error))")
        }
    }

    static func unlockedMessage(_ status: DeviceStatus) -> String {
        guard let locksAt = status.locksAt else { return "unlocked (no auto-lock: `app device lock` locks it)" }
        return "unlocked until \(locksAt.inLocalZone.clockText)"
    }

    static func lockDevice(_ context: CommandContext) throws {
        try context.finishArguments()
        guard let lock = try deviceLock(context) else { throw DeviceError.noPasscode }
        context.console.diagnostic(try lock.lock() ? "locked" : "the device was not unlocked here; nothing to lock")
    }

    static func setAutoLock(_ context: CommandContext) throws {
        let seconds = try parseAutoLock(try context.arguments.positional("DURATION"), what: "DURATION")
        try context.finishArguments()
        guard let lock = try deviceLock(context) else { throw DeviceError.noPasscode }
        try lock.setAutoLock(seconds)
        context.console.diagnostic(seconds == nil ? "auto-lock: never (`app device lock` locks it)"
                                                  : "auto-lock: \(describeAutoLock(seconds)) after each unlock")
    }

    static func setPasscode(_ context: CommandContext) throws {
        let autoLock = try autoLockOption(context)
        try context.finishArguments()
        // Refused before the passcode is asked for, and before a device key is made.
        if let existing = try deviceLock(context), try existing.keybag()?.passcode != nil { throw DeviceError.passcodeAlreadySet }
        try DeviceLock.requireKeyring(anchor: try DeviceLock.anchor(environment: context.environment))
        let passcode = try readSecret("new passcode", confirm: true)
        try DeviceLock.checkNewPasscode(passcode)
        let status = try deviceLock(context, creating: true)!.setPasscode(passcode, autoLockSeconds: autoLock)
        context.console.diagnostic("passcode set; " + unlockedMessage(status))
    }

    static func changePasscode(_ context: CommandContext) throws {
        try context.finishArguments()
        guard let lock = try deviceLock(context), try lock.keybag()?.passcode != nil else { throw DeviceError.noPasscode }
        let (current, new): (SecureBytes, SecureBytes)
        if StandardStream.input.isTerminal {
            current = try readSecret("current passcode")
            new = try readSecret("new passcode", confirm: true)
        } else {
            (current, new) = try readTwoSecrets("current passcode", then: "new passcode")
        }
        try lock.changePasscode(current: current, new: new)
        context.console.diagnostic("passcode changed")
    }

    static func removePasscode(_ context: CommandContext) throws {
        try context.finishArguments()
        guard let lock = try deviceLock(context), try lock.keybag()?.passcode != nil else { throw DeviceError.noPasscode }
        try lock.removePasscode(try readSecret("current passcode"))
        context.console.diagnostic("passcode removed: this device is always unlocked now")
    }

    /// The keybag the container's keychain holds items under, when this device has none (it went
    /// missing); nil otherwise, and without a keychain (nothing is created to ask).
    static func missingKeybag(_ context: CommandContext) throws -> String? {
        guard let directory = try Directory.openIfPresent(path: try context.containerPath + "/" + ContainerLayout.keychainDirectory),
              try directory.status(of: ContainerLayout.keychainFile) != nil else { return nil }
        return try context.keychain().keybagsInUse().sorted().first
    }

    /// What `passcode reset` leaves unreadable here, said before it is confirmed; nil when nothing
    /// is sealed under the keybag (or there is none, or no keychain: nothing is created to ask).
    static func keybagDependents(_ context: CommandContext) throws -> String? {
        // A keybag that cannot be read (damaged, too large) is what a reset is for: nothing to list.
        let readable: Keybag?
        do {
            readable = try deviceLock(context)?.keybag()
        } catch DeviceError.damagedKeybag {
            readable = nil
        }
        guard let keybag = readable,
              let directory = try Directory.openIfPresent(path: try context.containerPath + "/" + ContainerLayout.keychainDirectory),
              try directory.status(of: ContainerLayout.keychainFile) != nil else { return nil }
        let dependents = try context.keychain().dependents(ofKeybags: [keybag.id] + keybag.previous.map(\.id))
        var lines: [String] = []
        if !dependents.thisDeviceOnly.isEmpty {
            lines.append("Lost here (this-device-only keychain items, sealed under its class keys):")
            lines += dependents.thisDeviceOnly.map { "  \(terminalSafe($0.service)) \(terminalSafe($0.account))" }
        }
        if dependents.migratable > 0 {
            lines.append("Locked here until `app keychain recover` with the recovery passphrase, or a restore: \(dependents.migratable) "
                + "migratable keychain item\(dependents.migratable == 1 ? "" : "s") (other devices of the sync zone still read them).")
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    static func resetPasscode(_ context: CommandContext) throws {
        let confirmed = context.arguments.flag("--yes")
        try context.finishArguments()
        try DeviceLock.requireKeyring(anchor: try DeviceLock.anchor(environment: context.environment))
        let warning = """
            A new keybag replaces this device's: whatever was sealed under the old one's class keys cannot be read \
            here any more (sync and backups hold copies of what they carried). Nothing is deleted.
            """ + (try keybagDependents(context).map { "\n" + $0 } ?? "")
        if !confirmed {
            guard StandardStream.input.isTerminal else {
                throw DeviceError.invalidArgument("passcode reset needs --yes when standard input is not a terminal; nothing was changed")
            }
        }
        // Said with --yes too: what becomes unreadable is worth a line in a script's log.
        context.console.warning(warning)
        if !confirmed {
            let answer = try StandardStream.input.readLine(prompt: "Type reset to go on: ")
            guard String(decoding: answer, as: UTF8.self).filter({ !$0.isWhitespace }) == "reset" else {
                return context.console.diagnostic("nothing was changed")
            }
        }
        let passcode = try readSecret("new passcode", confirm: true)
        try DeviceLock.checkNewPasscode(passcode)
        let retired = try deviceLock(context, creating: true)!.resetPasscode(new: passcode)
        context.console.diagnostic("new keybag made; unlocked" + (retired.map { "; the old keybag is kept as \($0)" } ?? ""))
    }
}
