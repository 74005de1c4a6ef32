extension ThumbnailCache {
    /// The thumbnail of `attachment`: the cached one, else page 1 rendered again by `worker` from
    /// the attachment's file (verified against its size and hash first), cached, and the cache
    /// trimmed to `cacheLimitMB`. Returns the PNG's path.
    public func thumbnail(of attachment: Attachment, container: Container, worker: PDFWorker, size: Int = 200) throws -> String {
        if let cached = try cachedPath(for: attachment.id) { return cached }
        let files = try AttachmentFiles(container: container)
        let state = try files.check(relativePath: attachment.relativePath, byteCount: attachment.byteCount,
                                    contentHash: attachment.contentHash)
        guard state == .ok else {
            throw StoreError.corrupt(path: container.path + "/" + attachment.relativePath,
                                     detail: "the attachment's file is \(state.rawValue); run `app container check`")
        }
        let stagedName = Directory.uniqueTemporaryName(for: "thumbnail") + ".png"
        defer { files.discard(stagedName: stagedName) }
        let inspection = try worker.inspect(
            file: try files.path(of: attachment.relativePath), thumbnail: files.staging.childPath(stagedName), thumbnailSize: size,
            textPages: 0, maximumBytes: Int(clamping: max(attachment.byteCount, 1)), displayName: attachment.originalFilename)
        guard inspection.thumbnail != nil else {
            throw PDFImportError.damaged(file: attachment.originalFilename, detail: inspection.thumbnailError ?? "no page to render")
        }
        let path = try store(stagedName: stagedName, in: files.staging, for: attachment.id)
        try trim(container: container, keeping: attachment.id)
        return path
    }

    /// Evicts least recently used thumbnails until the cache fits the `cacheLimitMB` preference.
    public func trim(container: Container, keeping: String?) throws {
        var preferences = try PreferencesFile(container: container)
        if case .number(let megabytes) = try preferences.load()[.cacheLimitMB] {
            try evict(toFit: Int64(megabytes) << 20, keeping: keeping)
        }
    }
}
