import TripBoardKeychain
import TripBoardStorage
import TripBoardSodium
import TripBoardKeys
import TripBoardSystem

extension MigrationRun {
    /// The preferences step: the legacy values the typed keys accept are set, except where the
    /// destination has its own value already (kept, reported); then the tokens go into the
    /// keychain as `app auth login` keeps them, and only once they are stored there are they
    /// removed from the legacy `preferences.json`.
    func mergePreferences() throws {
        let (_, legacyRoot) = try legacySource()
        let container = try container()
        var preferences = try PreferencesFile(container: container)
        let existing = try preferences.load()
        var values: [PreferenceKey: PreferenceValue] = [:]
        var kept: [String] = []
        for (key, value) in plan.preferences.values {
            if !existing.isSet(key) {
                values[key] = value
            } else if existing[key] != value {
                kept.append(key.rawValue)
            }
        }
        if !values.isEmpty { try preferences.update(values) }
        record.preferencesKept = kept.sorted()
        try moveTokens(from: legacyRoot, into: container)
    }

    private func moveTokens(from legacyRoot: Directory, into container: Container) throws {
        record.tokensMoved = 0
        record.tokensDiscarded = 0
        guard plan.preferences.tokens > 0 else { return }
        try ProcessSetup.protectSecretsFromCoreDumps()
        let members = try LegacyPreferences.read(in: legacyRoot) ?? []
        var tokens: [String: SecureBytes] = [:]
        var account = "unknown"
        for (name, value) in members {
            guard case .string(let text) = value, !text.isEmpty else { continue }
            if PreferencePlan.tokenKeys.contains(name) {
                tokens[name] = try SecureBytes(copying: Array(text.utf8))
            } else if PreferencePlan.accountKeys.contains(name), text.includes("@"), text.utf8.count <= 256,
                      !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
                account = text
            }
        }
        let keychain = try Keychain(container: container, device: try options.deviceKey(), keyring: options.keyring)
        let signedIn = try keychain.list().filter { $0.service == Keychain.accessTokenService || $0.service == Keychain.refreshTokenService }
        if tokens.isEmpty {
            // An earlier attempt stored them and removed them from the file.
            record.tokensMoved = signedIn.isEmpty ? 0 : plan.preferences.tokens
            return
        }
        let access = tokens["accessToken"], refresh = tokens["refreshToken"]
        let ours = try signedIn.isEmpty || storedByEarlierAttempt(keychain, signedIn, access: access, refresh: refresh)
        if ours {
            try keychain.signIn(account: account, accessToken: access, refreshToken: refresh)
            record.tokensMoved = tokens.count
        } else {
            // The destination is signed in already (a merge): its newer tokens win.
            record.tokensDiscarded = tokens.count
        }
        CrashPoint.reach("migration.preferences-partial")
        // Removed from the file only now that the keychain holds them (or the destination's own).
        let remaining = members.filter { !PreferencePlan.tokenKeys.contains($0.key) }
        try legacyRoot.writeAtomically(JSONValue.object(remaining).serialized() + [0x0a], to: LegacyLayout.preferencesFile,
                                       staging: legacyRoot)
    }

    /// True when the keychain's tokens are these very ones (a resumed run).
    private func storedByEarlierAttempt(_ keychain: Keychain, _ items: [KeychainItemInfo], access: SecureBytes?,
                                        refresh: SecureBytes?) throws -> Bool {
        for item in items {
            let expected = item.service == Keychain.accessTokenService ? access : refresh
            guard let expected else { return false }
            let stored = try keychain.get(service: item.service, account: item.account)
            if !(stored == expected) { return false }
        }
        return true
    }
}
