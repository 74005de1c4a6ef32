package import TripBoardSystem

/// `container.json`: what a writer records about the container. Replaced atomically, never edited
/// in place.
public struct Manifest: Codable, Sendable, Equatable {
    /// The layout version (`ContainerLayout.version`) the container was set up with.
    public var layoutVersion: Int
    /// When the container was created (UTC).
    public var createdAt: String
    /// What created it, e.g. `app`.
    public var createdBy: String
    /// Set once the store exists: from then on a missing store is data loss, never "new container".
    public var storeCreated: Bool
    /// Set when a command met a damaged page in the store: writers refuse it until `container
    /// check --repair` finds it sound or `container salvage` replaces it. Absent otherwise.
    public var storeDamage: StoreDamage?

    public init(layoutVersion: Int, createdAt: String, createdBy: String, storeCreated: Bool, storeDamage: StoreDamage? = nil) {
        self.layoutVersion = layoutVersion
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.storeCreated = storeCreated
        self.storeDamage = storeDamage
    }

    package enum CodingKeys: String, CodingKey { case layoutVersion, createdAt, createdBy, storeCreated, storeDamage }

    /// `storeDamage` is written only when set: an older build reads the same manifest as before.
    /// By hand for that alone: the encoder writes `null` for every other nil (`JSON.encode`), and
    /// this is the one key of a file format that is left out instead.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(layoutVersion, forKey: .layoutVersion)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(createdBy, forKey: .createdBy)
        try container.encode(storeCreated, forKey: .storeCreated)
        if let storeDamage { try container.encode(storeDamage, forKey: .storeDamage) }
    }

    package static func read(from root: Directory) throws -> Manifest? {
        let path = root.childPath(ContainerLayout.manifestFile)
        guard let file = try root.openFileForReadingIfPresent(ContainerLayout.manifestFile) else { return nil }
        let bytes = try file.readToEnd(limit: 1 << 20)
        let manifest: Manifest
        do {
            manifest = try JSON.decode(Manifest.self, from: bytes)
        } catch {
            throw ContainerError.badManifest(path: path, reason: "not valid JSON of the expected shape")
        }
        guard manifest.layoutVersion <= ContainerLayout.version else {
            throw ContainerError.badManifest(path: path, reason: "layout version \(manifest.layoutVersion) is newer than this build understands (\(ContainerLayout.version))")
        }
        return manifest
    }

    package func write(to root: Directory, staging: Directory) throws {
        try root.writeAtomically(try JSON.encode(self) + [0x0a], to: ContainerLayout.manifestFile, staging: staging)
    }
}

/// When and how a damaged page was met in the store (`Manifest.storeDamage`).
public struct StoreDamage: Codable, Sendable, Equatable {
    /// UTC, as `updatedAt` stamps are.
    public var foundAt: String
    /// SQLite's message, e.g. "database disk image is malformed".
    public var detail: String

    public init(foundAt: String, detail: String) {
        self.foundAt = foundAt
        self.detail = detail
    }
}
