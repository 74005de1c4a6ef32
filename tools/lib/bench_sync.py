"""The sync benchmarks, run by tools/bench (`--only sync`, and in the default set).

A throw-away PostgreSQL 15 cluster is started for the group (initdb into a temporary directory,
pg_ctl on a Unix socket in it and a free port, as the `postgres` user when run as root; the
server's default durability: fsync on, synchronous_commit on) and stopped at the end. Then, with
N records (`--sync-records`, default 100,000: half trips, a quarter places, a quarter bookings)
imported with `app import` on device A:

- push: A's `sync now` of the N pending records into an empty zone, against `psql` copying the
  same server rows in (`\\copy tripboard.records from FILE`); before each run the server's tables
  are emptied and A's container and device directory are copied back from before its first push;
- push, the same work by hand: the same `\\copy` in, then `sqlite3` running, in one transaction on A's
  container from before its first push, what the push writes on the device, set-based: every record
  acknowledged (`sync_state`, `remote_version`: one `UPDATE … FROM json_each` a table) and the
  server's copy of each field kept (`sync_shadow`: one `INSERT … SELECT`), read from A's store
  after one push;
- first sync: a new device B (`sync setup` done, nothing pulled) running `sync now`, against
  `psql` copying the same rows out (`\\copy (SELECT …) to FILE`) plus `sqlite3` writing the rows B
  holds after a first sync — its records and their shadow rows — set-based (one `INSERT … SELECT`
  over `json_each` a table, in one transaction, its triggers included) into an empty store of the
  same schema; peak RSS through GNU time (the largest of `app` and `sync-agent`);
- watch: both devices running `sync watch`, an `app trip edit` on A, until B's store has the new
  name (polled every 5 ms): median of 20 (`--quick`: 5);
- with `--baseline DIR` (another build's executables, e.g. the previous commit's): the push and the
  first sync again, each against the same work done by that build's `app` and `sync-agent` (its
  own device A with the same records imported, its own new device B), alternating.
"""
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import json
import time
import uuid

from plain_store import plain_copy, unseal

PASSPHRASE = "correct horse battery staple"
PG = "/usr/lib/postgresql/15/bin"
ZONE = "bench"


