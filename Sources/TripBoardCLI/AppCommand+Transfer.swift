import TripBoardStorage

extension AppCommand {
    static var transferCommands: [CommandSpec] {
        [
            CommandSpec(words: ["export"], usage: "export [--output FILE]",
                        summary: """
                        Writes every trip, place, booking (with sync metadata) and the preferences you set as one JSON \
                        document, to stdout or atomically to FILE (mode 0600). Secrets and caches are never exported.
                        """, run: export),
            CommandSpec(words: ["import"], usage: "import FILE|- [--json]",
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
        let bytes = try Console.json(try container.store.exportDocument(preferences: preferences)) + [0x0a]
        guard let (directory, fileName) = destination else { return context.console.write(bytes) }
        try directory.writeAtomically(bytes, to: fileName, staging: directory)
    }

    static func importDocument(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let source = try context.arguments.positional("FILE to import (or - for stdin)")
        try context.finishArguments()
        let limit = 1 << 30
        let bytes: [UInt8]
        if source == "-" {
            bytes = try StandardStream.input.readToEnd(limit: limit)
        } else {
            // A file the user names outside the container: symbolic links are followed, as any tool would.
            bytes = try FileDescriptor.openForReading(path: source).readToEnd(limit: limit)
        }
        let document = try ImportDocument.parse(bytes)
        var preferenceValues: [PreferenceKey: PreferenceValue] = [:]
        for (name, value) in document.preferences ?? [:] {
            do {
                preferenceValues[try preferenceKey(name)] = try preferenceKey(name).validate(value)
            } catch {
                throw CommandLineError(.dataError, "the import's preference \(name.prefix(40)) is not valid: \(errorMessage(for: error)); nothing was imported")
            }
        }
        let container = try context.container()
        let summary = try container.store.importRecords(document)
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

    /// Where `--output FILE` goes: its directory, opened now (before the container is), and its name.
    static func outputDestination(_ output: String) throws -> (Directory, String) {
        let (directoryPath, fileName) = splitPath(output)
        guard !fileName.isEmpty else { throw CommandLineError.usage("--output needs a file name, not a directory") }
        return (try Directory.open(path: directoryPath), fileName)
    }

    /// Splits `a/b/c.json` into (`a/b`, `c.json`); a bare name is in the current directory.
    static func splitPath(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
