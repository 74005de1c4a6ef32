import TripBoardStorage
import TripBoardSQLite
import TripBoardSystem
import TripBoardModel

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
/// read back by a resumed run: the migration never re-decides what it is moving. The planned
/// files themselves are in `migration/plan-files.sqlite` (`MigrationFileList`), beside it.
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
    /// How many files the list holds, and their bytes.
    var fileCount: Int
    var fileBytes: Int64
    /// Attachment rows whose file is missing: `<id> <legacy relative path>`.
    var missing: [String]
    /// Where the files no row names go (`attachments/recovered/…`), for the summary.
    var recovered: [String]
    var preferences: PreferencePlan
    var bookingKindsChangedToOther: Int
    /// Entries of the old location that version 1 did not write: reported, left where they are.
    var foreign: [String]
    /// `MigrationDigest` of every legacy record as `LegacyConverter` converts it, in rowid order;
    /// the store built inside SQLite must hold exactly these.
    var recordDigest: String?
}

/// Builds a plan: reads every legacy row through the converter (so a record the new store would
/// refuse stops the migration before it starts), finds each attachment's file and records its
/// identity (device, inode, size, modification time) in the file list — reading no byte of it.
struct MigrationPlanner {
    let legacy: LegacyStore
    let legacyRoot: Directory
    let containerRoot: Directory?
    let containerPath: String
    let merge: Bool
    let migratedAt: String
    /// The destination store, to skip (with `--merge`) attachments whose id it already has.
    let destinationStore: Store?
    let progress: (MigrationProgress) -> Void

    /// The plan; its files go into `list` (one transaction).
    func make(into list: MigrationFileList) throws -> MigrationPlan {
        let converter = LegacyConverter(storePath: legacy.path, migratedAt: migratedAt)
        var digest = MigrationDigest()
        let counts = try MigrationCounts(counting: legacy.connection)
        let kindsChanged = try digestTripsPlacesAndBookings(into: &digest)
        progress(MigrationProgress(step: "planning", done: 1, total: 3))

        let attachmentsDirectory = try legacyRoot.status(of: LegacyLayout.attachmentsDirectory)?.kind == .directory
            ? try legacyRoot.openDirectory(LegacyLayout.attachmentsDirectory) : nil
        var missing: [String] = []
        var foreign: [String] = []
        try list.writing {
            try legacy.forEachAttachmentRow { row in
                let file = try Self.plannedFile(for: row, in: attachmentsDirectory)
                // The row's own fields, checked now.
                let id = try converter.attachment(row, file: nil).id
                try checkAgainstDestination(.attachment, id.text)
                guard var file else {
                    missing.append("\(row.id.lowercased()) \(row.relativePath)")
                    return
                }
                if merge, let destinationStore, try destinationStore.verification.hasRow(.attachment, id: file.attachmentID!) {
                    // The destination has this attachment already: its row stays; the file is kept aside.
                    file.attachmentID = nil
                    file.destination = ""
                }
                try list.add(file)
            }
            if let repeated = try legacy.firstSharedID() {
                throw MigrationError.invalidLegacyRecord(path: legacy.path, detail: """
                    \(repeated.first.withArticle) and \(repeated.second.withArticle) have the id \(repeated.id) (in some \
                    case); ids must be unique across trips, places, bookings and attachments
                    """)
            }
            if let attachmentsDirectory { foreign += try Self.planUnnamedFiles(in: attachmentsDirectory, into: list) }
            try assignRecoveredNames(in: list)
        }
        progress(MigrationProgress(step: "planning", done: 2, total: 3))
        try checkDestinationsAreFree(list)
        foreign += try legacyRoot.entries().filter { !LegacyLayout.ownNames.contains($0) }

        let storeBytes = try Self.storeBytes(in: legacyRoot)
        let sourceDevice = try (attachmentsDirectory ?? legacyRoot).status().device
        let sameFilesystem = try Self.nearestExistingDirectory(of: containerPath).status().device == sourceDevice
        // The attachment records need the files' sizes: digested once the list has them.
        try legacy.forEachAttachmentRow { row in
            digest.add(try converter.attachment(row, file: try list.file(attachmentID: row.id.lowercased())))
        }
        progress(MigrationProgress(step: "planning", done: 3, total: 3))
        return MigrationPlan(
            legacyPath: legacyRoot.path, containerPath: containerPath, migratedAt: migratedAt, merge: merge,
            sameFilesystem: sameFilesystem, storeBytes: storeBytes, counts: counts,
            fileCount: try list.count, fileBytes: try list.byteCount, missing: missing, recovered: try list.recoveredDestinations(),
            preferences: try Self.preferences(in: legacyRoot), bookingKindsChangedToOther: kindsChanged, foreign: foreign,
            recordDigest: digest.finish())
    }

