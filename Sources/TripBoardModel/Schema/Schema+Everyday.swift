extension Schema {
    /// Version 2 → 3: what a traveller needs every day.
    ///
    /// - Bookings gain an optional end (`ends_at`: check-out, arrival), in the form `starts_at`
    ///   has (a time with its offset, or a date for an all-day booking), and `over_at_epoch`: the
    ///   moment the booking is over (its end, else the end of its all-day start's day in UTC, else
    ///   its start), which says what is still upcoming. An old booking is over at its start.
    /// - `bookings_live_by_start` orders every live booking across trips (`booking list` without
    ///   `--trip`); `bookings_live_by_over` finds the ones not yet over without reading the past.
    /// - `search_index`: an FTS5 table over what a traveller types to find a record — trip names
    ///   and notes, place names and cities, booking titles and references — holding live records
    ///   only. Its rowid is the record's rowid × 4 + its kind (0 trip, 1 place, 2 booking), and
    ///   triggers keep it in the same transaction as every write (an insert, an edit, a move to or
    ///   from the trash, a tombstone, a purge); an upgraded store is indexed by this step.
    ///   `unicode61 remove_diacritics 2`: `belem` finds Belém; `prefix` indexes make `lis*` one lookup.
    ///
    /// The places' and the bookings' triggers are deliberately like the trips' (other columns,
    /// other kind digit): a schema step is SQL frozen as it shipped, read whole, not generated.
    package static let bookingTimesAndSearch = """
        ALTER TABLE bookings ADD COLUMN ends_at TEXT;
        ALTER TABLE bookings ADD COLUMN over_at_epoch INTEGER;
        UPDATE bookings SET over_at_epoch = starts_at_epoch;
        CREATE INDEX bookings_live_by_start ON bookings (starts_at_epoch)
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        CREATE INDEX bookings_live_by_over ON bookings (over_at_epoch)
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;

        CREATE VIRTUAL TABLE search_index USING fts5 (title, detail, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
        CREATE TRIGGER trips_search_insert AFTER INSERT ON trips
            WHEN new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL
        BEGIN
            INSERT INTO search_index (rowid, title, detail) VALUES (new.rowid * 4 + 0, new.name, new.notes);
        END;
        CREATE TRIGGER trips_search_update AFTER UPDATE ON trips
            WHEN old.name IS NOT new.name OR old.notes IS NOT new.notes
              OR (old.sync_state = 'pendingDeletion') <> (new.sync_state = 'pendingDeletion')
              OR (old.trashed_at IS NULL) <> (new.trashed_at IS NULL)
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 0;
            INSERT INTO search_index (rowid, title, detail)
                SELECT new.rowid * 4 + 0, new.name, new.notes WHERE new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL;
        END;
        CREATE TRIGGER trips_search_delete AFTER DELETE ON trips
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 0;
        END;
        INSERT INTO search_index (rowid, title, detail)
            SELECT rowid * 4 + 0, name, notes FROM trips WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        CREATE TRIGGER places_search_insert AFTER INSERT ON places
            WHEN new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL
        BEGIN
            INSERT INTO search_index (rowid, title, detail) VALUES (new.rowid * 4 + 1, new.name, ifnull(new.city, ''));
        END;
        CREATE TRIGGER places_search_update AFTER UPDATE ON places
            WHEN old.name IS NOT new.name OR ifnull(old.city, '') IS NOT ifnull(new.city, '')
              OR (old.sync_state = 'pendingDeletion') <> (new.sync_state = 'pendingDeletion')
              OR (old.trashed_at IS NULL) <> (new.trashed_at IS NULL)
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 1;
            INSERT INTO search_index (rowid, title, detail)
                SELECT new.rowid * 4 + 1, new.name, ifnull(new.city, '') WHERE new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL;
        END;
        CREATE TRIGGER places_search_delete AFTER DELETE ON places
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 1;
        END;
        INSERT INTO search_index (rowid, title, detail)
            SELECT rowid * 4 + 1, name, ifnull(city, '') FROM places WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        CREATE TRIGGER bookings_search_insert AFTER INSERT ON bookings
            WHEN new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL
        BEGIN
            INSERT INTO search_index (rowid, title, detail) VALUES (new.rowid * 4 + 2, new.title, ifnull(new.reference, ''));
        END;
        CREATE TRIGGER bookings_search_update AFTER UPDATE ON bookings
            WHEN old.title IS NOT new.title OR ifnull(old.reference, '') IS NOT ifnull(new.reference, '')
              OR (old.sync_state = 'pendingDeletion') <> (new.sync_state = 'pendingDeletion')
              OR (old.trashed_at IS NULL) <> (new.trashed_at IS NULL)
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 2;
            INSERT INTO search_index (rowid, title, detail)
                SELECT new.rowid * 4 + 2, new.title, ifnull(new.reference, '') WHERE new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL;
        END;
        CREATE TRIGGER bookings_search_delete AFTER DELETE ON bookings
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 2;
        END;
        INSERT INTO search_index (rowid, title, detail)
            SELECT rowid * 4 + 2, title, ifnull(reference, '') FROM bookings WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        """

    /// The search index's insert triggers, by table, and what each indexes of a row (the
    /// declarations' `SearchRole`s): a bulk write (`Store.indexingInsertsOnce`) suspends the
    /// triggers and indexes its new rows with one statement per table instead, the same text
    /// and detail the trigger would have written.
    package static let searchedOnInsert: [(table: String, trigger: String, offset: Int, title: String, detail: String)] = [
        searched(TripColumn.self, offset: 0), searched(PlaceColumn.self, offset: 1), searched(BookingColumn.self, offset: 2),
    ]

    private static func searched<Column: RecordColumn>(_ columns: Column.Type, offset: Int)
        -> (table: String, trigger: String, offset: Int, title: String, detail: String) {
        let table = Column.recordKind.table
        return (table, table + "_search_insert", offset, Column.searched.title, Column.searched.detail)
    }

    /// The tables of the search index (`search_index` and FTS5's own `search_index_*`), as a
    /// condition on `sqlite_master.name`: they are derived, so a salvage copies them not (the
    /// triggers refill them) and they hold no record of the user's.
    package static let isSearchTable = #"(name = 'search_index' OR name LIKE 'search\_index\_%' ESCAPE '\')"#
}
