import TripBoardSystem
import TripBoardWorkerContract
import TripBoardModel
import TripBoardDevice

extension ThumbnailCache {
    /// The thumbnail of `attachment` (a PNG): the cached one, else page 1 rendered again by
    /// `worker` from the attachment's plaintext — decrypted into memory (`FileDescriptor.memoryFile`),
    /// verified against the row's size and hash first (a hash still pending, a migrated file's,
    /// is computed and recorded then: `AttachmentHashing.verifiedHash`), handed to the worker as
    /// its standard input, the PNG returned on its pipe — sealed into the cache, and the cache
    /// trimmed to `cacheLimitMB`. Nothing in the clear reaches a disk. A closed class throws
    /// (`DeviceError.locked` and its kin).
    public func thumbnail(of attachment: Attachment, container: Container, worker: PDFWorker, size: Int = 200) throws -> [UInt8] {
        let files = try AttachmentFiles(container: container)
        try files.requireOpen(attachment.protection)
        if let cached = try cachedPNG(for: attachment.id.text) { return cached }
        var hash = attachment.contentHash
        if hash.isPending, attachment.state == .present,
           let hex = try AttachmentHashing.verifiedHash(of: attachment, files: files, recordingIn: try container.store) {
            hash = .verified(hex)
        }
        // Opened first as an export opens it: a missing file is 66, a link or a FIFO 73.
        _ = try files.open(relativePath: attachment.relativePath)
        let copy = try FileDescriptor.memoryFile(name: "tripboard-thumbnail")
        let state = try files.copyPlaintext(relativePath: attachment.relativePath, byteCount: attachment.byteCount, contentHash: hash, into: copy)
        guard state == .ok else { throw AttachmentFiles.damaged(try files.path(of: attachment.relativePath)) }
        try copy.sealContents()
        let inspection = try worker.inspect(memoryFile: copy, displayName: attachment.originalFilename, thumbnail: true,
                                            thumbnailSize: size, textPages: 0, maximumBytes: Int(clamping: max(attachment.byteCount, 1)))
        guard let png = inspection.thumbnail?.pngBytes else {
            throw Self.renderingError(inspection, file: attachment.originalFilename)
        }
        try store(png, for: attachment.id.text, protection: attachment.protection, staging: files.staging)
        try trim(container: container, keeping: attachment.id.text)
        return png
    }

    /// Why the worker returned no thumbnail, as the error to report: a page poppler could not
    /// render (65).
    static func renderingError(_ inspection: PDFInspection, file: String) -> any Error {
        PDFImportError.damaged(file: file, detail: inspection.thumbnailError ?? "no page to render")
    }

    /// Evicts least recently used thumbnails until the cache fits the `cacheLimitMB` preference.
    public func trim(container: Container, keeping: String?) throws {
        var preferences = try PreferencesFile(container: container)
        if case .number(let megabytes) = try preferences.load()[.cacheLimitMB] {
            try evict(toFit: Int64(megabytes) << 20, keeping: keeping)
        }
    }
}
