/// A file the migration moves: an attachment's file, or a file with no row (to `recovered/`).
struct PlannedFile: Codable, Equatable {
    /// The name in the legacy `Attachments/`.
    var source: String
    /// Where it goes, relative to the container.
    var destination: String
    var byteCount: Int64
    /// BLAKE2b-256, lowercase hex, of the bytes the plan read.
    var contentHash: String
    /// The source's identity: a destination with the same device and inode is the same file,
    /// renamed there by an earlier attempt.
    var device: UInt64
    var inode: UInt64
    /// The attachment row's id; absent for a file without a row.
    var attachmentID: String?
}

/// In `plan.json` each file is one string, its fields joined by U+0000 (which no file name, hash
/// or id contains): one JSON value per file instead of an object of seven keeps the plan's memory
/// small while it is encoded and decoded (10,000 files cost 10 MB more as objects). The keyed
/// form of earlier plans is still read.
extension PlannedFile {
    private enum CodingKeys: String, CodingKey {
        case source, destination, byteCount, contentHash, device, inode, attachmentID
    }

    init(from decoder: any Decoder) throws {
        if let packed = try? decoder.singleValueContainer().decode(String.self) {
            let fields = packed.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 7, let byteCount = Int64(fields[2]), let device = UInt64(fields[4]), let inode = UInt64(fields[5]) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a planned file"))
            }
            self.init(source: fields[0], destination: fields[1], byteCount: byteCount, contentHash: fields[3], device: device,
                      inode: inode, attachmentID: fields[6].isEmpty ? nil : fields[6])
            return
        }
        let keyed = try decoder.container(keyedBy: CodingKeys.self)
        self.init(source: try keyed.decode(String.self, forKey: .source), destination: try keyed.decode(String.self, forKey: .destination),
                  byteCount: try keyed.decode(Int64.self, forKey: .byteCount), contentHash: try keyed.decode(String.self, forKey: .contentHash),
                  device: try keyed.decode(UInt64.self, forKey: .device), inode: try keyed.decode(UInt64.self, forKey: .inode),
                  attachmentID: try keyed.decodeIfPresent(String.self, forKey: .attachmentID))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(packed)
    }

    /// The one string that stands for this file in `plan.json`.
    var packed: String {
        [source, destination, String(byteCount), contentHash, String(device), String(inode), attachmentID ?? ""].joined(separator: "\u{0}")
    }
}

/// The legacy preferences, sorted out: values the typed keys accept, and the names (never the
/// values) of those refused or unknown.
struct PreferencePlan: Codable, Equatable {
    var values: [PreferenceKey: PreferenceValue] = [:]
    var refused: [String] = []
    var unknown: [String] = []
    /// How many of `accessToken` and `refreshToken` the file holds (their values stay there).
    var tokens = 0

    static let renamed = ["preferredCurrency": PreferenceKey.currency, "theme": .theme, "mapStyle": .mapStyle,
                          "showsVisitedPlaces": .showsVisitedPlaces]
    static let tokenKeys = ["accessToken", "refreshToken"]
    /// Used as the keychain account of the tokens when present (`app auth login` uses the email).
    static let accountKeys = ["email", "accountEmail"]
}

/// What the plan step found, written to `migration/plan.json` before anything else changes, and
/// read back by a resumed run: the migration never re-decides what it is moving.
struct MigrationPlan: Codable {
    var legacyPath: String
    var containerPath: String
    /// The `updatedAt` of migrated records that had none in version 1.
    var migratedAt: String
    var merge: Bool
    var sameFilesystem: Bool
    /// Size of the legacy store and its `-wal` before the checkpoint.
    var storeBytes: Int64
    var counts: MigrationCounts
    var attachments: [PlannedFile]
    /// Attachment rows whose file is missing: `<id> <legacy relative path>`.
    var missing: [String]
    var recovered: [PlannedFile]
    var preferences: PreferencePlan
    var bookingKindsChangedToOther: Int
    /// Entries of the old location that version 1 did not write: reported, left where they are.
    var foreign: [String]
    /// `MigrationDigest` of every legacy record as `LegacyConverter` converts it, in rowid order;
    /// the store built inside SQLite must hold exactly these. Absent in plans written before it.
    var recordDigest: String?

    /// Every planned file, the attachments first, without copying the two lists (10,000 files are
    /// 1.5 MB of list).
    var files: FlattenSequence<[[PlannedFile]]> { [attachments, recovered].joined() }
    var fileCount: Int { attachments.count + recovered.count }
    var fileBytes: Int64 { files.reduce(0) { $0 + $1.byteCount } }
}

