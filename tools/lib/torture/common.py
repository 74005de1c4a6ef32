"""What every torture scenario shares: running processes, a container to torture (`Box`), the
ledger of acknowledged writes, and the invariants checked after every round."""
import argparse
import copy
import hashlib
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sqlite3
import sys
import tempfile
import threading
import time
import traceback
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools", "lib"))
from ticket_pdf import ticket_pdf  # noqa: E402
from bench_migration import write_legacy  # noqa: E402

# Exit statuses each executable documents (docs/cli.md, docs/pdf-worker.md). 1 is "internal: a
# bug": never expected.
DOCUMENTED = {
    "app": {0, 64, 65, 66, 69, 73, 74, 75},
    "widget": {0, 64, 65, 66, 73, 74, 75},
    "share-extension": {0, 64, 65, 66, 69, 73, 74, 75},
    "pdf-worker": {0, 64, 66, 80, 81, 82, 83},
    "container-migration": {0, 64, 65, 66, 73, 74, 75},
}
FAILURE_STATUSES = {64, 65, 66, 69, 73, 74, 75}
DEADLINE = 60.0          # a command still running after this long has hung
CORRUPT_DEADLINE = 20.0  # the corrupt scenario's commands do little work: longer means a hang (a FIFO waited on)
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
PREF_KEYS = ["currency", "theme", "mapStyle", "showsVisitedPlaces", "cacheLimitMB"]
PREF_DEFAULTS = {"currency": "EUR", "theme": "system", "mapStyle": "standard", "showsVisitedPlaces": True,
                 "cacheLimitMB": 100}
PREF_CHOICES = {"currency": ["EUR", "USD", "JPY", "GBP", "CHF", "usd"], "theme": ["system", "light", "dark"],
                "mapStyle": ["standard", "satellite", "hybrid"], "showsVisitedPlaces": ["true", "false", "on", "0"],
                "cacheLimitMB": ["1", "50", "100", "250"]}
SCENARIOS = ["load", "stall", "faults", "migration", "full", "corrupt", "fuzz", "backup", "sync", "sync-model"]

# Checks that fail because of a TripBoard bug that is reported but not fixed yet. A failing check whose
# name matches one of these patterns is printed as a known failure and not counted as failed; a
# known failure that starts passing is reported so the entry can be removed.
KNOWN_FAILURES = [
    # (regular expression on the check name, explanation). None open: the three bugs the first
    # runs found (an extension calling a lost store "being updated", an import failing after its
    # commit without saying so, control characters echoed in errors) and the sync model's
    # deletions after the server forgot (sealed deletions and the ledger) are fixed;
    # docs/torture.md tells their story.
]


def pref_value(key, text):
    """The value `prefs list --json` shows after `prefs set KEY text`."""
    if key == "currency":
        return text.upper()
    if key == "showsVisitedPlaces":
        return text.lower() in ("true", "yes", "on", "1")
    if key == "cacheLimitMB":
        return int(text)
    return text


