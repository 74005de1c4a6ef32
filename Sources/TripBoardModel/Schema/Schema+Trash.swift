extension Schema {
    /// Version 1 → 2: deleted records go to the trash for 30 days instead of leaving at once.
    ///
    /// - `trashed_at` (UTC stamp) and `trashed_with` (the id of the trash entry: the record the
    ///   user deleted, which the others went with) on every table. A record is live when it is no
    ///   tombstone and `trashed_at IS NULL`; the widget's partial indexes say exactly that, so the
    ///   trash costs its queries nothing.
    /// - `attachments` is rebuilt so that deleting a booking never deletes attachment rows (v1's
    ///   `ON DELETE CASCADE` left their files behind): `ON DELETE SET NULL`, and a CHECK lets only
    ///   a row in the deletion queue or in the trash lose its booking — any other booking deletion
    ///   fails. Files leave only through the deletion queue. `attachments_v2` is deliberately like
    ///   schema 1's `attachments` (`Schema.swift`) but for that foreign key and CHECK: SQLite
    ///   cannot alter a constraint, so the table is rebuilt, and a step's SQL stays as it shipped.
    /// - v1 leftovers: a deletion that was interrupted (`deleting`, not yet a tombstone) joins the
    ///   queue, which the next writer finishes; an attachment left live under a deleted booking
    ///   goes to the trash on its own (tombstoned when uploaded), kept 30 days from the upgrade.
    package static let trash = """
        ALTER TABLE trips ADD COLUMN trashed_at TEXT;
        ALTER TABLE trips ADD COLUMN trashed_with TEXT;
        ALTER TABLE places ADD COLUMN trashed_at TEXT;
        ALTER TABLE places ADD COLUMN trashed_with TEXT;
        ALTER TABLE bookings ADD COLUMN trashed_at TEXT;
        ALTER TABLE bookings ADD COLUMN trashed_with TEXT;

        DROP INDEX trips_live_by_start;
        DROP INDEX trips_live_by_length;
        CREATE INDEX trips_live_by_start ON trips (start_date, end_date, id)
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        CREATE INDEX trips_live_by_length ON trips (julianday(end_date) - julianday(start_date))
            WHERE sync_state <> 'pendingDeletion' AND trashed_at IS NULL;
        -- The trash, oldest first: "anything to purge?" is one probe. (An entry's members are
        -- found through their parent's index, `places_by_trip` and the like: every process parses
        -- the whole schema when it starts, the widget included, so no index is here for less.)
        CREATE INDEX trips_trashed ON trips (trashed_at) WHERE trashed_at IS NOT NULL;
        CREATE INDEX places_trashed ON places (trashed_at) WHERE trashed_at IS NOT NULL;
        CREATE INDEX bookings_trashed ON bookings (trashed_at) WHERE trashed_at IS NOT NULL;

        CREATE TABLE attachments_v2 (
            id TEXT NOT NULL PRIMARY KEY,
            booking_id TEXT REFERENCES bookings (id) ON DELETE SET NULL,
            original_filename TEXT NOT NULL,
            content_type TEXT NOT NULL,
            byte_count INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            page_count INTEGER,
            relative_path TEXT NOT NULL UNIQUE,
            state TEXT NOT NULL DEFAULT 'present' CHECK (state IN ('present', 'missing', 'deleting')),
            created_at TEXT NOT NULL,
            sync_state TEXT NOT NULL DEFAULT 'pendingUpload'
                CHECK (sync_state IN ('synchronized', 'pendingUpload', 'pendingDeletion', 'failed')),
            remote_version INTEGER,
            updated_at TEXT NOT NULL,
            trashed_at TEXT,
            trashed_with TEXT,
            CHECK (booking_id IS NOT NULL OR state = 'deleting' OR trashed_at IS NOT NULL)
        );
        INSERT INTO attachments_v2 (rowid, id, booking_id, original_filename, content_type, byte_count, content_hash,
                                    page_count, relative_path, state, created_at, sync_state, remote_version, updated_at)
            SELECT rowid, id, booking_id, original_filename, content_type, byte_count, content_hash,
                   page_count, relative_path, state, created_at, sync_state, remote_version, updated_at FROM attachments;
        DROP TABLE attachments;
        ALTER TABLE attachments_v2 RENAME TO attachments;
        CREATE INDEX attachments_by_booking ON attachments (booking_id);
        CREATE INDEX attachments_trashed ON attachments (trashed_at) WHERE trashed_at IS NOT NULL;
        -- The deletion queue that the next writer finishes: one probe when it is empty.
        CREATE INDEX attachments_deletion_queue ON attachments (id) WHERE state = 'deleting' AND trashed_at IS NOT NULL;
        -- A shared PDF whose bytes a row lost: found by hash among the few missing rows.
        CREATE INDEX attachments_missing ON attachments (content_hash) WHERE state = 'missing';

        UPDATE attachments SET trashed_at = updated_at WHERE state = 'deleting' AND sync_state <> 'pendingDeletion';
        UPDATE attachments
            SET trashed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), trashed_with = id,
                sync_state = CASE WHEN remote_version IS NULL THEN sync_state ELSE 'pendingDeletion' END
            WHERE state <> 'deleting' AND sync_state <> 'pendingDeletion'
              AND booking_id IN (SELECT b.id FROM bookings b JOIN trips t ON t.id = b.trip_id
                                 WHERE b.sync_state = 'pendingDeletion' OR t.sync_state = 'pendingDeletion');
        """
}
