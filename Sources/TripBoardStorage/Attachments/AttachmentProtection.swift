import TripBoardSystem
public import TripBoardDevice
import TripBoardModel

/// Sealing an attachment's file (and its thumbnail) under a protection class other than the one
/// it has: `app attachment protect`, the files a locked device sealed to `complete-unless-open`
/// for want of their own class (`reconcile`), and a container's files written in the clear
/// before attachments were sealed (`app container protect`).
///
/// Crash-safe without a journal: the file is read through its current seal (or as it is, in the
/// clear), sealed anew into `tmp/`, checked against the row's size and hash, fsynced, and renamed
/// over the old one — at every moment the attachment's path holds one whole file with the same
/// plaintext, sealed one way or the other. The row records the class after the file is in place;
/// a kill between the two leaves a file sealed as asked and a row that says otherwise, which the
/// next `reconcile` (or the same command again) puts right. The old file's blocks are freed, not
/// overwritten: on a copy-on-write or journalled filesystem they may survive until reused
/// (docs/security.md, What sealing does not do).
public struct AttachmentProtection {
    let container: Container
    let files: AttachmentFiles

    public init(container: Container) throws {
        self.container = container
        files = try AttachmentFiles(container: container)
    }

    /// What `protect` found and did.
    public struct Outcome: Sendable, Equatable {
        /// The class the file was sealed under; nil when it was in the clear.
        public var was: ProtectionClass?
        /// Whether the file or the row changed.
        public var changed: Bool
    }

    /// Seals the file of `attachment` under `protection` (needs the classes involved open: the
    /// old one to read, the new one to write) and records the class in its row; its cached
    /// thumbnail is sealed the same way (or dropped: it is made again when needed).
    @discardableResult
    public func protect(_ attachment: Attachment, as protection: ProtectionClass) throws -> Outcome {
        guard attachment.state == .present else {
            throw StoreError.invalidData("attachment \(attachment.id.short) has no file here (it is \(attachment.state.rawValue)); nothing was changed")
        }
        // Both classes open, the row's too: a locked device changes no class, not even of a file
        // an earlier build left in the clear.
        try files.requireOpen(attachment.protection)
        try files.requireOpen(protection)
        let was = try files.sealedClass(relativePath: attachment.relativePath)
        var changed = false
        if was != protection {
            try reseal(attachment, as: protection)
            changed = true
        }
        if attachment.protection != protection {
            try container.store.recordProtection(id: attachment.id, protection)
            changed = true
        }
        if changed { try resealThumbnail(of: attachment.id.text, as: protection) }
        return Outcome(was: was, changed: changed)
    }

    /// Seals the file of `attachment` anew under `protection` in `tmp/`, verified against its row,
    /// and renames it over the old one.
    func reseal(_ attachment: Attachment, as protection: ProtectionClass) throws {
        let source = try files.open(relativePath: attachment.relativePath)
        guard source.plaintextLength == attachment.byteCount else {
            throw StoreError.invalidData("the file of attachment \(attachment.id.short) is not the size its row records; `app container check` reports it; nothing was changed")
        }
        let staged = try files.stage(from: source, sourceName: source.path, maximumBytes: attachment.byteCount, protection: protection,
                                     prefix: "protect")
        var replaced = false
        defer { if !replaced { files.discard(staged) } }
        guard staged.byteCount == attachment.byteCount, attachment.contentHash.admits(staged.contentHash) else {
            throw StoreError.invalidData("the file of attachment \(attachment.id.short) does not match its recorded hash; `app container check` reports it; nothing was changed")
        }
        CrashPoint.reach("protect.staged")
        try files.replace(relativePath: attachment.relativePath, with: staged)
        replaced = true
        CrashPoint.reach("protect.replaced")
        if attachment.contentHash.isPending {
            try container.store.recordContentHashes([(attachment.id.text, attachment.byteCount, staged.contentHash)])
        }
    }

