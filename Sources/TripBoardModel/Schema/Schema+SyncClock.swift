extension Schema {
    /// Version 10 → 11: this device's clock against the server's. `sync_account.clock_samples`:
    /// the last offsets measured at connection (server − device, in milliseconds, comma-separated,
    /// oldest first); their median is what this device adds to its edit times to stamp them on
    /// the server's time scale (docs/sync.md, Merge rules, Clocks).
    package static let syncClock = """
        ALTER TABLE sync_account ADD COLUMN clock_samples TEXT NOT NULL DEFAULT '';
        """
}
