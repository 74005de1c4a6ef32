extension Schema {
    /// Version 18 → 19: `trips_live_by_start` holds every column a `trip list` table shows — id,
    /// name, dates, sync state — so that the list reads the index alone (`Store.tripTableRows`).
    /// It fetched each row's table page in start order, a page opened per trip of a sealed store
    /// that SQLite's cache does not hold (about a million at 1,000,000 trips; docs/performance.md).
    /// The order it gives is the same (start, end, id): the widget's lookups probe it as before.
    /// `trashed_at`, NULL in every entry, is there because SQLite 3.40 counts an index covering only
    /// when it holds every column the query names, those of its condition (`RecordRows.live`)
    /// included. An update of a trip's name or state rewrites its entry, as one of its state did
    /// already (the index's condition names `sync_state`).
    package static let tripListCovered = """
        DROP INDEX trips_live_by_start;
        CREATE INDEX trips_live_by_start ON trips (start_date, end_date, id, name, sync_state, trashed_at)
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        """
}
