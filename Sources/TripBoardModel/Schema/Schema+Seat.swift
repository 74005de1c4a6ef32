extension Schema {
    /// Version 14 → 15: a booking has a seat (`14C`, `7/42`), found by search too — indexed in
    /// the detail after the reference and the kind (the expression `BookingColumn.searched`
    /// derives for a bulk write). The bookings' search triggers are made again with it; no row
    /// has a seat yet, so none is indexed again.
    package static let bookingSeat = """
        ALTER TABLE bookings ADD COLUMN seat TEXT;
        DROP TRIGGER bookings_search_insert;
        DROP TRIGGER bookings_search_update;
        CREATE TRIGGER bookings_search_insert AFTER INSERT ON bookings
            WHEN new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL
        BEGIN
            INSERT INTO search_index (rowid, title, detail)
                VALUES (new.rowid * 4 + 2, new.title, ifnull(new.reference, '') || ' ' || new.kind || ' ' || ifnull(new.seat, ''));
        END;
        CREATE TRIGGER bookings_search_update AFTER UPDATE ON bookings
            WHEN old.title IS NOT new.title OR ifnull(old.reference, '') IS NOT ifnull(new.reference, '') OR old.kind IS NOT new.kind
              OR ifnull(old.seat, '') IS NOT ifnull(new.seat, '')
              OR (old.sync_state = 'pendingDeletion') <> (new.sync_state = 'pendingDeletion')
              OR (old.trashed_at IS NULL) <> (new.trashed_at IS NULL)
        BEGIN
            DELETE FROM search_index WHERE rowid = old.rowid * 4 + 2;
            INSERT INTO search_index (rowid, title, detail)
                SELECT new.rowid * 4 + 2, new.title, ifnull(new.reference, '') || ' ' || new.kind || ' ' || ifnull(new.seat, '')
                WHERE new.sync_state <> 'pendingDeletion' AND new.trashed_at IS NULL;
        END;
        """
}
