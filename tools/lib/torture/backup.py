"""Scenario 8: backup and restore under load and kills."""
from .common import *  # noqa: F401,F403


BACKUP_PASSPHRASE = b"torture passphrase\n"


def scenario_backup(ctx, report, rng):
    """Backups taken while writers add trips, some SIGKILLed at a random moment (then taken
    again); each restored into a fresh path, some restores SIGKILLed (then run again), and a
    `--replace` over a copy of the container killed at a random moment. Checked: no file at a
    killed backup's name; every trip acknowledged before a backup began is in its restore; the
    restored container is whole (integrity, every attachment with its file, `container check`
    clean, the keychain readable); a killed `--replace` leaves the old or the new container at the
    path, whole, and the old one is never lost; two or three restores started at once into one
    target (one of them sometimes killed) publish at most one container, the others waiting and
    then refused (75) or finding the target taken (73), and what is there is whole."""
    ledger = Ledger()
    box, ids = seeded_box(ctx, "backup", rng, ledger, trips=3)
    env = {"TRIPBOARD_BACKUP_WORK_FACTOR": "10"}
    rounds = 3 if ctx.quick else 12
    for number in range(rounds):
        acknowledged = [row["id"] for row in box.rows("SELECT id FROM trips")]
        stop = threading.Event()
        writer = threading.Thread(target=lambda: [box.app("trip", "add", "--name", f"During {number}", "--start", "2027-01-01",
                                                           "--end", "2027-01-02") for _ in iter(stop.is_set, True)])
        writer.start()
        file = os.path.join(box.dir, f"backup-{number}.age")
        argv = box.argv("app", "backup", "--output", file)
        killed = rng.random() < 0.5 and kill_at_random(argv, box.env(env), BACKUP_PASSPHRASE, rng, 0.4)
        if killed and os.path.exists(file):
            # Killed after its rename (while it printed its summary): then the file is whole.
            whole = run(box.argv("app", "--container", os.path.join(box.dir, "dry"), "restore", file, "--dry-run"),
                        box.env(env), BACKUP_PASSPHRASE)
            report.check(f"backup [round {number}]: a killed backup leaves no file at its name, or a whole one",
                         whole.status == 0, whole.describe())
        result = run(argv, box.env(env), BACKUP_PASSPHRASE)
        stop.set()
        writer.join()
        if not report.check(f"backup [round {number}]: the backup is written", result.status == 0, result.describe()):
            continue
        target = os.path.join(box.dir, f"restored-{number}")
        restore = box.argv("app", "--container", target, "restore", file)
        if rng.random() < 0.5:
            kill_at_random(restore, box.env(env), BACKUP_PASSPHRASE, rng, 0.3)
        result = run(restore, box.env(env), BACKUP_PASSPHRASE)
        # A kill that came after the publication leaves the restored container there: the second
        # restore then refuses to go over it (73), and that container is the one to check.
        finished = result.status == 0 or (result.status == 73 and os.path.exists(os.path.join(target, "container.json")))
        if report.check(f"backup [round {number}]: the restore finishes", finished, result.describe()):
            check_restored(box, target, acknowledged, report, f"backup [round {number}]")
    replace_under_kills(box, rng, report, env, rounds)
    concurrent_restores(box, rng, report, env, rounds)
    return box


def kill_at_random(argv, env, stdin, rng, longest):
    """Starts `argv`, SIGKILLs it after a random delay up to `longest` seconds; True if it died so."""
    process = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    process.stdin.write(stdin)
    process.stdin.close()
    time.sleep(rng.uniform(0, longest))
    process.send_signal(signal.SIGKILL)
    return process.wait() == -signal.SIGKILL


def check_restored(box, target, acknowledged, report, label):
    restored = Box(box.ctx, "restored-view", container=target, device_of=box)
    restored.dir, restored.device, restored.machine_id = box.dir, box.device, box.machine_id
    trips = {row["id"] for row in restored.rows("SELECT id FROM trips")}
    missing = [trip for trip in acknowledged if trip not in trips]
    report.check(f"{label}: every trip acknowledged before the backup began is restored", not missing, f"missing: {missing[:5]}")
    check_invariants(restored, None, report, label + " (the restored container)")
    result = restored.app("keychain", "get", "api.example.com", "ana@example.com")
    report.check(f"{label}: the restored keychain reads on this device", result.status == 0, result.describe())


