import TripBoardStorage
import TripBoardSystem
import TripBoardCommandLine

extension AppCommand {
    static var trashCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["trash", "list"],
                        options: [
                            .json,
                        ],
                        summary: """
                        Lists what was deleted (trips, places, bookings, attachments), newest first, with what each \
                        holds and when it is purged for good (30 days after its deletion).
                        """, run: listTrash),
            AppCommandSpec(words: ["trash", "restore"],
                        arguments: [
                            .required("ID", "the trash entry (an id or a unique prefix of one)"),
                        ],
                        summary: """
                        Puts a deleted record back where it was, with everything that was deleted with it (files \
                        included). ID is what trash list shows, or a unique prefix of it.
                        """, run: restoreFromTrash),
            AppCommandSpec(words: ["trash", "empty"],
                        options: [
                            .yes,
                        ],
                        arguments: [
                            .optional("ID", "the trash entry (an id or a unique prefix of one)"),
                        ],
                        summary: """
                        Deletes for good now everything in the trash, or the one entry ID, files included. Asks first on \
                        a terminal; --yes confirms without asking (required when standard input is not a terminal).
                        """, run: emptyTrash),
        ]
    }

    static func listTrash(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let entries = try context.store().trash.trashEntries()
        if json { return try context.console.printJSON(entries) }
        if entries.isEmpty { return context.console.print("The trash is empty.") }
        context.console.printTable(header: ["DELETED", "KIND", "ID", "NAME", "FROM", "HOLDS", "PURGED AFTER"], rows: entries.map { entry in
            [entry.trashedAt.utcStamp, entry.kind.rawValue, String(entry.id.prefix(8)), entry.name, entry.parentName ?? "",
             describe(entry.contents), entry.purgeAfter.withOffset(0).localDate.description]
        })
    }

    static func restoreFromTrash(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("trash entry")
        try context.finishArguments()
        let store = try context.store()
        let (kind, id) = try store.trash.resolveTrashEntry(reference)
        let entry = try store.trash.restoreFromTrash(kind, id: id)
        let with = describe(entry.contents)
        context.console.diagnostic(terminalSafe("restored \(kind.rawValue) \(entry.name)" + (with.isEmpty ? "" : " with " + with)))
    }

    static func emptyTrash(_ context: CommandContext) throws {
        let confirmed = context.arguments.flag("--yes")
        let reference = try context.arguments.nextPositional().map { try Arguments.checkedRecordID($0, "trash entry") }
        try context.finishArguments()
        let asks = !confirmed
        var entries = try trashEntries(matching: reference, context)
        // An empty trash needs no confirmation, from a script either.
        guard !entries.isEmpty else { return context.console.print("The trash is empty.") }
        if asks && !StandardStream.input.isTerminal {
            throw CommandLineError.usage("trash empty deletes for good, and there is no terminal to ask on; pass --yes to confirm")
        }
        if asks {
            // The container is let go while the question waits (as for `trip edit`'s editor),
            // and only what is still there, unchanged, afterwards is purged.
            context.closeContainer()
            guard try askToConfirm(entries) else { return context.console.diagnostic("nothing was deleted") }
            let shown = Set(entries.map { $0.id + $0.trashedAt.utcStamp })
            entries = try trashEntries(matching: reference, context).filter { shown.contains($0.id + $0.trashedAt.utcStamp) }
        }
        let container = try context.container()
        let purge = try Trash.empty(entries, container: container, lockTimeout: container.options.lockTimeout)
        context.console.diagnostic(terminalSafe("deleted for good: " + summary(of: purge.entries)))
        if purge.files.postponed > 0 {
            context.console.diagnostic("""
                a backup is running: \(purge.files.postponed) attachment file\(purge.files.postponed == 1 ? "" : "s") will be \
                removed once it has finished, by the next TripBoard command
                """)
        }
    }

    /// Every entry, or the one `reference` names.
    static func trashEntries(matching reference: String?, _ context: CommandContext) throws -> [TrashEntry] {
        let store = try context.store()
        guard let reference else { return try store.trash.trashEntries() }
        let (_, id) = try store.trash.resolveTrashEntry(reference)
        return try store.trash.trashEntries().filter { $0.id == id }
    }

    static func askToConfirm(_ entries: [TrashEntry]) throws -> Bool {
        let answer = try StandardStream.input.readLine(prompt: terminalSafe("Delete \(summary(of: entries)) for good? This cannot be undone.") + " [y/N] ")
        let text = String(decoding: answer, as: UTF8.self).lowercased().filter { !$0.isWhitespace }
        return text == "y" || text == "yes"
    }

    /// `trip Lisbon (with 2 places, 1 booking), attachment ticket.pdf`.
    static func summary(of entries: [TrashEntry]) -> String {
        entries.map { entry in
            let held = describe(entry.contents)
            return "\(entry.kind.rawValue) \(entry.name)" + (held.isEmpty ? "" : " (with \(held))")
        }.joined(separator: ", ")
    }

    /// `2 places, 1 booking, 3 attachments`; empty when nothing went with the record.
    static func describe(_ contents: TrashEntry.Contents) -> String {
        [(contents.places, "place"), (contents.bookings, "booking"), (contents.attachments, "attachment")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")" }.joined(separator: ", ")
    }
}
