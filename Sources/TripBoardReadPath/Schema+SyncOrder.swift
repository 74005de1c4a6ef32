extension Schema {
    /// The columns behind each field sync carries, per kind: what a field-edit trigger watches.
    /// A trip's `dates` is two columns that change together (docs/sync.md, Sealing).
    package static let syncFieldColumns: [(kind: RecordKind, field: String, columns: [String])] = [
        (.trip, "name", ["name"]), (.trip, "dates", ["start_date", "end_date"]), (.trip, "notes", ["notes"]),
        (.place, "tripId", ["trip_id"]), (.place, "name", ["name"]), (.place, "city", ["city"]), (.place, "visited", ["visited"]),
        (.booking, "tripId", ["trip_id"]), (.booking, "kind", ["kind"]), (.booking, "title", ["title"]),
        (.booking, "startsAt", ["starts_at"]), (.booking, "endsAt", ["ends_at"]), (.booking, "zone", ["zone"]),
        (.booking, "reference", ["reference"]),
        (.attachment, "bookingId", ["booking_id"]), (.attachment, "originalFilename", ["original_filename"]),
        (.attachment, "contentType", ["content_type"]), (.attachment, "byteCount", ["byte_count"]),
        (.attachment, "contentHash", ["content_hash"]), (.attachment, "pageCount", ["page_count"]),
    ]

    /// Version 8 → 9: sync in any order of events (docs/sync.md §3).
    ///
    /// - `sync_held`: a pulled record whose trip (or booking) has not arrived here yet, kept as
    ///   the server sent it (sealed) until its parent comes; `parent_deleted` once the parent's
    ///   deletion came instead.
    /// - `sync_field_edits`: when each field of a record was last changed here. A field's stamp is
    ///   its own edit's time, so renaming a trip does not make its older notes edit look newer.
    ///   Written by triggers, so every path that edits a record (the CLI, an import, the share
    ///   extension, a merge this device's edit won) stamps exactly the fields it changed; a value
    ///   written back unchanged, and a record that becomes `synchronized` (the server's values
    ///   taken), stamp nothing. A field with no row was set with the record (its `updated_at`).
    ///   Rows of records that are gone are removed with them.
    package static let syncOrder: String = {
        var sql = """
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
            ALTER TABLE sync_account ADD COLUMN last_compared_at TEXT;
            CREATE TABLE sync_field_edits (
                kind TEXT NOT NULL,
                id TEXT NOT NULL,
                field TEXT NOT NULL,
                edited_at TEXT NOT NULL,
                PRIMARY KEY (kind, id, field)
            );

            """
        for (kind, field, columns) in syncFieldColumns {
            let changed = columns.map { "old.\($0) IS NOT new.\($0)" }.joined(separator: " OR ")
            let fields = syncFieldColumns.filter { $0.kind == kind }.map { "('\($0.field)')" }.joined(separator: ", ")
            // The first edit of a record after it was made (or last came from the server) first
            // notes when the record's other fields were set: before this edit, at the latest.
            // Upserts, not INSERT OR REPLACE/IGNORE: a trigger run by a foreign key action (a
            // booking's deletion setting its attachments' booking_id to NULL) has its statements'
            // conflict clauses overridden with ABORT.
            sql += """
                CREATE TRIGGER \(kind.table)_edited_\(field) AFTER UPDATE OF \(columns.joined(separator: ", ")) ON \(kind.table)
                WHEN new.sync_state <> 'synchronized' AND (\(changed)) BEGIN
                    INSERT INTO sync_field_edits (kind, id, field, edited_at)
                        SELECT '\(kind.rawValue)', new.id, column1, old.updated_at FROM (VALUES \(fields)) WHERE true
                        ON CONFLICT (kind, id, field) DO NOTHING;
                    INSERT INTO sync_field_edits (kind, id, field, edited_at) VALUES ('\(kind.rawValue)', new.id, '\(field)', new.updated_at)
                        ON CONFLICT (kind, id, field) DO UPDATE SET edited_at = excluded.edited_at;
                END;

                """
        }
        for kind in RecordKind.allCases {
            sql += """
                CREATE TRIGGER \(kind.table)_gone_edits AFTER DELETE ON \(kind.table) BEGIN
                    DELETE FROM sync_field_edits WHERE kind = '\(kind.rawValue)' AND id = old.id;
                END;

                """
        }
        return sql
    }()
}
