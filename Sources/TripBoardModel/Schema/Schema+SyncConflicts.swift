extension Schema {
    /// Values that lost a merge (docs/sync.md §3, "Conflicts"): when a field edited here and on
    /// another device merges, the losing value — this device's edit or the other device's — is
    /// kept here, row by row, and listed by `app sync conflicts`. Nothing removes a row but an
    /// explicit `app sync conflicts --dismiss ID`.
    ///
    /// `kept_value` and `lost_value` are `JSONValue.canonicalText` of the field's value (a
    /// trip's `dates` is one object), `lost_on` says whose edit lost: `here` (this device's)
    /// or `elsewhere` (another device's, as the server had it). An ordinary rowid table.
    package static let syncConflicts = """
        CREATE TABLE sync_conflicts (
            id TEXT NOT NULL PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('trip', 'place', 'booking', 'attachment')),
            record_id TEXT NOT NULL,
            field TEXT NOT NULL,
            kept_value TEXT NOT NULL,
            kept_stamp TEXT NOT NULL,
            lost_value TEXT NOT NULL,
            lost_stamp TEXT NOT NULL,
            lost_on TEXT NOT NULL CHECK (lost_on IN ('here', 'elsewhere')),
            detected_at TEXT NOT NULL
        );
        CREATE INDEX sync_conflicts_by_time ON sync_conflicts (detected_at, id);
        """
}
