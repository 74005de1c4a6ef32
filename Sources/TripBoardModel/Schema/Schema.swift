package import TripBoardSQLite

/// The store's schema, versioned by `PRAGMA user_version`. Migrations run only under the exclusive
/// container lock, each in one `BEGIN IMMEDIATE` transaction with the version bump.
package enum Schema {
    /// The version this build writes and understands.
    package static var currentVersion: Int64 { Int64(migrations.count) }

    /// `migrations[n]` takes the store from version n to n + 1.
    package static let migrations: [String] = [
        // 0 → 1. Its `attachments` table is rebuilt by schema 2 as `attachments_v2`
        // (Schema+Trash.swift), deliberately alike but for the booking's foreign key.
        """
        CREATE TABLE trips (
            id TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL CHECK (length(name) > 0),
            start_date TEXT NOT NULL,
            end_date TEXT NOT NULL,
            notes TEXT NOT NULL DEFAULT '',
            sync_state TEXT NOT NULL DEFAULT 'pendingUpload'
                CHECK (sync_state IN ('synchronized', 'pendingUpload', 'pendingDeletion', 'failed')),
            remote_version INTEGER,
            updated_at TEXT NOT NULL,
            CHECK (end_date >= start_date)
        );
        -- The widget's two lookups: upcoming by start date, and the longest live trip, which bounds
        -- the search for a trip in progress (see docs/performance.md).
        CREATE INDEX trips_live_by_start ON trips (start_date, end_date, id) WHERE sync_state <> 'pendingDeletion';
        CREATE INDEX trips_live_by_length ON trips (julianday(end_date) - julianday(start_date))
            WHERE sync_state <> 'pendingDeletion';
        CREATE INDEX trips_unsynchronized ON trips (sync_state) WHERE sync_state <> 'synchronized';

        CREATE TABLE places (
            id TEXT NOT NULL PRIMARY KEY,
            trip_id TEXT NOT NULL REFERENCES trips (id) ON DELETE CASCADE,
            name TEXT NOT NULL CHECK (length(name) > 0),
            city TEXT,
            visited INTEGER NOT NULL DEFAULT 0 CHECK (visited IN (0, 1)),
            sync_state TEXT NOT NULL DEFAULT 'pendingUpload'
                CHECK (sync_state IN ('synchronized', 'pendingUpload', 'pendingDeletion', 'failed')),
            remote_version INTEGER,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX places_by_trip ON places (trip_id);
        CREATE INDEX places_unsynchronized ON places (sync_state) WHERE sync_state <> 'synchronized';

        CREATE TABLE bookings (
            id TEXT NOT NULL PRIMARY KEY,
            trip_id TEXT NOT NULL REFERENCES trips (id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('flight', 'train', 'hotel', 'car', 'event', 'other')),
            title TEXT NOT NULL CHECK (length(title) > 0),
            starts_at TEXT,
            starts_at_epoch INTEGER,
            reference TEXT,
            sync_state TEXT NOT NULL DEFAULT 'pendingUpload'
                CHECK (sync_state IN ('synchronized', 'pendingUpload', 'pendingDeletion', 'failed')),
            remote_version INTEGER,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX bookings_by_trip ON bookings (trip_id, starts_at_epoch);
        CREATE INDEX bookings_unsynchronized ON bookings (sync_state) WHERE sync_state <> 'synchronized';

        CREATE TABLE attachments (
            id TEXT NOT NULL PRIMARY KEY,
            booking_id TEXT NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
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
            updated_at TEXT NOT NULL
        );
        CREATE INDEX attachments_by_booking ON attachments (booking_id);
        """,
        // 1 → 2: the trash (docs/storage.md §4.4, §5)
        trash,
        // 2 → 3: booking ends, all-day bookings, lists across trips, search (docs/storage.md)
        bookingTimesAndSearch,
        // 3 → 4: sync with a server (docs/sync.md)
        sync,
        // 4 → 5: values that lost a sync merge, kept (docs/sync.md §3)
        syncConflicts,
        // 5 → 6: the zone of a booking's times (docs/storage.md)
        bookingZone,
        // 6 → 7: noticing a server that lost acknowledged changes (docs/sync.md)
        syncReconcile,
        // 7 → 8: pending records in push order (docs/storage.md, Indexes)
        syncPending,
        // 8 → 9: held records and per-field edit times (docs/sync.md §3)
        syncOrder,
        // 9 → 10: a server password an earlier build let into `sync_account` taken out (docs/sync.md §5)
        serverPasswordRemoved,
        // 10 → 11: this device's clock offset from the server's, learned at each sync (docs/sync.md §3)
        syncClock,
        // 11 → 12: sealed deletions bound to an incarnation, and the ledger of dead ones (docs/sync.md §3)
        syncIncarnation,
        // 12 → 13: the sealed deletions this device has seen, so that one served again is known (docs/sync.md §3)
        syncDeletionsSeen,
        // 13 → 14: bookings found by their kind too (docs/storage.md, The search index)
        searchByKind,
        // 14 → 15: a booking's seat (docs/storage.md, The tables)
        bookingSeat,
        bookingEndZone,
        // 16 → 17: the protection class an attachment's file is sealed under (docs/security.md)
        attachmentProtection,
        // 17 → 18: an all-day booking from before version 3 is over at its day's end (docs/storage.md)
        allDayOverAtItsDaysEnd,
        // 18 → 19: the trips' start index holds what `trip list` shows (docs/storage.md, Indexes)
        tripListCovered,
    ]

    /// Step 10 changes no table: its work is `removeServerPassword`, in the step's transaction.
    static let serverPasswordRemoved = "-- sync_account.server without a password (Schema.removeServerPassword)"

    /// Brings `connection` through `steps` (step n takes version n to n + 1), each step in one
    /// transaction with its version bump. The caller holds the exclusive container lock. Returns
    /// what a step has to tell the user, once (the command that migrated prints it).
    @discardableResult
    package static func migrate(_ connection: Connection, steps migrations: [String] = migrations) throws -> [String] {
        var notices: [String] = []
        while true {
            let applied = try connection.writeTransaction { () throws -> Bool in
                let version = try connection.userVersion()
                guard version < Int64(migrations.count) else { return false }
                try connection.execute(migrations[Int(version)])
                if migrations[Int(version)] == serverPasswordRemoved, let notice = try removeServerPassword(connection) {
                    notices.append(notice)
                }
                try connection.execute("PRAGMA user_version = \(version + 1)")
                return true
            }
            if !applied { break }
        }
        if !notices.isEmpty {
            // The old row's bytes go from the main file at this checkpoint (the update ran with
            // `secure_delete`), and the write-ahead log is emptied. The caller holds the
            // exclusive lock: no reader keeps the log.
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        return notices
    }

    /// Takes the password out of the conninfo kept in `sync_account` (`ConninfoPassword`), its
    /// old bytes overwritten (`secure_delete`); what to tell the user, or `nil` when it held none.
    static func removeServerPassword(_ connection: Connection) throws -> String? {
        guard try connection.integer("SELECT count(*) FROM sqlite_master WHERE name = 'sync_account'") == 1,
              let server = try connection.text("SELECT server FROM sync_account WHERE only_row = 1"),
              let cleaned = ConninfoPassword.removed(from: server) else { return nil }
        try connection.execute("PRAGMA secure_delete = ON")
        defer { try? connection.execute("PRAGMA secure_delete = OFF") }
        try connection.statement("UPDATE sync_account SET server = ? WHERE only_row = 1").run([.text(cleaned)])
        return cleaned.isEmpty
            ? "the sync server's conninfo kept in this container held a password (an earlier build let it in); it was removed with the conninfo, which could not be read without it: run `app sync leave`, then `app sync setup --server CONNINFO --with-password`"
            : "the sync server's conninfo kept in this container held a password (an earlier build let it in); it was removed from the store. If the server needs one, run `app sync leave`, then `app sync setup --server CONNINFO --with-password`, which keeps it in this device's keychain"
    }
}

extension Schema {
    /// `user_version`, with damage and newer schemas turned into store errors.
    package static func version(of connection: Connection, path: String? = nil, supported: Int64 = Schema.currentVersion) throws -> Int64 {
        let path = path ?? connection.path
        let version: Int64
        do {
            version = try connection.userVersion()
        } catch let error as SQLiteError where error.isCorruption {
            // A sealed database read without its key file has no header either.
            let unsealed = !connection.isSealed && error.code == .notADatabase
            throw StoreError.corrupt(path: path, detail: error.message + (unsealed ? " (or it is sealed and its key file \(DatabaseKeyFile.name(for: path.split(separator: "/").last.map(String.init) ?? path)) is missing)" : ""))
        } catch let error as SQLiteError where error.code == .cannotOpen || error.code == .permission {
            throw StoreError.unreadable(path: path, detail: error.message)
        }
        if version > supported {
            throw StoreError.newerSchema(path: path, found: version, supported: supported)
        }
        return version
    }
}
