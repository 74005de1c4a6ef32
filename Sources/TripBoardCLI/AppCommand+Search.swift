import TripBoardStorage
import TripBoardModel
import TripBoardCommandLine

extension AppCommand {
    static var searchCommands: [AppCommandSpec] {
        [
            AppCommandSpec(words: ["search"],
                        options: [
                            .limit,
                            .json,
                        ],
                        arguments: [
                            .repeated("TEXT", "the words to find"),
                        ],
                        summary: """
                        Finds trips (name, notes), places (name, city) and bookings (title, reference) with every word \\
                        of TEXT at the start of one of their words, case and accents aside (lis finds Lisbon, belem \\
                        finds Belém); the best match first. Deleted records are not found.
                        """, run: search),
        ]
    }

    static func search(_ context: CommandContext) throws {
        let json = context.wantsJSON()
        let limit = try context.arguments.limit()
        var words: [String] = []
        while let word = context.arguments.nextPositional() { words.append(word) }
        try context.finishArguments()
        let text = words.joined(separator: " ")
        guard SearchIndex.searchQuery(text) != nil else {
            throw CommandLineError.usage(words.isEmpty ? "missing TEXT to search for" : "nothing to search for in '\(text.prefix(40))': give a word")
        }
        // Printed as they are read, from the rows' bytes: memory stays flat in the number of hits.
        let hits = try context.store().searchIndex.searchRows(text, limit: limit)
        if json { return try context.console.printJSONArray(rowsOf: hits, RecordBytes.searchHitJSON) }
        try context.console.printTable(header: searchHeader, emptyMessage: "Nothing found.", rowsOf: hits, row: searchHitCells)
    }

    static let searchHeader = ["KIND", "ID", "TRIP", "TITLE", "DETAIL"]

    /// A `search` line's cells from a row of `SearchIndex.searchSQL`: its kind, short id, trip
    /// name (none for a trip), title and the first line of its detail cut to `detailCharacters`
    /// (`TableRow.firstLine`), as bytes.
    static func searchHitCells(_ row: borrowing StoreRow, _ cells: inout TableRow) {
        typealias Column = SearchIndex.HitColumn
        let kind = SearchIndex.hitKind(row.integer(Column.kind.rawValue))
        cells.append(ascii: RecordBytes.kindName(kind))
        row.withText(Column.id.rawValue) { cells.append(prefix: 8, ofUTF8: $0) }
        if kind == .trip {
            cells.append(ascii: "")
        } else {
            row.withText(Column.tripName.rawValue) { cells.append(utf8: $0) }
        }
        row.withText(Column.title.rawValue) { cells.append(utf8: $0) }
        row.withText(Column.detail.rawValue) { cells.append(firstLineOf: $0, characters: detailCharacters) }
    }

    static let detailCharacters = 60
}
