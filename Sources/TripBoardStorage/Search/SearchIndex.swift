public import TripBoardModel
import TripBoardSQLite
/// One record `app search` found.
public struct SearchHit: Sendable, Equatable, Codable {
    public var kind: RecordKind
    public var id: String
    /// The trip itself, or the trip the place or booking belongs to.
    public var tripId: String
    public var tripName: String
    /// The trip's or place's name, or the booking's title.
    public var title: String
    /// The trip's notes, the place's city, the booking's reference; `nil` when there are none.
    public var detail: String?
}

/// The store's full-text search (FTS5, filled by triggers and by bulk writes in one statement):
/// what `app search` asks. A view of the store over its one connection.
public struct SearchIndex: StoreView {
    package let store: Store
}

extension Store {
    /// The store's full-text search (`SearchIndex`).
    public var searchIndex: SearchIndex { SearchIndex(store: self) }
}

extension SearchIndex {
    /// What the user typed as an FTS5 query: every word must be found, each as the start of a
    /// word (`lis` finds Lisbon), case and accents aside (the index's tokenizer folds both). Each
    /// word is quoted, so nothing typed is FTS5 syntax (`AND`, `-`, `"`, `*`, `:`); `nil` when
    /// nothing searchable is left (only punctuation).
    public static func searchQuery(_ text: String) -> String? {
        let words = text.split(whereSeparator: { $0.isWhitespace }).filter { word in
            word.unicodeScalars.contains { $0.properties.isAlphabetic || $0.properties.numericType != nil }
        }
        guard !words.isEmpty else { return nil }
        return words.map { "\"" + $0.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"*" }.joined(separator: " ")
    }

    /// The statement `search` runs: `?1` the FTS5 query, `?2` the limit (-1: none); the best
    /// match first (bm25), then the index's order. `tools/bench` gives `sqlite3` the same text: a copy
    /// of it is `SEARCH_SQL` in `tools/lib/bench_everyday.py` — change both.
    ///
    /// The hits are ranked first, as bare rowids (`s`, a co-routine), and their rows read after, in
    /// that order: the left joins keep `s` the outer loop, so no second sort (`QueryPlanTests`).
    /// A sealed store sorts in memory (its temporary files would be in the clear), and sorting
    /// the whole rows held about 150 bytes a hit there: `app search` peaked at 24.5 MB for
    /// 100,000 hits, 12.1 MB since. A trip's own name is its trip name, looked up again only for
    /// a place or a booking.
    public static let searchSQL = """
        SELECT s.rowid % 4, coalesce(t.id, p.id, b.id), coalesce(t.id, p.trip_id, b.trip_id),
               coalesce(t.name, p.name, b.title), coalesce(t.notes, p.city, b.reference),
               CASE WHEN s.rowid % 4 = 0 THEN t.name ELSE (SELECT name FROM trips WHERE id = coalesce(p.trip_id, b.trip_id)) END
        FROM (SELECT rowid, rank FROM search_index WHERE search_index MATCH ?1 ORDER BY rank, rowid LIMIT ?2) s
        LEFT JOIN trips t ON s.rowid % 4 = 0 AND t.rowid = s.rowid / 4
        LEFT JOIN places p ON s.rowid % 4 = 1 AND p.rowid = s.rowid / 4
        LEFT JOIN bookings b ON s.rowid % 4 = 2 AND b.rowid = s.rowid / 4
        """

    /// The live trips, places and bookings whose words start with every word of `text` (see
    /// `searchQuery`), best match first. The index holds live records only: nothing in the trash
    /// and no tombstone is found.
    public func search(_ text: String, limit: Int? = nil) throws -> [SearchHit] {
        try searchRows(text, limit: limit).collect()
    }

    /// `search` one hit at a time as it is read (`app search` prints a million hits without
    /// holding them).
    public func searchRows(_ text: String, limit: Int? = nil) throws -> StoreCursor<SearchHit> {
        guard let query = Self.searchQuery(text) else {
            throw StoreError.invalidArgument("nothing to search for in '\(text.prefix(40))': give a word")
        }
        return StoreCursor(RowCursor(connection: connection, sql: Self.searchSQL, [.text(query), .integer(Int64(limit ?? -1))]) { row in
            let detail = row.optionalText(HitColumn.detail.rawValue)
            return SearchHit(kind: Self.hitKind(row.integer(HitColumn.kind.rawValue)), id: row.text(HitColumn.id.rawValue),
                             tripId: row.text(HitColumn.tripId.rawValue), tripName: row.text(HitColumn.tripName.rawValue),
                             title: row.text(HitColumn.title.rawValue), detail: detail?.isEmpty == true ? nil : detail)
        })
    }

    /// The columns of `searchSQL`, in order.
    package enum HitColumn: Int32 {
        case kind, id, tripId, title, detail, tripName
    }

    /// A hit's kind from `searchSQL`'s first column (`rowid % 4`): 1 a place, 2 a booking, else a
    /// trip — an index row the triggers did not write, whose other columns are then NULL.
    package static func hitKind(_ column: Int64) -> RecordKind {
        switch column {
        case 1: .place
        case 2: .booking
        default: .trip
        }
    }
}
