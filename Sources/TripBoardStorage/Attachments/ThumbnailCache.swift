public import TripBoardSystem
import TripBoardModel

/// `caches/thumbnails/<attachment id>.png`: derived data. A missing entry is the normal case (it is
/// regenerated), a failure to write one is logged and never fails an import, and the cache stays
/// under a size limit by evicting the least recently used entries (modification time = last use).
public struct ThumbnailCache {
    let directory: Directory

    /// Opens the cache directory, creating it (and `caches/`) if it was deleted (it is only a cache).
    public init(container: Container) throws {
        directory = try container.root.openDirectory(ContainerLayout.cachesDirectory, create: true)
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

    /// Moves a rendered PNG from the staging directory into the cache (atomically). Whatever
    /// else holds the name — a FIFO, a link, an empty directory — is replaced or removed first (a
    /// cache entry is never user data); the path returned is always a regular file's.
    public func store(stagedName: String, in staging: Directory, for attachmentID: String) throws -> String {
        let name = Self.fileName(for: attachmentID)
        // rename(2) replaces a file, FIFO or link, but not a directory (EISDIR).
        if let status = try directory.status(of: name), status.kind == .directory { try directory.removeDirectory(name) }
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

    /// Every entry of the cache directory with its status, and the attachment id a thumbnail
    /// entry is named after (`nil` for a name the cache never makes).
    func entries() throws -> [(name: String, attachmentID: String?, status: FileStatus)] {
        try directory.entries().compactMap { name in
            guard let status = try directory.status(of: name) else { return nil }
            let id = name.hasSuffix(".png") ? String(name.dropLast(4)) : nil
            return (name, id.flatMap { Identifier.isValid($0) ? $0 : nil }, status)
        }
    }

    /// Removes the cache entry `name` (a link itself, never its target; a directory only if empty).
    func remove(_ name: String, isDirectory: Bool) throws {
        if isDirectory { try directory.removeDirectory(name) } else { try directory.removeFile(name) }
    }

    /// Removes the thumbnail of `attachmentID` if there is one (its attachment went to the trash or
    /// was purged). Best effort: what stays is a stale entry that `container check` reports.
    public func removeThumbnail(of attachmentID: String) {
        try? directory.removeFile(Self.fileName(for: attachmentID))
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
