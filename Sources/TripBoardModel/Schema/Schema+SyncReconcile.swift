extension Schema {
    /// Version 6 → 7: what a device needs to notice that the server lost changes it had
    /// acknowledged (restored from an older dump, or run without durable commits and crashed).
    /// `sync_account.last_mutation`: the mutation id of the last batch this device pushed — the
    /// server keeps every applied one, so a server without it has lost this device's pushes;
    /// `token_record`: `kind/id/version` of the last record the change token covers — a server
    /// whose copy is older, or gone while its tombstones were not purged, went back in time
    /// (docs/sync.md, When the server forgets).
    package static let syncReconcile = """
        ALTER TABLE sync_account ADD COLUMN last_mutation TEXT;
        ALTER TABLE sync_account ADD COLUMN token_record TEXT;
        """
}