    /// The file an attachment row names, when it is a regular file directly in version 1's
    /// `Attachments/` (`Attachments/<name>`, nothing else): its identity, read without a byte of it.
    static func plannedFile(for row: LegacyAttachmentRow, in attachmentsDirectory: Directory?) throws -> PlannedFile? {
        let components = row.relativePath.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count == 2, components[0] == Substring(LegacyLayout.attachmentsDirectory), let attachmentsDirectory,
              components[1] != ".", components[1] != "..", !components[1].isEmpty,
              let status = try attachmentsDirectory.status(of: String(components[1])), status.kind == .regular else { return nil }
        let id = row.id.lowercased()
        return PlannedFile(source: String(components[1]), destination: LegacyConverter.destination(attachmentID: id, legacyPath: row.relativePath),
                           status: status, attachmentID: id)
    }

    /// The regular files of `Attachments/` that no row names, added to `list` (bound for
    /// `attachments/recovered/`); returns the entries that are not regular files (reported, left).
    static func planUnnamedFiles(in attachmentsDirectory: Directory, into list: MigrationFileList) throws -> [String] {
        var foreign: [String] = []
        for name in try attachmentsDirectory.entries().sorted() where try !list.contains(source: name) {
            guard let status = try attachmentsDirectory.status(of: name) else { continue }
            guard status.kind == .regular else {
                foreign.append(LegacyLayout.attachmentsDirectory + "/" + name)
                continue
            }
            try list.add(PlannedFile(source: name, destination: "", status: status, attachmentID: nil))
        }
        return foreign
    }

    /// The legacy store and its `-wal`.
    static func storeBytes(in legacyRoot: Directory) throws -> Int64 {
        try [LegacyLayout.storeFile, LegacyLayout.storeFile + "-wal"].reduce(Int64(0)) { $0 + (try legacyRoot.status(of: $1)?.size ?? 0) }
    }

    /// Free space a migration needs in the container: three times the store (the copy, the built
    /// store, the published one), the files sealed (each is copied: a sealed file is its
    /// plaintext, 17 bytes per 64 KiB and a header of about 130 bytes; a block each), and 1 MiB
    /// of slack.
    static func neededBytes(storeBytes: Int64, fileBytes: Int64, fileCount: Int64) -> Int64 {
        storeBytes * 3 + fileBytes + fileBytes / 3_855 + fileCount * 4_096 + (1 << 20)
    }

    /// `attachments/recovered/<name>`, with `-2`, `-3`, … before the extension when the name is
    /// taken (by an earlier migration, or twice here), for every listed file no row names.
    private func assignRecoveredNames(in list: MigrationFileList) throws {
        var taken = Set<String>()
        if let containerRoot, try containerRoot.status(of: ContainerLayout.attachmentsDirectory) != nil {
            let attachments = try containerRoot.openDirectory(ContainerLayout.attachmentsDirectory)
            if try attachments.status(of: AttachmentFiles.recoveredDirectory) != nil {
                taken = Set(try attachments.openDirectory(AttachmentFiles.recoveredDirectory).entries())
            }
        }
        let recovered = try list.connection.statement("SELECT number, source FROM files WHERE attachment_id IS NULL ORDER BY number")
            .rows { (number: $0.integer(0), source: $0.text(1)) }
        for file in recovered {
            var candidate = file.source
            var number = 2
            while taken.contains(candidate) {
                candidate = Quarantine.candidateName(for: file.source, number: number)
                number += 1
            }
            taken.insert(candidate)
            try list.setDestination(ContainerLayout.attachmentsDirectory + "/" + AttachmentFiles.recoveredDirectory + "/" + candidate,
                                    of: file.number)
        }
    }

    /// A file already at an attachment's destination is not ours to replace.
    private func checkDestinationsAreFree(_ list: MigrationFileList) throws {
        guard let containerRoot, try containerRoot.status(of: ContainerLayout.attachmentsDirectory) != nil else { return }
        try list.forEach { file in
            guard file.attachmentID != nil, try Self.status(of: file.destination, in: containerRoot) != nil else { return }
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
        guard let bytes = try legacyRoot.readFileIfPresent(LegacyLayout.preferencesFile, limit: 1 << 20) else { return nil }
        guard case .object(let members)? = try? JSONValue.parse(bytes) else {
            return [(key: LegacyLayout.preferencesFile, value: .null)]
        }
        return members
    }
}
