extension Schema {
    /// Version 13 → 14: a booking is found by its kind too — `app search hotel` finds the hotel
    /// booked as "Memmo Alfama" — its kind indexed in the detail after its reference (the shown
    /// detail stays the reference: `SearchIndex.searchSQL` reads it from the table). The bookings'
    /// insert and update triggers are made again with the kind, and the bookings indexed again.
    package static let searchByKind = """
        DROP TRIGGER bookings_search_insert;
        DROP TRIGGER bookings_search_update;
        CREATE TRIGGER bookings_search_insert AFTER INSERT ON bookings
            WHEN new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL
        BEGIN
            INSERT INTO search_index (rowid, title, detail) VALUES (new.rowid * 4 + 2, new.title, ifnull(new.reference, '') || ' ' || new.kind);
        END;
        CREATE TRIGGER bookings_search_update AFTER UPDATE ON bookings
            WHEN old.title IS NOT new.title OR ifnull(old.reference, '') IS NOT ifnull(new.reference, '') OR old.kind IS NOT new.kind
              OR (old.sync_state = 'pendingDeletion') <> (new.sync_state = 'pendingDeletion')
              OR (old.trashed_at IS NULL) <> (new.trashed_at IS NULL)
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 2;
            INSERT INTO search_index (rowid, title, detail)
                SELECT new.rowid * 4 + 2, new.title, ifnull(new.reference, '') || ' ' || new.kind
                WHERE new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL;
        END;
        DELETE FROM search_index WHERE rowid IN (SELECT rowid * 4 + 2 FROM bookings);
        INSERT INTO search_index (rowid, title, detail)
            SELECT rowid * 4 + 2, title, ifnull(reference, '') || ' ' || kind FROM bookings
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        """
}