    /// The cached thumbnail of `id`, sealed under `protection` (read through its old seal), or
    /// removed when it cannot be read now; an entry in the clear goes too.
    func resealThumbnail(of id: String, as protection: ProtectionClass) throws {
        let cache = try ThumbnailCache(container: container)
        let png: [UInt8]?
        do {
            png = try cache.cachedPNG(for: id)
        } catch let error as DeviceError where error.isLockRefusal {
            png = nil
        }
        cache.removeThumbnail(of: id)
        if let png { try cache.store(png, for: id, protection: protection, staging: files.staging) }
    }

    /// What `reconcile` did.
    public struct Reconciliation: Sendable, Equatable, Codable {
        /// Files sealed as their row says (they were sealed otherwise, or were in the clear).
        public var sealed = 0
        /// Files left as they were: their classes are closed now (they wait for an unlock).
        public var waiting = 0
        /// Thumbnails in the clear (an earlier build's) removed.
        public var clearThumbnailsRemoved = 0
        /// Files that could not be sealed because they are not what their row says (`container check` reports them).
        public var damaged: [String] = []
        /// The databases `app container protect` sealed page by page this run (container paths:
        /// `store/TripBoard.sqlite`, `keychain/Keychain.sqlite`).
        public var sealedDatabases: [String] = []
    }

    /// Seals every present attachment's file as its row says: those a locked device sealed to
    /// `complete-unless-open`, and — when `includingClear` (`app container protect`) — those
    /// written in the clear before attachments were sealed, whose cached thumbnails in the clear
    /// are removed too. A file whose classes are closed now is counted as waiting. Resumable:
    /// each file is done in one rename, and a second run finds nothing left to do.
    public func reconcile(includingClear: Bool, progress: (Int, Int) -> Void = { _, _ in }) throws -> Reconciliation {
        var outcome = Reconciliation()
        let store = try container.store
        let rows = try store.presentAttachments()
        for (index, attachment) in rows.enumerated() {
            defer { progress(index + 1, rows.count) }
            let sealedAs: ProtectionClass?
            do {
                sealedAs = try files.sealedClass(relativePath: attachment.relativePath)
            } catch let error as FileSystemError where [.notFound, .notRegularFile, .symbolicLink].contains(error.code) {
                continue  // `container check` reports it
            }
            guard sealedAs != attachment.protection, sealedAs != nil || includingClear else { continue }
            do {
                try reseal(attachment, as: attachment.protection)
                try resealThumbnail(of: attachment.id.text, as: attachment.protection)
                outcome.sealed += 1
            } catch let error as DeviceError where error.isLockRefusal {
                outcome.waiting += 1
            } catch let error as StoreError {
                guard case .invalidData = error else { throw error }
                outcome.damaged.append(attachment.relativePath)
            }
        }
        if includingClear {
            outcome.sealed += try sealRecoveredFiles()
            outcome.clearThumbnailsRemoved = try ThumbnailCache(container: container).removeClearEntries()
        }
        return outcome
    }

    /// Seals every file under this container's keys that is not sealed so already (a restore's
    /// staged files, sealed to this device's `complete-unless-open` key or under keys of the
    /// restore's memory, `EphemeralFileKeys`): each attachment's file as its row says, each file
    /// kept in `attachments/recovered/` under `complete-unless-open`. A file already sealed in
    /// its class under the keybag that seals that class now is left as it is. A file that is not
    /// what its row says is `StoreError.invalidData`.
    public func resealEverything() throws {
        for attachment in try container.store.presentAttachments() where try !isSealedAsKeysSealNow(attachment.relativePath, attachment.protection) {
            try reseal(attachment, as: attachment.protection)
        }
        let names = try files.recoveredFiles()
        guard !names.isEmpty else { return }
        let directory = try files.recoveredDirectory()
        for (name, _) in names where try !isSealedAsKeysSealNow(ContainerLayout.attachmentsDirectory + "/" + AttachmentFiles.recoveredDirectory + "/" + name,
                                                                   .completeUnlessOpen) {
            let source = try files.openRecovered(name)
            guard let length = source.plaintextLength else { continue }
            let staged = try files.stage(from: source, sourceName: source.path, maximumBytes: length, protection: .completeUnlessOpen,
                                         prefix: "restore")
            var placed = false
            defer { if !placed { files.discard(staged) } }
            try files.staging.rename(staged.stagingName, to: directory, as: name)
            placed = true
        }
        try directory.synchronize()
    }

