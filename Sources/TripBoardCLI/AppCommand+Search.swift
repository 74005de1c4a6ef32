import TripBoardStorage
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
        // Printed as they are read: memory stays flat in the number of hits.
        let hits = try context.store().searchIndex.searchRows(text, limit: limit)
        if json { return try context.console.printJSONArray(hits) }
        try context.console.printTable(header: ["KIND", "ID", "TRIP", "TITLE", "DETAIL"], emptyMessage: "Nothing found.", hits) { hit in
            let firstLine = hit.detail.map { String($0.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") } ?? ""
            return [hit.kind.rawValue, String(hit.id.prefix(8)), hit.kind == .trip ? "" : hit.tripName, hit.title,
                    firstLine.count > 60 ? String(firstLine.prefix(59)) + "…" : firstLine]
        }
    }
}