def blake2b_file(path):
    digest = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def plaintext_hash(path, keys):
    """BLAKE2b-256 of a container file's plaintext: a sealed file opened with `keys`
    (`sealed_file.class_keys`: the device that sealed it), one in the clear as it is."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(sealed_file.MAGIC):
        data = sealed_file.open_sealed(data, *keys)
    return hashlib.blake2b(data, digest_size=32).hexdigest()


sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sealed_file  # noqa: E402  (tools/lib: the second implementation of sealed files)
import sealed_store  # noqa: E402  (tools/lib: the second implementation of sealed stores)


# MARK: - Reporting


class Report:
    def __init__(self, verbose):
        self.verbose = verbose
        self.passed = self.failed = self.skipped = 0
        self.known = []
        self.failures = []
        self.known_passed = {}  # known-failure pattern -> checks it names that passed
        self.lock = threading.Lock()
        self.scenario_failed = False

    def check(self, name, ok, detail=""):
        with self.lock:
            known = next((why for pattern, why in KNOWN_FAILURES if re.search(pattern, name)), None)
            if ok:
                self.passed += 1
                if known:
                    self.known_passed[known] = self.known_passed.get(known, 0) + 1
                if self.verbose:
                    print(f"  ok    {name}", flush=True)
            elif known:
                self.known.append((name, known, detail))
                print(f"  KNOWN {name}: {detail[:600]}\n        known failure: {known}", flush=True)
                return True  # reported, not a failure of this run
            else:
                self.failed += 1
                self.scenario_failed = True
                self.failures.append((name, detail))
                print(f"  FAIL  {name}: {detail}", flush=True)
        return ok

    def skip(self, name, reason):
        with self.lock:
            self.skipped += 1
            print(f"  SKIP  {name}: {reason}", flush=True)

    def info(self, text):
        print(f"  {text}", flush=True)


# MARK: - Running processes


class Result:
    def __init__(self, argv, returncode, stdout, stderr, elapsed, hung=False, killed=False):
        self.argv, self.returncode, self.stdout, self.stderr = argv, returncode, stdout, stderr
        self.elapsed, self.hung, self.killed = elapsed, hung, killed

    @property
    def status(self):
        return self.returncode if self.returncode is not None and self.returncode >= 0 else None

    @property
    def signal(self):
        return -self.returncode if self.returncode is not None and self.returncode < 0 else None

    @property
    def out(self):
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self):
        return self.stderr.decode("utf-8", "replace")

    def describe(self):
        words = [w if isinstance(w, str) else w.decode("utf-8", "replace") for w in self.argv]
        shown = " ".join((w[:60] + "…") if len(w) > 60 else w for w in words)
        what = "hung (killed after the deadline)" if self.hung else (
            f"killed by signal {self.signal}" if self.signal else f"exit {self.status}")
        tail = self.err.strip().splitlines()[-3:]
        return f"`{shown}` → {what} after {self.elapsed:.2f} s; stderr: {' | '.join(tail)[:400]!r}"

    def one_line_error(self):
        """A failure's stderr: exactly one `error:` line, anything else only `warning:` lines."""
        lines = [line for line in self.err.split("\n") if line.strip()]
        errors = [line for line in lines if line.startswith("error: ")]
        others = [line for line in lines if not line.startswith(("error: ", "warning: "))]
        return len(errors) == 1 and not others


def run(argv, env=None, stdin=None, timeout=DEADLINE, cwd=None):
    started = time.monotonic()
    return collect(spawn(argv, env, stdin, cwd), argv, started, stdin, timeout)


def spawn(argv, env=None, stdin=None, cwd=None):
    """Starts `argv` in a session of its own (so `kill_group` reaches its children), its output piped."""
    return subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True)


def collect(process, argv, started, stdin=None, timeout=DEADLINE):
    """Feeds `stdin`, waits up to `timeout` (then kills the group: `hung`), and returns the Result."""
    hung = False
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = True
        kill_group(process)
        stdout, stderr = process.communicate()
    return Result(argv, process.returncode, stdout, stderr, time.monotonic() - started, hung)


def wait_or_kill(process, timeout):
    """Waits up to `timeout` for a child whose stderr is piped; kills its group past that. Returns
    (exit status or "hung", its stderr)."""
    try:
        status = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.wait()
        status = "hung"
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    return status, stderr


def kill_group(process, sig=signal.SIGKILL):
    """Signals the process group of a child started with start_new_session (its pgid is its pid)."""
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


# MARK: - A container to torture


