public import TripBoardSystem
import TripBoardModel
public import TripBoardDevice
import TripBoardWorkerContract

/// `caches/thumbnails/<attachment id>.png.sealed`: derived data, each PNG sealed under its
/// attachment's protection class (`SealedFile`), so a thumbnail shows no more of a ticket than
/// the ticket's file does. A missing entry is the normal case (it is regenerated), a failure to
/// write one is logged and never fails an import, and the cache stays under a size limit by
/// evicting the least recently used entries (modification time = last use). Entries of earlier
/// builds (`<id>.png`, in the clear) are not read: `app container protect` and `container check
/// --repair` remove them.
public struct ThumbnailCache {
    let directory: Directory
    let keys: any FileKeys

    /// Opens the cache directory, creating it (and `caches/`) if it was deleted (it is only a cache).
    public init(container: Container) throws {
        directory = try container.root.openDirectory(ContainerLayout.cachesDirectory, create: true)
            .openDirectory(ContainerLayout.thumbnailsDirectory, create: true)
        keys = container.options.fileKeys
    }

    /// A sealed entry's suffix.
    static let suffix = ".png.sealed"
    /// The suffix of an entry an earlier build wrote in the clear.
    static let clearSuffix = ".png"

    static func fileName(for attachmentID: String) -> String { attachmentID + suffix }

    /// The thumbnail of `attachmentID` if it is cached (opened with its class key: a closed
    /// class throws `DeviceError.locked` and its kin); marks it used. An entry that does not open
    /// (damaged, or sealed under a keybag this device does not have) is no entry.
    public func cachedPNG(for attachmentID: String) throws -> [UInt8]? {
        let name = Self.fileName(for: attachmentID)
        guard let status = try directory.status(of: name), status.kind == .regular, status.size > 0 else { return nil }
        let sealed: [UInt8]
        do {
            let file = try directory.openFileForReading(name)
            sealed = try SealedFileReader(input: file, path: directory.childPath(name), keys: keys)
                .readToEnd(limit: PDFWorkerLimits.thumbnailBytes + Self.ownerPrefixLength)
        } catch DeviceError.damagedSealedFile, DeviceError.sealedElsewhere {
            return nil
        } catch let error as FileSystemError where error.code == .tooLarge || error.code == .notRegularFile || error.code == .symbolicLink {
            return nil
        }
        // Another attachment's thumbnail moved here is no entry of this one's.
        let owner = Self.ownerPrefix(attachmentID)
        guard sealed.starts(with: owner) else { return nil }
        try directory.touch(name)
        return Array(sealed[owner.count...])
    }

    /// What a thumbnail's plaintext starts with: `tripboard thumbnail of ` and its attachment's
    /// id, so that an entry swapped for another one's is no entry (docs/security.md, Sealed files).
    static func ownerPrefix(_ attachmentID: String) -> [UInt8] { Array("tripboard thumbnail of \(attachmentID)\n".utf8) }
    static let ownerPrefixLength = 64

    /// The class the entry `name` is sealed under, from its header alone; nil when it is not sealed.
    func sealedClass(of name: String) throws -> ProtectionClass? {
        try AttachmentReader.sealedClass(of: directory.openFileForReading(name))
    }

    /// Whether a sealed thumbnail of `attachmentID` is cached (its key is not asked for).
    public func hasEntry(for attachmentID: String) throws -> Bool {
        guard let status = try directory.status(of: Self.fileName(for: attachmentID)) else { return false }
        return status.kind == .regular && status.size > 0
    }

    /// Seals `png` under `protection` into the cache (staged in `staging`, then renamed into
    /// place atomically). Whatever else holds the name — a FIFO, a link, an empty directory — is
    /// replaced or removed first (a cache entry is never user data). Not fsynced: a cache.
    public func store(_ png: [UInt8], for attachmentID: String, protection: ProtectionClass, staging: Directory) throws {
        let name = Self.fileName(for: attachmentID)
        let stage = try SealingStage(in: staging, protection: protection, keys: keys, prefix: "thumbnail")
        defer { stage.discard() }
        try (Self.ownerPrefix(attachmentID) + png).withUnsafeBytes { try stage.write($0) }
        let staged = try stage.finish(contentHash: "", synchronize: false)
        // rename(2) replaces a file, FIFO or link, but not a directory (EISDIR).
        if let status = try directory.status(of: name), status.kind == .directory { try directory.removeDirectory(name) }
        try staging.rename(staged.stagingName, to: directory, as: name)
    }

    /// Removes least recently used thumbnails until the cache holds at most `limitBytes`, never
    /// the one named `keeping`. Returns the attachment ids evicted.
    @discardableResult
    public func evict(toFit limitBytes: Int64, keeping: String? = nil) throws -> [String] {
        var entries: [(name: String, size: Int64, used: Int64)] = []
        for name in try directory.entries() where name.hasSuffix(Self.suffix) {
            if let status = try directory.status(of: name), status.kind == .regular {
                entries.append((name, status.size, status.modificationTime))
            }
        }
        var total = entries.reduce(0) { $0 + $1.size }
        var evicted: [String] = []
        for entry in entries.sorted(by: { ($0.used, $0.name) < ($1.used, $1.name) }) where total > limitBytes {
            let id = String(entry.name.dropLast(Self.suffix.count))
            if id == keeping { continue }
            try directory.removeFile(entry.name)
            total -= entry.size
            evicted.append(id)
        }
        return evicted
    }

    /// Every entry of the cache directory with its status, and the attachment id a thumbnail
    /// entry is named after (`nil` for a name the cache never makes — an earlier build's entry
    /// in the clear among them).
    func entries() throws -> [(name: String, attachmentID: String?, status: FileStatus)] {
        try directory.entries().compactMap { name in
            guard let status = try directory.status(of: name) else { return nil }
            let id = name.hasSuffix(Self.suffix) ? String(name.dropLast(Self.suffix.count)) : nil
            return (name, id.flatMap { Identifier.isValid($0) ? $0 : nil }, status)
        }
    }

    /// The entries an earlier build wrote in the clear (`<id>.png`): what `container protect` removes.
    public func clearEntries() throws -> [String] {
        try directory.entries().filter { $0.hasSuffix(Self.clearSuffix) }
    }

    /// Removes the entries an earlier build wrote in the clear; returns how many.
    @discardableResult
    public func removeClearEntries() throws -> Int {
        var count = 0
        for name in try clearEntries() {
            guard let status = try directory.status(of: name) else { continue }
            if status.kind == .directory { try directory.removeDirectory(name) } else { try directory.removeFile(name) }
            count += 1
        }
        return count
    }

    /// Removes the cache entry `name` (a link itself, never its target; a directory only if empty).
    func remove(_ name: String, isDirectory: Bool) throws {
        if isDirectory { try directory.removeDirectory(name) } else { try directory.removeFile(name) }
    }

    /// Removes the thumbnail of `attachmentID` if there is one (its attachment went to the trash or
    /// was purged). Best effort: what stays is a stale entry that `container check` reports.
    public func removeThumbnail(of attachmentID: String) {
        try? directory.removeFile(Self.fileName(for: attachmentID))
        try? directory.removeFile(attachmentID + Self.clearSuffix)
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
