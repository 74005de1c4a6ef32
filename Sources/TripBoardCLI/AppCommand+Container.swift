import TripBoardStorage

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
    var schemaVersion: Int64
    var sqliteVersion: String
    var createdAt: String
    var createdBy: String
    var durability: String
    var sizes: Sizes
    var counts: StoreCounts
}

extension AppCommand {
    static var containerCommands: [CommandSpec] {
        [
            CommandSpec(words: ["container", "info"], usage: "container info [--json]",
                        summary: "Shows where the container is, its layout and schema versions, file sizes and record counts.",
                        run: containerInfo, store: .inspection),
            CommandSpec(words: ["container", "init"], usage: "container init [DIR]",
                        summary: """
                        Creates a container at DIR (else where --container and the environment say), and prints its \
                        path. DIR must not exist yet or be empty; an existing container is left as it is.
                        """, run: initContainer, createsContainer: true),
        ]
    }

    static func initContainer(_ context: CommandContext) throws {
        let directory = context.arguments.nextPositional()
        try context.finishArguments()
        if let directory {
            guard !directory.isEmpty else { throw CommandLineError.usage("DIR must not be empty") }
            context.containerPath = directory
        }
        let container = try context.container()
        if !container.wasCreated { context.console.diagnostic(terminalSafe("a TripBoard container is already at \(container.path)")) }
        context.console.print(container.path)
    }

    static func containerInfo(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let container = try context.container()
        let manifest = try container.manifest()
        func path(_ relative: String) -> String { container.path + "/" + relative }
        func size(_ relative: String) throws -> Int64 { try container.status(of: relative)?.size ?? 0 }
        let store = ContainerLayout.storeDirectory + "/" + ContainerLayout.storeFile
        let preferences = ContainerLayout.preferencesDirectory + "/" + ContainerLayout.preferencesFile
        let info = ContainerInfo(
            location: context.containerPath,
            paths: .init(container: container.path, lock: path(ContainerLayout.lockFile), manifest: path(ContainerLayout.manifestFile),
                         store: path(store), preferences: path(preferences), attachments: path(ContainerLayout.attachmentsDirectory),
                         thumbnails: path(ContainerLayout.cachesDirectory + "/" + ContainerLayout.thumbnailsDirectory),
                         keychain: path(ContainerLayout.keychainDirectory), staging: path(ContainerLayout.stagingDirectory)),
            layoutVersion: manifest?.layoutVersion ?? ContainerLayout.version,
            schemaVersion: try container.store.connection.userVersion(),
            sqliteVersion: sqliteLibraryVersion,
            createdAt: manifest?.createdAt ?? "", createdBy: manifest?.createdBy ?? "",
            durability: container.options.durability.rawValue,
            sizes: .init(store: try size(store), storeWAL: try size(store + "-wal"), storeSharedMemory: try size(store + "-shm"),
                         preferences: try size(preferences)),
            counts: try container.store.counts())
        if json { return try context.console.printJSON(info) }
        let console = context.console
        let given = info.location == info.paths.container ? "" : " (given as \(info.location))"
        console.print("container:   \(info.paths.container)" + given)
        console.print("created:     \(info.createdAt) by \(info.createdBy)")
        console.print("layout:      version \(info.layoutVersion); store schema \(info.schemaVersion); SQLite \(info.sqliteVersion)")
        console.print("durability:  \(info.durability)")
        console.print("store:       \(info.paths.store) (\(info.sizes.store) bytes, wal \(info.sizes.storeWAL), shm \(info.sizes.storeSharedMemory))")
        console.print("preferences: \(info.paths.preferences) (\(info.sizes.preferences) bytes)")
        console.print("records:     \(info.counts.trips) trips, \(info.counts.places) places, \(info.counts.bookings) bookings, \(info.counts.attachments) attachments")
        console.print("sync:        \(info.counts.pendingChanges) pending (\(info.counts.tombstones) deletions)")
    }
}
