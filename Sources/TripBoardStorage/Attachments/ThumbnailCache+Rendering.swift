import TripBoardSystem
import TripBoardWorkerContract
import TripBoardModel

extension ThumbnailCache {
    /// The thumbnail of `attachment`: the cached one, else page 1 rendered again by `worker` from
    /// the attachment's file (verified against its size and hash first — a hash still pending, a
    /// migrated file's, is computed and recorded then: `AttachmentHashing.verifiedHash`), cached,
    /// and the cache trimmed to `cacheLimitMB`. Returns the PNG's path.
    public func thumbnail(of attachment: Attachment, container: Container, worker: PDFWorker, size: Int = 200) throws -> String {
        if let cached = try cachedPath(for: attachment.id) { return cached }
        let files = try AttachmentFiles(container: container)
        var hash = attachment.contentHash
        if hash.isPending, attachment.state == .present,
           let hex = try AttachmentHashing.verifiedHash(of: attachment, files: files, recordingIn: try container.store) {
            hash = .verified(hex)
        }
        let state = try files.check(relativePath: attachment.relativePath, byteCount: attachment.byteCount, contentHash: hash)
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
            throw Self.renderingError(inspection, file: attachment.originalFilename, staging: files.staging.path)
        }
        let path = try store(stagedName: stagedName, in: files.staging, for: attachment.id)
        try trim(container: container, keeping: attachment.id)
        return path
    }

    /// Why the worker wrote no thumbnail, as the error to report: a full disk (exit 74, "the disk
    /// is full") or another write failure (74) in the staging directory, else a page poppler could
    /// not render (65).
    static func renderingError(_ inspection: PDFInspection, file: String, staging: String) -> any Error {
        let detail = inspection.thumbnailError ?? "no page to render"
        switch inspection.thumbnailErrorKind {
        case .noSpace:
            return FileSystemError(code: .noSpace, systemCall: "write", path: staging,
                                   detail: "the disk is full: the thumbnail of \(file) could not be written; free some space and ask again")
        case .writing:
            return FileSystemError(code: .io, systemCall: "write", path: staging, detail: "the thumbnail of \(file) could not be written: \(detail)")
        case .rendering, nil:
            return PDFImportError.damaged(file: file, detail: detail)
        }
    }

    /// Evicts least recently used thumbnails until the cache fits the `cacheLimitMB` preference.
    public func trim(container: Container, keeping: String?) throws {
        var preferences = try PreferencesFile(container: container)
        if case .number(let megabytes) = try preferences.load()[.cacheLimitMB] {
            try evict(toFit: Int64(megabytes) << 20, keeping: keeping)
        }
    }
}
