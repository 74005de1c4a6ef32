"""Everyday lists and search, run by tools/bench (`--only upcoming,search`, and in the default set).

- `app trip list --upcoming --limit 20` at each store size against the same command at 100 trips:
  a limited list ordered by start walks `trips_live_by_start` from today − the longest trip and
  stops at 20, so it should not grow with the store (target: within 10%).
- `app search TEXT` on the 100,000-trip store against `sqlite3 -readonly` running the very
  statement the app runs (`SearchIndex.searchSQL`, with the FTS5 query the app makes of TEXT) — target ≤ 1.2×
  (≤ 2× proposed for `x7k2qp`'s 20,000 hits, whose trip lookups open pages `sqlite3` reads plain);
  `trip` is the broad one, every trip a hit (peak RSS ≤ 1.5× sqlite3's).
"""
import os

from plain_store import plain_copy

# SearchIndex.searchSQL with its two parameters written in (kept in step with Search/SearchIndex.swift).
SEARCH_SQL = """SELECT s.rowid % 4, coalesce(t.id, p.id, b.id), coalesce(t.id, p.trip_id, b.trip_id),
       coalesce(t.name, p.name, b.title), coalesce(t.notes, p.city, b.reference),
       CASE WHEN s.rowid % 4 = 0 THEN t.name ELSE (SELECT name FROM trips WHERE id = coalesce(p.trip_id, b.trip_id)) END
FROM (SELECT rowid, rank FROM search_index WHERE search_index MATCH '{query}' ORDER BY rank, rowid LIMIT -1) s
LEFT JOIN trips t ON s.rowid % 4 = 0 AND t.rowid = s.rowid / 4
LEFT JOIN places p ON s.rowid % 4 = 1 AND p.rowid = s.rowid / 4
LEFT JOIN bookings b ON s.rowid % 4 = 2 AND b.rowid = s.rowid / 4"""


def fts_query(text):
    """What Store.searchQuery makes of TEXT (plain words here: each quoted, as a prefix)."""
    return " ".join('"' + word.replace('"', '""') + '"*' for word in text.split())


def bench(args, release, containers, alternate, result, run_once, now):
    app = os.path.join(release, "app")
    runs = 11 if args.quick else 31
    env = dict(os.environ, TRIPBOARD_NOW=now)
    results = []
    small = containers[min(containers)]
    upcoming = ["trip", "list", "--upcoming", "--limit", "20"]
    for size in sorted(containers):
        if size == min(containers):
            continue
        a, b = alternate(runs, lambda: run_once([app, "--container", containers[size], *upcoming], env=env),
                         lambda: run_once([app, "--container", small, *upcoming], env=env))
        results.append(result(f"`app trip list --upcoming --limit 20` at {size:,} vs {min(containers):,} trips",
                              f"app trip list --upcoming ({size:,})", f"app trip list --upcoming ({min(containers):,})",
                              a, b, "within 10%"))
    size = 100_000 if 100_000 in containers else max(containers)
    store = plain_copy(app, containers[size], containers[size] + "-plain.sqlite")  # the peer's, in the clear
    for text in ["trip 4242", "x7k2qp", "trip"]:
        sql = SEARCH_SQL.format(query=fts_query(text).replace("'", "''"))
        a, b = alternate(runs, lambda: run_once([app, "--container", containers[size], "search", *text.split()]),
                         lambda: run_once(["sqlite3", "-readonly", store, sql]))
        results.append(result(f"`app search {text}` on {size:,} trips", f"app search {text}",
                              "sqlite3 -readonly STORE \"<the same FTS5 query>\"", a, b,
                              "≤ 2× (proposed)" if text == "x7k2qp" else "≤ 1.2×",
                              {"x7k2qp": "every fifth trip's booking, 20,000 rows printed",
                               "trip 4242": "11 rows of 100,000 whose names start with Trip",
                               "trip": f"broad: every trip a hit, {size:,} rows printed; RSS flat in the hits (≤ 1.5× sqlite3's)"}[text]))
    return results
