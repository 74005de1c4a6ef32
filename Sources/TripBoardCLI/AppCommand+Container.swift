import TripBoardStorage
import TripBoardSystem
import TripBoardModel
import TripBoardCommandLine
import TripBoardMigration
import TripBoardDevice
import TripBoardSQLite

/// The sealed-page VFS as a loadable extension, which `app container sqlite` has the sqlite3 shell
/// load: installed beside `app`.
let sealedPagesExtension = "libTripBoardSealedPages.so"

/// `container info --json`: documented in docs/cli.md.
struct ContainerInfo: Encodable {
    struct Paths: Encodable {
        var container, lock, manifest, store, preferences, attachments, thumbnails, keychain, staging: String
    }

    struct Sizes: Encodable {
        var store: Int64
        var storeWAL: Int64
        var storeSharedMemory: Int64
        var preferences: Int64
    }

    /// The container path as it was given (`--container`, the environment or the default); the
    /// paths above are canonical (symbolic links resolved), which is what is opened.
    var location: String
    var paths: Paths
    var layoutVersion: Int
    /// `ok`, `damaged`, `corrupt`, `newerSchema`, `missing`, `unreadable` (`StoreHealth`).
    var storeState: StoreHealth
    /// Why the store is not `ok`, in one line; `null` when it is.
    var storeProblem: String?
    /// `null` when the store cannot be read.
    var schemaVersion: Int64?
    var sqliteVersion: String
    var createdAt: String
    var createdBy: String
    var durability: String
    var sizes: Sizes
    /// `null` when the store cannot be read.
    var counts: StoreCounts?
    /// How each part is protected: the files counted by their seals; the store, the keychain's
    /// database and the preferences by what this build does with them.
    var protection: Protection

    struct Protection: Encodable {
        /// The tickets, the files kept in `attachments/recovered/`, and the thumbnails:
        /// `{"sealed": {CLASS: N}, "clear": N}`; `null` when they cannot be counted.
        var attachments, recovered, thumbnails: ProtectionCensus.Files?
        /// Why the files cannot be counted, in one line; `null` when they were.
        var filesProblem: String?
        /// The store's pages: `until-first-unlock` (sealed page by page under that class: its key
        /// file is there), `none` (in the clear: an earlier build's, until `container protect`),
        /// `absent`; `unknown` when its directory cannot be read.
        var store: String
        /// The keychain's database, likewise (each item's value is sealed under its
        /// accessibility besides).
        var keychainDatabase: String
        /// `none`: preferences are not sensitive (as UserDefaults).
        var preferences = "none"
        /// Whether `app container protect` has something to seal or remove.
        var needsProtect: Bool
    }
}

