import TripBoardStorage
import TripBoardCommandLine

/// `app sync fields [--record ID] [--json]`: what this device knows of each synced record's
/// fields — the stamps that decide merges (docs/sync.md §3).
extension AppCommand {
    static var syncFieldCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["sync", "fields"],
                        options: [.value("--record", "ID", "only this record's fields"), .json],
                        summary: """
                        Lists each field of the records this device has synced: the value and stamp the server had \
                        at the last sync (the stamp decides which of two edits wins), the record's incarnation, and \
                        whether the field holds an edit made here and not yet sent. Contacts nothing.
                        """, run: syncFields),
        ]
    }

    static func syncFields(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let record = try context.arguments.option("--record")
        try context.finishArguments()
        let states = try context.store().syncLedger.syncFieldStates(id: record)
        if json { return try context.console.printJSON(states) }
        if states.isEmpty {
            return context.console.print(record == nil ? "No synced records on this device." : "No synced fields for record \(record!).")
        }
        context.console.printTable(header: ["RECORD", "FIELD", "STAMP", "EDITED HERE", "VALUE"], rows: states.map { state in
            [state.kind.rawValue + " " + String(state.id.prefix(8)), state.field, state.stamp, state.editedHere ? "yes" : "-",
             cell(state.value.canonicalText)]
        })
    }
}
