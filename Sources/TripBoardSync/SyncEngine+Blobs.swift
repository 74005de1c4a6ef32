import TripBoardSodium
import TripBoardKeys
import TripBoardSystem
import TripBoardStorage
import TripBoardSyncProtocol
import TripBoardModel
import TripBoardDevice

/// Attachment files as blobs: sealed here with secretstream under the zone's blob key, named by
/// a keyed BLAKE2b of their plaintext (the same file has the same name on every device, so the
/// server keeps it once and learns nothing from the name), uploaded before the record that
/// names them, downloaded into `tmp/`, verified, then published — never a half file at the
/// attachment's path. Memory stays flat: one 1 MiB chunk at a time, each way.
extension SyncEngine {
    /// The blob's name, the file's plain BLAKE2b-256 and size, read in one pass.
    func nameBlob(_ file: any ByteSource) throws -> (name: String, contentHash: String, byteCount: Int64) {
        let plain = Blake2bHasher()
        let named = try Blake2bHasher(outputLength: 32, key: key.blobNameKey)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: AgentLimits.blobChunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let count = try file.read(into: buffer)
            if count == 0 { break }
            let chunk = UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
            plain.update(chunk)
            named.update(chunk)
            total += Int64(count)
        }
        return (Sodium.hexString(named.finalize()), Sodium.hexString(plain.finalize()), total)
    }

    /// Uploads the file of `record` (an attachment) unless the server has its blob already.
    /// Returns the blob's name and the file's hash, or nil when the file cannot be sent — not
    /// there, or not what its row says (`container check` names it) — and the record waits.
    func uploadBlob(of record: SyncRecord) throws -> (name: String, contentHash: String)? {
        guard record.fileState == .present, let relativePath = record.relativePath else { return nil }
        let (name, contentHash, byteCount): (String, String, Int64)
        do {
            (name, contentHash, byteCount) = try nameBlob(try files.open(relativePath: relativePath))
        } catch is FileSystemError {
            return nil
        } catch is AttachmentError {
            return nil
        } catch let error as DeviceError {
            // Sealed under a class closed now: it waits for the unlock (counted, and said).
            if error.isLockRefusal { report.uploadsAwaitingUnlock += 1; return nil }
            if case .damagedSealedFile = error { return nil }
            if case .sealedElsewhere = error { return nil }
            throw error
        }
        let recordedHash = record.fields["contentHash"]?.stringValue
        guard recordedHash == nil || recordedHash == contentHash, record.fields["byteCount"] == .number(String(byteCount)) else { return nil }
        if recordedHash == nil {
            // A row not hashed yet (a migrated container's, before its hashing pass): every byte
            // was just read, so its hash is recorded — else the next push would find the field
            // changed from the hash the server now has back to none.
            try store.recordContentHashes([(record.id, byteCount, contentHash)])
        }
        let chunkBytes = AgentLimits.blobChunkBytes
        let chunkCount = max(1, Int((byteCount + Int64(chunkBytes) - 1) / Int64(chunkBytes)))
        guard chunkCount <= AgentLimits.blobChunksMaximum else { return nil }
        let begin = AgentRequest.blobBegin(zone: account.zone, blob: name, chunkCount: chunkCount,
                                           byteCount: byteCount + Int64(SecretStream.headerLength + chunkCount * SecretStream.overhead))
        if case .blobBegun(exists: true) = try agent.send(begin) { return (name, contentHash) }

        // The second pass seals and sends; the file must be the one just named.
        let file = try files.open(relativePath: relativePath)
        let (stream, header) = try SecretStream.encrypting(key: key.blobKey)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        for index in 0..<chunkCount {
            var count = 0
            while count < chunkBytes {
                let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
                if read == 0 { break }
                count += read
            }
            total += Int64(count)
            let isFinal = index == chunkCount - 1
            guard isFinal ? total == byteCount : count == chunkBytes else {
                throw SyncError.attachmentChanged(id: record.id)
            }
            var message = try stream.push(UnsafeRawBufferPointer(rebasing: buffer[..<count]),
                                          associatedData: key.blobAssociatedData(name: name, index: index, count: chunkCount), isFinal: isFinal)
            if index == 0 { message = header + message }
            _ = try agent.send(.blobChunk(index: index, data: Base64.encodePublicUnpadded(message)))
        }
        var extra: UInt8 = 0
        guard try withUnsafeMutableBytes(of: &extra, { try file.read(into: $0) }) == 0 else { throw SyncError.attachmentChanged(id: record.id) }
        _ = try agent.send(.blobEnd)
        report.blobsUploaded += 1
        return (name, contentHash)
    }

    /// The blob the server's copy of an attachment names, from its shadow.
    static func blobName(in shadow: [String: ShadowField]) -> String? {
        guard let blob = shadow["blob"], let value = try? JSONValue.parse(Array(blob.value.utf8)) else { return nil }
        return value.stringValue
    }

    /// Blobs the server answered a push with as missing (removed while its batch waited here),
    /// as collected in `blobsMissingOnServer`: uploaded again from the attachment here that names
    /// each, if its file is here. Called with no batch in flight.
    func uploadBlobsMissingOnServer() throws {
        let missing = blobsMissingOnServer
        blobsMissingOnServer = []
        try uploadAgain(missing)
    }

    private func uploadAgain(_ missing: [String]) throws {
        for name in missing {
            for id in try ledger.attachmentIDs(namingBlob: name) {
                guard let record = try ledger.syncRecord(.attachment, id: id), let uploaded = try uploadBlob(of: record) else { continue }
                if uploaded.name == name { break }
            }
        }
    }

    /// Blobs no live record names leave the server once nothing has named or uploaded them for
    /// `AgentLimits.blobGraceDays` (docs/sync.md, Blobs no record names). While the server has
    /// live attachment records that do not say which blob they name (pushed by an older
    /// client), nothing is collected: this device names those it has at the server's version,
    /// then asks once more.
    func collectBlobs() throws {
        var answer = try collectBlobsOnce()
        if let unnamed = answer.unnamed, !unnamed.isEmpty {
            var known: [WireRecord] = []
            for record in unnamed {
                guard let version = record.version, try ledger.syncRecord(.attachment, id: record.id)?.remoteVersion == version,
                      let name = Self.blobName(in: try ledger.shadow(.attachment, id: record.id)) else { continue }
                known.append(WireRecord(kind: RecordKind.attachment.rawValue, id: record.id, version: version, deleted: false, fields: [:],
                                        blob: name))
            }
            guard !known.isEmpty, case .blobsNamed(let named) = try agent.send(.nameBlobs(zone: account.zone, records: known)), named > 0 else {
                return
            }
            answer = try collectBlobsOnce()
        }
        report.blobsCollected += answer.collected
    }

    /// One `collectBlobs`: how many blobs went, and the records that kept any from going.
    private func collectBlobsOnce() throws -> (collected: Int, unnamed: [WireRecord]?) {
        guard case .blobsCollected(let collected, let unnamed) = try agent.send(.collectBlobs(zone: account.zone)) else {
            throw agent.unexpectedAnswer()
        }
        return (collected, unnamed)
    }

    /// Fetches the file of every pulled attachment still `missing`: a blob that is not on the
    /// server (yet), or that does not verify, leaves the row `missing`, counted; nothing is
    /// ever written at the attachment's path but verified bytes.
    func downloadBlobs() throws {
        for waiting in try ledger.attachmentsAwaitingBlob() where !waiting.blob.isEmpty {
            let state: AttachmentFileState
            do {
                state = waiting.contentHash.isPending ? .missing
                    : try files.check(relativePath: waiting.relativePath, byteCount: waiting.byteCount, contentHash: waiting.contentHash)
            } catch let error as DeviceError where error.isLockRefusal {
                // A file an earlier run published, not verifiable while its class is closed: the
                // row stays missing until a sync after the unlock looks again.
                report.attachmentsMissing += 1
                continue
            }
            switch state {
            case .ok:
                // Published by a run that stopped before recording it.
                try store.markAttachmentPresent(id: RecordID(waiting.id))
            case .missing:
                if try download(waiting.blob, id: waiting.id, relativePath: waiting.relativePath,
                                byteCount: waiting.byteCount, contentHash: waiting.contentHash, protection: waiting.protection) {
                    try store.markAttachmentPresent(id: RecordID(waiting.id))
                    report.blobsDownloaded += 1
                } else {
                    report.attachmentsMissing += 1
                }
            case .wrongSize, .wrongHash, .notAFile:
                // Something else is at that path: left alone (never overwritten), the row stays missing.
                report.attachmentsMissing += 1
            }
        }
    }

    /// Downloads blob `name` into `tmp/`, opens and checks every chunk (in order, the last
    /// tagged final), its size, hash and name, then publishes it at `relativePath`. False, with
    /// nothing left behind, when the server has no such blob or it does not verify.
    ///
    /// The file is sealed as it is written, under the row's class — or, while that class is
    /// closed (`complete` on a locked device), to `complete-unless-open`, which needs nothing
    /// unlocked; the next unlock seals it as its row says (`AttachmentProtection.reconcile`).
    private func download(_ name: String, id: String, relativePath: String, byteCount: Int64, contentHash: ContentHash,
                          protection: ProtectionClass) throws -> Bool {
        guard let first = try blobChunk(name, index: 0), (1...AgentLimits.blobChunksMaximum).contains(first.chunkCount) else {
            return false
        }
        let chunkCount = first.chunkCount
        let stage = try files.sealingStageWhileLocked(protection: protection, prefix: "sync-blob")
        defer { stage.discard() }
        let plain = Blake2bHasher()
        let named = try Blake2bHasher(outputLength: 32, key: key.blobNameKey)
        var stream: SecretStream?
        var total: Int64 = 0
        for index in 0..<chunkCount {
            guard let chunk = index == 0 ? first : try blobChunk(name, index: index), chunk.chunkCount == chunkCount, let data = chunk.data, var bytes = Base64.decodePublicUnpadded(Array(data.utf8)) else { return false }
            if index == 0 {
                guard bytes.count >= SecretStream.headerLength,
                      let opened = try? SecretStream.decrypting(key: key.blobKey, header: Array(bytes.prefix(SecretStream.headerLength))) else { return false }
                stream = opened
                bytes.removeFirst(SecretStream.headerLength)
            }
            guard let stream, let (plaintext, isFinal) = try? stream.pull(bytes, associatedData: key.blobAssociatedData(name: name, index: index, count: chunkCount)),
                  isFinal == (index == chunkCount - 1) else { return false }
            total += Int64(plaintext.count)
            guard total <= byteCount else { return false }
            plain.update(plaintext)
            named.update(plaintext)
            try plaintext.withUnsafeBytes { try stage.write($0) }
            if index == 0 { CrashPoint.reach("sync.blob-chunk-written") }
        }
        guard total == byteCount, Sodium.hexString(named.finalize()) == name else { return false }
        let hash = Sodium.hexString(plain.finalize())
        guard contentHash.admits(hash) else { return false }
        let staged = try stage.finish(contentHash: hash, synchronize: true)
        let fileExtension = relativePath.split(separator: ".").last.map(String.init) ?? "bin"
        let path = try files.publish(staged, id: id, fileExtension: fileExtension)
        guard path == relativePath else { throw SyncError.damagedServerData("attachment \(id): its file went to \(path), not \(relativePath)") }
        return true
    }

    /// Chunk `index` of the server's complete blob `name`; nil when it has no such blob.
    private func blobChunk(_ name: String, index: Int) throws -> BlobChunk? {
        guard case .blobChunk(let chunk) = try agent.send(.blobRead(zone: account.zone, blob: name, chunkIndex: index)) else {
            throw agent.unexpectedAnswer()
        }
        return chunk
    }
}
