import TripBoardStorage
import TripBoardSync
import TripBoardCommandLine

/// `app sync conflicts [--json | --dismiss ID]`: the values that lost a merge, kept on this
/// device (docs/sync.md §3, "Conflicts").
extension AppCommand {
    static var syncConflictCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["sync", "conflicts"],
                        options: [.json, .value("--dismiss", "ID", "remove this entry (an id from the list) once read")],
                        oneOf: [[["--json"], ["--dismiss"]]],
                        summary: """
                        Lists the values that lost a merge: a field edited here and on another device, the later edit \
                        kept, the other shown here (LOST ON says whose). Nothing is dropped on its own: --dismiss ID \
                        removes one entry once read.
                        """, run: syncConflicts),
        ]
    }

    static func syncConflicts(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let dismiss = try context.arguments.option("--dismiss")
        try context.finishArguments()
        let store = try context.store()
        if let dismiss {
            let id = try store.syncLedger.dismissSyncConflict(dismiss)
            return context.console.diagnostic("dismissed conflict \(id)")
        }
        let rows = store.syncLedger.syncConflictRows()
        if json { return try context.console.printJSONArray(rows) }
        try context.console.printTable(header: ["ID", "RECORD", "FIELD", "KEPT", "LOST", "LOST ON", "DETECTED"],
                                       emptyMessage: "No conflicts: no edit has lost a merge on this device.", rows) { conflict in
            // "trip Lisbon": the record by its name while it is here, else by its id.
            [conflict.id, conflict.kind.rawValue + " " + cell(conflict.recordName ?? String(conflict.recordId.prefix(8))), conflict.field,
             cell(SyncConflict.displayText(conflict.kept)),
             cell(SyncConflict.displayText(conflict.lost)), conflict.lostOn == .here ? "this device" : "another device", conflict.detectedAt]
        }
    }

    /// One line of at most 60 characters for a table (`--json` has the whole value).
    static func cell(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count <= 60 ? line : String(line.prefix(59)) + "…"
    }
}