def replace_under_kills(box, rng, report, env, rounds):
    """`restore --replace` over a copy of the container, killed at random moments."""
    file = os.path.join(box.dir, "backup-0.age")
    if not os.path.exists(file):
        return
    for number in range(rounds):
        copy = box.clone("backup-replace")
        marker = copy.ok("trip", "add", "--name", "Only in the old container", "--start", "2027-05-01", "--end", "2027-05-02")
        restore = copy.argv("app", "restore", file, "--replace")
        kill_at_random(restore, copy.env(env), BACKUP_PASSPHRASE, rng, 0.5)
        label = f"backup [replace, round {number}]"
        now = copy.app("trip", "list", "--json")
        report.check(f"{label}: a whole container is at the path", now.status == 0, now.describe())
        result = run(restore, copy.env(env), BACKUP_PASSPHRASE)
        report.check(f"{label}: the restore then finishes", result.status == 0, result.describe())
        holders = [name for name in os.listdir(copy.dir) if name.startswith("container.replaced-")]
        # Read as the same device (its store is sealed under this device's keys).
        found = any(marker in copy.app("--container", os.path.join(copy.dir, name), "trip", "list", "--json").out
                    for name in holders)
        report.check(f"{label}: the old container is kept", found or marker in now.out, f"kept: {holders}")
        copy.remove()


def concurrent_restores(box, rng, report, env, rounds):
    """Two or three restores of one backup started at once into one target, with a short or the
    default lock timeout, one of them SIGKILLed at a random moment in some rounds: at most one
    publishes; the others end waiting (75) or finding the target taken (73), never 74 and never a
    half-made container; what is at the target is whole; and no staging directory outlives the
    next restore of that target (a dry run)."""
    file = os.path.join(box.dir, "backup-0.age")
    if not os.path.exists(file):
        return
    for number in range(rounds):
        name = f"concurrent-{number}"
        target = os.path.join(box.dir, name)
        timeout = rng.choice(["0.2", "5"])
        argv = box.argv("app", "--container", target, "restore", file)
        processes = []
        for _ in range(rng.randint(2, 3)):
            process = subprocess.Popen(argv, env=box.env({**env, "TRIPBOARD_LOCK_TIMEOUT": timeout}), stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            process.stdin.write(BACKUP_PASSPHRASE)
            process.stdin.close()
            processes.append(process)
        if rng.random() < 0.4:
            time.sleep(rng.uniform(0, 0.4))
            rng.choice(processes).send_signal(signal.SIGKILL)
        outcomes = []
        for process in processes:
            status = process.wait(timeout=300)
            outcomes.append((status, process.stderr.read().decode(errors="replace").strip()))
            process.stderr.close()
        label = f"backup [concurrent restores, round {number}, lock timeout {timeout} s]"
        statuses = [status for status, _ in outcomes]
        report.check(f"{label}: each restore publishes, waits and is refused (75), finds the target taken (73) or was killed",
                     all(status in (0, 73, 75, -signal.SIGKILL) for status in statuses), f"{outcomes}")
        report.check(f"{label}: at most one restore publishes", statuses.count(0) <= 1, f"{outcomes}")
        if not os.path.exists(os.path.join(target, "container.json")):
            result = run(argv, box.env(env), BACKUP_PASSPHRASE)
            report.check(f"{label}: a restore afterwards finishes", result.status == 0, result.describe())
        check_restored(box, target, [], report, label)
        dry = run(box.argv("app", "--container", target, "restore", file, "--dry-run"), box.env(env), BACKUP_PASSPHRASE)
        report.check(f"{label}: a dry run over it says it would need --replace", dry.status == 0 and "needs --replace" in dry.out,
                     dry.describe())
        leftovers = [entry for entry in os.listdir(box.dir) if entry.startswith(f".{name}.restoring-")]
        report.check(f"{label}: no staging directory outlives the next restore", not leftovers, f"{leftovers}")
