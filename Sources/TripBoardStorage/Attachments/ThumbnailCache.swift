/// `caches/thumbnails/<attachment id>.png`: derived data. A missing entry is the normal case (it is
/// regenerated), a failure to write one is logged and never fails an import, and the cache stays
/// under a size limit by evicting the least recently used entries (modification time = last use).
public struct ThumbnailCache {
    let directory: Directory

    /// Opens the cache directory, creating it if it was deleted (it is only a cache).
    public init(container: Container) throws {
        directory = try container.directory(ContainerLayout.cachesDirectory)
            .openDirectory(ContainerLayout.thumbnailsDirectory, create: true)
    }

    static func fileName(for attachmentID: String) -> String { attachmentID + ".png" }

    /// The path of the thumbnail of `attachmentID`, if it is cached; marks it used.
    public func cachedPath(for attachmentID: String) throws -> String? {
        let name = Self.fileName(for: attachmentID)
        guard let status = try directory.status(of: name), status.kind == .regular, status.size > 0 else { return nil }
        try directory.touch(name)
        return directory.childPath(name)
    }

    /// Moves a rendered PNG from the staging directory into the cache (atomically).
    public func store(stagedName: String, in staging: Directory, for attachmentID: String) throws -> String {
        let name = Self.fileName(for: attachmentID)
        try staging.rename(stagedName, to: directory, as: name)
        return directory.childPath(name)
    }

    /// Removes least recently used thumbnails until the cache holds at most `limitBytes`, never
    /// the one named `keeping`. Returns the attachment ids evicted.
    @discardableResult
    public func evict(toFit limitBytes: Int64, keeping: String? = nil) throws -> [String] {
        var entries: [(name: String, size: Int64, used: Int64)] = []
        for name in try directory.entries() where name.hasSuffix(".png") {
            if let status = try directory.status(of: name), status.kind == .regular {
                entries.append((name, status.size, status.modificationTime))
            }
        }
        var total = entries.reduce(0) { $0 + $1.size }
        var evicted: [String] = []
        for entry in entries.sorted(by: { ($0.used, $0.name) < ($1.used, $1.name) }) where total > limitBytes {
            let id = String(entry.name.dropLast(4))
            if id == keeping { continue }
            try directory.removeFile(entry.name)
            total -= entry.size
            evicted.append(id)
        }
        return evicted
    }

    /// Removes every thumbnail; returns how many.
    @discardableResult
    public func clear() throws -> Int {
        var count = 0
        for name in try directory.entries() {
            guard let status = try directory.status(of: name), status.kind == .regular else { continue }
            try directory.removeFile(name)
            count += 1
        }
        return count
    }
}
