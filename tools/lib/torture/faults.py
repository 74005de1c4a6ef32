"""Scenario 3: injected faults."""
from .common import *  # noqa: F401,F403


class FaultCommand:
    """One command to run under fault injection. `prepare(box, ids, rng)` returns the argv words
    (after the executable), stdin and an `apply(ledger, outcome, result)` that records in the
    ledger what the command wrote."""

    def __init__(self, name, exe, prepare):
        self.name, self.exe, self.prepare = name, exe, prepare


def fault_trip_edit(box, ids, rng):
    values = (random_text(rng), "2026-12-11", "2026-12-19", random_text(rng, 0, 30))
    words = ["trip", "edit", ids[1], f"--name={values[0]}", "--start", values[1], "--end", values[2], f"--notes={values[3]}"]
    return words, None, lambda ledger, outcome, result: ledger.trip(ids[1], values, outcome)


def fault_import(box, ids, rng):
    trips = [{"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "name": f"Imported {i}",
              "startDate": "2027-05-01", "endDate": "2027-05-03"} for i in range(20)]
    bookings = [{"tripId": trips[0]["id"], "kind": "train", "title": "ICE 123", "startsAt": "2027-05-01T10:31:00+02:00"}]
    path = os.path.join(box.dir, "import.json")
    with open(path, "w") as handle:
        json.dump({"format": "tripboard-export", "formatVersion": 1, "trips": trips, "bookings": bookings,
                   "preferences": {"mapStyle": "satellite"}}, handle)

    def apply(ledger, outcome, result):
        # Preferences are written after the records are committed; when that write fails, the error
        # says the records were imported, and they must then be there.
        committed = outcome == "failed" and "but the preferences could not be written" in result.err
        for trip in trips:
            ledger.trip(trip["id"], (trip["name"], trip["startDate"], trip["endDate"], ""), "ok" if committed else outcome)
        ledger.pref("mapStyle", "satellite", "killed" if outcome != "failed" or result.status != 0 else outcome)
    return ["import", path], None, apply


def fault_keychain_set(box, ids, rng):
    secret = f"rotated-{rng.getrandbits(64):x}".encode()
    return (["keychain", "set", "api.example.com", "ana@example.com"], secret,
            lambda ledger, outcome, result: ledger.secret("api.example.com", "ana@example.com", secret, outcome))


def fault_share_import(box, ids, rng):
    pdf = box.pdf("fault-ticket.pdf", rng)

    def apply(ledger, outcome, result):
        if outcome == "ok":
            record_attachment(ledger, pdf, json.loads(result.out), ids[0])
    return [pdf, "--trip", ids[0], "--json"], None, apply


def fault_migration(box, ids, rng):
    """A small TripBoard 1 directory (10 trips, 10 places, 2 bookings with their attachment files)
    migrated into the box's container with --merge. The migration is resumable: whatever the
    fault did, running it again without one must finish it, and then every legacy trip is there."""
    legacy = os.path.join(box.dir, "legacy")
    write_legacy(legacy, 2, 0, seed=rng.getrandbits(32))
    db = sqlite3.connect(os.path.join(legacy, "TripBoard.sqlite"))
    trips = db.execute("SELECT lower(id), name, start_date, end_date, coalesce(notes, '') FROM trips").fetchall()
    db.close()
    words = ["--from", legacy, "--merge", "--json"]

    def apply(ledger, outcome, result):
        finished = outcome == "ok"
        if not finished:
            again = run([box.exe("container-migration"), *words], box.env(), None, timeout=DEADLINE)
            finished = again.status == 0
        # Not finished: the trips are expected anyway, so the invariants report the failed resume.
        for trip_id, *values in trips:
            ledger.trip(trip_id, tuple(values), "ok")
    return words, None, apply


# A new command under fault injection is one entry here.
FAULT_COMMANDS = [
    FaultCommand("trip edit", "app", fault_trip_edit),
    FaultCommand("import", "app", fault_import),
    FaultCommand("keychain set", "app", fault_keychain_set),
    FaultCommand("share-extension import", "share-extension", fault_share_import),
    FaultCommand("migration", "container-migration", fault_migration),
]
FAULT_SYSCALLS = ["fsync", "fdatasync", "rename", "renameat", "renameat2", "write", "pwrite64"]
FAULTS = [("ENOSPC", "error=ENOSPC"), ("EIO", "error=EIO"), ("KILL", "signal=KILL")]


def strace_run(box, exe, words, stdin, syscall, spec, when, log):
    argv = ["strace", "-f", "-qq", "-o", log, "-e", f"trace={syscall},execve"]
    if spec:
        argv += ["-e", f"inject={syscall}:{spec}:when={when}"]
    return run(argv + [box.exe(exe), *words], box.env(), stdin, timeout=DEADLINE)


