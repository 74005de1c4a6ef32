import TripBoardStorage
import TripBoardModel
import TripBoardCommandLine

extension AppCommand {
    static var syncCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["sync", "pending"],
                        options: [
                            .json,
                        ],
                        summary: "Lists the records the server has not confirmed (pendingUpload, pendingDeletion, failed).",
                        run: listPending),
            AppCommandSpec(words: ["sync", "ack"],
                        options: [
                            .value("--version", "N", "the version the server gave the record (a whole number from 1 on)", required: true),
                            .value("--if-updated-at", "STAMP", "refuse (exit 75) when the record changed after this updatedAt stamp"),
                        ],
                        arguments: [
                            .required("ID", "the record: a trip, place, booking or attachment (an id or a unique prefix of one)"),
                        ],
                        summary: """
                        Records that the server accepted record ID at version N: it becomes synchronized, or a \
                        tombstone is removed. --if-updated-at refuses (exit 75) when the record changed after that stamp.
                        """, run: acknowledge),
            AppCommandSpec(words: ["sync", "fail"],
                        arguments: [
                            .required("ID", "the record: a trip, place, booking or attachment (an id or a unique prefix of one)"),
                        ],
                        summary: "Records that the server rejected the upload of record ID (it stays pending, as failed).",
                        run: markFailed),
        ]
    }

    static func listPending(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        try context.finishArguments()
        let pending = try context.store().syncLedger.pendingChangeRows()
        // Printed from the rows' bytes, as `trip list` is (`RawChildListTests`).
        if json { return try context.console.printJSONArray(rowsOf: pending, RecordBytes.pendingChangeJSON) }
        try context.console.printTable(header: ["KIND", "ID", "STATE", "REMOTE", "UPDATED"],
                                       emptyMessage: "Everything is synchronized.", rowsOf: pending, row: pendingChangeCells)
    }

    /// A `sync pending` line's cells from a row of `SyncLedger.pendingChangeRows`: `[change.kind.rawValue,
    /// change.id, change.syncState.rawValue, change.remoteVersion.map(String.init) ?? "-", change.updatedAt]`, as bytes.
    static func pendingChangeCells(_ row: borrowing StoreRow, _ cells: inout TableRow) {
        cells.append(ascii: RecordBytes.recordKindName(row, 0))
        row.withText(1) { cells.append(utf8: $0) }
        cells.append(ascii: RecordBytes.syncStateName(row, 2))
        if row.isNull(3) { cells.append(ascii: "-") } else { cells.append(Int(row.integer(3))) }
        row.withText(4) { cells.append(utf8: $0) }
    }

    static func acknowledge(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("record")
        let versionText = try context.arguments.requiredOption("--version")
        let expectedUpdatedAt = try context.arguments.option("--if-updated-at")
        try context.finishArguments()
        guard let version = Int64(versionText), version >= 1 else {
            throw CommandLineError.usage("--version must be a positive integer")
        }
        let store = try context.store()
        let (kind, id) = try store.resolveAnyID(reference)
        try store.syncLedger.acknowledge(kind: kind, id: id, remoteVersion: version, expectedUpdatedAt: expectedUpdatedAt)
    }

    static func markFailed(_ context: CommandContext) throws {
        let reference = try context.arguments.recordID("record")
        try context.finishArguments()
        let store = try context.store()
        let (kind, id) = try store.resolveAnyID(reference)
        try store.syncLedger.markFailed(kind: kind, id: id)
    }
}