/// Builds a plan: reads every legacy row through the converter (so a record the new store would
/// refuse stops the migration before it starts), finds each attachment's file, hashes every file.
struct MigrationPlanner {
    let legacy: LegacyStore
    let legacyRoot: Directory
    let containerRoot: Directory?
    let containerPath: String
    let merge: Bool
    let migratedAt: String
    /// The destination store, to skip (with `--merge`) attachments whose id it already has.
    let destinationStore: Connection?
    let progress: (MigrationProgress) -> Void
    /// For a real run (not a dry run): the container's `migration/staged/`, emptied, made when
    /// the old location is on another filesystem — the hash pass then also copies each file into
    /// it (each thread into its own directory there), so every byte is read once (`copies`).
    var stagingDirectory: (() throws -> Directory)? = nil

    /// The plan, and the copies the hash pass made (by destination; empty on one filesystem).
    func make() throws -> MigrationPlan { try makeStaging().plan }

    func makeStaging() throws -> (plan: MigrationPlan, copies: [String: StagedCopy]) {
        let converter = LegacyConverter(storePath: legacy.path, migratedAt: migratedAt)
        var digest = MigrationDigest()
        var ids = IDRegister()
        let kindsChanged = try digestTripsPlacesAndBookings(into: &digest, ids: &ids)

        let attachmentsDirectory = try legacyRoot.status(of: LegacyLayout.attachmentsDirectory)?.kind == .directory
            ? try legacyRoot.openDirectory(LegacyLayout.attachmentsDirectory) : nil
        var unclaimed = Set(try attachmentsDirectory?.entries() ?? [])
        var attachments: [PlannedFile] = []
        var recovered: [PlannedFile] = []
        var missing: [String] = []
        var foreign: [String] = []
        try legacy.forEachAttachmentRow { row in
            let components = row.relativePath.split(separator: "/", omittingEmptySubsequences: false)
            var file: PlannedFile?
            if components.count == 2, components[0] == Substring(LegacyLayout.attachmentsDirectory), let attachmentsDirectory,
               components[1] != ".", components[1] != "..", !components[1].isEmpty,
               let status = try attachmentsDirectory.status(of: String(components[1])), status.kind == .regular {
                let id = row.id.lowercased()
                file = PlannedFile(source: String(components[1]),
                                   destination: LegacyConverter.destination(attachmentID: id, legacyPath: row.relativePath),
                                   byteCount: status.size, contentHash: "", device: status.device, inode: status.inode,
                                   attachmentID: id)
                unclaimed.remove(String(components[1]))
            }
            // The row's own fields, checked now; its file's hash is known after the hash pass.
            let id = try converter.attachment(row, file: nil).id
            try checkAgainstDestination(.attachment, id)
            ids.add(id, .attachment)
            guard var file else {
                missing.append("\(row.id.lowercased()) \(row.relativePath)")
                return
            }
            if merge, let destinationStore,
               try destinationStore.integer("SELECT count(*) FROM attachments WHERE id = ?", [.text(file.attachmentID!)]) > 0 {
                // The destination has this attachment already: its row stays; the file is kept aside.
                file.attachmentID = nil
                recovered.append(file)
            } else {
                attachments.append(file)
            }
        }
        if let repeated = ids.firstRepeat() {
            throw MigrationError.invalidLegacyRecord(path: legacy.path, detail: """
                \(repeated.first.kind.withArticle) and \(repeated.second.kind.withArticle) have the id \(repeated.id) (in some \
                case); ids must be unique across trips, places, bookings and attachments
                """)
        }
        for name in unclaimed.sorted() {
            guard let attachmentsDirectory, let status = try attachmentsDirectory.status(of: name) else { continue }
            guard status.kind == .regular else {
                foreign.append(LegacyLayout.attachmentsDirectory + "/" + name)
                continue
            }
            recovered.append(PlannedFile(source: name, destination: "", byteCount: status.size, contentHash: "",
                                         device: status.device, inode: status.inode, attachmentID: nil))
        }
        try assignRecoveredNames(&recovered)
        try checkDestinationsAreFree(attachments)
        foreign += try legacyRoot.entries().filter { !LegacyLayout.ownNames.contains($0) }

        let storeBytes = try Self.storeBytes(in: legacyRoot)
        let sourceDevice = try (attachmentsDirectory ?? legacyRoot).status().device
        let sameFilesystem = try Self.nearestExistingDirectory(of: containerPath).status().device == sourceDevice
        var copies: [String: StagedCopy] = [:]
        if let attachmentsDirectory {
            var staging: Directory?
            if !sameFilesystem, !attachments.isEmpty || !recovered.isEmpty, let stagingDirectory, let containerRoot {
                // The space is checked before the first copy (and again, with the final sizes, by the caller).
                let needed = Self.neededBytes(storeBytes: storeBytes, fileBytes: (attachments + recovered).reduce(0) { $0 + $1.byteCount },
                                              sameFilesystem: false)
                let available = try containerRoot.availableBytes()
                if available < needed {
                    throw MigrationError.insufficientSpace(path: containerPath, needed: needed, available: available)
                }
                staging = try stagingDirectory()
            }
            copies = try hash(&attachments, &recovered, in: attachmentsDirectory, copyingInto: staging)
        }
        // The attachment records need the files' sizes and hashes: digested once they are known.
        let files = Dictionary(uniqueKeysWithValues: attachments.map { ($0.attachmentID ?? "", $0) })
        try legacy.forEachAttachmentRow { row in
            digest.add(try converter.attachment(row, file: files[row.id.lowercased()]))
        }

        let plan = MigrationPlan(
            legacyPath: legacyRoot.path, containerPath: containerPath, migratedAt: migratedAt, merge: merge,
            sameFilesystem: sameFilesystem,
            storeBytes: storeBytes, counts: try MigrationCounts(counting: legacy.connection), attachments: attachments, missing: missing, recovered: recovered,
            preferences: try Self.preferences(in: legacyRoot), bookingKindsChangedToOther: kindsChanged, foreign: foreign,
            recordDigest: digest.finish())
        return (plan, copies)
    }

