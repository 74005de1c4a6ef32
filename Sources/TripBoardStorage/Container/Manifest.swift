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

    static func read(from root: Directory) throws -> Manifest? {
        let path = root.childPath(ContainerLayout.manifestFile)
        let file: FileDescriptor
        do {
            file = try root.openFileForReading(ContainerLayout.manifestFile)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
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

    func write(to root: Directory, staging: Directory) throws {
        try root.writeAtomically(try JSON.encode(self) + [0x0a], to: ContainerLayout.manifestFile, staging: staging)
    }
}