    /// Whether the file at `relativePath` is sealed under `protection` by the keybag that seals
    /// that class now (read from its header: no key is used).
    private func isSealedAsKeysSealNow(_ relativePath: String, _ protection: ProtectionClass) throws -> Bool {
        guard let header = try files.sealedHeader(relativePath: relativePath), header.protection == protection else { return false }
        return try header.keybag == files.keys.sealingKeybag(protection)
    }

    /// Seals the files in `attachments/recovered/` that are in the clear (kept for the user, no
    /// row names them) to `complete-unless-open`, each in one rename; returns how many.
    func sealRecoveredFiles() throws -> Int {
        let names = try files.recoveredFiles()
        guard !names.isEmpty else { return 0 }
        let directory = try files.recoveredDirectory()
        var sealed = 0
        for (name, size) in names {
            let source = try directory.openFileForReading(name)
            guard try AttachmentReader.sealedClass(of: source) == nil else { continue }
            try source.seek(to: 0)
            let staged = try files.stage(from: source, sourceName: directory.childPath(name), maximumBytes: size, protection: .completeUnlessOpen,
                                         prefix: "protect")
            var placed = false
            defer { if !placed { files.discard(staged) } }
            guard staged.byteCount == size else { continue }  // it changed meanwhile: left for the next run
            try files.staging.rename(staged.stagingName, to: directory, as: name)
            try directory.synchronize()
            placed = true
            sealed += 1
        }
        return sealed
    }
}

// MARK: - What is sealed

/// How the container's files stand (`container info`): counted from the files themselves (their
/// headers), not from the rows.
public struct ProtectionCensus: Sendable, Equatable, Codable {
    /// Sealed files by class name (`complete`, `complete-unless-open`, …), and those in the clear.
    public struct Files: Sendable, Equatable, Codable {
        public var sealed: [String: Int] = [:]
        public var clear = 0

        public init() {}

        public var sealedCount: Int { sealed.values.reduce(0, +) }
    }

    /// `attachments/<xx>/`: the tickets.
    public var attachments = Files()
    /// `attachments/recovered/`: files kept for the user that no row names.
    public var recovered = Files()
    /// `caches/thumbnails/`.
    public var thumbnails = Files()
    public init() {}

    /// Whether anything is in the clear that `app container protect` seals or removes.
    public var needsProtect: Bool { attachments.clear + recovered.clear + thumbnails.clear > 0 }
}

extension AttachmentProtection {
    /// Every file under `attachments/` and `caches/thumbnails/`, counted by how it is sealed
    /// (its header; no key is needed).
    public func census() throws -> ProtectionCensus {
        var census = ProtectionCensus()
        for entry in try files.inventory().files {
            Self.count(try files.sealedClass(relativePath: entry.path), in: &census.attachments)
        }
        let recoveredNames = try files.recoveredFiles()
        if !recoveredNames.isEmpty {
            let recovered = try files.recoveredDirectory()
            for (name, _) in recoveredNames {
                Self.count(try AttachmentReader.sealedClass(of: recovered.openFileForReading(name)), in: &census.recovered)
            }
        }
        // Looked at only when it is there: counting creates nothing.
        guard try container.status(of: ContainerLayout.cachesDirectory + "/" + ContainerLayout.thumbnailsDirectory)?.kind == .directory else {
            return census
        }
        let cache = try ThumbnailCache(container: container)
        for entry in try cache.entries() where entry.status.kind == .regular {
            if entry.attachmentID != nil {
                Self.count(try cache.sealedClass(of: entry.name), in: &census.thumbnails)
            } else if entry.name.hasSuffix(ThumbnailCache.clearSuffix) {
                census.thumbnails.clear += 1
            }
        }
        return census
    }

    /// Counts a file sealed under `protection`, or in the clear (nil).
    private static func count(_ protection: ProtectionClass?, in files: inout ProtectionCensus.Files) {
        if let protection {
            files.sealed[protection.fileClassName, default: 0] += 1
        } else {
            files.clear += 1
        }
    }
}
