import TripBoardDevice
import TripBoardKeychain
import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardCommandLine

extension AppCommand {
    static let accessTokenService = Keychain.accessTokenService
    static let refreshTokenService = Keychain.refreshTokenService
    /// Secrets and passphrases larger than this are refused (a token is a few KiB at most).
    static let secretLimit = 64 << 10

    static var keychainCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["keychain", "set"],
                        options: [
                            .value("--accessibility", "ACCESSIBILITY", """
                                when it can be read: when-unlocked (only while the device is unlocked) or after-first-unlock \
                                (from the first unlock after the computer starts; background work reads it while locked); \
                                with -this-device-only it never leaves this device, without it travels — recoverable on \
                                another device with the recovery passphrase, in backups, and synced to the zone's other \
                                devices. Default after-first-unlock-this-device-only; this-device-only and migratable are \
                                the earlier names of after-first-unlock-this-device-only and after-first-unlock
                                """, completion: .choices(KeychainAccessibility.allCases.map(\.rawValue))),
                        ],
                        arguments: [
                            .required("SERVICE", "the item's service"),
                            .required("ACCOUNT", "the item's account"),
                        ],
                        summary: """
                        Stores a secret read from standard input (one final \\n or \\r\\n is dropped; on a terminal it is \
                        asked for without echo). Secrets are never taken from the command line, where `ps` shows them.
                        """, run: takingSecrets(setItem), createsContainer: true, store: .none, takesSecrets: true),
            AppCommandSpec(words: ["keychain", "get"],
                        arguments: [
                            .required("SERVICE", "the item's service"),
                            .required("ACCOUNT", "the item's account"),
                        ],
                        summary: "Writes the secret to standard output (with a newline only on a terminal).", run: handlingSecrets(getItem), store: .none),
            AppCommandSpec(words: ["keychain", "list"],
                        options: [
                            .json,
                        ],
                        summary: """
                        Lists the items this device sees: service, account, accessibility and status — never values — and \
                        how many items belong to another device.
                        """, run: handlingSecrets(listItems), store: .none),
            AppCommandSpec(words: ["keychain", "delete"],
                        arguments: [
                            .required("SERVICE", "the item's service"),
                            .required("ACCOUNT", "the item's account"),
                        ],
                        summary: "Deletes one item.", run: handlingSecrets(deleteItem), store: .none),
            AppCommandSpec(words: ["keychain", "delete-all"],
                        options: [
                            .value("--service", "SERVICE", "only the items of this service"),
                            .yes,
                        ],
                        summary: """
                        Deletes every item this device sees, or every such item of one service. On a terminal it asks \
                        first (--yes: no question); without one it goes ahead.
                        """,
                        run: handlingSecrets(deleteAllItems), store: .none),
            AppCommandSpec(words: ["keychain", "forget-other-devices"], summary: """
                        Removes the this-device-only items sealed on other devices (a copied or restored container, \
                        another device key or machine id), which can never be read here. Nothing else removes them.
                        """, run: handlingSecrets(forgetOtherDevices), store: .none),
            AppCommandSpec(words: ["keychain", "accept-rollback"], summary: """
                        Accepts the keychain as it is after an older copy of it was put back on purpose (other commands \
                        refuse a keychain older than this device last saw it): it gets a new id and its generation is recorded.
                        """, run: handlingSecrets(acceptRollback), store: .none),
            AppCommandSpec(words: ["keychain", "set-recovery-passphrase"], summary: """
                        Seals the container key under a passphrase (Argon2id) read from standard input or, on a \
                        terminal, asked for twice without echo, so migratable items can be recovered on another device.
                        """, run: takingSecrets(setRecoveryPassphrase), createsContainer: true, store: .none, takesSecrets: true),
            AppCommandSpec(words: ["keychain", "recover"], summary: "Unlocks this container's migratable items on this device with the recovery passphrase.",
                        run: takingSecrets(recover), store: .none, takesSecrets: true),
            AppCommandSpec(words: ["auth", "login"],
                        options: [
                            .value("--account", "EMAIL", "the account's e-mail address", required: true),
                        ],
                        summary: """
                        Signs in: reads the access token and the refresh token, one per line, from standard input \
                        (asked for on a terminal) and keeps them in the keychain, this device only.
                        """, run: takingSecrets(login), createsContainer: true, store: .none, takesSecrets: true),
            AppCommandSpec(words: ["auth", "status"],
                        options: [
                            .json,
                        ],
                        summary: "Says which account is signed in.", run: handlingSecrets(authStatus), store: .none),
            AppCommandSpec(words: ["auth", "logout"], summary: "Signs out: deletes the tokens.", run: handlingSecrets(logout), store: .none),
        ]
    }

    /// `run` for a command that reads a secret: its errors repeat none of its arguments (a word
    /// it did not expect — `--value=…`, an extra positional — is most likely the secret itself).
    /// (`AppCommandSpec.takesSecrets` makes its errors repeat no argument.)
    static func takingSecrets(_ run: @escaping (CommandContext) throws -> Void) -> (CommandContext) throws -> Void {
        handlingSecrets(run)
    }

    /// `run` for a command that handles secret material (every keychain command loads the device
    /// key): no core dump of this process may hold it, from before anything is read.
    static func handlingSecrets(_ run: @escaping (CommandContext) throws -> Void) -> (CommandContext) throws -> Void {
        { context in
            try ProcessSetup.protectSecretsFromCoreDumps()
            try run(context)
        }
    }

    /// A secret from stdin (a pipe or file) or, on a terminal, typed without echo. From stdin, one
    /// final "\n" or "\r\n" is dropped and nothing else; an empty secret is refused.
    static func readSecret(_ what: String, confirm: Bool = false) throws -> SecureBytes {
        var bytes: [UInt8]
        if StandardStream.input.isTerminal {
            bytes = try StandardStream.input.readLineWithoutEcho(prompt: "\(what): ", limit: secretLimit)
            try refuseLongerThanTheLimit(&bytes, what)
            if confirm {
                var again = try StandardStream.input.readLineWithoutEcho(prompt: "\(what) again: ", limit: secretLimit)
                let twice = try SecureBytes(wiping: &again)
                let first = try SecureBytes(copying: bytes)
                guard first == twice else {
                    for index in bytes.indices { bytes[index] = 0 }
                    throw KeychainError.invalidArgument("the two entries differ; nothing was changed")
                }
            }
        } else {
            bytes = try readStandardInput(what, limit: secretLimit + 2)
            if bytes.last == 0x0a {
                bytes.removeLast()
                if bytes.last == 0x0d { bytes.removeLast() }
            }
            try refuseLongerThanTheLimit(&bytes, what)
        }
        guard !bytes.isEmpty else {
            throw KeychainError.invalidArgument("the \(what) on standard input is empty; nothing was changed")
        }
        return try SecureBytes(wiping: &bytes)
    }

    /// Standard input, at most `limit` bytes (refused beyond, with the limit named).
    static func readStandardInput(_ what: String, limit: Int) throws -> [UInt8] {
        var bytes = try StandardStream.input.readSecret(limit: limit)
        try refuseLongerThanTheLimit(&bytes, what, limit: limit)
        return bytes
    }

    /// Refuses (and wipes) `bytes` when longer than `limit`: bad data (65), the limit named.
    static func refuseLongerThanTheLimit(_ bytes: inout [UInt8], _ what: String, limit: Int = secretLimit) throws {
        guard bytes.count > limit else { return }
        for index in bytes.indices { bytes[index] = 0 }
        throw CommandLineError(.dataError, "the \(what) on standard input is longer than 64 KiB (\(secretLimit) bytes), the limit for a secret; nothing was changed")
    }

    static func accessibility(_ text: String?) throws -> KeychainAccessibility {
        guard let text else { return .afterFirstUnlockThisDeviceOnly }
        guard let accessibility = KeychainAccessibility(typed: text) else {
            // Not echoed: `keychain set --accessibility=…` may hold a secret typed in the wrong place.
            throw CommandLineError.usage("unknown accessibility (\(Arguments.redactionNote)): use "
                + KeychainAccessibility.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return accessibility
    }

    static func setItem(_ context: CommandContext) throws {
        let accessibility = try accessibility(try context.arguments.option("--accessibility"))
        let service = try context.arguments.positional("SERVICE")
        let account = try context.arguments.positional("ACCOUNT")
        try context.finishArguments()
        let keychain = try context.keychain()
        try keychain.set(service: service, account: account, value: try readSecret("secret"), accessibility: accessibility)
    }

    static func getItem(_ context: CommandContext) throws {
        let service = try context.arguments.positional("SERVICE")
        let account = try context.arguments.positional("ACCOUNT")
        try context.finishArguments()
        let value = try context.keychain().get(service: service, account: account)
        context.console.flush()
        _ = value.withUnsafeBytes { StandardStream.output.write($0) }
        if StandardStream.output.isTerminal { StandardStream.output.write([0x0a]) }
    }

    /// `keychain list --json`: the items this device sees, and how many it does not.
    struct Listing: Encodable {
        var items: [Item]
        var otherDeviceItems: Int

        /// One item, its accessibility spelled as `keychain set --accessibility` takes it.
        struct Item: Encodable {
            var service, account, accessibility, status, createdAt, updatedAt: String

            init(_ item: KeychainItemInfo) {
                (service, account, status, createdAt, updatedAt) = (item.service, item.account, item.status, item.createdAt, item.updatedAt)
                accessibility = item.accessibility.rawValue
            }
        }
    }

    static func listItems(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        // Before the first unlock since the computer started nothing of the keychain can be read,
        // and a list of items all "locked" would say less than this (69, as `keychain get` is).
        // A lock that cannot be read (another device's keybag) is the keychain's to report.
        if (try? deviceLock(context)?.status().state) == .lockedSinceStart { throw DeviceError.notUnlockedSinceStart }
        let keychain = try context.keychain()
        let items = try keychain.list()
        let others = try keychain.otherDevicesItemCount()
        if json { return try context.console.printJSON(Listing(items: items.map(Listing.Item.init), otherDeviceItems: others)) }
        if others > 0 {
            context.console.diagnostic("\(others) item\(others == 1 ? "" : "s") belong\(others == 1 ? "s" : "") to another device "
                + "(kept, unreadable here; `app keychain forget-other-devices` removes them)")
        }
        if items.isEmpty { return context.console.print(others > 0 ? "No items on this device." : "The keychain is empty.") }
        context.console.printTable(header: ["SERVICE", "ACCOUNT", "ACCESSIBILITY", "STATUS", "UPDATED"], rows: items.map {
            [$0.service, $0.account, $0.accessibility.rawValue, $0.status, $0.updatedAt]
        })
    }

    static func deleteItem(_ context: CommandContext) throws {
        let service = try context.arguments.positional("SERVICE")
        let account = try context.arguments.positional("ACCOUNT")
        try context.finishArguments()
        try context.keychain().delete(service: service, account: account)
    }

    static func deleteAllItems(_ context: CommandContext) throws {
        let confirmed = context.arguments.flag("--yes")
        let service = try context.arguments.option("--service")
        try context.finishArguments()
        // On a terminal it asks first (as trip delete does); without one it goes ahead.
        if !confirmed && StandardStream.input.isTerminal {
            let what = service.map { "every keychain item of service \($0)" } ?? "every keychain item this device sees"
            guard try askYesOrNo(terminalSafe("Delete \(what)? This cannot be undone.")) else {
                return context.console.diagnostic("nothing was deleted")
            }
        }
        let count = try context.keychain().deleteAll(service: service)
        context.console.diagnostic("deleted \(count) item\(count == 1 ? "" : "s")")
    }

    static func forgetOtherDevices(_ context: CommandContext) throws {
        try context.finishArguments()
        let count = try context.keychain().forgetOtherDevices()
        context.console.diagnostic("forgot \(count) item\(count == 1 ? "" : "s") sealed on other devices")
    }

    static func acceptRollback(_ context: CommandContext) throws {
        try context.finishArguments()
        let location = try context.deviceLocation()
        let keychain = try Keychain.openedToAcceptRollback(container: try context.container(), device: location,
                                                           keyring: try DeviceLock.anchor(environment: context.environment),
                                                           notice: context.console.warning)
        guard let accepted = try keychain.acceptRollback() else {
            return context.console.diagnostic("the keychain is not rolled back; nothing to accept")
        }
        let seen = accepted.recorded.map { "this device had seen generation \($0)" } ?? "this device's record of it was damaged"
        context.console.diagnostic("accepted the keychain as it is, at generation \(accepted.found) (\(seen)); it has a new id from now on")
    }

    static func setRecoveryPassphrase(_ context: CommandContext) throws {
        try context.finishArguments()
        let keychain = try context.keychain()
        try keychain.setRecoveryPassphrase(try readSecret("recovery passphrase", confirm: true))
    }

    static func recover(_ context: CommandContext) throws {
        try context.finishArguments()
        let keychain = try context.keychain()
        try keychain.recover(passphrase: try readSecret("recovery passphrase"))
        context.console.diagnostic("migratable items are readable on this device")
    }

    static func login(_ context: CommandContext) throws {
        let account = try context.arguments.requiredOption("--account")
        try context.finishArguments()
        guard account.includes("@"), !account.unicodeScalars.contains(where: { $0.properties.isWhitespace }) else {
            throw CommandLineError.usage("--account must be an email address")
        }
        let keychain = try context.keychain()
        let (access, refresh) = try readTokens()
        try keychain.signIn(account: account, accessToken: access, refreshToken: refresh)
    }

    /// Two lines: the access token, then the refresh token.
    static func readTokens() throws -> (SecureBytes, SecureBytes) { try readTwoSecrets("access token", then: "refresh token") }

    /// Two secrets, `first` then `second`: asked for one after the other on a terminal, otherwise
    /// one line each from standard input (a line ended by "\n" may end in "\r\n"; what follows
    /// the last "\n" keeps every byte). Every copy of the bytes is wiped on the way out.
    static func readTwoSecrets(_ first: String, then second: String) throws -> (SecureBytes, SecureBytes) {
        if StandardStream.input.isTerminal {
            return (try readSecret(first), try readSecret(second))
        }
        var bytes = try readStandardInput("\(first) or the \(second)", limit: 2 * (secretLimit + 2))
        defer { for index in bytes.indices { bytes[index] = 0 } }
        var lines = bytes.split(separator: 0x0a, omittingEmptySubsequences: false).map(Array.init)
        defer { for index in lines.indices { for inner in lines[index].indices { lines[index][inner] = 0 } } }
        for index in lines.indices.dropLast() where lines[index].last == 0x0d { lines[index].removeLast() }
        guard lines.count >= 2, !lines[0].isEmpty, !lines[1].isEmpty, lines.dropFirst(2).allSatisfy(\.isEmpty) else {
            throw KeychainError.invalidArgument("standard input must hold two lines: the \(first), then the \(second); nothing was changed")
        }
        try refuseLongerThanTheLimit(&lines[0], first)
        try refuseLongerThanTheLimit(&lines[1], second)
        return (try SecureBytes(wiping: &lines[0]), try SecureBytes(wiping: &lines[1]))
    }

    struct AuthStatus: Encodable {
        var signedIn: Bool
        var account: String?
        var hasRefreshToken: Bool
        /// The keychain holds an access token sealed on another device.
        var signedInOnAnotherDevice: Bool
    }

    static func authStatus(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let keychain = try context.keychain()
        let items = try keychain.list()
        let account = items.first { $0.service == accessTokenService }?.account
        let status = AuthStatus(signedIn: account != nil, account: account,
                                hasRefreshToken: items.contains { $0.service == refreshTokenService && $0.account == account },
                                signedInOnAnotherDevice: try keychain.otherDevicesItemCount(service: accessTokenService) > 0)
        if json { return try context.console.printJSON(status) }
        if let account { return context.console.print("Signed in as \(account)") }
        context.console.print(status.signedInOnAnotherDevice
            ? "Not signed in on this device (the keychain holds a sign-in sealed on another device)" : "Not signed in")
    }

    static func logout(_ context: CommandContext) throws {
        try context.finishArguments()
        let keychain = try context.keychain()
        let removed = try keychain.deleteAll(service: accessTokenService) + keychain.deleteAll(service: refreshTokenService)
        context.console.diagnostic(removed > 0 ? "signed out" : "not signed in")
    }
}