class Cluster:
    """A PostgreSQL cluster of its own in a temporary directory, listening on a Unix socket only."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="tb-bench-pg-")
        os.chmod(self.directory, 0o700)
        self.root = os.getuid() == 0
        if self.root:
            shutil.chown(self.directory, "postgres")
        self.port = free_port()
        self.tool("initdb", "-D", self.data, "-A", "trust", "-U", "tripboard", "--no-sync", "-E", "UTF8", "--locale=C")
        self.tool("pg_ctl", "-D", self.data, "-o", f"-c listen_addresses='' -k {self.directory} -p {self.port}",
                  "-l", os.path.join(self.directory, "server.log"), "-w", "-t", "60", "start")

    @property
    def data(self):
        return os.path.join(self.directory, "data")

    @property
    def conninfo(self):
        return f"host={self.directory} port={self.port} dbname=postgres user=tripboard"

    def tool(self, name, *arguments):
        prefix = ["runuser", "-u", "postgres", "--"] if self.root else []
        return subprocess.run(prefix + [os.path.join(PG, name), *arguments], check=True, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ, HOME="/tmp")).stdout

    def psql_command(self, *arguments):
        return ["psql", "-h", self.directory, "-p", str(self.port), "-U", "tripboard", "-d", "postgres", "-q", "-At",
                "-v", "ON_ERROR_STOP=1", *arguments]

    def psql(self, *statements):
        """Each statement in its own `-c` (so VACUUM is outside a transaction block)."""
        arguments = [part for sql in statements for part in ("-c", sql)]
        return subprocess.run(self.psql_command(*arguments), check=True, text=True, stdout=subprocess.PIPE).stdout

    def stop(self):
        try:
            self.tool("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def records_document(count, seed=11):
    """`count` records: half trips, a quarter places, a quarter bookings (two of each per trip)."""
    rng = random.Random(seed)
    trips, places, bookings = [], [], []
    trip_count = count // 2
    for index in range(trip_count):
        start = 18262 + rng.randrange(0, 365 * 40)
        trip_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        trips.append({"id": trip_id, "name": f"Trip {index}", "startDate": day(start), "endDate": day(start + rng.randrange(0, 21)),
                      "notes": f"Notes for trip {index}: museum at 10, dinner at 20"})
    for index in range(count - trip_count):
        trip = trips[index % trip_count]
        if index % 2 == 0:
            places.append({"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "tripId": trip["id"],
                           "name": f"Place {index}", "city": "Lisbon", "visited": index % 4 == 0})
        else:
            bookings.append({"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "tripId": trip["id"], "kind": "flight",
                             "title": f"TP {index % 9000}", "startsAt": trip["startDate"] + "T07:35:00Z", "reference": "X7K2QP"})
    return {"format": "tripboard-export", "formatVersion": 1, "trips": trips, "places": places, "bookings": bookings}


def day(days):
    return time.strftime("%Y-%m-%d", time.gmtime(days * 86400))


def quote(text):
    return "NULL" if text is None else "'" + text.replace("'", "''") + "'"


def dump_rows(path, store, tables):
    """Every row of `tables` in `store` (a store in the clear), as one JSON object of arrays of
    row objects by table, for `set_based_inserts`."""
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    # The columns a row is written with: generated ones (hidden 2 or 3) are SQLite's to fill.
    columns = {table: [row["name"] for row in connection.execute("SELECT name, hidden FROM pragma_table_xinfo(?)", (table,))
                       if row["hidden"] == 0] for table in tables}
    document = {table: [dict(row) for row in connection.execute(f"SELECT {', '.join(columns[table])} FROM {table} ORDER BY rowid")]
                for table in tables}
    connection.close()
    with open(path, "w") as file:
        json.dump(document, file)
    return columns


def set_based_inserts(source, columns):
    """One transaction inserting every row of `source` (from `dump_rows`), one INSERT … SELECT
    over json_each a table: how sqlite3 would write the rows set-based."""
    quoted = source.replace("'", "''")
    statements = ["BEGIN IMMEDIATE;"]
    for table, names in columns.items():
        if not names:
            continue
        values = ", ".join(f"j.value ->> '{name}'" for name in names)
        statements.append(f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) SELECT {values} "
                          f"FROM json_each(readfile('{quoted}'), '$.{table}') AS j;")
    statements.append("COMMIT;")
    return "\n".join(statements) + "\n"


def write_bookkeeping(path, store, source):
    """The device-side writes of a push of every record in `store` (a store after one push):
    each record acknowledged and its fields' shadow rows kept, set-based — one UPDATE … FROM
    json_each per table and one INSERT … SELECT for the shadow, in one transaction — reading
    `source`, written here."""
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    document = {table: [{"id": identifier, "v": version} for (identifier, version) in connection.execute(f"SELECT id, remote_version FROM {table}")]
                for table in ("trips", "places", "bookings")}
    document["shadow"] = [dict(zip(("kind", "id", "field", "value", "stamp"), row))
                          for row in connection.execute("SELECT kind, id, field, value, stamp FROM sync_shadow")]
    connection.close()
    with open(source, "w") as file:
        json.dump(document, file)
    quoted = source.replace("'", "''")
    with open(path, "w") as file:
        file.write("BEGIN IMMEDIATE;\n")
        for table in ("trips", "places", "bookings"):
            file.write(f"UPDATE {table} SET sync_state = 'synchronized', remote_version = j.value ->> 'v' "
                       f"FROM json_each(readfile('{quoted}'), '$.{table}') AS j WHERE {table}.id = j.value ->> 'id';\n")
        file.write("INSERT OR REPLACE INTO sync_shadow (kind, id, field, value, stamp) SELECT j.value ->> 'kind', j.value ->> 'id', "
                   f"j.value ->> 'field', j.value ->> 'value', j.value ->> 'stamp' FROM json_each(readfile('{quoted}'), '$.shadow') AS j;\n")
        file.write("COMMIT;\n")


class Device:
    """A container and its device directory (keychain key) under `root`."""

    def __init__(self, release, root):
        self.release, self.root = release, root
        self.container, self.device = os.path.join(root, "c"), os.path.join(root, "device")
        self.env = dict(os.environ, TRIPBOARD_CONTAINER=self.container, TRIPBOARD_DEVICE_DIR=self.device, HOME="/tmp")

    def command(self, *arguments):
        return [os.path.join(self.release, "app"), *arguments]

    def run(self, *arguments, stdin=None):
        return subprocess.run(self.command(*arguments), check=True, text=True, input=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=self.env).stdout

    def save(self, template):
        shutil.rmtree(template, ignore_errors=True)
        shutil.copytree(self.root, template, symlinks=True)

    def restore(self, template):
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(template, self.root, symlinks=True)

    @property
    def store(self):
        return os.path.join(self.container, "store", "TripBoard.sqlite")


def bench(args, release, work, alternate, Result, run_once):
    count = args.sync_records or (10_000 if args.quick else 100_000)
    runs = 5  # this machine varies by a quarter from run to run: three medians swung the ratios by 0.3
    cluster = Cluster()
    try:
        return run(args, release, work, alternate, Result, run_once, cluster, count, runs)
    finally:
        cluster.stop()


def run(args, release, work, alternate, Result, run_once, cluster, count, runs):
    root = os.path.join(work, "sync")
    os.makedirs(root, exist_ok=True)
    document = records_document(count)
    source = os.path.join(root, "records.json")
    with open(source, "w") as file:
        json.dump(document, file)

    a, b = Device(release, os.path.join(root, "a")), Device(release, os.path.join(root, "b"))
    a.run("sync", "init-server", "--server", cluster.conninfo)
    a.run("sync", "setup", "--server", cluster.conninfo, "--zone", ZONE, stdin=PASSPHRASE + "\n")
    a.run("import", source)
    a_template = os.path.join(root, "a-before-push")
    a.save(a_template)

    def empty_server():
        # min_client_version back to 1: a build that raises it (sealed deletions raise it to 2)
        # would leave a baseline build only receiving, pushing nothing.
        cluster.psql("TRUNCATE tripboard.records, tripboard.mutations",
                     "UPDATE tripboard.zones SET change_sequence = 0, min_client_version = 1",
                     "VACUUM ANALYZE tripboard.records")

    # The server rows of one push, for psql's side of both comparisons.
    empty_server()
    a.run("sync", "now")
    rows = os.path.join(root, "records.copy")
    cluster.psql(f"\\copy tripboard.records to '{rows}'")
    on_server = int(cluster.psql(f"SELECT count(*) FROM tripboard.records WHERE zone = '{ZONE}'"))
    if on_server != count:
        raise SystemExit(f"bench: one `sync now` left {on_server} of {count} records on the server")

    def fresh_a():
        empty_server()
        a.restore(a_template)

    def fresh_table():
        cluster.psql("TRUNCATE tripboard.records", "VACUUM ANALYZE tripboard.records")

    # What the push also writes on the device, as sqlite3 would set-based: every record
    # acknowledged and the server's copy of each of its fields kept (sync_shadow), read from A
    # after one push.
    # A's store is sealed: the statements are read from, and the peer writes into, its copy in
    # the clear (`a_plain`, fresh before each run).
    bookkeeping = os.path.join(root, "bookkeeping.sql")
    a_plain_template, a_plain = os.path.join(root, "a-pushed-plain.sqlite"), os.path.join(root, "a-plain.sqlite")
    write_bookkeeping(bookkeeping, plain_copy(a.command()[0], a.container, a_plain_template, a.env), os.path.join(root, "bookkeeping.json"))
    a.restore(a_template)
    plain_copy(a.command()[0], a.container, a_plain_template, a.env)

    push_a, push_b = alternate(runs, lambda: run_once(a.command("sync", "now"), env=a.env, setup=fresh_a),
                               lambda: run_once(cluster.psql_command("-c", f"\\copy tripboard.records from '{rows}'"), setup=fresh_table))
    results = [Result(f"push of {count:,} records (`sync now` on the device that has them)", "app sync now",
                      "psql -c \"\\copy tripboard.records from FILE\"", push_a, push_b, "≤ 1.5×",
                      "empty zone and A's container from before its first push, before each run; server with fsync and synchronous_commit on")]
    copy_in = " ".join(map(shlex_quote, cluster.psql_command("-c", f"\\copy tripboard.records from '{rows}'")))
    copy_and_keep = f"{copy_in} && sqlite3 {shlex_quote(a_plain)} < {shlex_quote(bookkeeping)}"

    def fresh_table_and_a():
        fresh_table()
        for suffix in ("-wal", "-shm"):
            if os.path.exists(a_plain + suffix):
                os.remove(a_plain + suffix)
        shutil.copyfile(a_plain_template, a_plain)

    push_a2, push_b2 = alternate(runs, lambda: run_once(a.command("sync", "now"), env=a.env, setup=fresh_a),
                                 lambda: run_once(["sh", "-c", copy_and_keep], setup=fresh_table_and_a))
    results.append(Result(f"push of {count:,} records, against the same rows copied in and the device's own bookkeeping",
                          "app sync now", "psql \\copy … from FILE && sqlite3 STORE < bookkeeping.sql (set-based, one transaction)",
                          push_a2, push_b2, "≤ 1.5×",
                          "B also acknowledges every record and keeps the server's copy of each field (sync_shadow) in A's store, "
                          "as the push must for later merges: one UPDATE … FROM json_each per table and one INSERT … SELECT for the "
                          "shadow, made from A's store after one push"))

    # Leave the server holding A's records (the last run may have been psql's), then device B.
    fresh_a()
    a.run("sync", "now")
    b.run("sync", "setup", "--server", cluster.conninfo, "--zone", ZONE, stdin=PASSPHRASE + "\n")
    b_template = os.path.join(root, "b-joined")
    b.save(b_template)
    # The rows B holds after a first sync — records and the server's copy of their fields — as
    # sqlite3 would write them set-based (one INSERT … SELECT over json_each a table, in one
    # transaction, the search triggers included) into an empty store in the clear.
    b.run("sync", "now")
    pulled_rows = os.path.join(root, "pulled-rows.json")
    columns = dump_rows(pulled_rows, plain_copy(b.command()[0], b.container, os.path.join(root, "b-pulled-plain.sqlite"), b.env),
                        ("trips", "places", "bookings", "sync_shadow"))
    inserts = os.path.join(root, "inserts.sql")
    with open(inserts, "w") as file:
        file.write(set_based_inserts(pulled_rows, columns))
    b.restore(b_template)
    peer = Device(release, os.path.join(root, "peer"))
    peer.run("container", "init")
    unseal(peer.command()[0], peer.container, peer.env)  # the peer's sqlite3 writes a store in the clear
    peer_template = os.path.join(root, "peer-empty")
    peer.save(peer_template)
    copied = os.path.join(root, "pulled.copy")
    pull_sql = (f"\\copy (SELECT kind, id, version, change_sequence, deleted, fields FROM tripboard.records "
                f"WHERE zone = '{ZONE}' AND NOT deleted ORDER BY change_sequence) to '{copied}'")
    peer_script = f"{' '.join(map(shlex_quote, cluster.psql_command('-c', pull_sql)))} && sqlite3 {shlex_quote(peer.store)} < {shlex_quote(inserts)}"
    pull_a, pull_b = alternate(runs, lambda: run_once(b.command("sync", "now"), env=b.env, setup=lambda: b.restore(b_template)),
                               lambda: run_once(["sh", "-c", peer_script], setup=lambda: peer.restore(peer_template)))
    pulled = int(b.run("container", "sqlite", "--readonly", "SELECT (SELECT count(*) FROM trips) + (SELECT count(*) FROM places) + "
                       "(SELECT count(*) FROM bookings)"))
    if pulled != count:
        raise SystemExit(f"bench: the first sync of B holds {pulled} of {count} records")
    peak = statistics.median(x[1] for x in pull_a) / 1024
    results.append(Result(f"first sync of a new device: pull of {count:,} records", "app sync now (new device)",
                          "psql \\copy (SELECT …) to FILE && sqlite3 STORE < inserts.sql (set-based, one transaction)", pull_a, pull_b,
                          "≤ 1.5× wall, peak RSS ≤ 50 MB", f"A's peak RSS {peak:.1f} MB (median; the larger of app and sync-agent); "
                          "B writes the rows A holds after a first sync — records and their shadow rows — one INSERT … SELECT over "
                          "json_each a table"))

    if getattr(args, "baseline", ""):
        results += against_baseline(args, root, cluster, source, count, runs, alternate, Result, run_once, a, a_template, b, b_template,
                                    empty_server)
    results.append(watch_latency(args, a, b, document, Result))
    return results


def against_baseline(args, root, cluster, source, count, runs, alternate, Result, run_once, a, a_template, b, b_template, empty_server):
    """The push and the first sync, each against another build's `app` doing the same: its own
    device A (joined, the same records imported) and its own new device B, on the same server."""
    baseline = os.path.abspath(args.baseline)
    old_a = Device(baseline, os.path.join(root, "baseline-a"))
    old_a.run("sync", "setup", "--server", cluster.conninfo, "--zone", ZONE, stdin=PASSPHRASE + "\n")
    old_a.run("import", source)
    old_a_template = os.path.join(root, "baseline-a-before-push")
    old_a.save(old_a_template)

    def fresh(device, template):
        def setup():
            empty_server()
            device.restore(template)
        return setup

    push_new, push_old = alternate(runs, lambda: run_once(a.command("sync", "now"), env=a.env, setup=fresh(a, a_template)),
                                   lambda: run_once(old_a.command("sync", "now"), env=old_a.env, setup=fresh(old_a, old_a_template)))
    results = [Result(f"push of {count:,} records, against the baseline build", "app sync now (this build)",
                      f"app sync now ({baseline})", push_new, push_old, "≤ 1.0×",
                      "each side's own device A, with the same records imported, restored before each run; empty zone")]
    # The server holding A's records (pushed by this build), then each build's new device B.
    fresh(a, a_template)()
    a.run("sync", "now")
    old_b = Device(baseline, os.path.join(root, "baseline-b"))
    old_b.run("sync", "setup", "--server", cluster.conninfo, "--zone", ZONE, stdin=PASSPHRASE + "\n")
    old_b_template = os.path.join(root, "baseline-b-joined")
    old_b.save(old_b_template)
    pull_new, pull_old = alternate(runs, lambda: run_once(b.command("sync", "now"), env=b.env, setup=lambda: b.restore(b_template)),
                                   lambda: run_once(old_b.command("sync", "now"), env=old_b.env, setup=lambda: old_b.restore(old_b_template)))
    results.append(Result(f"first sync of a new device: pull of {count:,} records, against the baseline build",
                          "app sync now (this build, new device)", f"app sync now ({baseline}, new device)", pull_new, pull_old,
                          "≤ 1.0×", "each build's own device B, joined and restored before each run"))
    return results


def shlex_quote(text):
    import shlex
    return shlex.quote(text)


def watch_latency(args, a, b, document, Result):
    """Both devices run `sync watch`; each round an `app trip edit` on A, then B's store is polled
    until the new name is there. The samples are seconds from the edit's start."""
    rounds = 5 if args.quick else 20
    trip = document["trips"][len(document["trips"]) // 2]["id"]
    watchers = [subprocess.Popen(device.command("sync", "watch"), env=device.env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL) for device in (a, b)]
    samples = []
    try:
        time.sleep(3)
        # B's store is sealed: read through `app container sqlite` (a few ms a look, within the
        # samples' resolution).
        query = f"SELECT name FROM trips WHERE id = '{trip}'"
        for index in range(rounds):
            name = f"Watched {index} {uuid.uuid4().hex[:6]}"
            started = time.perf_counter()
            subprocess.run(a.command("trip", "edit", trip, "--name", name), env=a.env, check=True, stdout=subprocess.DEVNULL)
            deadline = started + 30
            while b.run("container", "sqlite", "--readonly", query).strip() != name:
                if time.perf_counter() > deadline:
                    raise SystemExit("bench: an edit on A did not reach B's store within 30 s")
                time.sleep(0.002)
            samples.append((time.perf_counter() - started, 0))
            time.sleep(0.3)
    finally:
        for watcher in watchers:
            watcher.terminate()
            watcher.wait(timeout=60)
    median = statistics.median(s[0] for s in samples)
    result = Result(f"`sync watch`: an edit on A visible in B's store ({rounds} edits)", "trip edit on A → B's store",
                    "—", samples, [(1.0, 1)], "< 1 s, median",
                  f"median {median * 1000:.0f} ms, min {min(s[0] for s in samples) * 1000:.0f} ms, "
                  f"max {max(s[0] for s in samples) * 1000:.0f} ms; both devices run `sync watch` on the stores of the pull benchmark")
    result.absolute = True
    return result