extension AppCommand {
    static var containerCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["container", "info"],
                        options: [
                            .json,
                        ],
                        summary: "Shows where the container is, its layout and schema versions, file sizes and record counts.",
                        run: containerInfo, store: .inspection),
            AppCommandSpec(words: ["container", "protect"],
                        options: [.json],
                        summary: """
                        Seals what an earlier build wrote in the clear: every attachment's file under its protection class \
                        (complete-unless-open unless `attachment protect` chose another), the files kept in \
                        attachments/recovered/ under complete-unless-open, and removes thumbnails in the clear (they are \
                        made again, sealed). Also seals as its row says a file a locked device could only seal to \
                        complete-unless-open. Each file is sealed into tmp/, checked against its row and renamed over the \
                        old one: a kill at any point leaves every file whole, and running it again finishes the work. Files \
                        whose class is closed wait: exit 69 says how many (`app device unlock`, then run it again).
                        """, run: protectContainer, store: .none),
            AppCommandSpec(words: ["container", "diagnose"],
                        options: [
                            .value("--output", "FILE", "write the report to FILE (atomically, mode 0600) instead of standard output", completion: .file),
                        ],
                        summary: """
                        Writes a report for support as JSON (to FILE atomically, mode 0600, or to stdout): versions, \
                        layout and store states, sizes, page and record counts, integrity_check's verdict, lock \
                        holders, the migration's state and the errors met — never a name, note, place, reference, \
                        file name, id, path, preference value or secret. Works whatever state the store is in.
                        """, run: diagnoseContainer, store: .inspection),
            AppCommandSpec(words: ["container", "salvage"],
                        options: [
                            .json,
                        ],
                        summary: """
                        Copies what can still be read out of a damaged store into a new one — row by row around \
                        damaged pages, counting what is lost — puts the new store in place and keeps the damaged one \
                        in store/damaged-<stamp>/ (never deleted). Attachments stay where they are. Resumes an \
                        interrupted salvage; on a sound store it changes nothing.
                        """, run: salvageStore, store: .none),
            AppCommandSpec(words: ["container", "sqlite"],
                        options: [
                            .flag("--keychain", "the keychain's database instead of the store"),
                            .flag("--readonly", "open it read-only (sqlite3's -readonly)"),
                        ],
                        arguments: [
                            .repeated("ARG", "passed to sqlite3 after the database: SQL to run, dot-commands, or sqlite3's own options after --"),
                        ],
                        summary: """
                        Runs the sqlite3 shell on the container's store (or, with --keychain, the keychain's database)                         through TripBoard's sealed-page VFS: the supported way to read or change a sealed database with                         SQL. The page key is opened with this device's keys and handed to sqlite3 on a pipe, never in                         argv or the environment; the shell replaces this process and takes no container lock (it                         behaves as any other SQLite client). Needs the device unlocked since it started (69 otherwise)                         and libTripBoardSealedPages.so beside `app`.
                        """, run: sqliteShell, store: .none, chores: []),
            AppCommandSpec(words: ["container", "init"],
                        options: [.json],
                        arguments: [
                            .optional("DIR", "where to create the container (default: --container, else the environment's)", completion: .directory),
                        ],
                        summary: """
                        Creates a container at DIR (else where --container and the environment say), and prints its \
                        path. DIR must not exist yet or be empty; an existing container is left as it is.
                        """, run: initContainer, createsContainer: true),
        ]
    }

    static func diagnoseContainer(_ context: CommandContext) throws {
        let output = try context.arguments.option("--output")
        try context.finishArguments()
        let destination = try output.map { try outputDestination($0) }
        let report = try ContainerDiagnosis.gather(container: try context.container(), tripboardVersion: program.versionLine)
        let bytes = try Console.json(report) + [0x0a]
        guard let (directory, fileName) = destination else { return context.console.write(bytes) }
        try directory.writeAtomically(bytes, to: fileName, staging: directory)
        context.console.diagnostic(terminalSafe("wrote \(directory.childPath(fileName))"))
    }

    static func salvageStore(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let container = try context.container()
        let report = try StoreSalvage.run(container: container)
        if json { return try context.console.printJSON(report) }
        let console = context.console
        switch report.outcome {
        case .nothingToSalvage:
            return console.print("The store passed integrity_check and its schema is this build's: nothing to salvage, nothing changed.")
        case .finished:
            console.print("Finished an interrupted salvage: the salvaged store is in place.")
        case .salvaged:
            console.print("Salvaged the store of \(container.path):")
        }
        for table in report.tables {
            var line = "  \(table.table): \(table.copied) copied"
            if !table.unreadableRanges.isEmpty {
                let lost = table.lost.map { "\($0) row\($0 == 1 ? "" : "s") lost" }
                    ?? (table.unreadableRanges.last?.hasPrefix("after") != true ? "at most \(table.lostAtMost) rows lost"
                        : table.lostAtMost > 0 ? "at least \(table.lostAtMost) rows lost, how many more is unknown" : "an unknown number of rows lost")
                line += "; unreadable rowids \(table.unreadableRanges.joined(separator: ", ")) (\(lost))"
            }
            if table.refused > 0 { line += "; \(table.refused) damaged rows left out" }
            console.print(line)
        }
        if !report.placeholders.isEmpty {
            console.print("  recreated under their own ids so that what they held is kept: " + report.placeholders.joined(separator: ", "))
        }
        if let kept = report.damagedStoreKeptIn {
            console.print("  the damaged store is kept in \(kept)/ (TripBoard never deletes it)")
            console.print("  then run `app container check --repair`: files no row names any more go to attachments/recovered/")
        }
    }

    static func sqliteShell(_ context: CommandContext) throws {
        let keychain = context.arguments.flag("--keychain")
        let readOnly = context.arguments.flag("--readonly")
        var passed: [String] = []
        while let argument = context.arguments.nextPositional() { passed.append(argument) }
        try context.finishArguments()
        // Not opened as a container (no lock, no setup, no migration): what a foreign tool sees.
        let path = try context.containerPath
        let root: Directory
        do {
            root = try Directory.openResolvingLinks(path: path)
        } catch {
            guard error.code == .notFound else { throw error }
            throw CommandLineError(.noInput, "there is no container at \(path)")
        }
        let (directoryName, database) = keychain
            ? (ContainerLayout.keychainDirectory, ContainerLayout.keychainFile)
            : (ContainerLayout.storeDirectory, ContainerLayout.storeFile)
        guard try root.status(of: directoryName)?.kind == .directory else {
            throw CommandLineError(.noInput, "\(root.childPath(directoryName + "/" + database)) does not exist")
        }
        let directory = try root.openDirectory(directoryName)
        // A database that is missing while its key file is there is made by sqlite3, sealed
        // under that key (a store rebuilt by hand).
        guard try directory.status(of: database)?.kind == .regular || directory.status(of: DatabaseKeyFile.name(for: database)) != nil else {
            throw CommandLineError(.noInput, "\(directory.childPath(database)) does not exist")
        }
        guard let sqlite3 = ProcessImage.find("sqlite3", searchPath: context.environment["PATH"] ?? "/usr/bin:/bin") else {
            throw CommandLineError(.unavailable, "sqlite3 is not on PATH (Debian: apt-get install sqlite3)")
        }
        let key = try DatabaseKeyFile.read(in: directory, database: database, keys: try FileProtection.keys(environment: context.environment))
        var arguments = [sqlite3]
        var uri = "file:" + SQLiteURI.escapedPath(directory.childPath(database))
        if key != nil {
            let directory = try ChildProcess.currentExecutableDirectory()
            let library = directory + "/" + sealedPagesExtension
            guard try Directory.open(path: directory).status(of: sealedPagesExtension)?.kind == .regular else {
                throw CommandLineError(.unavailable, "\(library) is missing: the sealed-page extension is installed beside app")
            }
            arguments += ["-cmd", ".load '\(library)' sqlite3_tripboardsealedpages_init"]
            uri += "?vfs=" + PageKey.vfsName
        }
        arguments += ["-cmd", ".open \(readOnly ? "--readonly " : "")'\(uri)'", ":memory:"] + passed
        guard let key else {
            try ProcessImage.replace(executable: sqlite3, arguments: arguments, environment: context.environment)
        }
        var payload = key.key.withUnsafeBytes { Array($0) } + key.fileID
        defer { for index in payload.indices { payload[index] = 0 } }
        try payload.withUnsafeBytes { bytes in
            try ProcessImage.replace(executable: sqlite3, arguments: arguments, environment: context.environment,
                                     payload: bytes, descriptorVariable: "TRIPBOARD_PAGE_KEY_FD")
        }
    }

    static func initContainer(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let directory = context.arguments.nextPositional()
        try context.finishArguments()
        if let directory {
            guard !directory.isEmpty else { throw CommandLineError.usage("DIR must not be empty") }
            context.relocateContainer(to: directory)
            context.containerIsExplicit = true
        }
        let container = try context.container()
        if json { return try context.console.printJSON(ContainerCreation(path: container.path, created: container.wasCreated)) }
        if !container.wasCreated { context.console.diagnostic(terminalSafe("a TripBoard container is already at \(container.path)")) }
        context.console.print(container.path)
    }

    static func containerInfo(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let container = try context.container()
        let manifest = try container.manifest()
        func path(_ relative: String) -> String { container.path + "/" + relative }
        // Best effort: a directory that cannot be read (its permissions) shows as 0 bytes.
        func size(_ relative: String) -> Int64 { ((try? container.status(of: relative)) ?? nil)?.size ?? 0 }
        let store = ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile
        let preferences = ContainerLayout.preferencesDirectory + "/" + ContainerLayout.preferencesFile
        let (state, problem, schemaVersion, counts) = try storeSummary(container)
        let info = ContainerInfo(
            location: try context.containerPath,
            paths: .init(container: container.path, lock: path(ContainerLayout.lockFile), manifest: path(ContainerLayout.manifestFile),
                         store: path(store), preferences: path(preferences), attachments: path(ContainerLayout.attachmentsDirectory),
                         thumbnails: path(ContainerLayout.cachesDirectory + "/" + ContainerLayout.thumbnailsDirectory),
                         keychain: path(ContainerLayout.keychainDirectory), staging: path(ContainerLayout.stagingDirectory)),
            layoutVersion: manifest?.layoutVersion ?? ContainerLayout.version,
            storeState: state, storeProblem: problem, schemaVersion: schemaVersion,
            sqliteVersion: Store.sqliteVersion,
            createdAt: manifest?.createdAt ?? "", createdBy: manifest?.createdBy ?? "",
            durability: container.options.durability.rawValue,
            sizes: .init(store: size(store), storeWAL: size(store + "-wal"), storeSharedMemory: size(store + "-shm"),
                         preferences: size(preferences)),
            counts: counts, protection: try protectionSummary(container))
        if json { return try context.console.printJSON(info) }
        let console = context.console
        let given = info.location == info.paths.container ? "" : " (given as \(info.location))"
        console.print("container:   \(info.paths.container)" + given)
        console.print("created:     \(info.createdAt) by \(info.createdBy)")
        console.print("layout:      version \(info.layoutVersion); store schema \(info.schemaVersion.map(String.init) ?? "unknown"); SQLite \(info.sqliteVersion)")
        console.print("durability:  \(info.durability)")
        console.print("store:       \(info.paths.store) (\(info.sizes.store) bytes, wal \(info.sizes.storeWAL), shm \(info.sizes.storeSharedMemory))")
        if let problem = info.storeProblem { console.print("             \(info.storeState.rawValue.uppercased()): \(problem)") }
        console.print("preferences: \(info.paths.preferences) (\(info.sizes.preferences) bytes)")
        if let counts = info.counts {
            console.print("records:     \(counts.trips) trips, \(counts.places) places, \(counts.bookings) bookings, \(counts.attachments) attachments")
            console.print("sync:        \(counts.pendingChanges) pending (\(counts.tombstones) deletions)")
        } else {
            console.print("records:     unknown (the store cannot be read)")
        }
        let protection = info.protection
        if let attachments = protection.attachments, let thumbnails = protection.thumbnails, let recovered = protection.recovered {
            console.print("protection:  attachments " + describe(attachments) + "; thumbnails " + describe(thumbnails)
                          + (recovered.sealedCount + recovered.clear > 0 ? "; recovered/ " + describe(recovered) : ""))
        } else {
            console.print("protection:  files unknown (\(protection.filesProblem ?? "they cannot be counted"))")
        }
        func said(_ protection: String) -> String {
            switch protection {
            case "none": "in the clear"
            case "absent": "not made yet"
            case "unknown": "unknown (its directory cannot be read)"
            default: "sealed (\(protection))"
            }
        }
        console.print("             store \(said(protection.store)); keychain database \(said(protection.keychainDatabase)) (its items sealed); "
                      + "preferences in the clear by design")
        if protection.needsProtect { console.print("             `app container protect` seals what is in the clear") }
    }

    /// `3 sealed (2 complete-unless-open, 1 complete), 1 in the clear`.
    static func describe(_ files: ProtectionCensus.Files) -> String {
        let classes = files.sealed.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        var text = "\(files.sealedCount) sealed" + (classes.isEmpty ? "" : " (\(classes))")
        if files.clear > 0 { text += ", \(files.clear) in the clear" }
        return text
    }

    /// The census of the container's files, or why there is none (the store cannot be opened:
    /// it names them; a directory cannot be read). Never a count of zero for files not counted:
    /// that would read as "nothing in the clear".
    static func protectionSummary(_ container: Container) throws -> ContainerInfo.Protection {
        var census: ProtectionCensus?
        var filesProblem: String?
        if (try? container.store) == nil {
            filesProblem = "the store cannot be read, and it names them"  // its own problem is on the store line
        } else {
            do { census = try AttachmentProtection(container: container).census() } catch { filesProblem = errorMessage(for: error) }
        }
        func databaseClass(_ directory: String, _ name: String) -> String {
            let path = directory + "/" + name
            do {
                guard try container.status(of: path) != nil else { return "absent" }
                return try container.status(of: path + DatabaseKeyFile.suffix) != nil ? DatabaseKeyFile.protection.fileClassName : "none"
            } catch {
                return "unknown"
            }
        }
        let store = databaseClass(ContainerLayout.storeDirectory, ContainerLayout.storeFile)
        let keychain = databaseClass(ContainerLayout.keychainDirectory, ContainerLayout.keychainFile)
        return ContainerInfo.Protection(attachments: census?.attachments, recovered: census?.recovered, thumbnails: census?.thumbnails,
                                        filesProblem: filesProblem, store: store, keychainDatabase: keychain,
                                        needsProtect: census?.needsProtect == true || store == "none" || keychain == "none")
    }

    static func protectContainer(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        // The databases first, under the exclusive lock with no connection of this process to
        // them; then the container as every command opens it, for the files.
        let databases = try sealDatabases(try context.container())
        context.closeContainer()
        context.storeRequirement = .required
        let container = try context.container()
        let files = try AttachmentFiles(container: container)
        let bar = ProgressBar(isEnabled: StandardStream.error.isTerminal && !context.console.isQuiet)
        // A purge that would unlink a file being sealed waits (the rename would bring it back).
        var outcome = try files.holdingDeletionsBack(timeout: container.options.lockTimeout) {
            try AttachmentProtection(container: container).reconcile(includingClear: true) { done, total in
                bar.update(MigrationProgress(step: "protect", done: Int64(done), total: Int64(total)))
            }
        }
        bar.finish()
        outcome.sealedDatabases = databases
        if json {
            try context.console.printJSON(outcome)
        } else {
            for database in databases { context.console.print("sealed \(database)") }
            context.console.print("sealed \(outcome.sealed) file\(outcome.sealed == 1 ? "" : "s")"
                                  + (outcome.clearThumbnailsRemoved > 0 ? "; removed \(outcome.clearThumbnailsRemoved) thumbnail\(outcome.clearThumbnailsRemoved == 1 ? "" : "s") in the clear" : ""))
            for path in outcome.damaged { context.console.print("not sealed (not what its row says; `app container check`): " + path) }
        }
        if outcome.waiting > 0 {
            throw CommandLineError(.unavailable, "\(outcome.waiting) file\(outcome.waiting == 1 ? " waits" : "s wait") for its class to open: `app device unlock`, then run `app container protect` again")
        }
        if !outcome.damaged.isEmpty {
            throw CommandLineError(.dataError, "\(outcome.damaged.count) file\(outcome.damaged.count == 1 ? " is" : "s are") not what \(outcome.damaged.count == 1 ? "its row says" : "their rows say") and stay as they are; `app container check` reports them")
        }
    }

    /// Seals the store and the keychain's database where an earlier build left them in the
    /// clear (`DatabaseSealing`), under the exclusive lock; their container paths.
    static func sealDatabases(_ container: Container) throws -> [String] {
        try container.withExclusiveLock {
            var sealed: [String] = []
            for (directoryName, database) in [(ContainerLayout.storeDirectory, ContainerLayout.storeFile),
                                              (ContainerLayout.keychainDirectory, ContainerLayout.keychainFile)] {
                let directory = try container.directory(directoryName)
                if try DatabaseSealing.seal(database, in: directory, keys: container.options.fileKeys) {
                    sealed.append(directoryName + "/" + database)
                }
            }
            return sealed
        }
    }

    /// The store's state for a report; schema version and counts only when it can be read.
    static func storeSummary(_ container: Container) throws -> (StoreHealth, String?, Int64?, StoreCounts?) {
        var state = try StoreHealth(of: container)
        var problem = container.storeProblem.map(errorMessage(for:))
        if state == .damaged, problem == nil, let damage = try container.manifest()?.storeDamage {
            problem = "a command met a damaged page at \(damage.foundAt) (\(damage.detail)); run `app container check`"
        }
        guard let store = try? container.store else { return (state, problem, nil, nil) }
        do {
            return (state, problem, try store.userVersion(), try store.counts())
        } catch where Store.isDamagedPage(error) {
            state = .corrupt
            return (state, "reading it failed: \(Store.damageDetail(error)); run `app container check`", nil, nil)
        }
    }
}

/// `container init --json`.
struct ContainerCreation: Encodable {
    /// The container's canonical path.
    let path: String
    /// False when a container was there already (left as it was).
    let created: Bool
}
