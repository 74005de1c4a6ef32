"""Scenario 2: a stopped lock holder."""
from .common import *  # noqa: F401,F403


def big_import(path, count, rng):
    trips = [{"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "name": f"Bulk {i}",
              "startDate": "2027-03-01", "endDate": "2027-03-05"} for i in range(count)]
    with open(path, "w") as handle:
        json.dump({"format": "tripboard-export", "formatVersion": 1, "trips": trips}, handle)
    return [trip["id"] for trip in trips]


def holds_flock(pid):
    with open("/proc/locks") as handle:
        return any(" FLOCK " in line and "->" not in line and line.split()[4] == str(pid) for line in handle)


def scenario_stall(ctx, report, rng):
    ledger = Ledger()
    box, trips = seeded_box(ctx, "stall", rng, ledger, trips=2)
    store_lock_held = lambda: box.sqlite("BEGIN IMMEDIATE; ROLLBACK;", busy_ms=0).status != 0

    def probes(tag, stopped):
        """(name, argv, env, stdin) of every other process: with a 1 s lock timeout while the holder
        is stopped, with the default one afterwards (the probes then only wait for each other)."""
        pdf = box.pdf(f"stall-{tag}.pdf", rng)
        fast = {"TRIPBOARD_LOCK_TIMEOUT": "1"} if stopped else {}
        return [
            ("app trip add", box.argv("app", "trip", "add", "--name", f"Stall {tag}", "--start", "2027-01-01", "--end", "2027-01-02"), fast, None),
            ("app trip edit", box.argv("app", "trip", "edit", trips[1], "--notes", f"stall {tag}"), fast, None),
            ("app trip list", box.argv("app", "trip", "list"), fast, None),
            ("app prefs set", box.argv("app", "prefs", "set", "mapStyle", "hybrid"), fast, None),
            ("app keychain set", box.argv("app", "keychain", "set", "stall.example.com", tag), fast, f"s-{tag}".encode()),
            ("app container check --repair", box.argv("app", "container", "check", "--repair"), fast, None),
            ("widget", box.argv("widget"), {}, None),
            ("widget --json", box.argv("widget", "--json"), {}, None),
            ("share-extension", box.argv("share-extension", pdf, "--trip", trips[0], "--json"), fast, None),
        ]

    def run_probes(label, tag, expect, deadline_for):
        """All probes at once; each must end with a status in expect[name] within its deadline."""
        results = {}
        before = snapshot(os.path.join(box.container, "attachments"), contents=False)
        threads = []
        for name, argv, env, stdin in probes(tag, tag.endswith("a")):
            def go(name=name, argv=argv, env=env, stdin=stdin):
                results[name] = run(argv, box.env(env), stdin, timeout=deadline_for(name) + 30)
            threads.append(threading.Thread(target=go))
            threads[-1].start()
        for thread in threads:
            thread.join()
        for name, result in results.items():
            allowed = expect(name)
            ok = result.status in allowed and not result.hung and result.elapsed <= deadline_for(name)
            if ok and result.status == 75 and not name.startswith("widget"):
                ok = result.one_line_error() and re.search(r"busy|locked", result.err)
            report.check(f"{label}: {name} → {'/'.join(map(str, sorted(allowed)))} within {deadline_for(name):.1f} s",
                         ok, result.describe())
            record_probe(name, result, tag)
        staged = os.listdir(os.path.join(box.container, "tmp"))
        if results["share-extension"].status != 0:
            after = snapshot(os.path.join(box.container, "attachments"), contents=False)
            # Only files count: an import may leave the empty shard directory it created.
            changed = [c for c in diff(before, after) if (after.get(c[1:]) or before.get(c[1:]))[0] != "dir"]
            report.check(f"{label}: a refused share-extension leaves no file in attachments/ or tmp/",
                         not changed and not staged, f"attachments/: {changed}; tmp: {staged}")
        return results

    def record_probe(name, result, tag):
        outcome = outcome_of(result)
        if name == "app trip add" and outcome == "ok":
            ledger.trip(result.out.strip(), (f"Stall {tag}", "2027-01-01", "2027-01-02", ""), "ok")
        elif name == "app trip edit":
            current = next(iter(ledger.trips[trips[1]]))
            ledger.trip(trips[1], current[:3] + (f"stall {tag}",), outcome)
        elif name == "app prefs set":
            ledger.pref("mapStyle", "hybrid", outcome)
        elif name == "app keychain set":
            ledger.secret("stall.example.com", tag, f"s-{tag}".encode(), outcome)
        elif name == "share-extension" and outcome == "ok":
            answer = json.loads(result.out)
            record_attachment(ledger, result.argv[1], answer, trips[0])

    # Three holders: a foreign flock -x, the sqlite3 CLI inside BEGIN IMMEDIATE, and an `app import`.
    holders = []

    def flock_holder():
        process = subprocess.Popen(["flock", "-x", os.path.join(box.container, "container.lock"), "sleep", "600"],
                                   start_new_session=True)
        deadline = time.monotonic() + 10
        while not holds_flock(process.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        return process, None

    def sqlite_holder():
        process = subprocess.Popen(box.sqlite_argv(options=["-cmd", ".output /dev/null", "-cmd", ".filectrl persist_wal 1",
                                                            "-cmd", ".output stdout"]), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   env=box.sqlite_env(), start_new_session=True)
        process.stdin.write(b"BEGIN IMMEDIATE;\nSELECT 'locked';\n")
        process.stdin.flush()
        process.stdout.readline()
        return process, None

    bulk = os.path.join(box.dir, "bulk.json")
    bulk_ids = big_import(bulk, 100_000, rng)

    def import_holder():
        process = subprocess.Popen(box.argv("app", "import", bulk), env=box.env(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, start_new_session=True)
        # Stop it inside its write transaction: stop, look, go on a little, until it holds the lock.
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(rng.uniform(0.01, 0.05))
            kill_group(process, signal.SIGSTOP)
            if store_lock_held():
                break
            kill_group(process, signal.SIGCONT)
        return process, bulk_ids

    holders = [("flock -x container.lock", flock_holder), ("sqlite3 BEGIN IMMEDIATE", sqlite_holder),
               ("app import (big file)", import_holder)]
    busy_timeout = 5.0
    for holder_name, start in holders:
        label = f"stall [{holder_name}]"
        process, ids = start()
        if process.poll() is not None:
            report.check(f"{label}: holder running when stopped", False, f"exited {process.returncode}")
            continue
        kill_group(process, signal.SIGSTOP)
        sqlite_locked = store_lock_held() if process.poll() is None else False
        if holder_name.startswith("flock"):
            expect = lambda name: {75}
            deadline_for = lambda name: 1.0 + 2.0 if not name.startswith("widget") else 0.25 + 2.0
        else:
            def expect(name, locked=sqlite_locked, exclusive_held=holder_name.startswith("app")):
                if name == "app container check --repair":
                    return {75} if exclusive_held else {0, 75}
                if name in ("app trip add", "app trip edit", "share-extension"):
                    return {75} if locked else {0}
                return {0}
            deadline_for = lambda name: busy_timeout + 3.0 if name in ("app trip add", "app trip edit", "share-extension") \
                else 1.0 + 3.0
        report.info(f"{holder_name}: stopped (SQLite write lock held: {sqlite_locked})")
        run_probes(f"{label} stopped", f"{len(holder_name)}a", expect, deadline_for)
        kill_group(process, signal.SIGCONT)
        if holder_name.startswith("flock"):
            kill_group(process, signal.SIGTERM)
            process.wait()
        elif holder_name.startswith("sqlite3"):
            process.stdin.write(b"COMMIT;\n")
            process.stdin.close()
            process.wait(timeout=30)
            process.stdout.close()
        else:
            status, stderr = wait_or_kill(process, 120)
            report.check(f"{label}: the stopped import completes after SIGCONT", status == 0, f"{status} {stderr[-300:]}")
            if status == 0:
                present = {row["id"] for row in box.rows("SELECT id FROM trips WHERE name LIKE 'Bulk %'")}
                report.check(f"{label}: every imported trip present", set(ids) <= present,
                             f"{len(set(ids) - present)} missing of {len(ids)}")
        # All at once, `container check --repair` among them: it takes the exclusive lock, and a
        # widget that meets it for more than 250 ms rightly says "updating" (75). Once they are
        # done, the widget must answer.
        run_probes(f"{label} after SIGCONT", f"{len(holder_name)}b", lambda name: {0, 75} if name.startswith("widget") else {0},
                   lambda name: busy_timeout + 5.0)
        settled = run(box.argv("widget"), box.env({}), None, timeout=30)
        report.check(f"{label} after SIGCONT: widget, once the others are done → 0", settled.status == 0, settled.describe())
        check_invariants(box, ledger, report, label)
    return box
