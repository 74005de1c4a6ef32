"""Scenario 9: three devices syncing through PostgreSQL."""
from .common import *  # noqa: F401,F403


PG_BIN = "/usr/lib/postgresql/15/bin"
SYNC_PASSPHRASE = b"torture passphrase, long enough\n"


class Postgres:
    """A throw-away PostgreSQL cluster on a Unix socket in the work directory (as `postgres` when
    root), with durable commits: an immediate stop (a network cut) loses nothing it acknowledged."""

    def __init__(self, ctx):
        self.dir = tempfile.mkdtemp(prefix="pg-", dir="/tmp")
        self.port = random.SystemRandom().randrange(20000, 60000)
        os.chmod(self.dir, 0o700)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
        result = self.tool("initdb", "-D", self.dir + "/data", "-A", "trust", "-U", "tripboard", "--no-sync", "-E", "UTF8",
                           "--locale=C")
        if result.status != 0:
            raise RuntimeError(f"initdb failed: {result.describe()}")
        self.start()

    @property
    def conninfo(self):
        return f"host={self.dir} port={self.port} dbname=postgres user=tripboard"

    def tool(self, name, *args, timeout=60):
        prefix = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] if os.geteuid() == 0 else []
        return run(prefix + [os.path.join(PG_BIN, name), *args], {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"},
                   None, timeout)

    def start(self):
        options = f"-c listen_addresses='' -k {self.dir} -p {self.port} -c fsync=off"
        process = subprocess.Popen((["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] if os.geteuid() == 0 else [])
                                   + [os.path.join(PG_BIN, "pg_ctl"), "-D", self.dir + "/data", "-o", options, "-l",
                                      self.dir + "/server.log", "-w", "-t", "30", "start"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"}, close_fds=True)
        if process.wait(timeout=60) != 0:
            raise RuntimeError("pg_ctl start failed: " + open(self.dir + "/server.log").read()[-2000:])

    def stop(self):
        self.tool("pg_ctl", "-D", self.dir + "/data", "-m", "immediate", "-w", "stop")

    def psql(self, sql):
        result = self.tool("psql", "-h", self.dir, "-p", str(self.port), "-U", "tripboard", "-d", "postgres", "-At", "-c", sql)
        return result.out.strip()

    def remove(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def synced_content(box):
    """What must be equal on every device: the live records without their sync metadata, and
    the attachments with their hashes."""
    result = box.app("export")
    if result.status != 0:
        return None, f"export: {result.describe()}"
    document = json.loads(result.out)
    content = {}
    for kind in ("trips", "places", "bookings"):
        rows = [{k: v for k, v in row.items() if k not in ("syncState", "remoteVersion", "updatedAt")}
                for row in document.get(kind, [])]
        content[kind] = sorted(rows, key=lambda row: row["id"])
    attachments = box.rows("SELECT id, booking_id, content_hash, byte_count, relative_path, state FROM attachments "
                           "WHERE trashed_at IS NULL AND state <> 'deleting' ORDER BY id")
    content["attachments"] = [{k: v for k, v in row.items() if k != "relative_path"} for row in attachments]
    problems = []
    for row in attachments:
        path = os.path.join(box.container, row["relative_path"])
        if row["state"] != "present" or not box.file_matches(row["relative_path"], row["byte_count"], row["content_hash"]):
            problems.append(f"attachment {row['id'][:8]} {row['state']}: its file does not match its hash")
    return content, "; ".join(problems)


def sync_device_ops(box, rng, acknowledged, report, label):
    """A few random edits on one device, some killed at a random moment."""
    trips = [row["id"] for row in box.rows("SELECT id FROM trips WHERE trashed_at IS NULL AND sync_state <> 'pendingDeletion'")]
    for _ in range(rng.randint(2, 5)):
        action = rng.choices(["add", "edit", "delete", "place", "booking", "ticket", "unfile"], [3, 4, 1, 2, 2, 2, 1])[0]
        if not trips and action != "add":
            action = "add"
        trip = rng.choice(trips) if trips else None
        filed = [row["id"] for row in box.rows("SELECT DISTINCT booking_id AS id FROM attachments WHERE trashed_at IS NULL "
                                               "AND booking_id IS NOT NULL AND state = 'present'")] if action == "unfile" else []
        if action == "unfile" and not filed:
            action = "ticket"
        if action == "add":
            argv = ["trip", "add", f"--name={random_text(rng)}", "--start", "2027-02-01", "--end", "2027-02-05"]
        elif action == "edit":
            argv = ["trip", "edit", trip, f"--notes={random_text(rng, 0, 30)}"] if rng.random() < 0.5 else \
                ["trip", "edit", trip, f"--name={random_text(rng)}"]
        elif action == "delete":
            argv = ["trip", "delete", trip, "--yes"]
        elif action == "place":
            argv = ["place", "add", "--trip", trip, f"--name={random_text(rng)}"]
        elif action == "unfile":
            # A booking with its ticket deleted: its blob is no live record's once the deletion is pushed.
            argv = ["booking", "delete", rng.choice(filed)]
        elif action == "booking":
            argv = ["booking", "add", "--trip", trip, "--kind", "train", f"--title={random_text(rng)}",
                    "--starts-at", f"2027-02-0{rng.randint(1, 5)}T10:00Z"]
        else:
            argv = None
        if argv is None:
            pdf = box.pdf(f"ticket-{rng.getrandbits(32):x}.pdf", rng, date="02 FEB 2027")
            command = box.argv("share-extension", pdf, "--trip", trip, "--json")
        else:
            command = box.argv("app", *argv)
        if rng.random() < 0.15:
            process = subprocess.Popen(command, env=box.env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
            time.sleep(rng.uniform(0, 0.3))
            kill_group(process)
            process.wait()
            if action == "delete":
                # A delete killed after its commit is a delete all the same: the trip may be gone, so
                # it is not this round's to edit any more (a place or booking on it would rightly fail).
                acknowledged["maybe deleted"].add(trip)
                trips.remove(trip)
            continue
        result = run(command, box.env())
        report.check(f"{label}: {action} exits 0", result.status == 0, result.describe())
        if result.status == 0 and action == "add":
            trips.append(result.out.strip())
            acknowledged["added"].add(result.out.strip())
        elif result.status == 0 and action == "delete":
            acknowledged["deleted"].add(trip)
            trips.remove(trip)


def scenario_sync(ctx, report, rng):
    """Three devices making random edits, deletions and ticket imports, each syncing with random
    kills and the server cut off mid-sync; after each round every device's export is identical,
    every attachment's file matches its hash, and nothing acknowledged is lost."""
    server = Postgres(ctx)
    devices = [Box(ctx, f"sync-{name}") for name in "abc"]
    try:
        result = devices[0].app("sync", "init-server", "--server", server.conninfo)
        if result.status != 0:
            raise RuntimeError(f"sync init-server failed: {result.describe()}")
        for box in devices:
            result = box.app("sync", "setup", "--server", server.conninfo, stdin=SYNC_PASSPHRASE)
            if result.status != 0:
                raise RuntimeError(f"sync setup failed: {result.describe()}")
        acknowledged = {"added": set(), "deleted": set(), "maybe deleted": set()}
        counts = {"killed syncs": 0, "server cuts": 0, "syncs": 0, "blobs collected": 0}
        blobs_seen = set()
        rounds = 3 if ctx.quick else 8
        for round_index in range(1, rounds + 1):
            label = f"sync round {round_index}"
            for box in devices:
                sync_device_ops(box, rng, acknowledged, report, label)
            order = devices[:] * 2
            rng.shuffle(order)
            cut = rng.randrange(len(order)) if rng.random() < 0.5 else None
            for index, box in enumerate(order):
                process = subprocess.Popen(box.argv("app", "sync", "now"), env=box.env(), stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
                counts["syncs"] += 1
                if index == cut:
                    time.sleep(rng.uniform(0.05, 0.5))
                    server.stop()
                    counts["server cuts"] += 1
                    status = process.wait(timeout=DEADLINE)
                    report.check(f"{label}: sync now with the server cut exits 0, 69 or 75", status in (0, 69, 75),
                                 f"exit {status}: {process.stderr.read().decode(errors='replace')[-300:]}")
                    server.start()
                elif rng.random() < 0.3:
                    time.sleep(rng.uniform(0.02, 0.3))
                    if process.poll() is None:
                        counts["killed syncs"] += 1
                    kill_group(process)
                    process.wait()
                else:
                    status = process.wait(timeout=DEADLINE)
                    report.check(f"{label}: sync now exits 0", status == 0,
                                 f"exit {status}: {process.stderr.read().decode(errors='replace')[-300:]}")
                process.stderr.close()
            # Converge: everyone syncs, without disturbance, until a whole pass moves nothing.
            for _ in range(4):
                moved = False
                for box in devices:
                    result = box.app("sync", "now", "--json")
                    if not report.check(f"{label}: converging sync exits 0", result.status == 0, result.describe()):
                        break
                    answer = json.loads(result.out)
                    moved |= answer["pulled"] > 0 or answer["pushed"] > 0 or answer["pending"] > 0 \
                        or answer["blobsDownloaded"] > 0 or answer["blobsUploaded"] > 0
                if not moved:
                    break
            contents = []
            for box in devices:
                content, problems = synced_content(box)
                report.check(f"{label}: {os.path.basename(box.dir)[:6]} attachments present with their hashes", not problems, problems)
                integrity = box.sqlite("PRAGMA integrity_check").out.strip()
                report.check(f"{label}: {os.path.basename(box.dir)[:6]} store integrity", integrity == "ok", integrity)
                contents.append(content)
            same = all(content == contents[0] for content in contents)
            detail = "" if same else json.dumps([{k: len(v) for k, v in c.items()} if c else None for c in contents])
            report.check(f"{label}: every device's export is identical", same, detail)
            if contents[0] is not None:
                live = {trip["id"] for trip in contents[0]["trips"]}
                lost = sorted(acknowledged["added"] - acknowledged["deleted"] - acknowledged["maybe deleted"] - live)
                back = sorted(acknowledged["deleted"] & live)
                report.check(f"{label}: no acknowledged trip lost", not lost, f"{len(lost)} missing: {lost[:3]}")
                report.check(f"{label}: no deleted trip back", not back, f"{len(back)} live again: {back[:3]}")
            duplicates = server.psql("SELECT count(*) - count(DISTINCT (kind, id)) FROM tripboard.records")
            report.check(f"{label}: no record twice on the server", duplicates == "0", duplicates)
            unbacked = server.psql("SELECT count(*) FROM tripboard.records r WHERE NOT r.deleted AND r.blob IS NOT NULL AND NOT EXISTS "
                                   "(SELECT 1 FROM tripboard.blobs b WHERE b.zone = r.zone AND b.name = r.blob AND b.complete)")
            report.check(f"{label}: every blob a live record names is on the server", unbacked == "0", unbacked)
            present = set(server.psql("SELECT name FROM tripboard.blobs").split())
            blobs_seen |= present
            counts["blobs collected"] = len(blobs_seen - present)
            # Every blob past the grace period from here on: the next round's syncs collect what no
            # live record names while the others import, delete, get killed and cut off.
            server.psql("UPDATE tripboard.blobs SET last_used = now() - interval '32 days'")
        report.info(f"{rounds} rounds, 3 devices: " + ", ".join(f"{name} {count}" for name, count in counts.items())
                    + f"; {len(acknowledged['added'])} trips added, {len(acknowledged['deleted'])} deleted")
    finally:
        for box in devices:
            if not (report.scenario_failed and ctx.keep):
                box.remove()
        server.remove()
    return None
