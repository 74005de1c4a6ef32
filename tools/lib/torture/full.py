"""Scenario 4: a real full disk."""
from .common import *  # noqa: F401,F403


def scenario_full(ctx, report, rng):
    mount_point = os.path.join(ctx.work, "full-disk")
    os.makedirs(mount_point)
    size = "6m"
    result = run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", mount_point], timeout=30)
    if result.status != 0:
        report.skip("full", f"cannot mount a tmpfs here: {result.err.strip()[:200]}")
        return None
    try:
        full_disk(ctx, report, rng, mount_point)
    finally:
        if run(["umount", mount_point], timeout=30).status != 0:
            run(["umount", "-l", mount_point], timeout=30)
    return None


def fill(path):
    """Writes until the file system is full (unbuffered, down to single bytes)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for chunk in (1 << 20, 65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\xa5" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    return os.path.getsize(path)


def full_disk(ctx, report, rng, mount_point):
    ledger = Ledger()
    box = Box(ctx, "full")
    box.container = os.path.join(mount_point, "container")
    box.ok("container", "init")
    # The seeded data, on the small disk.
    trip_id = box.ok("trip", "add", "--name", "Full disk", "--start", "2026-12-10", "--end", "2026-12-20")
    ledger.trip(trip_id, ("Full disk", "2026-12-10", "2026-12-20", ""), "ok")
    ledger.children[box.ok("place", "add", "--trip", trip_id, "--name", "Belém")] = ("place", trip_id)
    box.ok("prefs", "set", "theme", "light")
    ledger.pref("theme", "light", "ok")
    box.ok("keychain", "set", "full.example.com", "ana", stdin=b"before-full")
    ledger.secret("full.example.com", "ana", b"before-full", "ok")
    pdf = box.pdf("full-seed.pdf", rng, size=300_000)
    answer = json.loads(box.share(pdf, "--trip", trip_id, "--json").out)
    record_attachment(ledger, pdf, answer, trip_id)
    filler = os.path.join(mount_point, "filler")
    report.info(f"filled the {os.path.basename(mount_point)} tmpfs with {fill(filler):,} bytes")

    def commands(tag):
        big = box.pdf(f"full-{tag}.pdf", rng, size=400_000)
        doc = os.path.join(box.dir, f"full-{tag}.json")
        imported = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        with open(doc, "w") as handle:
            json.dump({"trips": [{"id": imported, "name": f"Imported {tag}", "startDate": "2027-01-01",
                                  "endDate": "2027-01-02", "notes": "n" * 5000}] * 1}, handle)
        notes = "x" * 8000 + tag
        return [
            ("trip add", ["trip", "add", "--name", f"Added {tag}", "--start", "2027-02-01", "--end", "2027-02-02",
                          "--notes", "y" * 9000],
             lambda o, r: o == "ok" and ledger.trip(r.out.strip(), (f"Added {tag}", "2027-02-01", "2027-02-02", "y" * 9000), o)),
            ("trip edit", ["trip", "edit", trip_id, "--notes", notes],
             lambda o, r: ledger.trip(trip_id, ("Full disk", "2026-12-10", "2026-12-20", notes), o)),
            ("import", ["import", doc],
             lambda o, r: ledger.trip(imported, (f"Imported {tag}", "2027-01-01", "2027-01-02", "n" * 5000), o)),
            ("prefs set", ["prefs", "set", "mapStyle", "satellite" if tag == "a" else "hybrid"],
             lambda o, r: ledger.pref("mapStyle", "satellite" if tag == "a" else "hybrid", o)),
            ("keychain set", ["keychain", "set", "full.example.com", "ana", "<stdin>", f"during-{tag}" * 2000],
             lambda o, r: ledger.secret("full.example.com", "ana", (f"during-{tag}" * 2000).encode(), o)),
            ("share-extension", ["<share>", big, "--trip", trip_id, "--json"],
             lambda o, r: o == "ok" and record_attachment(ledger, big, json.loads(r.out), trip_id)),
            ("export --output", ["export", "--output", os.path.join(mount_point, f"export-{tag}.json")], None),
            ("trip list", ["trip", "list"], None),
        ]

    for phase, tag in (("disk full", "a"), ("space freed", "b")):
        for name, words, apply in commands(tag):
            stdin = None
            if "<stdin>" in words:
                index = words.index("<stdin>")
                stdin = words[index + 1].encode()
                words = words[:index]
            if words[0] == "<share>":
                result = box.share(*words[1:])
            else:
                result = box.app(*words, stdin=stdin)
            if phase == "disk full":
                clear = result.status == 0 or (result.status in (73, 74) and result.one_line_error()
                                               and re.search(r"full|space|ENOSPC", result.err, re.I))
                report.check(f"full [{phase}]: {name} succeeds or fails with a clear disk-full error (74)",
                             bool(clear), result.describe())
                report.info(f"disk full: {name} → exit {result.returncode} {result.err.strip()[:150]!r}")
                if name == "export --output" and result.status != 0:
                    left = [n for n in os.listdir(mount_point) if n.startswith("export-")]
                    report.check(f"full [{phase}]: a failed export leaves no partial file", not left, str(left))
            else:
                report.check(f"full [{phase}]: {name} succeeds", result.status == 0, result.describe())
            if apply:
                apply(outcome_of(result), result)
            if phase == "disk full" and name in ("trip edit", "import", "share-extension"):
                check_invariants(box, ledger, report, f"full [{phase}] after {name}", repair=False)
        if phase == "disk full":
            check_invariants(box, ledger, report, "full [disk full]", repair=False)
            os.remove(filler)
    check_invariants(box, ledger, report, "full [space freed]")
    box.remove()
