import TripBoardStorage
import TripBoardSystem
import TripBoardModel

/// The container migration's durable state in the destination container, `migration/`:
///
/// - `plan.json`: what the plan step found (written once, before anything else changes), and
///   beside it `plan-files.sqlite`, the planned files (`MigrationFileList`);
/// - `journal.json`: the last step finished; present from the plan until the old location is gone;
/// - `hashing.json`: the hashing pass is due (`AttachmentHashing`), from the commit step until it ends;
/// - `committed.json`: the commit marker. From the moment it exists the migration is done, whatever
///   is left of the old location; it is never removed.
///
/// Each file is replaced atomically (`Directory.writeAtomically`: temp file, fsync, rename, fsync).
public enum MigrationJournal {
    static let directory = ContainerLayout.migrationDirectory
    static let journalFile = ContainerLayout.migrationJournalFile
    static let planFile = "plan.json"
    static let commitMarkerFile = ContainerLayout.migrationCommitMarkerFile
    /// The sealed copy of the legacy store (`MigrationStoreBuilder.copyLegacyStore`), deleted once the store is published.
    static let stagingStoreFile = "legacy-copy.sqlite"
    /// The new store, built from the copy before it is published into the container's store.
    static let builtStoreFile = "new-store.sqlite"

    /// The steps, in order. The journal names the last one finished.
    public enum Step: String, Sendable, Codable, CaseIterable, Comparable {
        case planned, storePublished, attachmentsMoved, preferencesMerged, verified, committed

        public static func < (lhs: Step, rhs: Step) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// What `journal.json` holds.
    struct Record: Codable, Equatable {
        var finished: Step
        /// What the store step added, recorded when it finished.
        var added: MigrationCounts?
        /// The `MigrationDigest` of every record the store step converted (present or added), in
        /// order: what the verification expects to read back (absent in a journal from before it).
        var storeDigest: String?
        /// What the preferences step did, recorded when it finished.
        var tokensMoved: Int?
        var tokensDiscarded: Int?
        var preferencesKept: [String]?
    }

    /// The `migration/` directory, if it exists.
    static func openDirectory(in root: Directory, create: Bool = false) throws -> Directory? {
        try ContainerLayout.openMigrationDirectory(in: root, create: create)
    }

    static func read<T: Decodable>(_ type: T.Type, _ name: String, in directory: Directory) throws -> T? {
        guard let bytes = try directory.readFileIfPresent(name, limit: 256 << 20) else { return nil }
        do {
            return try JSON.decode(T.self, from: bytes)
        } catch {
            throw MigrationError.damagedJournal(path: directory.childPath(name))
        }
    }

    static func write<T: Encodable>(_ value: T, _ name: String, in directory: Directory) throws {
        try directory.writeAtomically(try JSON.encode(value, pretty: false) + [0x0a], to: name, staging: directory)
    }
}