def injected(log, syscall):
    """The lines of the strace log where the fault was injected, and the pids of pdf-worker."""
    hits, workers, first_pid = [], set(), None
    with open(log, errors="replace") as handle:
        for line in handle:
            pid = line.split(" ", 1)[0]
            first_pid = first_pid or pid
            if "execve(" in line and "pdf-worker" in line:
                workers.add(pid)
            if "(INJECTED)" in line or "+++ killed by SIGKILL +++" in line:
                hits.append(line.rstrip())
    return hits, workers, first_pid


def count_calls(template, command, ids, rng, syscall):
    """How many times the command calls syscall (the most in any one process or thread)."""
    box = template.clone("fault-count")
    words, stdin, _ = command.prepare(box, ids, rng)
    log = os.path.join(box.dir, "strace.log")
    strace_run(box, command.exe, words, stdin, syscall, None, 0, log)
    counts = {}
    with open(log, errors="replace") as handle:
        for line in handle:
            pid, _, rest = line.partition(" ")
            if rest.lstrip().startswith(syscall + "("):
                counts[pid] = counts.get(pid, 0) + 1
    box.remove()
    return max(counts.values(), default=0)


def scenario_faults(ctx, report, rng):
    if not shutil.which("strace"):
        report.skip("faults", "strace is not installed")
        return None
    probe = run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "inject=fsync:error=EIO:when=1", "true"])
    if probe.status != 0:
        report.skip("faults", f"strace cannot trace here: {probe.err.strip()[:200]}")
        return None
    ledger0 = Ledger()
    template, ids = seeded_box(ctx, "faults-template", rng, ledger0, trips=2)
    summary = []
    for command in FAULT_COMMANDS:
        for syscall in FAULT_SYSCALLS:
            calls = count_calls(template, command, ids, rng, syscall)
            if calls == 0:
                summary.append(f"{command.name}/{syscall}: not called")
                continue
            # Full: every N until the command completes untouched. Quick: N = 1 and one other N,
            # chosen by the seed.
            for fault_name, spec in FAULTS:
                label = f"faults [{command.name}, {syscall} {fault_name}]"
                plan = None if not ctx.quick else sorted({1, rng.randint(1, calls)})
                n, runs, hits_total, outcomes = (plan or [1])[0], 0, 0, {}
                while n <= 2000:
                    box = template.clone("fault")
                    ledger = ledger0.copy()
                    words, stdin, apply = command.prepare(box, ids, rng)
                    log = os.path.join(box.dir, "strace.log")
                    result = strace_run(box, command.exe, words, stdin, syscall, spec, n, log)
                    hits, workers, main_pid = injected(log, syscall)
                    runs += 1
                    on_std = any(re.search(r"\bwrite\((1|2),", hit) for hit in hits)
                    # pdf-worker's answer is a pipe: a failed write there is "the worker failed" (exit 1,
                    # documented), a fault no pipe produces in real life.
                    worker_pipe = any(hit.split(" ", 1)[0] in workers and re.search(r"\bwrite\(1,", hit) for hit in hits)
                    in_worker = hits and all(hit.split(" ", 1)[0] in workers for hit in hits)
                    main_killed = result.signal == signal.SIGKILL or any(
                        hit.startswith(f"{main_pid} +++ killed") for hit in hits)
                    if result.hung:
                        outcome = "hung"
                    elif main_killed:
                        outcome = "killed"
                    elif result.status == 0:
                        outcome = "ok"
                    else:
                        outcome = "failed"
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                    step = f"{label} N={n}"
                    problems = []
                    if outcome == "hung":
                        problems.append("hung")
                    elif outcome == "failed":
                        if (result.status not in FAILURE_STATUSES and not (worker_pipe and result.status == 1)) \
                                or result.status is None:
                            problems.append(f"status {result.returncode} is not a documented failure status")
                        if not on_std and not result.one_line_error():
                            problems.append("no clear one-line error")
                    # A failure reported after the data was written (the fault hit the output, or a
                    # step after the commit) may leave the write in place: like a kill.
                    apply(ledger, "killed" if (outcome == "failed" and (on_std or in_worker)) or outcome == "killed"
                          else ("ok" if outcome == "ok" else "failed"), result)
                    ok = report.check(f"{step}: exits 0 or a documented failure with one `error:` line",
                                      not problems, "; ".join(problems) + " — " + result.describe() + f" injected: {hits[:2]}")
                    ok &= check_invariants(box, ledger, report, step)
                    if ok or not ctx.keep:
                        box.remove()
                    else:
                        report.info(f"kept {box.dir}")
                    hits_total += bool(hits)
                    if plan:
                        plan.pop(0)
                        if not plan:
                            break
                        n = plan[0]
                    elif not hits:
                        break
                    else:
                        n += 1
                summary.append(f"{command.name}/{syscall}/{fault_name}: {runs} runs, {hits_total} faults hit, "
                               + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    for line in summary:
        report.info(line)
    template.remove()
    return None