    /// The legacy store and its `-wal`.
    static func storeBytes(in legacyRoot: Directory) throws -> Int64 {
        try [LegacyLayout.storeFile, LegacyLayout.storeFile + "-wal"].reduce(Int64(0)) { $0 + (try legacyRoot.status(of: $1)?.size ?? 0) }
    }

    /// Free space a migration needs in the container: three times the store (the copy, the built
    /// store, the published one), the files when they are copied, and 1 MiB of slack.
    static func neededBytes(storeBytes: Int64, fileBytes: Int64, sameFilesystem: Bool) -> Int64 {
        storeBytes * 3 + (sameFilesystem ? 0 : fileBytes) + (1 << 20)
    }

    /// Every planned file's size and BLAKE2b-256, read on two threads (reading and hashing 1 GB of
    /// small files is CPU work that one core would do alone). With `staging`, each file is copied
    /// there as it is read and hashed (`AttachmentFiles.stage`, writeback started, not fsynced):
    /// the attachments step publishes these copies. Each thread copies into its own directory
    /// (`migration/staged/<thread>/`): creating a file takes its directory's lock, and in one
    /// directory the two threads' creations queue behind each other. Progress is reported by the
    /// calling thread, from the bytes both have hashed.
    private func hash(_ attachments: inout [PlannedFile], _ recovered: inout [PlannedFile], in directory: Directory,
                      copyingInto staging: Directory?) throws -> [String: StagedCopy] {
        var files = attachments + recovered
        let total = files.reduce(Int64(0)) { $0 + $1.byteCount }
        let threads = 2
        let stagingDirectories = try staging.map { staging in try (0..<threads).map { try MigrationRun.workerDirectory($0, in: staging) } }
        var hashed = [Int64](repeating: 0, count: threads)
        var copies = [StagedCopy?](repeating: nil, count: files.count)
        try files.withUnsafeMutableBufferPointer { files in
            try hashed.withUnsafeMutableBufferPointer { hashed in
                try copies.withUnsafeMutableBufferPointer { copies in
                    try ParallelLoop.run(count: files.count, threads: threads) { worker, index in
                        let source = try directory.openFileForReading(files[index].source)
                        if let stagingDirectories {
                            let copy = try AttachmentFiles.stage(from: source, into: stagingDirectories[worker], maximumBytes: .max,
                                                                 synchronize: false)
                            copies[index] = StagedCopy(copy, in: stagingDirectories[worker])
                            files[index].byteCount = copy.byteCount
                            files[index].contentHash = copy.contentHash
                        } else {
                            (files[index].byteCount, files[index].contentHash) = try AttachmentFiles.contentHash(of: source)
                        }
                        hashed[worker] += files[index].byteCount
                        // Only the calling thread reports, estimating the other's share as its own.
                        if worker == 0 {
                            progress(MigrationProgress(step: "planning", done: min(total, hashed[0] * Int64(threads)), total: total))
                        }
                    }
                }
            }
        }
        attachments = Array(files[..<attachments.count])
        recovered = Array(files[attachments.count...])
        var byDestination: [String: StagedCopy] = [:]
        for (file, copy) in zip(files, copies) { if let copy { byDestination[file.destination] = copy } }
        return byDestination
    }

