"""Scenario: the container migration killed at random, at scale."""
from .common import *  # noqa: F401,F403
import tempfile


def legacy_expectations(legacy):
    """What a migration of `legacy` must produce: the row counts and each present file's hash."""
    db = sqlite3.connect(f"file:{os.path.join(legacy, 'TripBoard.sqlite')}?mode=ro", uri=True)
    counts = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
              for table in ("trips", "places", "bookings", "attachments")}
    hashes = {}
    for attachment_id, relative in db.execute("SELECT id, relative_path FROM attachments"):
        path = os.path.join(legacy, relative)
        if os.path.isfile(path):
            hashes[attachment_id.lower()] = blake2b_file(path)
    db.close()
    return counts, hashes


def migration_environment(ctx):
    """The migration's device: a directory of the run's own (never the user's), its machine id."""
    device, machine_id = os.path.join(ctx.work, "migration-device"), os.path.join(ctx.work, "migration-machine-id")
    if not os.path.exists(machine_id):
        with open(machine_id, "w") as handle:
            handle.write("0123456789abcdef0123456789abcdef\n")
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TZ": "UTC", "HOME": ctx.work,
            "TRIPBOARD_DEVICE_DIR": device, "TRIPBOARD_MACHINE_ID_FILE": machine_id}


def migration_problems(exe, container, legacy, expected, environment):
    """Everything a finished migration must hold: every row, every file with its hash and mode
    0600, nothing of the migration's own but the commit marker, in tmp/ at most the leftovers of
    killed atomic writes (which `container check --repair` removes), no old location."""
    counts, hashes = expected
    problems = []
    keys = sealed_file.class_keys(environment["TRIPBOARD_DEVICE_DIR"], environment["TRIPBOARD_MACHINE_ID_FILE"])
    # The sealed store, opened by the second implementation into a plain copy (tools/lib/sealed_store.py).
    plain = os.path.join(tempfile.mkdtemp(), "store.sqlite")
    sealed_store.plain_copy(os.path.join(container, "store", "TripBoard.sqlite"), plain, keys)
    db = sqlite3.connect(f"file:{plain}?mode=ro", uri=True)
    try:
        if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            problems.append("integrity_check failed")
        for table, count in counts.items():
            found = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            if found != count:
                problems.append(f"{table}: {found} rows, {count} in version 1")
        for attachment_id, relative, content_hash in db.execute("SELECT id, relative_path, content_hash FROM attachments"):
            if attachment_id not in hashes:
                continue
            path = os.path.join(container, relative)
            if not os.path.isfile(path):
                problems.append(f"{relative} is missing")
            elif stat.S_IMODE(os.lstat(path).st_mode) != 0o600:
                problems.append(f"{relative} is {oct(stat.S_IMODE(os.lstat(path).st_mode))}, not 0600")
            elif not open(path, "rb").read(8) == sealed_file.MAGIC:
                problems.append(f"{relative} is in the clear")
            elif plaintext_hash(path, keys) != hashes[attachment_id] or content_hash != hashes[attachment_id]:
                problems.append(f"{relative}: hash differs")
    finally:
        db.close()
    own = sorted(os.listdir(os.path.join(container, "migration")))
    if own != ["committed.json"]:
        problems.append(f"migration/ holds {own[:5]}")
    # A kill inside an atomic write (the manifest, the preferences) leaves its temporary file in
    # tmp/, as for every command: documented, and removed by `container check --repair`.
    temporary = os.path.join(container, "tmp")
    leftovers = os.listdir(temporary) if os.path.isdir(temporary) else []
    unexpected = [name for name in leftovers if not re.fullmatch(r"[\w.-]+\.\d+\.\d+\.tmp", name)]
    if unexpected:
        problems.append(f"tmp/ holds {unexpected[:5]}")
    if leftovers:
        repair = run([os.path.join(os.path.dirname(exe), "app"), "--container", container, "container", "check", "--repair",
                      "--grace", "0"], env=environment)
        if repair.status != 0 or os.listdir(temporary):
            problems.append(f"container check --repair left {os.listdir(temporary)[:5]}: {repair.describe()}")
    if os.path.lexists(legacy):
        problems.append("the old location is still there")
    return problems


