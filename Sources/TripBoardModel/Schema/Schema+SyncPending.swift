extension Schema {
    /// Version 7 → 8: the records waiting for the server, in the order a push sends them. Each
    /// push batch reads the oldest pending records of a kind (`ORDER BY updated_at, id LIMIT n`);
    /// on an index of `(sync_state)` SQLite sorted every pending record again for each batch, so a
    /// push of N records cost O(N²/batch). In `(updated_at, id)` order the batch is the first n
    /// entries. The same partial condition as the indexes it replaces, so `sync pending` and the
    /// `pendingChanges` count still read only what waits for the server.
    package static let syncPending = """
        DROP INDEX trips_unsynchronized;
        DROP INDEX places_unsynchronized;
        DROP INDEX bookings_unsynchronized;
        CREATE INDEX trips_pending ON trips (updated_at, id) WHERE sync_state <> 'synchronized';
        CREATE INDEX places_pending ON places (updated_at, id) WHERE sync_state <> 'synchronized';
        CREATE INDEX bookings_pending ON bookings (updated_at, id) WHERE sync_state <> 'synchronized';
        CREATE INDEX attachments_pending ON attachments (updated_at, id) WHERE sync_state <> 'synchronized';
        """
}
