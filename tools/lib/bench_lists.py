"""The other lists that stream, run by tools/bench (`--only lists`, and in the default set; the
million-record store takes minutes to fill and to list).

Each list against `sqlite3 -readonly` running the very statements the app runs (list mode for
the human table, `-json` for `--json` and `export`), wall and peak RSS, on a store of one trip
holding N places and N bookings (N = 10,000 and 1,000,000; `--list-records` chooses, `--quick`
1,000 and 10,000):

- `place list --trip T` (table, --json): `Store.placeRows`.
- `booking list --trip T` (table, --json): `Store.bookingRows(tripId:)`.
- `booking list` across trips (table, --json): `Store.bookingRowsAcrossTrips`, its two statements
  (dated bookings in `bookings_live_by_start` order, then undated ones).
- `sync pending` (table, --json): `Store.pendingChangeRows`, 2N + 1 records.
- `export`: the whole document, `Store.writeExport`'s three statements.

The store is filled by `sqlite3` itself (a recursive CTE, FTS triggers included): an import of two
million records would take longer than every list together. A fifth of the bookings are undated.
"""
import os
import shutil
import statistics
import subprocess

from plain_store import plain_copy

TRIP_ID = "7a1c0000-0000-4000-8000-000000000001"
LIVE = "sync_state <> 'pendingDeletion' AND trashed_at IS NULL"
EXPORTED = "(trashed_at IS NULL OR sync_state = 'pendingDeletion')"
TRIP_COLUMNS = "id, name, start_date, end_date, notes, sync_state, remote_version, updated_at"
PLACE_COLUMNS = "id, trip_id, name, city, visited, sync_state, remote_version, updated_at"
BOOKING_COLUMNS = "id, trip_id, kind, title, starts_at, reference, sync_state, remote_version, updated_at, ends_at, zone"

# The statements the app runs (kept in step with Store+PlacesAndBookings.swift, Store+Lists.swift,
# Store+Sync.swift and Store+Transfer.swift), their parameters written in.
PLACE_SQL = f"SELECT {PLACE_COLUMNS} FROM places WHERE trip_id = '{TRIP_ID}' AND {LIVE} ORDER BY rowid"
_BOOKINGS = f"SELECT {BOOKING_COLUMNS} FROM bookings WHERE trip_id = '{TRIP_ID}' AND {LIVE}"
BOOKING_SQL = (f"{_BOOKINGS} AND starts_at_epoch IS NOT NULL ORDER BY starts_at_epoch, rowid; "
               f"{_BOOKINGS} AND starts_at_epoch IS NULL ORDER BY rowid")
_ACROSS = (f"SELECT {BOOKING_COLUMNS}, (SELECT name FROM trips WHERE trips.id = bookings.trip_id), "
           "(SELECT start_date FROM trips WHERE trips.id = bookings.trip_id) FROM bookings")
ACROSS_SQL = (f"{_ACROSS} WHERE {LIVE} AND starts_at_epoch IS NOT NULL ORDER BY starts_at_epoch, rowid LIMIT -1; "
              f"{_ACROSS} WHERE {LIVE} AND starts_at_epoch IS NULL ORDER BY rowid LIMIT -1")
_PENDING = "sync_state <> 'synchronized' AND (trashed_at IS NULL OR sync_state = 'pendingDeletion')"
PENDING_SQL = " UNION ALL ".join(f"SELECT '{kind}', id, sync_state, remote_version, updated_at FROM {table} WHERE {_PENDING}"
                                 for kind, table in (("trip", "trips"), ("place", "places"), ("booking", "bookings"),
                                                     ("attachment", "attachments"))) + " ORDER BY 5, 2"
EXPORT_SQL = (f"SELECT {BOOKING_COLUMNS} FROM bookings WHERE {EXPORTED} ORDER BY rowid; "
              f"SELECT {PLACE_COLUMNS} FROM places WHERE {EXPORTED} ORDER BY rowid; "
              f"SELECT {TRIP_COLUMNS} FROM trips WHERE {EXPORTED} ORDER BY start_date, id")

