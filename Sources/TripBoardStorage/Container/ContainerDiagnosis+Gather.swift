import TripBoardSQLite
import TripBoardKeys
import TripBoardSystem
import TripBoardModel

extension ContainerDiagnosis {
    /// Gathers the report for `container` (opened with `StoreRequirement.inspection`), holding
    /// its shared lock. `tripboardVersion` is the running executable's version line.
    public static func gather(container: Container, tripboardVersion: String) throws -> ContainerDiagnosis {
        var errors: [String] = []
        func attempt<T>(_ what: String, _ body: () throws -> T?) -> T? {
            do { return try body() } catch {
                errors.append(what + ": " + errorCode(error))
                return nil
            }
        }
        if let problem = container.storeProblem { errors.append("store: " + errorCode(problem)) }
        let manifest = attempt("manifest") { try container.manifest() }
        let store = try? container.store
        let statistics = store.flatMap { store in attempt("store statistics") { try store.statistics() } }
        var integrity: Integrity?
        if let store { integrity = Self.integrity(of: store, errors: &errors) }
        let versions = Versions(tripboard: tripboardVersion, sqlite: sqliteLibraryVersion, libsodium: Sodium.libraryVersion,
                                kernel: ProcessSetup.kernelRelease())
        let permissions = attempt("container root") { try container.root.status().permissions }
        let layout = Layout(layoutVersion: manifest?.layoutVersion, createdBy: manifest?.createdBy, createdAt: manifest?.createdAt,
                            rootPermissions: permissions.map { String($0, radix: 8) } ?? "unknown", storeState: attempt("store state") { try StoreHealth(of: container) } ?? .unreadable,
                            storeDamage: manifest?.storeDamage,
                            migration: attempt("migration journal") { try migrationState(container) } ?? .unknown)
        let files = try files(of: container, errors: &errors)
        let keychain = attempt("keychain") { try KeychainStatistics.read(in: container) }
        let holders = LockHolders.find(for: container.lock.descriptor).map { holder in
            Holder(processID: holder.processID, command: holder.command, mode: holder.isExclusive ? "exclusive" : "shared")
        }
        return ContainerDiagnosis(createdAt: container.options.clock().utcStamp, versions: versions, layout: layout, files: files,
                                  store: statistics, integrity: integrity, keychain: keychain, lockHolders: holders, errors: errors)
    }

    /// `integrity_check` (at most 100 problems, 20 of them kept) and `foreign_key_check`.
    static func integrity(of store: Store, errors: inout [String]) -> Integrity {
        do {
            let problems = try store.integrityProblems()
            return Integrity(ok: problems.isEmpty, problemCount: problems.count, problems: Array(problems.prefix(20)))
        } catch {
            errors.append("integrity_check: " + errorCode(error))
            return Integrity(ok: nil, problemCount: 0, problems: [])
        }
    }

    static func migrationState(_ container: Container) throws -> MigrationState {
        guard try container.status(of: ContainerLayout.migrationDirectory)?.kind == .directory else { return .notStarted }
        if try ContainerLayout.migrationIsUnfinished(in: container.root) { return .unfinished }
        return try container.status(of: ContainerLayout.migrationDirectory + "/" + ContainerLayout.migrationCommitMarkerFile) != nil ? .finished : .notStarted
    }

    /// Sizes and counts only: the walk never reads a file, and no name leaves this function.
    static func files(of container: Container, errors: inout [String]) throws -> Files {
        func size(_ relative: String) -> Int64 {
            do { return try container.status(of: relative)?.size ?? 0 } catch {
                errors.append("size of " + relative + ": " + errorCode(error))
                return 0
            }
        }
        let store = ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile
        var files = Files(storeBytes: size(store), storeWALBytes: size(store + "-wal"), storeSharedMemoryBytes: size(store + "-shm"),
                          preferencesBytes: size(ContainerLayout.preferencesDirectory + "/" + ContainerLayout.preferencesFile),
                          attachmentFiles: 0, attachmentBytes: 0, recoveredFiles: 0, thumbnails: 0, thumbnailBytes: 0, stagingEntries: 0)
        do {
            let attachments = try AttachmentFiles(container: container)
            let found = try attachments.inventory().files
            files.attachmentFiles = found.count
            files.attachmentBytes = found.reduce(0) { $0 + $1.status.size }
            files.recoveredFiles = try attachments.recoveredFiles().count
            files.stagingEntries = try attachments.stagedEntries().count
        } catch {
            errors.append("attachments: " + errorCode(error))
        }
        let thumbnailsPath = ContainerLayout.cachesDirectory + "/" + ContainerLayout.thumbnailsDirectory
        do {
            if try container.status(of: thumbnailsPath)?.kind == .directory {
                let thumbnails = try container.directory(thumbnailsPath)
                for name in try thumbnails.entries() {
                    // nil: removed since the listing (a cache clear), not an error.
                    guard let status = try thumbnails.status(of: name), status.kind == .regular else { continue }
                    files.thumbnails += 1
                    files.thumbnailBytes += status.size
                }
            }
        } catch {
            errors.append("thumbnails: " + errorCode(error))
        }
        return files
    }

    /// An error as its kind and code, never its message (which may name a path or a value).
    static func errorCode(_ error: any Error) -> String {
        switch error {
        case let error as SQLiteError: return "SQLite error \(error.extendedCode)"
        case let error as FileSystemError: return "\(error.systemCall): errno \(error.errorNumber) (\(error.code.name))"
        case let error as StoreError: return "store " + caseName(of: error)
        case let error as ContainerError: return "container " + caseName(of: error)
        case is LockBusyError: return "container lock busy"
        default: return String(describing: type(of: error))
        }
    }

    /// The name of an error enum's case, without its associated values (paths, messages).
    static func caseName(of error: any Error) -> String {
        Mirror(reflecting: error).children.first?.label ?? String(describing: type(of: error))
    }
}
