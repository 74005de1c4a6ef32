extension Schema {
    /// Sync with a server (docs/sync.md): the account, the shadow and the outgoing batch.
    ///
    /// - `sync_account`: the one server and zone this container syncs with, this device's clock
    ///   node, and the change token (zone, epoch, sequence) — updated in the same transaction as
    ///   the changes it covers.
    /// - `sync_shadow`: per field of every synced record, the value and hybrid-clock stamp the
    ///   server has: a pending record's fields that differ from it are its local edits.
    /// - `sync_outgoing`: a push batch saved before it is sent, so that after a crash the same
    ///   batch (same mutation id) is sent again and the server applies it at most once.
    ///
    /// Ordinary rowid tables, like every other: `container salvage` copies tables by rowid.
    package static let sync = """
        CREATE TABLE sync_account (
            only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
            server TEXT NOT NULL,
            zone TEXT NOT NULL,
            node TEXT NOT NULL,
            epoch TEXT,
            change_sequence INTEGER NOT NULL DEFAULT 0 CHECK (change_sequence >= 0),
            joined_at TEXT NOT NULL,
            last_sync_at TEXT,
            last_error TEXT
        );
        CREATE TABLE sync_shadow (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            stamp TEXT NOT NULL,
            PRIMARY KEY (kind, id, field)
        );
        CREATE TABLE sync_outgoing (
            mutation_id TEXT NOT NULL PRIMARY KEY,
            request TEXT NOT NULL,
            local TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """
}
