"""Scenario 1: mixed load with random SIGKILLs."""
from .common import *  # noqa: F401,F403


class Load:
    """The processes of one round of mixed load, and the bookkeeping of which ones we killed."""

    def __init__(self, box, ledger, report, rng, label):
        self.box, self.ledger, self.report, self.rng, self.label = box, ledger, report, rng, label
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.running = {}   # pid -> Popen of writers that may be killed
        self.killed = set()
        self.counts = {}

    def count(self, key):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def command(self, kind, argv, stdin=None, killable=True):
        """Runs one command; returns (Result, killed by us)."""
        started = time.monotonic()
        process = spawn(argv, self.box.env(), stdin)
        if killable:
            with self.lock:
                self.running[process.pid] = process
        result = collect(process, argv, started, stdin)
        with self.lock:
            self.running.pop(process.pid, None)
            killed = process.pid in self.killed
            self.killed.discard(process.pid)
        self.judge(kind, result, killed)
        return result, killed

    def judge(self, kind, result, killed):
        """Busy (75) is fine under load; a kill is fine when it was ours; anything else fails."""
        if result.hung:
            self.report.check(f"{self.label}: {kind} finished within {DEADLINE:.0f} s", False, result.describe())
        elif killed and result.signal == signal.SIGKILL:
            self.count(f"{kind} killed")
        elif result.status == 0:
            self.count(f"{kind} ok")
        elif result.status == 75:
            self.count(f"{kind} busy")
            if not result.one_line_error() and not kind.startswith("widget"):
                self.report.check(f"{self.label}: {kind} busy with a one-line error", False, result.describe())
        else:
            self.count(f"{kind} unexpected")
            self.report.check(f"{self.label}: {kind} exits 0 or 75 under load", False, result.describe())

    def writer(self, index, seed):
        """Edits only its own trips, one preference key and one keychain item, so that it alone
        decides what their acknowledged value is."""
        rng = random.Random(seed)
        app = self.box.exe("app")
        own = []
        pref_key = PREF_KEYS[index % len(PREF_KEYS)]
        service = f"writer{index}.example.com"
        while not self.stop.is_set():
            action = rng.choices(["add", "edit", "delete", "place", "booking", "pref", "secret", "read"],
                                 [4, 5, 1, 2, 2, 2, 2, 1])[0]
            trip_id = self.ledger.live_trip(rng, own)
            if action == "add" or (trip_id is None and action in ("edit", "delete", "place", "booking")):
                values = (random_text(rng),) + random_dates(rng) + (random_text(rng, 0, 60, True).strip(),)
                result, killed = self.command("trip add", [app, "trip", "add", f"--name={values[0]}", "--start", values[1],
                                                           "--end", values[2], f"--notes={values[3]}"])
                if result.status == 0:
                    trip_id = result.out.strip()
                    if UUID_RE.match(trip_id):
                        self.ledger.trip(trip_id, values, "ok")
                        own.append(trip_id)
                    else:
                        self.report.check(f"{self.label}: trip add prints a new id", False, result.out)
            elif action == "edit":
                with self.ledger.lock:
                    current = next(iter(self.ledger.trips[trip_id]))
                values = (random_text(rng),) + random_dates(rng) + (random_text(rng, 0, 60, True).strip(),)
                if rng.random() < 0.3:
                    values = (values[0],) + current[1:]
                result, killed = self.command("trip edit", [app, "trip", "edit", trip_id[:rng.choice([8, 13, 36])],
                                                            f"--name={values[0]}", "--start", values[1], "--end", values[2],
                                                            f"--notes={values[3]}"])
                self.ledger.trip(trip_id, values, outcome_of(result, killed))
            elif action == "delete":
                result, killed = self.command("trip delete", [app, "trip", "delete", trip_id])
                self.ledger.trip(trip_id, DELETED, outcome_of(result, killed))
            elif action in ("place", "booking"):
                argv = [app, "place", "add", "--trip", trip_id, f"--name={random_text(rng)}", f"--city={random_text(rng, 0, 10)}"] \
                    if action == "place" else \
                    [app, "booking", "add", "--trip", trip_id, "--kind", rng.choice(["flight", "train", "hotel", "Car"]),
                     f"--title={random_text(rng)}", "--starts-at", f"2027-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:30+02:00"]
                result, killed = self.command(f"{action} add", argv)
                if result.status == 0:
                    with self.ledger.lock:
                        self.ledger.children[result.out.strip()] = (action, trip_id)
            elif action == "pref":
                value = rng.choice(PREF_CHOICES[pref_key])
                result, killed = self.command("prefs set", [app, "prefs", "set", pref_key, value])
                self.ledger.pref(pref_key, value, outcome_of(result, killed))
            elif action == "secret":
                secret = f"tok-{rng.getrandbits(96):x}".encode()
                result, killed = self.command("keychain set", [app, "keychain", "set", service, f"account{index}"],
                                              stdin=secret)
                self.ledger.secret(service, f"account{index}", secret, outcome_of(result, killed))
            else:
                result, _ = self.command("trip list", [app, "trip", "list", "--json"], killable=False)
                if result.status == 0:
                    try:
                        json.loads(result.out)
                    except ValueError:
                        self.report.check(f"{self.label}: trip list --json parses", False, result.out[:200])

    def importer(self, trip_id, seed):
        rng = random.Random(seed)
        share = self.box.exe("share-extension")
        number = 0
        while not self.stop.is_set():
            number += 1
            pdf = self.box.pdf(f"ticket-{seed % 1000}-{number}.pdf", rng, size=rng.choice([0, 0, 0, 200_000, 2_000_000]))
            result, killed = self.command("share-extension", [share, pdf, "--trip", trip_id, "--json"])
            if result.status == 0:
                try:
                    answer = json.loads(result.out)
                    if not record_attachment(self.ledger, pdf, answer, trip_id):
                        self.report.check(f"{self.label}: share-extension reports the file's BLAKE2b and size",
                                          False, result.out[:300])
                except (ValueError, KeyError) as error:
                    self.report.check(f"{self.label}: share-extension --json parses", False, f"{error}: {result.out[:300]}")
            os.remove(pdf)

    def reader(self):
        widget = self.box.exe("widget")
        while not self.stop.is_set():
            result, _ = self.command("widget", [widget, "--json"], killable=False)
            if result.status in (0, 75):
                try:
                    status = json.loads(result.out)["status"]
                    if (status == "updating") != (result.status == 75):
                        self.report.check(f"{self.label}: widget status matches its exit", False, result.out[:200])
                except (ValueError, KeyError):
                    self.report.check(f"{self.label}: widget --json parses", False, result.describe())
            time.sleep(0.05)

    def foreign(self, seed):
        """The sqlite3 CLI taking the write lock now and then, holding it, and committing."""
        rng = random.Random(seed)
        while not self.stop.wait(rng.uniform(0.5, 2.5)):
            process = subprocess.Popen(self.box.sqlite_argv(options=["-cmd", ".output /dev/null", "-cmd", ".filectrl persist_wal 1",
                                                                     "-cmd", ".output stdout", "-cmd", ".timeout 8000"]),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=self.box.sqlite_env(), start_new_session=True)
            try:
                process.stdin.write(b"BEGIN IMMEDIATE;\nSELECT 'locked';\n")
                process.stdin.flush()
                got = process.stdout.readline()
                if got.strip() == b"locked":
                    self.count("sqlite3 held the write lock")
                    time.sleep(rng.uniform(0.2, 1.5))
                process.stdin.write(b"COMMIT;\n")
                process.stdin.close()
                process.wait(timeout=30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                kill_group(process)
                process.wait()
            process.stdout.close()
            process.stderr.close()

    def killer(self, seed):
        rng = random.Random(seed)
        while not self.stop.wait(rng.uniform(0.05, 0.6)):
            with self.lock:
                candidates = [p for p in self.running.values() if p.returncode is None]
                if not candidates:
                    continue
                victim = rng.choice(candidates)
                self.killed.add(victim.pid)
                kill_group(victim)
            self.count("SIGKILL sent")


def scenario_load(ctx, report, rng):
    ledger = Ledger()
    box, seed_trips = seeded_box(ctx, "load", rng, ledger, trips=2)
    inbox = seed_trips[0]  # the trip share-extension files tickets into; never deleted
    rounds = max(2, round(ctx.duration / 15))
    round_length = ctx.duration / rounds
    report.info(f"{rounds} rounds of {round_length:.1f} s: 3 app writers, share-extension, widget, widget --watch, "
                "foreign sqlite3, random SIGKILLs")
    totals = {}
    for number in range(1, rounds + 1):
        label = f"load round {number}"
        load = Load(box, ledger, report, rng, label)
        watch_out = os.path.join(box.dir, f"watch-{number}.out")
        with open(watch_out, "wb") as handle:
            watch = subprocess.Popen([box.exe("widget"), "--watch", "--json"], stdout=handle, stderr=subprocess.PIPE,
                                     env=box.env(), start_new_session=True)
        threads = [threading.Thread(target=load.writer, args=(i, rng.getrandbits(32))) for i in range(3)]
        threads += [threading.Thread(target=load.importer, args=(inbox, rng.getrandbits(32))),
                    threading.Thread(target=load.reader),
                    threading.Thread(target=load.foreign, args=(rng.getrandbits(32),)),
                    threading.Thread(target=load.killer, args=(rng.getrandbits(32),))]
        for thread in threads:
            thread.start()
        time.sleep(round_length)
        load.stop.set()
        for thread in threads:
            thread.join()
        alive = watch.poll() is None
        watch.send_signal(signal.SIGTERM)
        status, stderr = wait_or_kill(watch, 10)
        with open(watch_out) as handle:
            lines = handle.read().splitlines()
        parsed = True
        try:
            answers = [json.loads(line)["status"] for line in lines]
        except (ValueError, KeyError):
            parsed, answers = False, []
        report.check(f"{label}: widget --watch ran the whole round and exits 0 on SIGTERM",
                     alive and status == 0, f"alive={alive} status={status} stderr={stderr[-300:]!r}")
        report.check(f"{label}: widget --watch printed one JSON answer per line", parsed and len(answers) >= 1,
                     f"{len(lines)} lines; first: {lines[:1]}")
        for key, value in load.counts.items():
            totals[key] = totals.get(key, 0) + value
        report.info(f"round {number}: " + ", ".join(f"{k} {v}" for k, v in sorted(load.counts.items())))
        check_invariants(box, ledger, report, label)
    report.info("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    report.check("load: the writers were killed at least once and acknowledged writes were made",
                 totals.get("SIGKILL sent", 0) > 0 and totals.get("trip add ok", 0) > 0, str(totals))
    return box
