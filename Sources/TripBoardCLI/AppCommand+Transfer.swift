import TripBoardModel
import TripBoardStorage
import TripBoardSystem
import TripBoardCommandLine

extension AppCommand {
    static var transferCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["export"],
                        options: [
                            .value("--output", "FILE", "write the document to FILE (atomically) instead of standard output", completion: .file),
                        ],
                        summary: """
                        Writes every trip, place, booking (with sync metadata) and the preferences you set as one JSON \
                        document, to stdout or atomically to FILE (mode 0600). Secrets and caches are never exported.
                        """, run: export),
            AppCommandSpec(words: ["import"],
                        options: [
                            .json,
                        ],
                        arguments: [
                            .required("FILE|-", "the document to import, or - for standard input", completion: .file),
                        ],
                        summary: """
                        Adds the records of an export (or of a hand-written document of the same shape) in one \
                        transaction: all or nothing. Existing ids are refused, never overwritten.
                        """, run: importDocument, createsContainer: true),
        ]
    }

    static func export(_ context: CommandContext) throws {
        let output = try context.arguments.option("--output")
        try context.finishArguments()
        let destination = try output.map { try outputDestination($0) }
        let container = try context.container()
        let (_, preferences) = try loadPreferences(context)
        guard let (directory, fileName) = destination else {
            return try container.store.writeExport(preferences: preferences, to: context.console.write)
        }
        try directory.writeAtomically(to: fileName, staging: directory) { (write: ([UInt8]) throws -> Void) in
            try container.store.writeExport(preferences: preferences, to: write)
        }
    }

    static func importDocument(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let source = try context.arguments.positional("FILE to import (or - for stdin)")
        try context.finishArguments()
        let openSource = try openImport(source)
        var preferenceValues: [PreferenceKey: PreferenceValue] = [:]
        func checkPreferences(_ preferences: [String: PreferenceValue]?) throws {
            for (name, value) in preferences ?? [:] {
                do {
                    preferenceValues[try preferenceKey(name)] = try preferenceKey(name).validate(value)
                } catch {
                    throw CommandLineError(.dataError, "the import's preference \(name.prefix(40)) is not valid: \(errorMessage(for: error)); nothing was imported")
                }
            }
        }
        let container: Container
        let summary: ImportSummary
        if try importsInOnePass(context) {
            // The container is set up and nothing is due before it opens: the document is read
            // once, its records inserted as they are checked, in a transaction its first problem
            // undoes. The trash's tidy-up waits for the import to succeed.
            let chores = context.chores
            context.chores.remove(.trashPurge)
            container = try context.container()
            summary = try container.store.importRecords(reading: openSource, checkPreferences: checkPreferences).summary
            if chores.contains(.trashPurge) { Trash.tidyUp(container: container) }
        } else {
            // A container to create (or a migration to run) first: the document is checked in a
            // first pass, so that a bad one creates nothing.
            let document = try ImportDocument.parse(openSource)
            try checkPreferences(document.preferences)
            container = try context.container()
            summary = try container.store.importRecords(document)
        }
        if !preferenceValues.isEmpty {
            // The records are committed: a failure now must say so, or a retry would add them twice.
            do {
                var file = try PreferencesFile(container: container)
                try file.update(preferenceValues)
            } catch {
                throw CommandLineError(exitStatus(for: error), """
                    imported \(summary.trips) trips, \(summary.places) places, \(summary.bookings) bookings, but the \
                    preferences could not be written (\(errorMessage(for: error))); do not import the file again: set them \
                    with `app prefs set`
                    """)
            }
        }
        if json { return try context.console.printJSON(summary) }
        context.console.diagnostic("imported \(summary.trips) trips, \(summary.places) places, \(summary.bookings) bookings")
    }

    /// Whether `app import` may open the container before it has read the document: the
    /// container is set up (its manifest is there) and no first-launch migration is due.
    static func importsInOnePass(_ context: CommandContext) throws -> Bool {
        let path = try context.containerPath
        guard try Container.hasManifest(at: path) else { return false }
        return try FirstLaunchMigration.due(containerPath: path, containerIsExplicit: context.containerIsExplicit,
                                            environment: context.environment) == nil
    }

    /// Where `--output FILE` goes: its directory, opened now (before the container is), and its name.
    /// What is there must be a regular file (replaced atomically, by a rename): never a device
    /// such as `/dev/null` or a FIFO, which a rename would replace by a file. (A directory is
    /// refused as a usage error below, or by the rename.)
    static func outputDestination(_ output: String) throws -> (Directory, String) {
        if let status = try? FileStatus.of(path: output), status.kind != .regular, status.kind != .directory {
            throw CommandLineError(.cannotCreate, terminalSafe("--output \(output.prefix(200)) is \(status.kindDescription), not a file this command may replace; nothing was written"))
        }
        let (directoryPath, fileName) = splitPath(output)
        guard !fileName.isEmpty else { throw CommandLineError.usage("--output needs a file name, not a directory") }
        return (try Directory.open(path: directoryPath), fileName)
    }

    /// The most `app import` reads: a document of a million records is about 300 MB.
    static let importLimit = 1 << 30

    /// The document to import, opened (and checked) before the container is: FILE (symbolic
    /// links followed, as any tool would) or standard input, returned as a way to read it from
    /// the start, once to check it and once to import it. Whatever FILE is — a regular file, a
    /// pipe, a FIFO, a device — it is read like `cat` reads it; a FIFO waits for its writer, with
    /// no lock held. A regular file is read in place, and refused by its size when over the
    /// limit; anything else is copied as it comes into an unnamed temporary file, and refused as
    /// soon as the running count passes the limit (`/dev/zero` stops at 1 GiB): exit 65, the
    /// limit named. Never more than a read buffer is in memory.
    static func openImport(_ source: String) throws -> () throws -> any ByteSource {
        let name = source == "-" ? "standard input" : String(source.prefix(200))
        let tooLarge = CommandLineError(.dataError, "\(name) is larger than the import limit of 1 GiB; nothing was imported")
        let input = source == "-" ? try FileDescriptor.standardInput() : try FileDescriptor.openForReading(path: source, waitingForAWriter: true)
        let status = try input.status()
        if status.kind == .regular {
            guard status.size <= importLimit else { throw tooLarge }
            return { try input.rewind(); return input }
        }
        let spool = try FileDescriptor.unnamedTemporaryFile()
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var total = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
            if count == 0 { break }
            total += count
            guard total <= importLimit else { throw tooLarge }
            try spool.write(all: buffer[..<count])
        }
        return { try spool.rewind(); return spool }
    }

    /// Splits `a/b/c.json` into (`a/b`, `c.json`); a bare name is in the current directory.
    static func splitPath(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
