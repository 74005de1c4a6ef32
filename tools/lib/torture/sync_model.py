"""Scenario 10: sync-model — a model-based randomized sync test.

Each run: 3–5 devices (containers) joined to a fresh zone of one PostgreSQL server make random
changes to trips, places, bookings, attachments and migratable keychain items and sync in a random
order, while faults are injected: `sync now` SIGKILLed at a random moment or at a named crash
point, the server stopped mid-sync, restored from an older dump or losing a row, a device joining
late, reinstalled, offline for long stretches, clocks skewed per device. A reference model of what
every command did (and when, by the clock the device was given) says what the devices must end
with; after a settle phase (every device `sync now --compare` in turn until a pass moves nothing)
the invariants are checked. Live stores are read only through `app`'s own commands (never
`sqlite3`). docs/torture.md, "sync-model", describes the model and the invariants.

The server faults are `ServerMutation`s in `SERVER_MUTATIONS`: a name, the probability that a run
uses it, how many times, and a function (server, zone, rng, model) that changes the server and
tells the model what it did (`model.server_forgot…`). A hostile mode adds its mutations there.
"""
from .common import *  # noqa: F401,F403
from .sync import Postgres, SYNC_PASSPHRASE


CRASH_POINTS = ["sync.batch-saved", "sync.pushed", "sync.page-applied", "sync.blob-chunk-written"]
SERVER_CUT_STATUSES = {0, 69, 75}  # a sync the server went away under (docs/sync.md, When things go wrong)
MAX_SKEW_MS = 120_000
CLOCK_NOISE_MS = 1000  # what a learned clock offset may be off by (docs/sync.md, Clocks)
SETTLE_PASSES = 6
# The accessibilities that travel; an item's value is checked together with the one it was set with.
MIGRATABLE = ("when-unlocked", "after-first-unlock")
KEYCHAIN_ITEMS = [("api.example.com", "ana@example.com"), ("tripboard.model", "bob"), ("mail.example.org", "ana"),
                  ("vpn.example.net", "ana@example.com")]
KINDS = ("trip", "place", "booking", "attachment")
# The fields each kind is compared on (the sync fields; a trip's start and end are one value, `dates`).
FIELDS = {
    "trip": ("name", "dates", "notes"),
    "place": ("tripId", "name", "city", "visited"),
    "booking": ("tripId", "kind", "title", "startsAt", "endsAt", "zone", "reference", "seat"),
    "attachment": ("bookingId", "contentHash", "byteCount", "originalFilename", "contentType", "pageCount"),
}
# How a run's step is chosen (relative weights). Edits, deletions and restores need something on
# the device: one that has nothing for it becomes an add (a restore with an empty trash, an edit).
STEP_WEIGHTS = {
    "trip add": 3, "trip edit": 5, "trip delete": 1.2,
    "place add": 2.5, "place edit": 3, "place delete": 1,
    "booking add": 2, "booking edit": 3, "booking delete": 1,
    "ticket": 0.5, "attachment delete": 0.4, "attachment move": 1, "booking merge": 0.8, "trash restore": 1.5,
    "keychain set": 2, "keychain delete": 0.7,
    "sync": 10,
}


