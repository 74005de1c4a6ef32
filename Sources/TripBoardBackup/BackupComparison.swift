public import TripBoardStorage
import TripBoardKeychain
import TripBoardModel
import TripBoardSQLite
import TripBoardSystem

/// What `app backup verify` found: the backup's dry run, and how what a user sees in it differs
/// from the live container — records by id and their fields (`Store.userRecordDifferences`),
/// preferences by key, keychain items by service and account. Sync bookkeeping is never
/// compared: it changes with every acknowledgement.
public struct BackupComparison: Sendable, Codable {
    /// The dry run's summary (the backup is sound, or this was never made).
    public var backup: RestoreSummary
    /// Per kind (`trips`, `places`, `bookings`, `attachments`); "here" is the container.
    public var records: [String: RecordDifference]
    /// Preferences whose value (as read, defaults filled in) differs.
    public var preferencesChanged: [String]
    /// Keychain items by service and account: changed when their `updated_at` differs (their
    /// values stay sealed; the comparison never opens one).
    public var keychain: RecordDifference
    public var differs: Bool

    init(summary: RestoreSummary, live: Container, liveKeychain: Keychain?, backup staged: Container) throws {
        backup = summary
        let differences = try live.store.verification.userRecordDifferences(from: staged.store)
        records = Dictionary(uniqueKeysWithValues: differences.map { ($0.key.table, $0.value) })
        var livePreferences = try PreferencesFile(container: live)
        var stagedPreferences = try PreferencesFile(container: staged)
        let (here, there) = (try livePreferences.load(), try stagedPreferences.load())
        preferencesChanged = PreferenceKey.allCases.filter { here[$0] != there[$0] }.map(\.rawValue)
        let stagedKeychain = try staged.status(of: ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile) == nil ? nil
            : try Connection(path: staged.path + "/" + ContainerLayout.keychainDirectory + "/" + ContainerLayout.keychainFile, mode: .readOnly,
                             sealing: try DatabaseKeyFile.read(in: try staged.directory(ContainerLayout.keychainDirectory),
                                                               database: ContainerLayout.keychainFile, keys: staged.options.fileKeys))
        keychain = try Self.keychainDifference(here: liveKeychain.map { try Keychain.itemStamps(in: $0.connection) } ?? [:],
                                               there: stagedKeychain.map(Keychain.itemStamps(in:)) ?? [:])
        differs = records.values.contains(where: \.differs) || !preferencesChanged.isEmpty || keychain.differs
    }

    private static func keychainDifference(here: [String: String], there: [String: String]) -> RecordDifference {
        var difference = RecordDifference()
        for name in Set(here.keys).union(there.keys).sorted() {
            switch (here[name], there[name]) {
            case let (mine?, theirs?) where mine == theirs: difference.same += 1; continue
            case (_?, _?): difference.changed += 1
            case (_?, nil): difference.onlyHere += 1
            default: difference.onlyThere += 1
            }
            if difference.examples.count < 5 { difference.examples.append(name) }
        }
        return difference
    }
}

extension Keychain {
    /// Each item's `service account` → its accessibility and `updated_at`: enough to tell an item
    /// set again from one left alone, without opening any (every keychain schema has these columns).
    static func itemStamps(in connection: Connection) throws -> [String: String] {
        var stamps: [String: String] = [:]
        try connection.statement("SELECT service, account, accessibility, updated_at FROM items").forEachRow { row in
            stamps[row.text(0) + " " + row.text(1)] = row.text(2) + " " + row.text(3)
        }
        return stamps
    }
}
