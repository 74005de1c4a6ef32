"""Scenario 6: CLI fuzz."""
from .common import *  # noqa: F401,F403
from .corrupt import HOSTILE_IMPORTS


APP_WORDS = ["trip", "add", "list", "show", "edit", "delete", "place", "visit", "booking", "attachment", "export",
             "thumbnail", "cache", "clear", "container", "check", "info", "prefs", "get", "set", "import", "sync",
             "pending", "ack", "fail", "keychain", "delete-all", "set-recovery-passphrase", "recover", "auth", "login",
             "status", "logout", "currency", "theme", "mapStyle", "showsVisitedPlaces", "cacheLimitMB"]
APP_OPTIONS = ["--name", "--start", "--end", "--notes", "--trip", "--city", "--kind", "--title", "--starts-at",
               "--reference", "--json", "--help", "-h", "--version", "--output", "--repair", "--grace", "--undo",
               "--if-updated-at", "--service", "--accessibility", "--account", "--container"]
WIDGET_OPTIONS = ["--json", "--now", "--watch", "--help", "-h", "--container", "--version"]
SHARE_OPTIONS = ["--name", "--trip", "--booking", "--max-size", "--json", "--help", "-h", "--container"]
MIGRATION_OPTIONS = ["--from", "--container", "--dry-run", "--merge", "--json", "--help", "-h"]
WORKER_WORDS = ["inspect", "--thumbnail", "--thumbnail-size", "--text-pages", "--max-size", "--help", "-h"]
JUNK = ["", " ", "-", "--", "---", "-x", "--=", "=", "--name=", "--json=yes", "0", "-1", "1e309", "9" * 40, "NaN",
        "null", "{}", "[]", "2026-02-30", "2026-12-12", "2026-12-15", "0001-01-01", "9999-12-31", "2026-12-12T07:35+14:00",
        "2026-12-12 07:35", "ffffffff-ffff-ffff-ffff-ffffffffffff", "00000000", "%s%n%x", "\\", "'", "\"", "a\nb",
        "tab\there", "é", "東京", "🚆✈", "\u202eevil", "\u200b", "Ω" * 300, "x" * 10_000, "flight", "FLIGHT", "other",
        "this-device-only", "migratable", "usd", "dark", "true", "OFF", "10000", "10001", "1K", "1G", "2G", "50M",
        "0.5", "3600", "-0", "+1", "1_000", b"\xff\xfe\xc3(", b"\xed\xa0\x80", "../fuzz-up.json", "out/", "t.pdf",
        "junk.bin", "empty.pdf", "dir", "doc.json", "nonexistent.pdf", "thumb.png", "input.fifo", "foreign"]


def fuzz_value(rng, ids, root):
    roll = rng.random()
    if roll < 0.25 and ids:
        trip_id = rng.choice(ids)
        return trip_id[:rng.randint(1, 36)]
    if roll < 0.3:
        return "".join(chr(rng.choice([rng.randint(0x20, 0x7e), rng.randint(0xa0, 0xd7ff), rng.randint(0x1f300, 0x1f6ff),
                                       rng.randint(1, 31)])) for _ in range(rng.randint(1, 30)))
    if roll < 0.33:
        return os.path.join(root, "cwd", rng.choice(["abs.json", "t.pdf", "dir", "nowhere/x"]))
    return rng.choice(JUNK)


