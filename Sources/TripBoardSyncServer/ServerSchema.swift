/// The server side of sync: PostgreSQL plus this schema, in its own `tripboard` schema of the
/// database the conninfo names. Versioned by `tripboard.schema_version`; every step is additive,
/// so older clients keep working (docs/sync.md §4). `app sync init-server` installs or upgrades
/// it, under a transaction-scoped advisory lock, so concurrent runs are safe and a second is a no-op.
enum ServerSchema {
    /// The version this agent installs; it works with any server at this version or newer.
    static var currentVersion: Int { migrations.count }

    /// Advisory lock key serialising schema installs (an arbitrary constant: "TBsy").
    static let lockKey = 0x5442_7379

    /// `migrations[n]` takes the server from version n to n + 1.
    static let migrations: [String] = [
        """
        -- A zone is one user's data. change_sequence is the zone's change counter: every writing
        -- transaction locks this row (SELECT … FOR UPDATE) and numbers its changes from it, so
        -- sequence numbers become visible in order (a bigserial would let a reader pass a number
        -- whose transaction commits late). epoch changes when a zone is recreated.
        CREATE TABLE tripboard.zones (
            name text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
            epoch text NOT NULL,
            change_sequence bigint NOT NULL DEFAULT 0 CHECK (change_sequence >= 0),
            key_wrap text NOT NULL,
            min_client_version integer NOT NULL DEFAULT 1,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        -- The latest state of every record: sealed fields only (field name → stamp, nonce,
        -- ciphertext), deleted ones kept as tombstones without fields.
        CREATE TABLE tripboard.records (
            zone text NOT NULL REFERENCES tripboard.zones (name),
            kind text NOT NULL CHECK (length(kind) BETWEEN 1 AND 32),
            id text NOT NULL CHECK (length(id) BETWEEN 1 AND 64),
            version bigint NOT NULL CHECK (version >= 1),
            change_sequence bigint NOT NULL,
            deleted boolean NOT NULL DEFAULT false,
            fields jsonb NOT NULL DEFAULT '{}',
            byte_count integer NOT NULL DEFAULT 0,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (zone, kind, id)
        );
        CREATE UNIQUE INDEX records_by_change ON tripboard.records (zone, change_sequence);
        -- Applied push batches: a retried batch (same mutation id) gets these results back and
        -- writes nothing again.
        CREATE TABLE tripboard.mutations (
            zone text NOT NULL REFERENCES tripboard.zones (name),
            mutation_id text NOT NULL CHECK (length(mutation_id) BETWEEN 1 AND 64),
            results jsonb NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (zone, mutation_id)
        );
        -- Attachment blobs, sealed with secretstream, named by a keyed hash, in 1 MiB chunks.
        CREATE TABLE tripboard.blobs (
            zone text NOT NULL REFERENCES tripboard.zones (name),
            name text NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
            chunk_count integer NOT NULL CHECK (chunk_count >= 0),
            byte_count bigint NOT NULL CHECK (byte_count >= 0),
            complete boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (zone, name)
        );
        CREATE TABLE tripboard.blob_chunks (
            zone text NOT NULL,
            name text NOT NULL,
            chunk_index integer NOT NULL CHECK (chunk_index >= 0),
            bytes bytea NOT NULL,
            PRIMARY KEY (zone, name, chunk_index),
            FOREIGN KEY (zone, name) REFERENCES tripboard.blobs (zone, name)
        );
        """,
        """
        -- Tombstones are kept at least 400 days (AgentLimits.tombstoneDays); purged_through is the
        -- highest change sequence of one the server no longer keeps, so that a device whose
        -- token is below it knows it may have missed deletions and reconciles (docs/sync.md).
        ALTER TABLE tripboard.zones ADD COLUMN purged_through bigint NOT NULL DEFAULT 0;
        CREATE INDEX records_tombstones ON tripboard.records (zone, updated_at) WHERE deleted;
        """,
        """
        -- Blob collection (docs/sync.md, Blobs no record names). records.blob: the blob a live
        -- attachment's file is in, as its pushing client says (NULL for records pushed before this
        -- step: then nothing is collected in the zone until a device names them). last_used: the
        -- last upload, push naming it, or deletion of a record naming it; a blob no live record
        -- names is removed once that is AgentLimits.blobGraceDays old. Existing blobs start now.
        ALTER TABLE tripboard.records ADD COLUMN blob text CHECK (blob IS NULL OR length(blob) = 64);
        ALTER TABLE tripboard.blobs ADD COLUMN last_used timestamptz NOT NULL DEFAULT now();
        CREATE INDEX records_by_blob ON tripboard.records (zone, blob) WHERE blob IS NOT NULL AND NOT deleted;
        CREATE INDEX records_unnamed_blob ON tripboard.records (zone, id) WHERE kind = 'attachment' AND blob IS NULL AND NOT deleted;
        CREATE INDEX blobs_by_last_used ON tripboard.blobs (zone, last_used);
        """,
    ]
}