    /// `attachments/recovered/<name>`, with `-2`, `-3`, … before the extension when the name is
    /// taken (by an earlier migration, or twice here).
    private func assignRecoveredNames(_ files: inout [PlannedFile]) throws {
        var taken = Set<String>()
        if let containerRoot, try containerRoot.status(of: ContainerLayout.attachmentsDirectory) != nil {
            let attachments = try containerRoot.openDirectory(ContainerLayout.attachmentsDirectory)
            if try attachments.status(of: AttachmentFiles.recoveredDirectory) != nil {
                taken = Set(try attachments.openDirectory(AttachmentFiles.recoveredDirectory).entries())
            }
        }
        for index in files.indices {
            let name = files[index].source
            var candidate = name
            var number = 2
            while taken.contains(candidate) {
                candidate = Quarantine.candidateName(for: name, number: number)
                number += 1
            }
            taken.insert(candidate)
            files[index].destination = ContainerLayout.attachmentsDirectory + "/" + AttachmentFiles.recoveredDirectory + "/" + candidate
        }
    }

    /// A file already at an attachment's destination is not ours to replace.
    private func checkDestinationsAreFree(_ files: [PlannedFile]) throws {
        guard let containerRoot else { return }
        for file in files where try Self.status(of: file.destination, in: containerRoot) != nil {
            throw MigrationError.destinationConflict(path: containerRoot.childPath(file.destination))
        }
    }

    /// The directory at `path`, or its nearest ancestor that exists (where it would be created).
    static func nearestExistingDirectory(of path: String) throws -> Directory {
        var candidate = path
        while true {
            do {
                return try Directory.open(path: candidate)
            } catch {
                guard error.code == .notFound, let slash = candidate.lastIndex(of: "/") else {
                    if error.code == .notFound { return try Directory.open(path: ".") }
                    throw error
                }
                candidate = slash == candidate.startIndex ? "/" : String(candidate[..<slash])
            }
        }
    }

    /// The status of `relativePath` under `root`, `nil` when it or a parent is absent.
    static func status(of relativePath: String, in root: Directory) throws -> FileStatus? {
        var directory = root
        let components = relativePath.split(separator: "/").map(String.init)
        for component in components.dropLast() {
            guard try directory.status(of: component)?.kind == .directory else { return nil }
            directory = try directory.openDirectory(component)
        }
        return try directory.status(of: components.last ?? ".")
    }

    /// Sorts the legacy `preferences.json` into values the typed keys accept, refused and
    /// unknown names, and the tokens (counted, not copied).
    static func preferences(in legacyRoot: Directory) throws -> PreferencePlan {
        var plan = PreferencePlan()
        guard let members = try LegacyPreferences.read(in: legacyRoot) else { return plan }
        for (name, value) in members {
            if name == LegacyLayout.preferencesFile {
                plan.refused.append(name)  // the whole file: not a JSON object
            } else if PreferencePlan.tokenKeys.contains(name) {
                plan.tokens += 1
            } else if PreferencePlan.accountKeys.contains(name) {
                continue
            } else if let key = PreferencePlan.renamed[name] {
                do {
                    plan.values[key] = try key.validate(try JSON.decode(PreferenceValue.self, from: value))
                } catch {
                    plan.refused.append(name)
                }
            } else {
                plan.unknown.append(name)
            }
        }
        plan.refused.sort()
        plan.unknown.sort()
        return plan
    }
}

/// The legacy `preferences.json`: a flat JSON object.
enum LegacyPreferences {
    /// The members, or `nil` when there is no file. A file that is not a JSON object is refused
    /// as a whole (reported, nothing taken from it).
    static func read(in legacyRoot: Directory) throws -> [(key: String, value: JSONValue)]? {
        let bytes: [UInt8]
        do {
            bytes = try legacyRoot.openFileForReading(LegacyLayout.preferencesFile).readToEnd(limit: 1 << 20)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
        guard case .object(let members)? = try? JSONValue.parse(bytes) else {
            return [(key: LegacyLayout.preferencesFile, value: .null)]
        }
        return members
    }
}