def fuzz_argv(rng, exe, ids, root, container):
    if exe == "app":
        vocabulary = APP_WORDS + APP_OPTIONS
        words = []
        if rng.random() < 0.8:  # a real command most of the time, then noise
            words = rng.choice([["trip", "add"], ["trip", "list"], ["trip", "show"], ["trip", "edit"], ["trip", "delete"],
                                ["place", "add"], ["place", "list"], ["place", "visit"], ["booking", "add"],
                                ["booking", "list"], ["attachment", "list"], ["attachment", "export"],
                                ["attachment", "thumbnail"], ["container", "check"], ["container", "info"],
                                ["prefs", "set"], ["prefs", "get"], ["prefs", "list"], ["export"], ["import"],
                                ["sync", "pending"], ["sync", "ack"], ["sync", "fail"], ["keychain", "set"],
                                ["keychain", "get"], ["keychain", "list"], ["keychain", "recover"], ["auth", "login"],
                                ["auth", "status"], ["cache", "clear"], ["booking", "delete"], ["place", "delete"]])
    elif exe == "widget":
        vocabulary, words = WIDGET_OPTIONS, []
    elif exe == "share-extension":
        vocabulary, words = SHARE_OPTIONS, [rng.choice(["t.pdf", "-", "junk.bin", "empty.pdf", "dir", "nonexistent.pdf"])]
    elif exe == "container-migration":
        vocabulary, words = MIGRATION_OPTIONS, []
    else:
        vocabulary, words = WORKER_WORDS, (["inspect"] if rng.random() < 0.8 else [])
    for _ in range(rng.choice([0, 1, 2, 3, 4, 6, 9])):
        roll = rng.random()
        if roll < 0.45:
            option = rng.choice(vocabulary)
            if option == "--container":
                # The container itself, reached through a symbolic link, a file, a FIFO, a
                # directory of other files, nothing.
                words += ["--container", rng.choice([container, os.path.join(root, "linked", "container"),
                                                     os.path.join(root, "cwd", "junk.bin"), os.path.join(root, "cwd", "input.fifo"),
                                                     os.path.join(root, "cwd", "foreign"), ""])]
                continue
            words.append(option)
            if option.startswith("--") and rng.random() < 0.8:
                words.append(fuzz_value(rng, ids, root))
        elif roll < 0.9:
            words.append(fuzz_value(rng, ids, root))
        else:
            option, value = rng.choice(vocabulary), fuzz_value(rng, ids, root)
            words.append(f"{option}={value}" if isinstance(value, str) else option)
    if rng.random() < 0.1:
        words.insert(rng.randint(0, len(words)), "--")
    if rng.random() < 0.05 and words:
        rng.shuffle(words)
    if exe == "app" and rng.random() < 0.05:
        words = [rng.choice(vocabulary + JUNK) for _ in range(rng.randint(0, 5))]
    return [w for w in words if not (isinstance(w, str) and "\x00" in w)]


def fuzz_stdin(rng, pdf_bytes):
    roll = rng.random()
    if roll < 0.3:
        return b""
    if roll < 0.6:
        return rng.randbytes(rng.randint(1, 4096))
    if roll < 0.7:
        return rng.randbytes(rng.randint(100_000, 300_000))
    if roll < 0.8:
        return pdf_bytes
    if roll < 0.85:
        return json.dumps({"trips": [{"name": "Fuzz", "startDate": "2027-06-01", "endDate": "2027-06-0" + str(rng.randint(1, 9))}]}).encode()
    if roll < 0.9:
        with open(HOSTILE_IMPORTS) as handle:
            return rng.choice(json.load(handle))["json"].encode()
    return b"token-a\ntoken-b\n" if rng.random() < 0.5 else "pässwörd-long-enough\n".encode()


