extension Schema {
    /// Version 8 → 9: sync in any order of events (docs/sync.md §3).
    ///
    /// - `sync_held`: a pulled record whose trip (or booking) has not arrived here yet, kept as
    ///   the server sent it (sealed) until its parent comes; `parent_deleted` once the parent's
    ///   deletion came instead.
    /// - `sync_field_edits`: when each field of a record waiting for the server was last changed
    ///   here. A field's stamp is its own edit's time, so renaming a trip does not make its older
    ///   notes edit look newer. Written by the store's edits (`Store.noteFieldEdits`), not by
    ///   triggers: every process parses the whole schema when it opens the store, the widget on
    ///   every start, and one trigger per table cost a `sqlite3` start about 930,000 instructions
    ///   more (callgrind). A field without a row was set with the record (its `updated_at` then).
    ///   Rows of records the server has confirmed are removed at the end of each sync.
    /// - `sync_placeholders`: records a salvage recreated in place of lost ones (their children
    ///   kept): never sent until the user edits them; the server's copy, when it has one,
    ///   replaces them.
    /// - `sync_conflicts.told`: a losing value of another device's, kept here, has reached the
    ///   server with the record (`lostEdits`), so that its device lists it too.
    /// - `sync_account.last_compared_at`: when this device last compared the server's list of
    ///   records with what it holds (rows the server lost are announced by no feed).
    package static let syncOrder = """
        CREATE TABLE sync_held (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            parent_kind TEXT NOT NULL,
            parent_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            record TEXT NOT NULL,
            parent_deleted INTEGER NOT NULL DEFAULT 0 CHECK (parent_deleted IN (0, 1)),
            held_at TEXT NOT NULL,
            PRIMARY KEY (kind, id)
        );
        CREATE INDEX sync_held_by_parent ON sync_held (parent_id);
        CREATE TABLE sync_field_edits (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            field TEXT NOT NULL,
            edited_at TEXT NOT NULL,
            PRIMARY KEY (kind, id, field)
        );
        CREATE TABLE sync_placeholders (
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            made_at TEXT NOT NULL,
            PRIMARY KEY (kind, id)
        );
        ALTER TABLE sync_account ADD COLUMN last_compared_at TEXT;
        ALTER TABLE sync_conflicts ADD COLUMN told INTEGER NOT NULL DEFAULT 0 CHECK (told IN (0, 1));
        """
}