class Box:
    """A fresh directory holding a container, a device directory and a machine-id file."""

    def __init__(self, ctx, name, container=None, device_of=None):
        """`device_of`: another box whose device this one is (a container that box made or
        restored is sealed under that device's keys)."""
        self.ctx = ctx
        self.dir = tempfile.mkdtemp(prefix=name + "-", dir=ctx.work)
        self.container = container or os.path.join(self.dir, "container")
        if device_of is not None:
            self.device, self.machine_id = device_of.device, device_of.machine_id
            return
        self.device = os.path.join(self.dir, "device")
        self.machine_id = os.path.join(self.dir, "machine-id")
        with open(self.machine_id, "w") as handle:
            handle.write("0123456789abcdef0123456789abcdef\n")

    @property
    def store(self):
        return os.path.join(self.container, "store", "TripBoard.sqlite")

    def file_matches(self, relative, byte_count, content_hash):
        """Whether the container file `relative` holds `byte_count` bytes hashing to
        `content_hash`: sealed, it is opened with this box's device keys (`tools/lib/sealed_file.py`)."""
        path = os.path.join(self.container, relative)
        if os.path.islink(path) or not os.path.isfile(path):
            return False
        with open(path, "rb") as handle:
            data = handle.read()
        if data.startswith(sealed_file.MAGIC):
            try:
                data = sealed_file.open_sealed(data, *sealed_file.class_keys(self.device, self.machine_id))
            except Exception:
                return False
        return len(data) == byte_count and hashlib.blake2b(data, digest_size=32).hexdigest() == content_hash

    @property
    def keychain_db(self):
        return os.path.join(self.container, "keychain", "Keychain.sqlite")

    def env(self, extra=None):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TZ": "UTC",
               "HOME": self.dir, "TRIPBOARD_CONTAINER": self.container, "TRIPBOARD_DEVICE_DIR": self.device,
               "TRIPBOARD_MACHINE_ID_FILE": self.machine_id, "EDITOR": "true"}
        env.update(extra or {})
        return env

    def exe(self, name):
        return os.path.join(self.ctx.bin, name)

    def argv(self, exe, *args):
        return [self.exe(exe), *args]

    def app(self, *args, stdin=None, env=None, timeout=DEADLINE):
        return run(self.argv("app", *args), self.env(env), stdin, timeout)

    def widget(self, *args, env=None, timeout=DEADLINE):
        return run(self.argv("widget", *args), self.env(env), None, timeout)

    def share(self, *args, env=None, timeout=DEADLINE):
        return run(self.argv("share-extension", *args), self.env(env), None, timeout)

    def sqlite_argv(self, db=None, options=()):
        """The sqlite3 shell on `db` (the store by default) with `options` (sqlite3's): through
        `app container sqlite` for the container's sealed store or keychain database (the
        supported way to read them: docs/cli.md), sqlite3 itself for any other file. The
        database goes last: what follows it is SQL."""
        db = db or self.store
        for database, flag in ((self.store, []), (self.keychain_db, ["--keychain"])):
            if os.path.abspath(db) == os.path.abspath(database):
                return self.argv("app", "container", "sqlite", *flag, "--", *options)
        return ["sqlite3", *options, db]

    def sqlite_env(self):
        return self.env()

    def sqlite(self, sql, db=None, as_json=False, busy_ms=10000):
        """The sqlite3 shell on the store, keeping -wal and -shm when it closes last, as TripBoard does."""
        options = ["-cmd", ".output /dev/null", "-cmd", ".filectrl persist_wal 1", "-cmd", ".output stdout",
                   "-cmd", f".timeout {busy_ms}"]
        if as_json:
            options.append("-json")
        return run(self.sqlite_argv(db, options) + [sql], self.sqlite_env(), None, 60)

    def rows(self, sql, db=None):
        result = self.sqlite(sql, db, as_json=True)
        if result.status != 0:
            raise RuntimeError(f"sqlite3 failed: {result.describe()}")
        return json.loads(result.out) if result.out.strip() else []

    def ok(self, *args, stdin=None, env=None):
        """Runs `app ARGS`, which must succeed; returns stdout stripped."""
        result = self.app(*args, stdin=stdin, env=env)
        if result.status != 0:
            raise RuntimeError(f"setup step failed: {result.describe()}")
        return result.out.strip()

    def pdf(self, name, rng, size=0, date="12 DEC 2026"):
        """A ticket PDF with unique text (so unique bytes), in the box directory."""
        path = os.path.join(self.dir, name)
        lines = ["BOARDING PASS", f"Flight TP {rng.randrange(1000, 9999)}", "From LIS Lisbon To CDG Paris",
                 f"Date {date} Departure 07:35", f"Booking reference {uuid.UUID(int=rng.getrandbits(128)).hex[:6].upper()}",
                 f"Serial {rng.getrandbits(64):x}"]
        with open(path, "wb") as handle:
            handle.write(ticket_pdf(lines, 1, size))
        return path

    def clone(self, name):
        """A copy of this box (container and device directory), made while nothing runs in it."""
        other = Box(self.ctx, name)
        shutil.rmtree(other.dir)
        shutil.copytree(self.dir, other.dir, symlinks=True)
        return other

    def remove(self):
        subprocess.run(["chmod", "-R", "u+rwX", self.dir], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


# MARK: - The ledger of acknowledged writes


DELETED = ("<deleted>",)


class Ledger:
    """What commands that exited 0 wrote, and what a killed command may have written.

    Each record holds the set of states it may be in: an acknowledged write replaces the set with
    its value, a killed command adds its value to the set, a failed command changes nothing."""

    def __init__(self):
        self.lock = threading.Lock()
        self.trips = {}        # id -> set of (name, start, end, notes) or DELETED
        self.children = {}     # place/booking id -> (kind, trip id)
        self.attachments = {}  # id -> (hash, size, relative path, trip id)
        self.prefs = {key: {PREF_DEFAULTS[key]} for key in PREF_KEYS}
        self.secrets = {}      # (service, account) -> set of bytes (None = may be absent)

    def copy(self):
        other = Ledger()
        other.trips = copy.deepcopy(self.trips)
        other.children = dict(self.children)
        other.attachments = dict(self.attachments)
        other.prefs = copy.deepcopy(self.prefs)
        other.secrets = copy.deepcopy(self.secrets)
        return other

    def record(self, table, key, value, outcome):
        """outcome: 'ok' (acknowledged), 'killed' (may or may not be there), 'failed' (must not be)."""
        with self.lock:
            if outcome == "ok":
                table[key] = {value}
            elif outcome == "killed":
                table.setdefault(key, set()).add(value)

    def trip(self, trip_id, values, outcome):
        with self.lock:
            if trip_id not in self.trips and outcome != "ok":
                self.trips[trip_id] = {DELETED}  # a new record that may not have been written
        self.record(self.trips, trip_id, values, outcome)

    def pref(self, key, text, outcome):
        self.record(self.prefs, key, pref_value(key, text), outcome)

    def secret(self, service, account, value, outcome):
        with self.lock:
            if outcome == "killed" and (service, account) not in self.secrets:
                self.secrets[(service, account)] = {None}
        self.record(self.secrets, (service, account), value, outcome)

    def maybe_deleted(self, trip_id):
        return DELETED in self.trips.get(trip_id, {DELETED})

    def live_trip(self, rng, trip_ids):
        """One of trip_ids that is certainly not deleted, or None."""
        with self.lock:
            live = [t for t in trip_ids if DELETED not in self.trips.get(t, {DELETED})]
        return rng.choice(live) if live else None


def outcome_of(result, killed=False):
    if killed and result.signal == signal.SIGKILL:
        return "killed"
    if result.status == 0:
        return "ok"
    return "failed"


# MARK: - Invariants


def check_invariants(box, ledger, report, label, repair=True):
    """integrity_check and foreign_key_check clean, every acknowledged write present, every attachment
    row with its file, no orphan after `container check --repair --grace 0`, preferences parseable,
    keychain items readable. Run only while no other process uses the container. Without a ledger,
    only the health of what is there is checked."""
    if ledger is None:
        ledger = Ledger()
        ledger.prefs = {key: None for key in PREF_KEYS}
    ok = True
    result = box.sqlite("PRAGMA integrity_check; PRAGMA foreign_key_check;")
    ok &= report.check(f"{label}: store integrity_check and foreign_key_check clean",
                       result.status == 0 and result.out.strip() == "ok", result.describe() + " stdout: " + result.out[:300])
    if os.path.exists(box.keychain_db):
        result = box.sqlite("PRAGMA integrity_check;", db=box.keychain_db)
        ok &= report.check(f"{label}: keychain integrity_check clean",
                           result.status == 0 and result.out.strip() == "ok", result.describe() + " " + result.out[:300])
    try:
        trips = {row["id"]: row for row in box.rows(
            "SELECT id, name, start_date, end_date, notes, sync_state, trashed_at FROM trips")}
        places = {row["id"]: row for row in box.rows("SELECT id, trip_id, sync_state FROM places")}
        bookings = {row["id"]: row for row in box.rows("SELECT id, trip_id, sync_state FROM bookings")}
        attachments = box.rows("SELECT id, booking_id, byte_count, content_hash, relative_path, state FROM attachments")
    except (RuntimeError, ValueError) as error:
        return report.check(f"{label}: store readable by sqlite3", False, str(error))

    problems = []
    for trip_id, possible in ledger.trips.items():
        row = trips.get(trip_id)
        # Deleted: gone, a tombstone, or (schema 2) in the trash, where `trip delete` now puts it.
        actual = DELETED if row is None or row["sync_state"] == "pendingDeletion" or row["trashed_at"] is not None else (
            row["name"], row["start_date"], row["end_date"], row["notes"])
        if actual not in possible:
            problems.append(f"trip {trip_id} is {actual}, expected one of {sorted(map(str, possible))[:4]}")
    for child_id, (kind, trip_id) in ledger.children.items():
        row = (places if kind == "place" else bookings).get(child_id)
        if row is None and not ledger.maybe_deleted(trip_id):
            problems.append(f"acknowledged {kind} {child_id} of live trip {trip_id} is missing")
        elif row is not None and row["trip_id"] != trip_id:
            problems.append(f"{kind} {child_id} moved to trip {row['trip_id']}")
    by_id = {row["id"]: row for row in attachments}
    for attachment_id, (digest, size, relative, trip_id) in ledger.attachments.items():
        row = by_id.get(attachment_id)
        if row is None:
            if not ledger.maybe_deleted(trip_id):
                problems.append(f"acknowledged attachment {attachment_id} has no row")
        elif (row["content_hash"], row["byte_count"], row["relative_path"]) != (digest, size, relative):
            problems.append(f"attachment {attachment_id} row differs from what the import acknowledged: {row}")
    ok &= report.check(f"{label}: every acknowledged trip, place, booking and attachment present", not problems,
                       "; ".join(problems[:6]))

    problems = []
    for row in attachments:
        if row["state"] != "present":
            problems.append(f"attachment {row['id']} is {row['state']}")
            continue
        path = os.path.join(box.container, row["relative_path"])
        if os.path.islink(path) or not os.path.isfile(path):
            problems.append(f"attachment {row['id']}: no file {row['relative_path']}")
        elif not box.file_matches(row["relative_path"], row["byte_count"], row["content_hash"]):
            problems.append(f"attachment {row['id']}: {row['relative_path']} has the wrong size or hash")
    ok &= report.check(f"{label}: every attachment row has its file with the recorded size and BLAKE2b",
                       not problems, "; ".join(problems[:6]))

    if repair:
        result = box.app("container", "check", "--repair", "--grace", "0")
        after = box.app("container", "check", "--grace", "0", "--json")
        leftovers = []
        named = {row["relative_path"] for row in box.rows("SELECT relative_path FROM attachments")}
        # attachments/recovered/ is where the repair quarantines orphans (an import killed between
        # publishing its file and committing its row): kept for the user, not a leftover.
        for directory, _, files in os.walk(os.path.join(box.container, "attachments")):
            if os.path.relpath(directory, box.container).split(os.sep)[:2] == ["attachments", "recovered"]:
                continue
            for name in files:
                relative = os.path.relpath(os.path.join(directory, name), box.container)
                if relative not in named:
                    leftovers.append(relative)
        staging = os.path.join(box.container, "tmp")
        leftovers += ["tmp/" + name for name in (os.listdir(staging) if os.path.isdir(staging) else [])]
        # `recovered` lists what attachments/recovered/ keeps: informational, never a problem.
        clean = after.status == 0 and all(not value for key, value in json.loads(after.out or "{}").items() if key != "recovered")
        ok &= report.check(f"{label}: no orphan or leftover after `container check --repair --grace 0`",
                           result.status in (0, 65) and clean and not leftovers,
                           f"repair: {result.describe()} {result.out[-300:]!r}; check: {after.describe()} {after.out[-400:]!r}; "
                           f"files: {leftovers[:5]}")

    result = box.app("prefs", "list", "--json")
    problems = []
    try:
        prefs = json.loads(result.out) if result.status == 0 else None
    except ValueError:
        prefs = None
    if prefs is None or set(prefs) < set(PREF_KEYS):
        problems.append(f"prefs list --json: {result.describe()} {result.out[:200]!r}")
    else:
        for key in PREF_KEYS:
            if ledger.prefs[key] is not None and prefs[key] not in ledger.prefs[key]:
                problems.append(f"{key} is {prefs[key]!r}, expected one of {sorted(map(str, ledger.prefs[key]))}")
    if "warning" in result.err:
        problems.append(f"warning while reading preferences: {result.err.strip()[:200]}")
    moved = [name for name in os.listdir(os.path.join(box.container, "preferences")) if ".corrupt-" in name] \
        if os.path.isdir(os.path.join(box.container, "preferences")) else []
    if moved:
        problems.append(f"preferences were moved aside as unreadable: {moved}")
    ok &= report.check(f"{label}: preferences parseable with the acknowledged values", not problems, "; ".join(problems))

    problems = []
    for (service, account), possible in sorted(ledger.secrets.items()):
        result = box.app("keychain", "get", service, account)
        value = result.stdout if result.status == 0 else (None if result.status == 66 else "<error>")
        if value not in possible:
            problems.append(f"keychain get {service} {account}: {result.describe()}")
    ok &= report.check(f"{label}: every keychain item readable with an acknowledged value", not problems,
                       "; ".join(problems[:4]))
    return ok


def snapshot(root, contents=True, skip=("-shm",)):
    """Every path below root: kind, mode and (for files) size and content hash (or mtime when
    contents is False). `skip`: name endings to leave out (the WAL index changes on reads)."""
    state = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            if name.endswith(skip):
                continue
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[relative] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                if contents:
                    try:
                        with open(path, "rb") as handle:
                            digest = hashlib.sha1(handle.read()).hexdigest()
                    except OSError as error:
                        digest = f"unreadable {error.errno}"
                    state[relative] = ("file", stat.S_IMODE(info.st_mode), info.st_size, digest)
                else:
                    state[relative] = ("file", stat.S_IMODE(info.st_mode), info.st_size, info.st_mtime_ns)
            else:
                state[relative] = ("dir" if stat.S_ISDIR(info.st_mode) else "other", stat.S_IMODE(info.st_mode))
    return state


def diff(before, after):
    changes = [f"+{k}" for k in after if k not in before] + [f"-{k}" for k in before if k not in after]
    changes += [f"~{k}" for k in before if k in after and before[k] != after[k]]
    return sorted(changes)


def seeded_box(ctx, name, rng, ledger, trips=3, attachment=True):
    """A container with trips, a place and a booking each, preferences, two keychain items and an
    attachment, all recorded in the ledger."""
    box = Box(ctx, name)
    ids = []
    for index in range(trips):
        values = (f"Trip {index} {rng.choice(['Lisbon', 'Kyoto', 'Zürich', '東京'])}", "2026-12-10", "2026-12-20",
                  f"seed notes {index}")
        trip_id = box.ok("trip", "add", f"--name={values[0]}", "--start", values[1], "--end", values[2], f"--notes={values[3]}")
        ledger.trip(trip_id, values, "ok")
        ids.append(trip_id)
        ledger.children[box.ok("place", "add", "--trip", trip_id, "--name", f"Place {index}")] = ("place", trip_id)
        ledger.children[box.ok("booking", "add", "--trip", trip_id, "--kind", "hotel", "--title", f"Hotel {index}",
                               "--starts-at", "2026-12-11T15:00Z")] = ("booking", trip_id)
    box.ok("prefs", "set", "currency", "usd")
    ledger.pref("currency", "usd", "ok")
    box.ok("prefs", "set", "theme", "dark")
    ledger.pref("theme", "dark", "ok")
    for service in ("api.example.com", "tripboard.seed"):
        secret = f"secret-{rng.getrandbits(64):x}".encode()
        box.ok("keychain", "set", service, "ana@example.com", stdin=secret)
        ledger.secret(service, "ana@example.com", secret, "ok")
    if attachment:
        pdf = box.pdf("seed.pdf", rng)
        result = box.share(pdf, "--trip", ids[0], "--json")
        if result.status != 0:
            raise RuntimeError(f"setup import failed: {result.describe()}")
        record_attachment(ledger, pdf, json.loads(result.out), ids[0])
    return box, ids


def record_attachment(ledger, pdf, answer, trip_id):
    attachment = answer["attachment"]
    ledger.attachments[attachment["id"]] = (attachment["contentHash"], attachment["byteCount"],
                                            attachment["relativePath"], trip_id)
    return attachment["contentHash"] == blake2b_file(pdf) and attachment["byteCount"] == os.path.getsize(pdf)


def random_text(rng, low=1, high=40, multiline=False):
    """Random user text. It can come out as "-q", which the command line refuses as a separate value
    by design (docs/cli.md, Conventions): callers pass it as `--option=VALUE`."""
    alphabet = "abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789-_'.,éüßçøåñ東京大阪Ωπ€🚆✈"
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))
    if multiline and rng.random() < 0.3:
        text += "\nsecond line\twith a tab"
    return text.strip() or "x"


def random_dates(rng):
    start = rng.randrange(0, 700)
    length = rng.randrange(0, 15)
    day = lambda offset: time.strftime("%Y-%m-%d", time.gmtime(1796083200 + offset * 86400))  # from 2026-12-01
    return day(start), day(start + length)