def scenario_fuzz(ctx, report, rng):
    ledger = Ledger()
    box, ids = seeded_box(ctx, "fuzz", rng, ledger, trips=3)
    cwd = os.path.join(box.dir, "cwd")
    os.makedirs(os.path.join(cwd, "dir"))
    os.makedirs(os.path.join(cwd, "out"))
    pdf_bytes = open(box.pdf("cwd/t.pdf", rng), "rb").read()
    with open(os.path.join(cwd, "junk.bin"), "wb") as handle:
        handle.write(rng.randbytes(5000))
    open(os.path.join(cwd, "empty.pdf"), "wb").close()
    # A FIFO nobody writes to (as an input file or a container path), a directory of someone
    # else's files, and the container reached through a symbolic link to its parent.
    os.mkfifo(os.path.join(cwd, "input.fifo"), 0o600)
    os.makedirs(os.path.join(cwd, "foreign"))
    with open(os.path.join(cwd, "foreign", "notes.txt"), "w") as handle:
        handle.write("not TripBoard's\n")
    os.symlink(box.dir, os.path.join(box.dir, "linked"))
    with open(os.path.join(cwd, "doc.json"), "w") as handle:
        json.dump({"trips": [{"name": "Doc", "startDate": "2027-07-01", "endDate": "2027-07-02"}]}, handle)
    per_exe = {"app": 0.55, "widget": 0.13, "share-extension": 0.13, "pdf-worker": 0.09, "container-migration": 0.1}
    total = 600 if ctx.quick else 6000
    stats = {exe: {"runs": 0, "crash": [], "hang": [], "status": [], "written": [], "message": [], "control": []}
             for exe in per_exe}
    # The default container (HOME/.local/share/…), used when TRIPBOARD_CONTAINER is empty, exists
    # with a keychain like the main one, so that a rejected command there is not its first use.
    default = Box(ctx, "fuzz-default")
    default.dir, default.device, default.container = box.dir, box.device, os.path.join(
        box.dir, ".local", "share", "tripboard", "shared-container")
    default.ok("keychain", "set", "fuzz.example.com", "default", stdin=b"default-secret")
    envs = [{}, {}, {}, {"TRIPBOARD_LOCK_TIMEOUT": "abc"}, {"TRIPBOARD_LOCK_TIMEOUT": "0"},
            {"TRIPBOARD_DURABILITY": "full"}, {"TRIPBOARD_DURABILITY": "maybe"}, {"TZ": "Pacific/Kiritimati"},
            {"LANG": "C"}, {"TZ": "Nowhere/Invalid"}, {"TRIPBOARD_CONTAINER": ""},
            {"TRIPBOARD_DEVICE_DIR": os.path.join(box.dir, "cwd", "another-device")},
            {"TRIPBOARD_MACHINE_ID_FILE": os.path.join(box.dir, "cwd", "junk.bin")}]
    before = snapshot(box.dir)
    started = time.monotonic()
    for number in range(total):
        exe = rng.choices(list(per_exe), list(per_exe.values()))[0]
        argv = fuzz_argv(rng, exe, ids, box.dir, box.container)
        stdin = fuzz_stdin(rng, pdf_bytes)
        env = box.env(rng.choice(envs))
        full = [box.exe(exe), *argv]
        stats[exe]["runs"] += 1
        watching = exe == "widget" and "--watch" in argv
        if watching:
            result = watch_once(full, env, cwd)
        else:
            result = run(full, env, stdin, timeout=30, cwd=cwd)
        text = result.describe()
        if result.hung:
            stats[exe]["hang"].append(text)
        elif result.signal:
            stats[exe]["crash"].append(text)
        elif result.status not in DOCUMENTED[exe] and not (watching and result.status == 0):
            stats[exe]["status"].append(text)
        after = snapshot(box.dir)
        if result.status != 0 and not result.hung:
            changes = diff(before, after)
            if changes:
                stats[exe]["written"].append(f"{text}; changed: {changes[:5]}")
            if exe != "pdf-worker" and not (exe == "widget" and result.status == 75) and result.status is not None \
                    and not result.one_line_error():
                stats[exe]["message"].append(text)
            if exe != "pdf-worker" and re.search(r"[\x00-\x08\x0b-\x1f\x7f]", result.err):
                stats[exe]["control"].append(text + " raw: " + repr(result.err[:200]))
        before = after
    report.info(f"{total} runs in {time.monotonic() - started:.1f} s: "
                + ", ".join(f"{exe} {s['runs']}" for exe, s in stats.items()))
    for exe, s in stats.items():
        for key, what in (("crash", "no crash (death by a signal)"), ("hang", "no hang (30 s deadline)"),
                          ("status", "only documented exit statuses (1 is an internal error)"),
                          ("written", "no file written by a rejected command"),
                          ("message", "a rejected command prints one `error:` line"),
                          ("control", "a rejected command's error shows no raw control character")):
            if exe == "pdf-worker" and key in ("message", "control"):
                continue
            report.check(f"fuzz [{exe}]: {what} in {s['runs']} runs", not s[key],
                         f"{len(s[key])} cases, e.g. " + " || ".join(s[key][:3]))
    check_invariants(box, None, report, "fuzz (store health after fuzzing)")
    return box



def watch_once(argv, env, cwd):
    """widget --watch runs until SIGTERM by design: let it run briefly, then it must exit 0."""
    started = time.monotonic()
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, cwd=cwd, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=1.0)
        return Result(argv, process.returncode, stdout, stderr, time.monotonic() - started)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = process.communicate(timeout=10)
        return Result(argv, process.returncode, stdout, stderr, time.monotonic() - started)
    except subprocess.TimeoutExpired:
        kill_group(process)
        stdout, stderr = process.communicate()
        return Result(argv, process.returncode, stdout, stderr, time.monotonic() - started, hung=True)