def scenario_migration(ctx, report, rng):
    """container-migration of a directory with many files, SIGKILLed at a random moment of its run
    (and, in a third of the rounds, again while it resumes), then resumed: on one filesystem and
    from /dev/shm to the disk (EXDEV), so that copy batches and both staging threads are hit."""
    files, rounds = (300, 12) if ctx.quick else (1200, 100)
    exe = os.path.join(ctx.bin, "container-migration")
    template = os.path.join(ctx.work, "migration-template")
    write_legacy(template, files, 4, seed=rng.getrandbits(32), file_size=20_000)
    # As version 1 left them (this run's umask is 077): readable by all, so that a migrated file
    # that kept its old mode shows.
    for name in os.listdir(os.path.join(template, "Attachments")):
        os.chmod(os.path.join(template, "Attachments", name), 0o644)
    places = [("same filesystem", template, os.path.join(ctx.work, "migration-legacy"))]
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.stat(shm).st_dev != os.stat(ctx.work).st_dev:
        shm_template = tempfile.mkdtemp(prefix="tripboard-torture-", dir=shm)
        shutil.rmtree(shm_template)
        shutil.copytree(template, shm_template, symlinks=True)
        places.append(("across filesystems", shm_template, shm_template + "-legacy"))
    else:
        report.skip("migration across filesystems", "/dev/shm is missing or on the same filesystem")
    try:
        expected = {source: legacy_expectations(source) for _, source, _ in places}
        environment = migration_environment(ctx)
        durations = {}
        for name, source, legacy in places:
            shutil.copytree(source, legacy, symlinks=True)
            container = os.path.join(ctx.work, "migration-measure")
            started = time.monotonic()
            result = run([exe, "--from", legacy, "--container", container], env=environment)
            durations[name] = time.monotonic() - started
            report.check(f"migration [{name}]: an uninterrupted run finishes", result.status == 0, result.describe())
            shutil.rmtree(container, ignore_errors=True)
            shutil.rmtree(legacy, ignore_errors=True)
        killed = 0
        for number in range(rounds):
            name, source, legacy = places[number % len(places)]
            shutil.copytree(source, legacy, symlinks=True)
            container = os.path.join(ctx.work, f"migration-{number}")
            argv = [exe, "--from", legacy, "--container", container]
            delays = [rng.uniform(0, durations[name] * 1.1)]
            if rng.random() < 1 / 3:
                delays.append(rng.uniform(0, durations[name]))
            for delay in delays:
                process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
                time.sleep(delay)
                process.send_signal(signal.SIGKILL)
                killed += process.wait() == -signal.SIGKILL
            result = run(argv, env=environment)
            label = f"migration [{name}, round {number}, killed after {', '.join(f'{d * 1000:.0f} ms' for d in delays)}]"
            ok = report.check(f"{label}: the next run finishes", result.status == 0, result.describe())
            if ok:
                problems = migration_problems(exe, container, legacy, expected[source], environment)
                ok = report.check(f"{label}: everything migrated, nothing left over", not problems, "; ".join(problems))
            if ok or not ctx.keep:
                shutil.rmtree(container, ignore_errors=True)
            shutil.rmtree(legacy, ignore_errors=True)
        report.info(f"migration: {rounds} rounds of {files} files, {killed} kills landed "
                    f"(uninterrupted: {', '.join(f'{n} {d:.2f} s' for n, d in durations.items())})")
    finally:
        for _, source, legacy in places[1:]:
            shutil.rmtree(source, ignore_errors=True)
            shutil.rmtree(legacy, ignore_errors=True)
    return None