def iso_ms(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def short(value, width=28):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= width else text[:width - 1] + "…"


def record_fields(kind, row):
    """The compared fields of an export, attachment list or `--json` object."""
    if kind == "trip":
        return {"name": row["name"], "dates": (row["startDate"], row["endDate"]), "notes": row["notes"]}
    return {field: row.get(field) for field in FIELDS[kind]}


def conflict_value(field, value):
    """A `sync conflicts --json` value as the model writes it (a trip's dates: {start, end})."""
    if field == "dates" and isinstance(value, dict):
        return (value.get("start"), value.get("end"))
    return value


# MARK: - Server mutations


class ServerMutation:
    """A fault done to the server between two steps. `apply(server, zone, rng, model)` returns a
    line for the run's log (or None when it found nothing to do) and tells the model what the
    server lost; `times` is how many steps of a run that uses it call it."""

    def __init__(self, name, probability, times, apply):
        self.name, self.probability, self.times, self.apply = name, probability, times, apply


def stop_during_sync(server, zone, rng, model):
    """`pg_ctl -m immediate` while a device syncs, then started again: that sync exits 0, 69 or 75."""
    device = model.random_online_device(rng)
    if device is None:
        return None
    delay = rng.uniform(0.0, 0.06)

    def cut():
        time.sleep(delay)
        server.stop()
    model.sync(device, cut=cut)
    server.start()
    return f"server stopped {delay * 1000:.0f} ms into {device.name}'s sync, started again"


def restore_older_dump(server, zone, rng, model):
    """The first call takes a dump (`pg_dump -Fc -n tripboard`); a later one puts it back
    (`DROP SCHEMA tripboard CASCADE`, `pg_restore`): what the server acknowledged since is gone."""
    if not model.dumps or (len(model.dumps) < 2 and rng.random() < 0.25):
        path = os.path.join(server.dir, f"dump-{zone}-{len(model.dumps)}.pgdump")
        result = server.tool("pg_dump", "-h", server.dir, "-p", str(server.port), "-U", "tripboard", "-Fc", "-n", "tripboard",
                             "-f", path, "postgres")
        if result.status != 0:
            raise RuntimeError(f"pg_dump failed: {result.describe()}")
        model.dumps.append((path, model.step, set(model.server_known)))
        return f"server dumped (dump {len(model.dumps) - 1})"
    index = rng.randrange(len(model.dumps))
    path, step, known = model.dumps[index]
    server.psql("DROP SCHEMA tripboard CASCADE")
    result = server.tool("pg_restore", "-h", server.dir, "-p", str(server.port), "-U", "tripboard", "-d", "postgres",
                         "--exit-on-error", path)
    if result.status != 0:
        raise RuntimeError(f"pg_restore failed: {result.describe()}")
    model.server_rolled_back(known)
    return f"server restored from dump {index} (taken at step {step})"


def lose_row(server, zone, rng, model):
    """One row of the zone's records deleted on the server (a record or a tombstone it forgets)."""
    rows = [line.split("|") for line in server.psql(
        f"SELECT kind, id, deleted FROM tripboard.records WHERE zone = '{zone}' ORDER BY kind, id").splitlines() if line]
    if not rows:
        return None
    kind, record_id, deleted = rng.choice(sorted(rows, key=lambda row: model.order(row[1])))
    server.psql(f"DELETE FROM tripboard.records WHERE zone = '{zone}' AND kind = '{kind}' AND id = '{record_id}'")
    model.server_forgot(kind, record_id)
    return f"server lost the row of {kind} {record_id[:8]}{' (a tombstone)' if deleted == 't' else ''}"


SERVER_MUTATIONS = [
    ServerMutation("server stopped mid-sync", 0.35, (1, 2), stop_during_sync),
    ServerMutation("server restored from an older dump", 0.35, (2, 3), restore_older_dump),
    ServerMutation("server lost a row", 0.35, (1, 2), lose_row),
]


# MARK: - A server that lies (hostile runs)


def live_rows(server, zone):
    """(kind, id, version, fields text) of the zone's live rows a device wrote (not a row the
    server grew: its fields would not fit in a command line)."""
    return [line.split("|", 3) for line in server.psql(
        f"SELECT kind, id, version, fields::text FROM tripboard.records WHERE zone = '{zone}' AND NOT deleted "
        "AND octet_length(fields::text) < 1000000 ORDER BY kind, id").splitlines() if line]


def renumber(server, zone, kind, record_id, fields_sql, deleted="deleted"):
    """Writes `fields_sql` into the row under the next version and a new change sequence, as a
    push would number it, so that every device's feed brings it."""
    server.psql(f"""
        UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = '{zone}';
        UPDATE tripboard.records SET fields = {fields_sql}, deleted = {deleted}, version = version + 1,
            change_sequence = (SELECT change_sequence FROM tripboard.zones WHERE name = '{zone}')
        WHERE zone = '{zone}' AND kind = '{kind}' AND id = '{record_id}'""")


def remember_rows(server, zone, model):
    """Keeps the sealed fields of every live row, and every sealed deletion, as they are now:
    what a replay serves later."""
    for kind, record_id, _, fields in live_rows(server, zone):
        kept = model.remembered.setdefault((kind, record_id), [])
        if fields not in kept:
            kept.append(fields)
    for line in server.psql(f"SELECT kind, id, fields::text FROM tripboard.records WHERE zone = '{zone}' AND deleted "
                            "AND fields ? 'deletion' ORDER BY kind, id").splitlines():
        if line:
            kind, record_id, fields = line.split("|", 2)
            model.remembered_deletions[(kind, record_id)] = fields


def forge_deletion(server, zone, rng, model):
    """A live row marked deleted by the server itself (no sealed deletion): every device that
    holds the record must refuse it and send the record again; nothing is deleted."""
    remember_rows(server, zone, model)
    rows = live_rows(server, zone)
    if not rows:
        return None
    kind, record_id, _, _ = rng.choice(rows)
    renumber(server, zone, kind, record_id, "'{}'::jsonb", deleted="true")
    model.forged(kind, record_id, "unsealedDeletion", "{}")
    model.counts["forged deletions"] += 1
    return f"server marked {kind} {record_id[:8]} deleted (no sealed deletion)"


def replay_deletion(server, zone, rng, model):
    """A sealed deletion the server saw once, served again against the record now live (brought
    back from the trash since): devices must refuse it."""
    remember_rows(server, zone, model)
    live = {(kind, record_id) for kind, record_id, _, _ in live_rows(server, zone)}
    candidates = sorted(key for key in model.remembered_deletions if key in live)
    if not candidates:
        return "server remembered the zone's sealed deletions (none to replay yet)"
    kind, record_id = rng.choice(candidates)
    fields = model.remembered_deletions[(kind, record_id)]
    renumber(server, zone, kind, record_id, "'" + fields.replace("'", "''") + "'::jsonb", deleted="true")
    model.forged(kind, record_id, "replayedDeletion", fields)
    model.counts["replayed deletions"] += 1
    return f"server replayed an old sealed deletion of {kind} {record_id[:8]}"


def replay_old_value(server, zone, rng, model):
    """An older sealed copy of a record served again under a new version number (a rollback):
    every device that holds the newer value must refuse it and send its own again."""
    remember_rows(server, zone, model)
    current = {(kind, record_id): fields for kind, record_id, _, fields in live_rows(server, zone)}
    candidates = sorted(key for key, kept in model.remembered.items() if key in current and any(f != current[key] for f in kept))
    if not candidates:
        return "server remembered the zone's sealed values (nothing older to serve yet)"
    kind, record_id = rng.choice(candidates)
    older = rng.choice([f for f in model.remembered[(kind, record_id)] if f != current[(kind, record_id)]])
    renumber(server, zone, kind, record_id, "'" + older.replace("'", "''") + "'::jsonb")
    model.forged(kind, record_id, "olderValue", older)
    model.counts["replays"] += 1
    return f"server served an older sealed copy of {kind} {record_id[:8]} again under a new version"


def flip_field(server, zone, rng, model):
    """One sealed field's ciphertext altered (a byte changed): it does not open, so every sync
    that pulls it is damaged server data (65) until the server turns honest (`heal`)."""
    rows = live_rows(server, zone)
    if not rows:
        return None
    kind, record_id, _, fields = rng.choice(rows)
    name = rng.choice(sorted(json.loads(fields)))
    original = json.loads(fields)[name]
    flipped = dict(original, ciphertext=("B" if original["ciphertext"][:1] != "B" else "C") + original["ciphertext"][1:])
    renumber(server, zone, kind, record_id,
             f"jsonb_set(fields, '{{{name}}}', '{json.dumps(flipped)}'::jsonb)")
    model.tampered.append(("flip", kind, record_id, name, original, flipped))
    model.counts["flips"] += 1
    return f"server altered field {name} of {kind} {record_id[:8]}"


def flood(server, zone, rng, model):
    """A row no device wrote, whose fields are 9 MiB: damaged server data (65) for every sync
    that reaches it, and the agent's memory stays bounded, until the server turns honest."""
    record_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    server.psql(f"""
        UPDATE tripboard.zones SET change_sequence = change_sequence + 1 WHERE name = '{zone}';
        INSERT INTO tripboard.records (zone, kind, id, version, change_sequence, fields)
        SELECT '{zone}', 'trip', '{record_id}', 1, change_sequence,
               jsonb_build_object('name', jsonb_build_object('stamp', '0000000000000-0000-00', 'nonce', 'AA',
                                  'ciphertext', repeat('A', 9 * 1024 * 1024)))
        FROM tripboard.zones WHERE name = '{zone}'""")
    model.tampered.append(("flood", "trip", record_id, None, None, None))
    model.counts["floods"] += 1
    return f"server grew a row of 9 MiB (trip {record_id[:8]})"


def lower_version(server, zone, rng, model):
    """A record's version lowered without a new change sequence: versions are tokens, never proof."""
    rows = [row for row in live_rows(server, zone) if int(row[2]) > 1]
    if not rows:
        return None
    kind, record_id, version, _ = rng.choice(rows)
    server.psql(f"UPDATE tripboard.records SET version = version - 1 WHERE zone = '{zone}' AND kind = '{kind}' AND id = '{record_id}'")
    return f"server lowered the version of {kind} {record_id[:8]} to {int(version) - 1}"


def raise_horizon(server, zone, rng, model):
    """`purged_through` raised past every device's token (as if tombstones were purged): each
    device reconciles, and none trashes what the server lacks — absence proves no deletion."""
    server.psql(f"UPDATE tripboard.zones SET change_sequence = change_sequence + 1, purged_through = change_sequence + 1 "
                f"WHERE name = '{zone}'")
    model.counts["horizons raised"] += 1
    return "server raised purged_through past every device's token"


def heal(server, zone, model):
    """The server turns honest again before the settle phase: an altered field that is still as
    it was altered gets its sealed value back (under a new version, so that devices pull it), a
    grown row goes."""
    # Latest first: a field altered twice gets back what it had before the first alteration.
    for how, kind, record_id, name, original, flipped in reversed(model.tampered):
        if how == "flood":
            server.psql(f"DELETE FROM tripboard.records WHERE zone = '{zone}' AND kind = '{kind}' AND id = '{record_id}'")
            continue
        still = server.psql(f"SELECT fields->'{name}' FROM tripboard.records WHERE zone = '{zone}' AND kind = '{kind}' "
                            f"AND id = '{record_id}' AND NOT deleted")
        if still and json.loads(still) == flipped:
            renumber(server, zone, kind, record_id, f"jsonb_set(fields, '{{{name}}}', '{json.dumps(original)}'::jsonb)")
    model.tampered = []


HOSTILE_MUTATIONS = [
    ServerMutation("server replays an older sealed value", 0.7, (2, 4), replay_old_value),
    ServerMutation("server alters a sealed field", 0.4, (1, 2), flip_field),
    ServerMutation("server grows a row past 8 MiB", 0.3, (1, 1), flood),
    ServerMutation("server lowers a version", 0.4, (1, 2), lower_version),
    ServerMutation("server forges a deletion", 0.5, (1, 2), forge_deletion),
    ServerMutation("server replays an old deletion", 0.6, (2, 4), replay_deletion),
    ServerMutation("server raises the horizon", 0.3, (1, 1), raise_horizon),
]


# MARK: - The model


class FieldSet:
    """One value given to a field: by the command that created the record, an edit, or a restore
    (which puts back the values the device had). `wall` is the device's clock at the command (its
    TRIPBOARD_NOW): the stamp's time, unless the hybrid clock moved it later (`Run.stamp_bounds`)."""

    def __init__(self, value, wall, device, step, how, tick, known):
        self.value, self.wall, self.device, self.step, self.how = value, wall, device, step, how
        self.tick = tick  # the run's order of events (`Run.next_tick`): finer than steps
        self.upper = wall
        self.known = known  # events the device had seen when it set the value


class Record:
    def __init__(self, kind, record_id, parent, step, device, known):
        self.kind, self.id, self.parent, self.step, self.device = kind, record_id, parent, step, device
        self.created_known = known  # events its creator had seen
        self.sets = {}


class Event:
    """A deletion or a restore (of records, measured: what left or came back on the device), or a
    keychain write. `known`: every event the device had seen when it made this one."""

    def __init__(self, number, kind, device, step, wall, ids=(), item=None, value=None, target=None):
        self.number, self.kind, self.device, self.step, self.wall = number, kind, device, step, wall
        self.ids, self.item, self.value = set(ids), item, value
        self.target = target  # a deletion's record; the others in `ids` went with it
        self.known = frozenset()


class Device:
    def __init__(self, run, name, skew):
        self.run, self.name, self.skew = run, name, skew
        self.box = None
        self.joined = False
        self.join_at = 0
        self.offline = (0, 0)
        self.view = None          # kind -> id -> fields, as the device shows them (None: read again)
        self.known = set()        # events this device has certainly seen
        self.unsent = set()       # its own events not certainly on the server yet
        self.reinstalled_step = None
        self.generation = 0
        self.clean_syncs = []     # steps of its syncs that exited 0 with nothing pending
        self.sync_ticks = []      # ticks (`Run.next_tick`) of every sync it started (killed and failed ones too)
        self.node = None          # its hybrid-clock node (`sync status`): the stamps it makes end with it
        self.highest = {}         # (kind, id, incarnation, field) -> the latest stamp it held (`sync fields`)

    def now(self):
        return int(time.time() * 1000) + self.skew

    def stamp_time(self, wall):
        """The time a stamp of an edit made at `wall` (this device's clock) carries: a device
        learns its offset from the server's clock at each sync and stamps on the server's scale
        (docs/sync.md, Clocks), so the skew goes; offsets under a second are not applied (the
        checks allow CLOCK_NOISE_MS for that and for the measurement's own noise)."""
        return wall - self.skew if abs(self.skew) >= 1000 else wall

    def online(self, step):
        return self.joined and not (self.offline[0] <= step < self.offline[1])


class Run:
    """One run: its devices, the model of what their commands did, and the checks."""

    def __init__(self, ctx, report, server, index, seed, quick):
        self.ctx, self.report, self.server, self.index, self.seed = ctx, report, server, index, seed
        self.rng = random.Random(f"sync-model:{seed}")
        self.zone = f"run-{index}"
        self.quick = quick
        self.log = []
        self.problems = {}        # check name -> [details]
        self.step = 0
        self.records = {}         # id -> Record
        self.events = []
        self.items = {item: [] for item in KEYCHAIN_ITEMS}  # keychain events per item
        self.server_known = set()
        self.dumps = []
        # A hostile run (odd seeds: docs/torture.md §10) adds a server that lies.
        self.hostile = seed % 2 == 1
        self.remembered = {}      # (kind, id) -> sealed fields texts the server had
        self.remembered_deletions = {}  # (kind, id) -> a sealed deletion the server had
        self.tampered = []        # alterations still on the server, undone by `heal`
        self.forgeries = []       # what the server forged, each to be refused (`Run.forged`)
        self.stamp_values = {}    # (kind, id, field, stamp) -> the value a device's `sync fields` showed
        self.flagged = set()      # stamps already reported as going back (said once)
        self.counter = 0
        self.ticks = 0  # `next_tick`
        self.counts = {"syncs": 0, "killed": 0, "crash points": 0, "server cuts": 0, "restores": 0, "lost rows": 0,
                       "reinstalls": 0, "late joins": 0, "refusals": 0,
                       "replays": 0, "flips": 0, "floods": 0, "damaged": 0, "forged deletions": 0, "replayed deletions": 0, "horizons raised": 0}
        self.faults = []

    # MARK: Bookkeeping

    def note(self, line):
        self.log.append(f"{self.step:3d} {line}")

    def problem(self, check, detail):
        self.problems.setdefault(check, []).append(detail)

    def next_tick(self):
        """The next number of the run's order of events (syncs started, values set)."""
        self.ticks += 1
        return self.ticks

    def unique(self, prefix=""):
        self.counter += 1
        return f"{prefix}#{self.counter}"

    def new_event(self, device, kind, wall, **fields):
        event = Event(len(self.events), kind, device.name, self.step, wall, **fields)
        self.events.append(event)
        device.known.add(event.number)
        device.unsent.add(event.number)
        event.known = frozenset(device.known)
        return event

    # MARK: Commands

    def command(self, device, args, exe="app", stdin=None, env=None, expect=(0,)):
        """Runs one command of `device` at its clock; its status must be one of `expect`, and a
        failure must say so in one `error:` line."""
        wall = device.now()
        environment = device.box.env({"TRIPBOARD_NOW": iso_ms(wall), **(env or {})})
        result = run(device.box.argv(exe, *args), environment, stdin)
        if result.status not in expect:
            self.problem("every command exits as documented",
                         f"step {self.step} {device.name}: {result.describe()} (expected exit {sorted(expect)})")
        elif result.status != 0 and not result.one_line_error():
            self.problem("every command exits as documented",
                         f"step {self.step} {device.name}: exit {result.status} without exactly one error line: {result.err[:300]!r}")
        return result, wall

    def json_of(self, device, args, what):
        result, _ = self.command(device, args)
        if result.status != 0:
            raise RuntimeError(f"{device.name}: {what} failed: {result.describe()}")
        return json.loads(result.out)

    def read_view(self, device):
        """The device's live records, through `app export` and `app attachment list --json`."""
        document = self.json_of(device, ["export"], "export")
        view = {kind: {} for kind in KINDS}
        for kind in ("trip", "place", "booking"):
            for row in document.get(kind + "s", []):
                if row["syncState"] != "pendingDeletion":
                    view[kind][row["id"]] = record_fields(kind, row)
        for row in self.json_of(device, ["attachment", "list", "--json"], "attachment list"):
            view["attachment"][row["id"]] = record_fields("attachment", row)
            view["attachment"][row["id"]]["_row"] = row
        return view

    def view(self, device):
        if device.view is None:
            device.view = self.read_view(device)
        return device.view

    # MARK: Joining, reinstalling

    def join(self, device, reinstall=False):
        if device.box is not None:
            device.box.remove()
        device.box = Box(self.ctx, f"model-{self.index}-{device.name}{device.generation}")
        device.generation += 1
        result, _ = self.command(device, ["sync", "setup", "--server", self.server.conninfo, "--zone", self.zone],
                                 stdin=SYNC_PASSPHRASE)
        if result.status != 0:
            raise RuntimeError(f"sync setup of {device.name} failed: {result.describe()}")
        device.joined = True
        device.view = None
        device.known, device.unsent = set(), set()
        device.node = self.json_of(device, ["sync", "status", "--json"], "sync status")["account"]["node"]
        device.highest = {}
        self.note(f"{device.name}  {'reinstalled: fresh container, ' if reinstall else ''}joined zone {self.zone}")

    def reinstall(self, device):
        """Only right after a `sync now --compare` with nothing pending and no edit since, so that
        nothing of this device's own is lost; then a fresh container joins with the passphrase and
        syncs at once."""
        report = self.sync(device, compare=True)
        if report is None or report["pending"] or report["secretsPending"] or report.get("held"):
            self.note(f"{device.name}  not reinstalled: its sync left something pending")
            return False
        self.join(device, reinstall=True)
        device.reinstalled_step = self.step
        self.counts["reinstalls"] += 1
        return self.sync(device) is not None

    # MARK: Syncing

    def sync(self, device, kill=None, crash=None, cut=None, compare=False):
        """One `sync now` (`run_sync`), with what this device held before and after it: it never
        applies a value older than one it held, and it refuses every forgery it can tell."""
        before = self.held_fields(device)
        owed = self.forgeries_owed(device, before)
        report = self.run_sync(device, kill, crash, cut, compare)
        self.check_no_going_back(device, before, self.held_fields(device))
        if report is not None and owed:
            refused = report.get("refused", 0)
            if refused < len(owed):
                self.problem("every forgery is refused by a device that can tell it",
                             f"step {self.step} {device.name}: refused {refused} record(s) of the server's, but the server forged "
                             + "; ".join(owed))
        return report

    def held_fields(self, device):
        """`sync fields --json`: (kind, id, field) -> (incarnation, value, stamp, edited here)."""
        held = {}
        for row in self.json_of(device, ["sync", "fields", "--json"], "sync fields"):
            value = json.dumps(row["value"], sort_keys=True, ensure_ascii=False)
            held[(row["kind"], row["id"], row["field"])] = (row["incarnation"], value, row["stamp"], row["editedHere"])
            self.stamp_values[(row["kind"], row["id"], row["field"], row["stamp"])] = value
        return held

    def check_no_going_back(self, device, before, after):
        """A field's stamp as this device holds it (not edited here) never goes below the latest
        it held for that incarnation of the record (docs/sync.md, No going back)."""
        for snapshot in (before, after):
            for (kind, record_id, field), (incarnation, value, stamp, edited) in snapshot.items():
                if edited:
                    continue
                key = (kind, record_id, incarnation, field)
                highest = device.highest.get(key)
                if highest is not None and stamp < highest and (device.name, key, stamp) not in self.flagged:
                    self.flagged.add((device.name, key, stamp))
                    self.problem("a device never applies a value older than one it held",
                                 f"step {self.step} {device.name}: {kind} {record_id[:8]} {field} holds {short(json.loads(value))!r} "
                                 f"stamped {stamp}, after it held stamp {highest}")
                if highest is None or stamp > highest:
                    device.highest[key] = stamp

    # MARK: Forgeries

    def forged(self, kind, record_id, cause, fields):
        """The server wrote `fields` (its text) into the row: each device's next sync must refuse
        it if that device can tell (`forgeries_owed`)."""
        self.forgeries.append({"step": self.step, "kind": kind, "id": record_id, "cause": cause, "fields": fields,
                               "deleted": cause != "olderValue", "due": {d.name for d in self.devices if d.joined}})

    def forgeries_owed(self, device, held):
        """The forgeries still on the server that this sync must refuse: the first sync of each
        device after a forgery checks it, if the device can tell it from an honest change — it
        holds the record (a deletion no device sealed); it holds a later stamp of a field whose
        older value differs (a replayed value); it made the deletion served again (a replayed
        deletion). Keychain items are not listed by `sync fields` (their refusals: the end-to-end
        tests)."""
        due = [f for f in self.forgeries if device.name in f["due"]]
        for forgery in due:
            forgery["due"].discard(device.name)
        due = [f for f in due if f["kind"] != "secret"]
        if not due:
            return []
        rows = {}
        keys = " OR ".join(f"(kind = '{f['kind']}' AND id = '{f['id']}')" for f in due)
        for line in self.server.psql(f"SELECT kind, id, deleted, fields::text FROM tripboard.records "
                                     f"WHERE zone = '{self.zone}' AND ({keys})").splitlines():
            if line:
                kind, record_id, deleted, fields = line.split("|", 3)
                rows[(kind, record_id)] = (deleted == "t", fields)
        owed = []
        counted = set()  # a record refused counts once, however many forgeries of it stand (the same copy served twice)
        for forgery in reversed(due):
            kind, record_id = forgery["kind"], forgery["id"]
            if (kind, record_id) in counted:
                continue
            standing = rows.get((kind, record_id))
            if standing is None or standing[0] != forgery["deleted"] or json.loads(standing[1]) != json.loads(forgery["fields"]):
                continue  # overwritten since (a device sent the record again): nothing left to refuse
            mine = {field: entry for (k, i, field), entry in held.items() if (k, i) == (kind, record_id)}
            if not mine:
                continue  # not live here: nothing to take, nothing to refuse
            if forgery["cause"] == "unsealedDeletion":
                owed.append(f"a deletion of {kind} {record_id[:8]} no device sealed (step {forgery['step']})")
                counted.add((kind, record_id))
            elif forgery["cause"] == "replayedDeletion":
                stamp = json.loads(forgery["fields"])["deletion"]["stamp"]
                if stamp.split("-", 2)[2] == device.node:
                    owed.append(f"this device's own deletion of {kind} {record_id[:8]} again (step {forgery['step']})")
                    counted.add((kind, record_id))
            else:
                served = json.loads(forgery["fields"])
                for field, (_, value, stamp, edited) in mine.items():
                    theirs = served.get(field, {}).get("stamp")
                    old = self.stamp_values.get((kind, record_id, field, theirs))
                    if not edited and theirs is not None and theirs < stamp and old is not None and old != value:
                        owed.append(f"an older {field} of {kind} {record_id[:8]} ({short(json.loads(old))!r} stamped {theirs}, "
                                    f"this device holds {short(json.loads(value))!r} stamped {stamp}; step {forgery['step']})")
                        counted.add((kind, record_id))
                        break
        return owed

    def run_sync(self, device, kill=None, crash=None, cut=None, compare=False):
        """`sync now --json` on `device`: undisturbed (must exit 0), killed after `kill` seconds,
        dying at the crash point `crash`, or with `cut()` run meanwhile (the server stopped: exit
        0, 69 or 75). Returns the report when it finished with 0."""
        args = ["sync", "now", "--json"] + (["--compare"] if compare else [])
        wall = device.now()
        env = device.box.env({"TRIPBOARD_NOW": iso_ms(wall), **({"TRIPBOARD_CRASH_AT": crash} if crash else {})})
        argv = device.box.argv("app", *args)
        self.counts["syncs"] += 1
        device.sync_ticks.append(self.next_tick())
        device.view = None
        started = time.monotonic()
        if kill is not None or cut is not None:
            process = spawn(argv, env)
            if cut is not None:
                cut()
            else:
                time.sleep(kill)
                if process.poll() is None:
                    kill_group(process)
            result = collect(process, argv, started)
        else:
            result = run(argv, env)
        how = f" [killed after {kill * 1000:.0f} ms]" if kill is not None else (
            f" [crash at {crash}]" if crash else (" [server cut]" if cut else ""))
        if result.signal == signal.SIGKILL and (kill is not None or crash):
            self.counts["killed" if kill is not None else "crash points"] += 1
            self.note(f"{device.name}  sync now{how} → killed")
            return None
        # After the server forgot (a restore, a lost row) it serves values older than a device
        # holds: refused, sent again, and the run says so with 65 (one line), the rest done.
        refused = (result.status == 65 and "error: this device refused" in result.err and result.one_line_error()
                   and (self.hostile or any(self.counts[key] for key in ("restores", "lost rows"))))
        # While the server serves a field it altered or a row it grew: damaged server data, one
        # line, 65 (the device's own push still went); nothing of the page is written.
        damaged = (result.status == 65 and bool(self.tampered) and result.one_line_error()
                   and "holds data TripBoard cannot trust" in result.err)
        if cut is not None:
            self.counts["server cuts"] += 1
            ok = result.status in SERVER_CUT_STATUSES or refused or damaged
        else:
            ok = result.status == 0 or refused or damaged
        if not ok:
            self.problem("sync now exits 0 (69 or 75 with the server cut; 65 refusing what a forgetful server served)",
                         f"step {self.step} {device.name}: {result.describe()}")
        if damaged:
            self.counts["damaged"] += 1
        if result.status != 0 and not refused:
            self.note(f"{device.name}  sync now{how} → exit {result.status}")
            return None
        if refused:
            self.counts["refusals"] += 1
        report = json.loads(result.out)
        device.known |= self.server_known
        if report["pending"] == 0 and report["secretsPending"] == 0:
            self.server_known |= device.unsent
            device.unsent = set()
            device.clean_syncs.append(self.step)
        moved = ", ".join(f"{key} {report[key]}" for key in ("pulled", "pushed", "pending", "trashed", "conflictsKept",
                                                             "reuploaded", "held", "secretsPulled", "secretsPushed",
                                                             "secretsDeleted", "blobsUploaded", "blobsDownloaded")
                          if report.get(key))
        reconciled = f", reconciled {report['reconciled']}" if report.get("reconciled") else ""
        self.note(f"{device.name}  sync now{' --compare' if compare else ''}{how} → 0 {moved}{reconciled}")
        return report

    def random_online_device(self, rng):
        online = [device for device in self.devices if device.online(self.step)]
        return rng.choice(online) if online else None

    # MARK: What the server forgot (server mutations call these)

    def server_forgot(self, kind, record_id):
        """The server lost the row of one record: whatever it knew of that record's deletions and
        restores (and, for a keychain item, of every keychain write) is no longer certain."""
        self.counts["lost rows"] += 1
        if kind == "secret":
            forgotten = {event.number for event in self.events if event.item is not None}
        else:
            forgotten = {event.number for event in self.events if record_id in event.ids}
        self.server_known -= forgotten

    def server_rolled_back(self, known_then):
        self.counts["restores"] += 1
        self.server_known &= known_then

    # MARK: Local operations

    def trip_values(self):
        rng = self.rng
        start = rng.randrange(0, 700)
        day = lambda offset: time.strftime("%Y-%m-%d", time.gmtime(1796083200 + offset * 86400))
        return day(start), day(start + rng.randrange(0, 15))

    def add_record(self, device, kind, row, wall, parent):
        record = Record(kind, row["id"], parent, self.step, device.name, frozenset(device.known))
        for field, value in record_fields(kind, row).items():
            record.sets[field] = [FieldSet(value, device.stamp_time(wall), device.name, self.step, "create", self.next_tick(),
                                           frozenset(device.known))]
        self.records[record.id] = record
        self.view(device)[kind][record.id] = record_fields(kind, row)
        self.new_event(device, "create", wall, ids={record.id})
        return record

    def set_field(self, device, record_id, field, value, wall, how="edit"):
        record = self.records[record_id]
        sets = record.sets.setdefault(field, [])
        sets.append(FieldSet(value, device.stamp_time(wall), device.name, self.step, how, self.next_tick(),
                             frozenset(device.known)))

    def order(self, record_id):
        """Records in the order the run made them, so that a replay picks the same ones (ids are
        random); what the model does not know (a keychain item's keyed hash) after them."""
        record = self.records.get(record_id)
        return (0, record.step, record.kind) if record else (1, 0, record_id)

    def pick(self, device, kind):
        """A record of `kind` the device shows; half the time one of the two oldest, so that
        devices often edit the same records between their syncs (concurrent edits)."""
        ids = sorted(self.view(device)[kind], key=self.order)
        if len(ids) > 2 and self.rng.random() < 0.5:
            ids = ids[:2]
        return self.rng.choice(ids) if ids else None

    def do_step(self, device, action):
        rng = self.rng
        view = self.view(device)
        if action == "trip add" or (action.startswith(("place", "booking", "ticket")) and not view["trip"]):
            start, end = self.trip_values()
            args = ["trip", "add", f"--name={random_text(rng, 1, 24)} {self.unique()}", "--start", start, "--end", end, "--json"]
            if rng.random() < 0.5:
                args.append(f"--notes={random_text(rng, 0, 30, multiline=True)} {self.unique()}")
            result, wall = self.command(device, args)
            if result.status == 0:
                row = json.loads(result.out)
                self.add_record(device, "trip", row, wall, None)
                self.note(f"{device.name}  trip add → {row['id'][:8]} {short(row['name'])}")
            return
        if action in ("trip edit", "place edit", "booking edit"):
            kind = action.split()[0]
            record_id = self.pick(device, kind)
            if record_id is None:
                return self.do_step(device, f"{kind} add" if kind != "trip" else "trip add")
            current = view[kind][record_id]
            if kind == "trip":
                field = rng.choice(["name", "notes", "dates"])
                if field == "dates":
                    value = self.trip_values()
                    args = ["--start", value[0], "--end", value[1]]
                elif field == "name":
                    value = f"{random_text(rng, 1, 24)} {self.unique()}"
                    args = [f"--name={value}"]
                else:
                    value = f"{random_text(rng, 0, 30, multiline=True)} {self.unique()}"
                    args = [f"--notes={value}"]
            elif kind == "place":
                field = rng.choice(["name", "city"])
                value = f"{random_text(rng, 1, 20)} {self.unique()}"
                args = [f"--{field}={value}"]
            else:
                field = rng.choice(["title", "reference", "seat"])
                if field == "title":
                    value = f"{random_text(rng, 1, 20)} {self.unique()}"
                elif field == "reference":
                    value = self.unique("R")
                else:
                    value = f"{rng.randint(1, 40)}{rng.choice('ABCDEF')}{self.unique()}"
                args = [f"--{field}={value}"]
            if current.get(field) == value:
                return  # the same value again is no edit
            result, wall = self.command(device, [kind, "edit", record_id] + args)
            if result.status == 0:
                self.set_field(device, record_id, field, value, wall)
                view[kind][record_id][field] = value
                self.new_event(device, "edit", wall, ids={record_id})
            self.note(f"{device.name}  {kind} edit {record_id[:8]} {field}={short(value)} → {result.status}")
            return
        if action in ("place add", "booking add", "ticket"):
            trip = self.pick(device, "trip")
            if action == "place add":
                args = ["place", "add", "--trip", trip, f"--name={random_text(rng, 1, 20)} {self.unique()}", "--json"]
                if rng.random() < 0.6:
                    args.append(f"--city={random_text(rng, 1, 16)} {self.unique()}")
                result, wall = self.command(device, args)
                if result.status == 0:
                    row = json.loads(result.out)
                    self.add_record(device, "place", row, wall, trip)
                    self.note(f"{device.name}  place add → {row['id'][:8]} in trip {trip[:8]}")
                return
            if action == "booking add":
                args = ["booking", "add", "--trip", trip, "--kind", rng.choice(["flight", "train", "hotel", "event"]),
                        f"--title={random_text(rng, 1, 20)} {self.unique()}", "--json"]
                if rng.random() < 0.7:
                    args += ["--starts-at", f"2027-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T{rng.randint(10, 23)}:{rng.choice(['00', '30'])}Z"]
                if rng.random() < 0.5:
                    args.append(f"--reference={self.unique('R')}")
                if rng.random() < 0.3:
                    args.append(f"--seat={rng.randint(1, 40)}{rng.choice('ABCDEF')}")
                result, wall = self.command(device, args)
                if result.status == 0:
                    row = json.loads(result.out)
                    self.add_record(device, "booking", row, wall, trip)
                    self.note(f"{device.name}  booking add → {row['id'][:8]} in trip {trip[:8]}")
                return
            pdf = device.box.pdf(f"ticket-{self.unique('')[1:]}.pdf", rng)
            result, wall = self.command(device, [pdf, "--trip", trip, "--json"], exe="share-extension")
            if result.status == 0:
                answer = json.loads(result.out)
                if answer["bookingCreated"]:
                    self.add_record(device, "booking", answer["booking"], wall, trip)
                booking = answer["booking"]["id"]
                self.add_record(device, "attachment", answer["attachment"], wall, booking)
                self.view(device)["attachment"][answer["attachment"]["id"]]["_row"] = answer["attachment"]
                self.note(f"{device.name}  share-extension ticket → attachment {answer['attachment']['id'][:8]} "
                          f"booking {booking[:8]} in trip {trip[:8]}")
            return
        if action == "attachment move":
            attachment = self.pick(device, "attachment")
            bookings = sorted(view["booking"], key=self.order)
            if attachment is None or not bookings:
                return self.do_step(device, "ticket")
            target = rng.choice(bookings)
            result, wall = self.command(device, ["attachment", "move", attachment, "--booking", target, "--json"], expect=(0, 65))
            if result.status == 0 and view["attachment"][attachment]["bookingId"] != target:
                self.set_field(device, attachment, "bookingId", target, wall)
                view["attachment"][attachment]["bookingId"] = target
                self.records[attachment].parent = target
                self.new_event(device, "edit", wall, ids={attachment})
            self.note(f"{device.name}  attachment move {attachment[:8]} → booking {target[:8]} → {result.status}")
            return
        if action == "booking merge":
            keep = self.pick(device, "booking")
            if keep is None:
                return self.do_step(device, "booking add")
            trip = view["booking"][keep]["tripId"]
            others = sorted((i for i, fields in view["booking"].items() if i != keep and fields["tripId"] == trip), key=self.order)
            if not others:
                return self.do_step(device, "booking add")
            other = rng.choice(others)
            before = self.view(device)
            result, wall = self.command(device, ["booking", "merge", keep, other, "--json"])
            device.view = None
            after = self.view(device)
            if result.status == 0:
                answer = json.loads(result.out)
                kept = record_fields("booking", answer["kept"])
                for field in FIELDS["booking"]:
                    if kept[field] != before["booking"][keep].get(field):
                        self.set_field(device, keep, field, kept[field], wall)
                for moved in answer["attachmentsMoved"]:
                    self.set_field(device, moved, "bookingId", keep, wall)
                    self.records[moved].parent = keep
                gone = {i for kind_ in KINDS for i in before[kind_] if i not in after[kind_]}
                if other not in gone or keep in gone:
                    self.problem("every command exits as documented",
                                 f"step {self.step} {device.name}: booking merge {keep[:8]} {other[:8]} exited 0 but took {len(gone)} records")
                self.new_event(device, "edit", wall, ids={keep, *answer["attachmentsMoved"]})
                self.new_event(device, "delete", wall, ids=gone, target=other)
            self.note(f"{device.name}  booking merge {keep[:8]} {other[:8]} → {result.status}")
            return
        if action in ("trip delete", "place delete", "booking delete", "attachment delete"):
            kind = action.split()[0]
            record_id = self.pick(device, kind)
            if record_id is None:
                return self.do_step(device, "trip add")
            before = self.view(device)
            args = [kind, "delete", record_id] + (["--yes"] if kind == "trip" else [])
            result, wall = self.command(device, args)
            device.view = None
            after = self.view(device)
            gone = {i for kind_ in KINDS for i in before[kind_] if i not in after[kind_]}
            back = {i for kind_ in KINDS for i in after[kind_] if i not in before[kind_]}
            if result.status == 0:
                if record_id not in gone or back:
                    self.problem("every command exits as documented",
                                 f"step {self.step} {device.name}: {kind} delete {record_id[:8]} exited 0 but took {len(gone)} "
                                 f"records ({'not itself' if record_id not in gone else ''}) and brought back {len(back)}")
                self.new_event(device, "delete", wall, ids=gone, target=record_id)
            self.note(f"{device.name}  {kind} delete {record_id[:8]} → {result.status} ({len(gone)} records to the trash)")
            return
        if action == "trash restore":
            entries = self.json_of(device, ["trash", "list", "--json"], "trash list")
            if not entries:
                return self.do_step(device, "trip edit")
            entry = rng.choice(sorted(entries, key=lambda e: self.order(e["id"])))
            before = self.view(device)
            result, wall = self.command(device, ["trash", "restore", entry["id"]], expect=(0, 65))
            device.view = None
            after = self.view(device)
            back = {(kind, i) for kind in KINDS for i in after[kind] if i not in before[kind]}
            gone = {i for kind in KINDS for i in before[kind] if i not in after[kind]}
            if result.status == 0:
                if entry["id"] not in {i for _, i in back} or gone:
                    self.problem("every command exits as documented",
                                 f"step {self.step} {device.name}: trash restore {entry['id'][:8]} exited 0 but brought back "
                                 f"{len(back)} records ({'not itself' if entry['id'] not in {i for _, i in back} else ''}) "
                                 f"and took {len(gone)}")
                for kind, record_id in back:
                    record = self.records.get(record_id)
                    if record is None:
                        self.problem("no invented values", f"step {self.step} {device.name}: trash restore brought back "
                                     f"{kind} {record_id}, which no command created")
                        continue
                    for field, value in after[kind][record_id].items():
                        if field.startswith("_"):
                            continue
                        if value not in [entry_.value for entry_ in record.sets.get(field, [])]:
                            self.problem("no invented values", f"step {self.step} {device.name}: trash restore brought back "
                                         f"{kind} {record_id[:8]} with {field}={value!r}, a value no command set")
                        self.set_field(device, record_id, field, value, wall, how="restore")
                self.new_event(device, "restore", wall, ids={i for _, i in back})
            elif result.status == 65:
                back = set()
            self.note(f"{device.name}  trash restore {entry['kind']} {entry['id'][:8]} → {result.status} "
                      f"({len(back)} records back)")
            return
        if action in ("keychain set", "keychain delete"):
            if action == "keychain delete":
                listing = self.json_of(device, ["keychain", "list", "--json"], "keychain list")["items"]
                here = [(i["service"], i["account"]) for i in listing if i["accessibility"] in MIGRATABLE]
                item = rng.choice(sorted(here)) if here else rng.choice(KEYCHAIN_ITEMS)
            else:
                item = rng.choice(KEYCHAIN_ITEMS)
            if action == "keychain set":
                value = f"secret-{self.unique('')[1:]}-{rng.getrandbits(40):x}".encode()
                accessibility = rng.choice(MIGRATABLE)
                result, wall = self.command(device, ["keychain", "set", item[0], item[1], "--accessibility", accessibility],
                                            stdin=value + b"\n")
                if result.status == 0:
                    # The accessibility travels with the value: both are what must converge.
                    self.items[item].append(self.new_event(device, "key set", wall, item=item,
                                                           value=value + b" @" + accessibility.encode()))
                self.note(f"{device.name}  keychain set {item[0]} {item[1]} = {value.decode()} ({accessibility}) → {result.status}")
            else:
                result, wall = self.command(device, ["keychain", "delete", item[0], item[1]], expect=(0, 66))
                if result.status == 0:
                    self.items[item].append(self.new_event(device, "key delete", wall, item=item))
                self.note(f"{device.name}  keychain delete {item[0]} {item[1]} → {result.status}")
            return
        raise AssertionError(action)

    # MARK: The run

    def setup(self):
        rng = self.rng
        count = rng.randint(3, 4) if self.quick else rng.randint(3, 5)
        self.steps = rng.randint(25, 35) if self.quick else rng.randint(25, 60)
        skewed = rng.random() < 0.5
        self.skewed = skewed
        self.devices = [Device(self, "abcde"[i], rng.randint(-MAX_SKEW_MS, MAX_SKEW_MS) if skewed else 0)
                        for i in range(count)]
        self.schedule = {}  # step -> [what]

        def at(step, what):
            self.schedule.setdefault(step, []).append(what)
        if rng.random() < 0.4:
            late = rng.choice(self.devices[1:])
            late.join_at = rng.randint(4, self.steps // 2 + 4)
            self.faults.append(f"{late.name} joins at step {late.join_at}")
        if rng.random() < 0.4:
            away = rng.choice(self.devices)
            start = rng.randint(0, self.steps // 2)
            away.offline = (start, start + rng.randint(10, max(11, self.steps - start)))
            self.faults.append(f"{away.name} offline for steps {away.offline[0]}–{away.offline[1] - 1}")
        if rng.random() < 0.35:
            at(rng.randint(8, max(9, self.steps - 3)), "reinstall")
            self.faults.append("a device reinstalled")
        self.kill_rate = 0.25 if rng.random() < 0.5 else 0.0
        self.crash_rate = 0.2 if rng.random() < 0.5 else 0.0
        if self.kill_rate:
            self.faults.append("syncs killed")
        if self.crash_rate:
            self.faults.append("crash points")
        for mutation in SERVER_MUTATIONS + (HOSTILE_MUTATIONS if self.hostile else []):
            if rng.random() < mutation.probability:
                for step in sorted(rng.sample(range(2, self.steps), min(rng.randint(*mutation.times), self.steps - 2))):
                    at(step, mutation)
                self.faults.append(mutation.name)
        if skewed:
            self.faults.append("clocks skewed " + " ".join(f"{d.name}{d.skew / 1000:+.0f}s" for d in self.devices))
        self.note(f"--  run {self.index}, seed {self.seed}: {count} devices, {self.steps} steps; "
                  + ("; ".join(self.faults) or "no faults"))
        for device in self.devices:
            if device.join_at == 0:
                self.join(device)

    def play(self):
        rng = self.rng
        actions, weights = zip(*STEP_WEIGHTS.items())
        for step in range(1, self.steps + 1):
            self.step = step
            for device in self.devices:
                if not device.joined and device.join_at == step:
                    self.join(device)
                    self.counts["late joins"] += 1
            for what in self.schedule.get(step, []):
                if what == "reinstall":
                    candidates = [d for d in self.devices if d.online(step)]
                    if candidates and not self.reinstall(rng.choice(candidates)):
                        self.schedule.setdefault(step + 1, []).append("reinstall")  # try again at the next step
                else:
                    line = what.apply(self.server, self.zone, rng, self)
                    if line:
                        self.note(f"--  {line}")
            action = rng.choices(actions, weights)[0]
            if action == "sync":
                device = self.random_online_device(rng)
                if device is None:
                    continue
                if self.kill_rate and rng.random() < self.kill_rate:
                    self.sync(device, kill=rng.uniform(0.0, 0.08))
                elif self.crash_rate and rng.random() < self.crash_rate:
                    self.sync(device, crash=rng.choice(CRASH_POINTS))
                else:
                    self.sync(device)
                continue
            device = rng.choice([d for d in self.devices if d.joined])
            self.do_step(device, action)

    def settle(self):
        """No more faults: every device joins (a late one that never did) and syncs with
        `--compare` in turn until a whole pass moves nothing, at most SETTLE_PASSES passes."""
        self.step = self.steps + 1
        if self.tampered:
            heal(self.server, self.zone, self)
            self.note("--  server honest again: altered fields put back, grown rows removed")
        for device in self.devices:
            if not device.joined:
                self.join(device)
        quiet = False
        for number in range(SETTLE_PASSES):
            moved = False
            for device in self.devices:
                report = self.sync(device, compare=True)
                if report is None:
                    moved = True
                    continue
                moved |= any(report.get(key) for key in ("pulled", "pushed", "pending", "trashed", "reuploaded",
                                                          "blobsUploaded", "blobsDownloaded", "attachmentsMissing",
                                                          "secretsPulled", "secretsPushed", "secretsDeleted",
                                                          "secretsPending", "duplicatesMerged", "refused"))
            if not moved:
                quiet = True
                break
        if not quiet:
            self.problem("the settle phase ends with a pass that moves nothing",
                         f"still moving after {SETTLE_PASSES} passes of `sync now --compare` on every device")

    # MARK: The checks

    def final_state(self, device):
        view = self.read_view(device)
        files = []
        for record_id, fields in view["attachment"].items():
            row = fields.pop("_row")
            path = os.path.join(device.box.container, row["relativePath"])
            if row["state"] != "present":
                files.append(f"{device.name}: attachment {record_id[:8]} is {row['state']}")
            elif not device.box.file_matches(row["relativePath"], row["byteCount"], row["contentHash"]):
                files.append(f"{device.name}: attachment {record_id[:8]}: its file does not match its size and hash")
        keychain = {}
        listing = self.json_of(device, ["keychain", "list", "--json"], "keychain list")
        for item in listing["items"]:
            if item["accessibility"] not in MIGRATABLE:
                continue
            result, _ = self.command(device, ["keychain", "get", item["service"], item["account"]])
            keychain[(item["service"], item["account"])] = (result.stdout + b" @" + item["accessibility"].encode()
                                                            if result.status == 0 else f"<exit {result.status}>")
        trash = {entry["id"] for entry in self.json_of(device, ["trash", "list", "--json"], "trash list")}
        conflicts = self.json_of(device, ["sync", "conflicts", "--json"], "sync conflicts")
        status = self.json_of(device, ["sync", "status", "--json"], "sync status")
        return view, keychain, trash, conflicts, status, files

    def ancestors(self, record):
        chain = []
        while record is not None and record.parent is not None:
            chain.append(record.parent)
            record = self.records.get(record.parent)
        return chain

    def deletions_of(self, record):
        """Deletions that took `record` (measured on their device), or one of its parents unless
        the record was made after its maker had seen that deletion (its parent was restored)."""
        parents = set(self.ancestors(record))
        return [event for event in self.events if event.kind == "delete" and
                (record.id in event.ids or (event.ids & parents and event.number not in record.created_known))]

    def restores_of(self, record, lineage=False):
        """Restores that brought `record` back (measured), or with `lineage` any that brought back
        it or one of its parents (a trip's restore revives a deletion of the trip for everything
        under it)."""
        ids = {record.id, *self.ancestors(record)} if lineage else {record.id}
        return [event for event in self.events if event.kind == "restore" and event.ids & ids]

    def check(self):
        states = {device.name: self.final_state(device) for device in self.devices}
        # Runs in which the server forgot (a restore, a lost row) are named so: their known
        # failures (docs/torture.md §10, "What it found") are reported, not counted as failed.
        forgot = " [after the server forgot]" if any(self.counts[key] for key in ("restores", "lost rows")) else ""
        name = lambda what: f"sync-model run {self.index} (seed {self.seed}): {what}{forgot}"
        first = self.devices[0].name
        views = {d: state[0] for d, state in states.items()}

        # 5. sync status after the settle phase.
        for device, state in states.items():
            status = state[4]
            dirty = {key: status.get(key) for key in ("pending", "held", "unconfirmedBatches", "pendingKeychainItems",
                                                       "attachmentsAwaitingFile") if status.get(key)}
            if dirty:
                self.problem("sync status shows nothing waiting after the settle phase", f"{device}: {dirty}")
            for line in state[5]:
                self.problem("every attachment is present with its file", line)

        # 1. Convergence: the same live records and keychain items on every device.
        for device, state in states.items():
            if device == first:
                continue
            for kind in KINDS:
                mine, theirs = views[first][kind], state[0][kind]
                only_first = sorted(set(mine) - set(theirs))
                only_here = sorted(set(theirs) - set(mine))
                differ = sorted(i for i in set(mine) & set(theirs) if mine[i] != theirs[i])
                for record_id in only_first[:3]:
                    self.problem("every device holds the same records", f"{kind} {record_id[:8]} is on {first}, not on {device}")
                for record_id in only_here[:3]:
                    self.problem("every device holds the same records", f"{kind} {record_id[:8]} is on {device}, not on {first}")
                for record_id in differ[:3]:
                    fields = [f for f in mine[record_id] if mine[record_id][f] != theirs[record_id].get(f)]
                    self.problem("every device holds the same records",
                                 f"{kind} {record_id[:8]} differs: " + "; ".join(
                                     f"{f} {short(mine[record_id][f])!r} on {first}, {short(theirs[record_id].get(f))!r} on {device}"
                                     for f in fields))
            if states[first][1] != state[1]:
                keys = sorted(set(states[first][1]) | set(state[1]))
                diff = [f"{k[0]}/{k[1]}: {states[first][1].get(k)!r} on {first}, {state[1].get(k)!r} on {device}"
                        for k in keys if states[first][1].get(k) != state[1].get(k)]
                self.problem("every device holds the same keychain items", "; ".join(diff[:3]))

        # What every device ended with (the first device's, once convergence is checked).
        final = views[first]
        live = {record_id: kind for kind in KINDS for record_id in final[kind]}
        trashed = set().union(*(state[2] for state in states.values()))
        lost_values = {}
        lost_here = {}  # device -> (kind, record, field) -> values it lists as its own edits that lost
        for device, state in states.items():
            for conflict in state[3]:
                key = (conflict["kind"], conflict["recordId"], conflict["field"])
                value = conflict_value(conflict["field"], conflict["lost"])
                lost_values.setdefault(key, []).append(value)
                if conflict.get("lostOn") == "here":
                    lost_here.setdefault(device, {}).setdefault(key, []).append(value)
        server_forgot = any(self.counts[key] for key in ("restores", "lost rows"))
        reinstalled = {device.name: device.reinstalled_step for device in self.devices}

        for kind in KINDS:
            for record_id in final[kind]:
                if record_id not in self.records:
                    self.problem("no invented values", f"{kind} {record_id} is live and no command created it")

        for record in self.records.values():
            deletions = self.deletions_of(record)
            restores = self.restores_of(record)
            where = f"{record.kind} {record.id[:8]} (made by {record.device} at step {record.step})"
            is_live = record.id in live
            # 2. Nothing lost.
            must_live = not deletions or any(all(d.number in r.known for d in deletions) for r in restores)
            if not is_live and must_live:
                held = {record.id, *self.ancestors(record)} & trashed
                self.problem("nothing acknowledged is lost",
                             f"{where} is on no device" + (f" (in a trash: {sorted(held)[0][:8]})" if held else "") +
                             (f"; deleted at steps {[d.step for d in deletions]}, restored at {[r.step for r in restores]}"
                              if deletions else "; nothing deleted it"))
            # ... and nothing comes back.
            revived = self.restores_of(record, lineage=True)
            gone = [d for d in deletions if all(r.number in d.known for r in revived) and not self.forgotten(d)
                    and not self.moved_out(record, d)]
            if is_live and gone:
                self.problem("nothing deleted comes back",
                             f"{where} is live, though deleted by {gone[0].device} at step {gone[0].step} after every "
                             f"restore of it or its parents ({[r.step for r in revived]})")
            if not is_live:
                continue
            values = final[record.kind][record.id]
            for field, sets in record.sets.items():
                value = values.get(field)
                # 3. No invented values.
                winners = [entry for entry in sets if entry.value == value]
                if not winners:
                    self.problem("no invented values", f"{where}: {field} is {short(value)!r}, a value no command set")
                    continue
                if deletions:
                    continue  # delete beats edit: what a restore brings back is a device's copy, not a merge by stamps
                # 4. Per-field winner: the latest stamp. A stamp's time is the device's clock at the
                # edit (its TRIPBOARD_NOW), or later by the hybrid clock (stamp_bounds).
                self.stamp_bounds(sets)
                latest = max(sets, key=lambda entry: entry.wall)
                noise = CLOCK_NOISE_MS if self.skewed else 0
                if max(entry.upper for entry in winners) + noise < latest.wall:
                    best = max(winners, key=lambda entry: entry.upper)
                    self.problem("each field holds its latest edit",
                                 f"{where}: {field} is {short(value)!r} (set by {best.device} at step {best.step}, "
                                 f"{iso_ms(best.wall)}), but {latest.device} set {short(latest.value)!r} later, at step "
                                 f"{latest.step} ({iso_ms(latest.wall)})")
                # An edit that lost to one made without it (a concurrent edit: no device that may
                # have had it set the field after it) is listed as lost on the device that made it
                # (docs/sync.md, "The losing value is kept, on both devices"). Not in runs where
                # the server forgot changes: a restore or a lost row can take the push that carries
                # the losing value to its device.
                # Nor where a lying server replayed old copies: it can keep the field that tells
                # the losing device (`lostEdits`) from reaching it — availability, not integrity.
                # Nor for a record whose row (or a parent's) the server emptied with a deletion of
                # its own or an old one served again: the push that carried `lostEdits` is gone
                # from it, and the copies devices send again in its place are their own (seed
                # 1977288351: b's seat lost on d, then the row forged deleted before b pulled).
                lineage = {record.id, *self.ancestors(record)}
                forged_here = any(f["deleted"] and f["id"] in lineage for f in self.forgeries)
                if not server_forgot and not self.counts["replays"] and not forged_here:
                    for entry in sets:
                        if entry.how != "edit" or entry.value == value:
                            continue
                        if any(other is not entry and other.tick >= entry.tick and self.may_have_seen(entry, other)
                               for other in sets):
                            continue  # may have been overwritten by an edit made after seeing it
                        if reinstalled[entry.device] is not None and reinstalled[entry.device] > entry.step:
                            continue  # its list of conflicts went with its container
                        if entry.value not in lost_here.get(entry.device, {}).get((record.kind, record.id, field), []):
                            self.problem("an edit that lost to a concurrent one is listed on its device",
                                         f"{where}: {field} {short(entry.value)!r}, set by {entry.device} at step {entry.step}, "
                                         f"lost to {short(value)!r} and {entry.device}'s `sync conflicts` does not list it")
                # An edit that lost lost to one at most 1 s older, or is listed as lost by `sync
                # conflicts` on some device — with skewed clocks too: stamps are on the server's
                # time scale once a device has synced.
                for entry in sets:
                    if entry.value == value or any(w.wall >= entry.wall - 1000 for w in winners):
                        continue
                    if entry.value in lost_values.get((record.kind, record.id, field), []):
                        continue
                    self.problem("no newer edit lost to an older one",
                                 f"{where}: {field} {short(entry.value)!r} set by {entry.device} at step {entry.step} lost to "
                                 f"{short(value)!r}, set earlier, and no device lists it as lost")

        # Keychain items (values: convergence and no invented value only).
        final_keychain = states[first][1]
        for item, events in self.items.items():
            sets = [e for e in events if e.kind == "key set"]
            deletes = [e for e in events if e.kind == "key delete"]
            present = item in final_keychain
            label = f"keychain item {item[0]}/{item[1]}"
            if present and final_keychain[item] not in [e.value for e in sets]:
                self.problem("no invented values", f"{label} holds {final_keychain[item]!r}, a value no command set")
            if not present and any(all(d.number in s.known for d in deletes) for s in sets):
                self.problem("nothing acknowledged is lost", f"{label} is gone, though set at step "
                             f"{max(s.step for s in sets)} after every deletion of it ({[d.step for d in deletes]})")
            if present and any(all(s.number in d.known for s in sets) and not self.forgotten(d) for d in deletes):
                self.problem("nothing deleted comes back", f"{label} is back, though deleted after every "
                             f"value it was set to (deleted at {[d.step for d in deletes]}, set at {[s.step for s in sets]})")
        for item in final_keychain:
            if item not in self.items:
                self.problem("no invented values", f"keychain item {item} is on the devices and no command set it")

        checks = ["every command exits as documented", "sync now exits 0 (69 or 75 with the server cut)",
                  "the settle phase ends with a pass that moves nothing", "every device holds the same records",
                  "every device holds the same keychain items", "every attachment is present with its file",
                  "nothing acknowledged is lost", "nothing deleted comes back", "no invented values",
                  "each field holds its latest edit", "an edit that lost to a concurrent one is listed on its device",
                  "sync status shows nothing waiting after the settle phase"]
        checks.append("no newer edit lost to an older one")
        checks.append("a device never applies a value older than one it held")
        if self.hostile:
            checks.append("every forgery is refused by a device that can tell it")
        for what in list(self.problems):
            if what not in checks:
                checks.append(what)
        failed = False
        for what in checks:
            details = self.problems.get(what, [])
            more = f" (and {len(details) - 8} more)" if len(details) > 8 else ""
            failed |= not self.report.check(name(what), not details, "; ".join(details[:8]) + more)
        return failed

    def stamp_bounds(self, sets):
        """Sets each FieldSet's `upper`: the latest its stamp's time can be. A stamp is made when
        the edit is pushed (or merged), from the edit's time, and is later than the stamp of the
        value the device's shadow held for the field (HybridStamp.edit): so at most the latest of
        its own time and the bounds of the values set before the device's first clean sync after
        the edit (the last moment it can have been stamped). With clocks that agree, that is the
        edit's own time."""
        by_device = {device.name: device for device in self.devices}
        stamped_by = {}
        for entry in sets:
            after = [step for step in by_device[entry.device].clean_syncs if step >= entry.step]
            stamped_by[id(entry)] = after[0] if after else self.step + 1
            entry.upper = entry.wall
        changed = True
        while changed:
            changed = False
            for entry in sets:
                seen = [other.upper for other in sets if other is not entry and other.step < stamped_by[id(entry)]]
                bound = max([entry.wall] + seen)
                if bound > entry.upper:
                    entry.upper, changed = bound, True

    def may_have_seen(self, earlier, later):
        """Whether the device of FieldSet `later` may have had `earlier` when it made `later`: the
        same device, or one of its syncs came after a sync of `earlier`'s device that came after
        `earlier` (an upper bound: what it may have pulled)."""
        if earlier.device == later.device:
            return earlier.tick <= later.tick
        # By ticks, not steps: a step may sync a device and then edit on it (a reinstall, a join).
        by_device = {device.name: device for device in self.devices}
        sent = [tick for tick in by_device[earlier.device].sync_ticks if tick > earlier.tick]
        return bool(sent) and any(sent[0] < tick < later.tick for tick in by_device[later.device].sync_ticks)

    def moved_out(self, record, deletion):
        """A ticket the deletion took with its booking or trip, which a device that had not seen
        the deletion moved to a booking the deletion did not take: where the move's stamp is the
        later one the ticket is kept and sent again under its new booking (docs/sync.md, Sealed
        deletion: `keptMovedOut`), so the deletion does not make it one that must be gone."""
        return deletion.target != record.id and any(
            entry.value not in deletion.ids and deletion.number not in entry.known
            for entry in record.sets.get("bookingId", ()))

    def forgotten(self, deletion):
        """A deletion no one can give back to a server restored from an older dump: the server no
        longer has it, and the device that made it was reinstalled since (its trash went with its
        container). docs/sync.md, When the server forgets: "What a restored server cannot give back"."""
        device = next(d for d in self.devices if d.name == deletion.device)
        return (deletion.number not in self.server_known and device.reinstalled_step is not None
                and device.reinstalled_step > deletion.step)

    def remove(self):
        for device in self.devices:
            if device.box is not None:
                device.box.remove()


def run_seeds(seed, runs):
    """Run 0 has the master seed itself, each next one a seed drawn from the one before: so
    `--seed S --runs 1` replays exactly the run whose seed is S."""
    seeds = [seed]
    while len(seeds) < runs:
        drawn = random.Random(f"sync-model:next:{seeds[-1]}").randrange(1 << 32)
        # Runs alternate between an honest server and a hostile one (odd seeds; `Run.hostile`).
        seeds.append((drawn & ~1) | ((seeds[0] + len(seeds)) & 1))
    return seeds


def scenario_sync_model(ctx, report, rng):
    """`--runs` model-based runs (20 with --quick, else 40), one fresh zone each, on one server."""
    runs = ctx.runs if getattr(ctx, "runs", None) else (40 if ctx.quick else 80)
    seed = getattr(ctx, "seed", None)
    if seed is None:
        seed = rng.randrange(1 << 32)
    server = Postgres(ctx)
    durations = []
    failed_runs = []
    try:
        result = run([os.path.join(ctx.bin, "app"), "sync", "init-server", "--server", server.conninfo],
                     {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": ctx.work, "LANG": "C.UTF-8"})
        if result.status != 0:
            raise RuntimeError(f"sync init-server failed: {result.describe()}")
        for index, run_seed in enumerate(run_seeds(seed, runs)):
            started = time.monotonic()
            model = Run(ctx, report, server, index, run_seed, ctx.quick)
            failed = False
            try:
                model.setup()
                model.play()
                model.settle()
                failed = model.check()
            except Exception:  # a run that breaks is a failed run; the next one goes on
                report.check(f"sync-model run {index} (seed {run_seed}): ran to the end", False, traceback.format_exc())
                failed = True
            durations.append(time.monotonic() - started)
            counts = ", ".join(f"{k} {v}" for k, v in model.counts.items() if v)
            report.info(f"run {index} seed {run_seed}{' (hostile)' if model.hostile else ''}: {len(getattr(model, 'devices', []))} devices, "
                        f"{getattr(model, 'steps', 0)} steps, {len(model.records)} records; {counts}; "
                        f"{durations[-1]:.1f} s{' FAILED' if failed else ''}")
            if report.verbose and not failed:
                print("  its operations:\n    " + "\n    ".join(model.log), flush=True)
            if failed:
                failed_runs.append(run_seed)
                replay = f"tools/torture --only sync-model --seed {run_seed} --runs 1" + (" --quick" if ctx.quick else "")
                print(f"  run {index} failed; seed {run_seed}; replay: {replay}\n  its operations:\n    "
                      + "\n    ".join(model.log), flush=True)
            if not (failed and ctx.keep):
                model.remove()
        report.info(f"{runs} runs, {len(failed_runs)} failed{' (seeds ' + ', '.join(map(str, failed_runs)) + ')' if failed_runs else ''}; "
                    f"per run {min(durations):.1f}–{max(durations):.1f} s, median {sorted(durations)[len(durations) // 2]:.1f} s, "
                    f"total {sum(durations):.0f} s")
    finally:
        server.remove()
    return None