FILL_SQL = """
BEGIN IMMEDIATE;
INSERT INTO trips (id, name, start_date, end_date, notes, sync_state, remote_version, updated_at)
VALUES ('{trip}', 'Big trip', '2026-12-01', '2027-11-30', '', 'pendingUpload', NULL, '2026-11-30T00:00:00.000Z');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {count})
INSERT INTO places (id, trip_id, name, city, visited, sync_state, remote_version, updated_at)
SELECT printf('%08x-0000-4000-8000-%012x', i, i), '{trip}', 'Place ' || i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'Lisbon' END,
       i % 2, 'pendingUpload', NULL, strftime('%Y-%m-%dT%H:%M:%S.000Z', 1796000000 + i, 'unixepoch') FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {count}),
     t(i, epoch) AS (SELECT i, 1796112000 + (i * 7919) % 31536000 FROM n)
INSERT INTO bookings (id, trip_id, kind, title, starts_at, starts_at_epoch, reference, sync_state, remote_version,
                      updated_at, over_at_epoch)
SELECT printf('%08x-0000-4000-9000-%012x', i, i), '{trip}', 'flight', 'TP ' || (i % 9000),
       CASE WHEN i % 5 = 4 THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S+00:00', epoch, 'unixepoch') END,
       CASE WHEN i % 5 = 4 THEN NULL ELSE epoch END, 'X7K2QP', 'pendingUpload', NULL,
       strftime('%Y-%m-%dT%H:%M:%S.000Z', 1796000000 + i, 'unixepoch'),
       CASE WHEN i % 5 = 4 THEN NULL ELSE epoch END FROM t;
COMMIT;
"""


def make_store(release, work, count):
    """A container filled by `sqlite3` through `app container sqlite` (its store is sealed), and
    the same store in the clear beside it for the peer."""
    path = os.path.join(work, f"lists-{count}")
    shutil.rmtree(path, ignore_errors=True)
    app = os.path.join(release, "app")
    subprocess.run([app, "--container", path, "container", "init"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([app, "--container", path, "container", "sqlite"], input=FILL_SQL.format(trip=TRIP_ID, count=count),
                   text=True, check=True)
    return path, plain_copy(app, path, path + "-plain.sqlite")


def bench(args, release, work, alternate, result, run_once):
    sizes = [int(size) for size in args.list_records.split(",")] if args.list_records else \
        ([1_000, 10_000] if args.quick else [10_000, 1_000_000])
    app = os.path.join(release, "app")
    results = []
    for count in sizes:
        container, store = make_store(release, work, count)
        runs = 3 if count >= 1_000_000 else (5 if args.quick else 11)
        cases = [
            ("place list --trip T", ["place", "list", "--trip", TRIP_ID], [], PLACE_SQL, count),
            ("place list --trip T --json", ["place", "list", "--trip", TRIP_ID, "--json"], ["-json"], PLACE_SQL, count),
            ("booking list --trip T", ["booking", "list", "--trip", TRIP_ID], [], BOOKING_SQL, count),
            ("booking list --trip T --json", ["booking", "list", "--trip", TRIP_ID, "--json"], ["-json"], BOOKING_SQL, count),
            ("booking list", ["booking", "list"], [], ACROSS_SQL, count),
            ("booking list --json", ["booking", "list", "--json"], ["-json"], ACROSS_SQL, count),
            ("sync pending", ["sync", "pending"], [], PENDING_SQL, 2 * count + 1),
            ("sync pending --json", ["sync", "pending", "--json"], ["-json"], PENDING_SQL, 2 * count + 1),
            ("export", ["export"], ["-json"], EXPORT_SQL, 2 * count + 1),
        ]
        for name, words, mode, sql, rows in cases:
            a, b = alternate(runs, lambda: run_once([app, "--container", container, *words]),
                             lambda: run_once(["sqlite3", "-readonly", *mode, store, sql]))
            results.append(result(f"`app {name}` at {rows:,} records", f"app {name}",
                                  f"sqlite3 -readonly {' '.join(mode) + ' ' if mode else ''}STORE \"SELECT …\"",
                                  a, b, "≤ 1.2× wall, ≤ 1.5× RSS",
                                  f"one trip with {count:,} places and {count:,} bookings (a fifth undated); "
                                  f"RSS {statistics.median(x[1] for x in a) / 1024:.1f} MB vs "
                                  f"{statistics.median(x[1] for x in b) / 1024:.1f} MB"))
    return results
