extension Schema {
    /// Version 2 → 3: what a traveller needs every day.
    ///
    /// - Bookings gain an optional end (`ends_at`: check-out, arrival), in the form `starts_at`
    ///   has (a time with its offset, or a date for an all-day booking), and `over_at_epoch`: the
    ///   moment the booking is over (its end, else the end of its all-day start's day in UTC, else
    ///   its start), which says what is still upcoming. An old booking is over at its start.
    /// - `bookings_live_by_start` orders every live booking across trips (`booking list` without
    ///   `--trip`); `bookings_live_by_over` finds the ones not yet over without reading the past.
    static let bookingTimesAndSearch = """
        ALTER TABLE bookings ADD COLUMN ends_at TEXT;
        ALTER TABLE bookings ADD COLUMN over_at_epoch INTEGER;
        UPDATE bookings SET over_at_epoch = starts_at_epoch;
        CREATE INDEX bookings_live_by_start ON bookings (starts_at_epoch)
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        CREATE INDEX bookings_live_by_over ON bookings (over_at_epoch)
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        """
}
