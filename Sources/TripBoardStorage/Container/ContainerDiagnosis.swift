public import TripBoardModel

/// `app container diagnose`: what support needs to understand a container in trouble, and
/// nothing of what the user keeps in it — no name, note, place, reference, file name, id, path,
/// preference value or secret. Only versions, states, sizes and counts, and the errors met while
/// gathering them. Gathered without writing anything, whatever state the store is in.
public struct ContainerDiagnosis: Sendable, Codable {
    public struct Versions: Sendable, Codable {
        public var tripboard: String
        public var sqlite: String
        public var libsodium: String
        public var kernel: String
    }

    public struct Layout: Sendable, Codable {
        public var layoutVersion: Int?
        public var createdBy: String?
        public var createdAt: String?
        public var rootPermissions: String
        public var storeState: StoreHealth
        public var storeDamage: StoreDamage?
        public var migration: MigrationState
    }

    /// Where the container migration stands, as its `migration/` directory tells. The raw values
    /// are the report's `migration` texts.
    public enum MigrationState: String, Sendable, Codable {
        /// No `migration/` directory, or one with neither a journal nor a commit marker.
        case notStarted
        /// A journal without a commit marker: a run stopped before finishing (or one is running).
        case unfinished
        /// The commit marker.
        case finished
        /// The directory could not be read (the report's `errors` say why).
        case unknown
    }

    /// Bytes and counts of the files, by place.
    public struct Files: Sendable, Codable {
        public var storeBytes, storeWALBytes, storeSharedMemoryBytes, preferencesBytes: Int64
        public var attachmentFiles: Int
        public var attachmentBytes: Int64
        public var recoveredFiles: Int
        public var thumbnails: Int
        public var thumbnailBytes: Int64
        public var stagingEntries: Int
    }

    public struct Integrity: Sendable, Codable {
        /// `nil` when `integrity_check` could not run at all.
        public var ok: Bool?
        public var problemCount: Int
        /// SQLite's messages (page numbers, index and table names), at most 20.
        public var problems: [String]
    }

    public struct Holder: Sendable, Codable {
        public var processID: Int32
        public var command: String?
        public var mode: String
    }

    public var reportVersion = 1
    public var createdAt: String
    public var versions: Versions
    public var layout: Layout
    public var files: Files
    public var store: StoreStatistics?
    public var integrity: Integrity?
    public var keychain: KeychainStatistics?
    /// Other processes holding the container lock now.
    public var lockHolders: [Holder]
    /// The errors met while gathering this report, as kinds and codes only.
    public var errors: [String]
}
