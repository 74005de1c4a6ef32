"""Scenario 5: corrupt inputs."""
from .common import *  # noqa: F401,F403


def truncate(path, size):
    os.truncate(path, size)


def flip_header(path):
    with open(path, "r+b") as handle:
        header = bytearray(handle.read(100))
        for index in range(0, 16):
            header[index] ^= 0x5A
        handle.seek(0)
        handle.write(header)


def scenario_corrupt(ctx, report, rng):
    ledger0 = Ledger()
    template, ids = seeded_box(ctx, "corrupt-template", rng, ledger0, trips=2)
    attachment = next(iter(ledger0.attachments.items()))
    nobody_ok = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true"]).status == 0

    def commands(box, tag):
        pdf = box.pdf(f"corrupt-{tag}.pdf", rng)
        return [
            ("app trip list", "app", ["trip", "list"], None),
            ("app trip add", "app", ["trip", "add", "--name", "New", "--start", "2027-01-01", "--end", "2027-01-02"], None),
            ("app container info", "app", ["container", "info"], None),
            ("app prefs list", "app", ["prefs", "list", "--json"], None),
            ("app keychain get", "app", ["keychain", "get", "api.example.com", "ana@example.com"], None),
            ("app attachment export", "app", ["attachment", "export", attachment[0], os.path.join(box.dir, "exported.pdf")], None),
            ("app container check --repair", "app", ["container", "check", "--repair", "--grace", "0"], None),
            ("widget", "widget", [], None),
            ("share-extension", "share-extension", [pdf, "--trip", ids[0]], None),
        ]

    store = lambda box: box.store
    # name, corruption, expected status per command (default for the others), user to run as
    # Commands that do not need the store (preferences, keychain) work without it, and `container
    # info` reports its state; `container check` reports (65) instead of dying.
    without_store = {"app prefs list": {0}, "app keychain get": {0}, "app container info": {0}, "app container check --repair": {65}}
    cases = [
        ("store truncated to 0 bytes", lambda box: truncate(store(box), 0), {"*": {65}, **without_store}),
        ("store truncated to 1000 bytes", lambda box: truncate(store(box), 1000), {"*": {65}, **without_store}),
        ("store truncated to half", lambda box: truncate(store(box), (os.path.getsize(store(box)) // 8192) * 4096),
         {"*": {65}, **without_store}),
        ("store header bytes flipped", lambda box: flip_header(store(box)), {"*": {65}, **without_store}),
        ("store newer user_version", lambda box: box.sqlite("PRAGMA user_version = 99;"), {"*": {65}, **without_store}),
        ("store deleted (manifest says it existed)",
         lambda box: [os.remove(store(box) + suffix) for suffix in ("", "-wal", "-shm")], {"*": {66}, **without_store}),
        ("-wal deleted while closed", lambda box: os.remove(store(box) + "-wal"), {"*": {0}}),
        ("store/ unreadable", lambda box: os.chmod(os.path.join(box.container, "store"), 0),
         {"*": {66, 73}, "app prefs list": {0}, "app keychain get": {0}, "app container info": {0}, "app container check --repair": {65}},
         "nobody"),
        ("attachments/ unreadable", lambda box: os.chmod(os.path.join(box.container, "attachments"), 0),
         {"*": {0}, "app attachment export": {73, 66}, "share-extension": {73}, "app container check --repair": {73, 65}}, "nobody"),
        ("preferences/ unreadable", lambda box: os.chmod(os.path.join(box.container, "preferences"), 0),
         {"*": {0}, "app prefs list": {73}}, "nobody"),
        # The repair moves a link (never its target) into attachments/recovered/ and marks the row
        # missing; once the bytes are back there, the next repair puts them in place again.
        ("attachment file replaced by a symlink", lambda box: plant_file_link(box, attachment[1][2]),
         {"*": {0}, "app attachment export": {73, 65}}),
        # The repair runs before share-extension in `commands`: it moves the 256 links away.
        ("symlinks planted as attachments/<xx>/ shards", plant_shard_links, {"*": {0}}),
        # A FIFO where a file belongs: refused at once (open O_NONBLOCK + fstat), never waited on.
        ("FIFO at container.json", lambda box: plant_fifo(box, "container.json"), {"*": {73}, "widget": {0}}),
        ("FIFO at container.lock", lambda box: plant_fifo(box, "container.lock"), {"*": {73}}),
        ("FIFO at preferences.json", lambda box: plant_fifo(box, "preferences/preferences.json"),
         {"*": {0}, "app prefs list": {73}}),
        ("FIFO as an attachment file", lambda box: plant_fifo(box, attachment[1][2]),
         {"*": {0}, "app attachment export": {73}}),
        ("FIFOs in tmp/ and in the thumbnail cache", plant_staging_and_cache_fifos, {"*": {0}}),
        # The device's keys seal the tickets too (docs/security.md, Sealed files): what reads or
        # seals one is refused there as the keychain is, with one line and nothing written.
        # The store's and the keychain database's key files are sealed files too (docs/security.md,
        # Sealed stores): everything that opens a database is refused there.
        ("FIFO at the device key", lambda box: plant_fifo(box, os.path.join("..", "device", "device.key")),
         {"*": {73}, "app prefs list": {0}, "app container check --repair": {73, 65}}),
        # Another device opens the container: a wrong TRIPBOARD_DEVICE_DIR (a cron job's $HOME) or
        # another machine id. Its databases are sealed under the real device's keys: every command
        # that needs one is refused (66), nothing is destroyed; the real device still reads all.
        ("container opened with another device directory", lambda box: as_another_device(box, "directory"),
         {"*": {66}, "app prefs list": {0}, "app container info": {0}, "app container check --repair": {65, 66}}),
        ("container opened with another machine id", lambda box: as_another_device(box, "machine id"),
         {"*": {66}, "app prefs list": {0}, "app container info": {0}, "app container check --repair": {65, 66}}),
        # Where the container is: through a symbolic link (works), or a directory of other files
        # (refused, left as it was).
        ("container reached through a symlinked path", reach_through_symlink, {"*": {0}}),
        ("container path is a directory of other files", replace_with_foreign_directory, {"*": {73}, "widget": {0}}),
    ]
    store_mutators = {"store truncated to 0 bytes", "store truncated to 1000 bytes", "store truncated to half",
                      "store header bytes flipped", "store newer user_version", "store deleted (manifest says it existed)"}
    for case in cases:
        name, corrupt, expected = case[:3]
        user = case[3] if len(case) > 3 else None
        label = f"corrupt [{name}]"
        if user == "nobody" and not nobody_ok:
            report.skip(label, "cannot run a command as an unprivileged user (setpriv failed); root bypasses permission bits")
            continue
        box = template.clone("corrupt")
        outside = os.path.join(box.dir, "outside")
        os.makedirs(outside)
        corrupt(box)
        prefix = []
        if user == "nobody":
            os.chmod(ctx.work, 0o755)
            os.chmod(box.dir, 0o755)
            for directory, dirs, files in os.walk(box.dir):
                for entry in dirs + files + ["."]:
                    os.lchown(os.path.join(directory, entry), 65534, 65534)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        for command, exe, words, _ in commands(box, name[:5]):
            if user == "nobody":
                for path in (os.path.join(box.dir, "corrupt-" + name[:5] + ".pdf"),):
                    if os.path.exists(path):
                        os.lchown(path, 65534, 65534)
            before = snapshot(box.dir)
            before_outside = snapshot(outside)
            result = run(prefix + [box.exe(exe), *words], box.env(), None, CORRUPT_DEADLINE)
            after = snapshot(box.dir, skip=("-shm",))
            allowed = expected.get(command, expected["*"])
            ok = result.status in allowed and not result.hung
            if ok and result.status != 0 and not (exe == "widget" and result.status == 75):
                ok = result.one_line_error()
            changes = [change for change in diff(before, after) if not change.endswith(("exported.pdf", "exported.pdf.tmp"))]
            if result.status == 0 and 0 in allowed and expected["*"] == {0}:
                changes = []  # a command that works may write what it is for
            report.check(f"{label}: {command} → {'/'.join(map(str, sorted(allowed)))} with one `error:` line, nothing written",
                         ok and not changes and snapshot(outside) == before_outside,
                         result.describe() + (f"; changed: {changes[:6]}" if changes else ""))
            if name in store_mutators and not os.path.exists(store(box)) and "deleted" not in name:
                report.check(f"{label}: {command} left the store in place", False, "store file gone")
        if name in store_mutators and "deleted" in name:
            report.check(f"{label}: no empty store appears", not os.path.exists(store(box)),
                         f"{sorted(os.listdir(os.path.join(box.container, 'store')))}")
        if expected["*"] == {0}:
            # The container still works afterwards, with everything acknowledged.
            subprocess.run(["chown", "-R", "0:0", box.dir])
            for directory in ("store", "attachments", "preferences"):
                os.chmod(os.path.join(box.container, directory), 0o700)
            undo_links(box)
            undo_fifos(box)
            box.device, box.machine_id = getattr(box, "real_device", (box.device, box.machine_id))
            # What a user does once the files are back: the repair finds them (by hash) for the
            # rows it marked missing.
            box.app("container", "check", "--repair", "--grace", "0")
            check_invariants(box, ledger0, report, label)
        if report.scenario_failed and ctx.keep:
            report.info(f"kept {box.dir}")
        else:
            box.remove()
    hostile_imports(template, attachment[0], report)
    template.remove()
    return None


HOSTILE_IMPORTS = os.path.join(ROOT, "tools", "lib", "hostile-imports.json")


def hostile_imports(template, attachment_id, report):
    """Import documents an earlier TripBoard accepted and could not export, acknowledge or sync
    again (the same list as the Swift tests'): each refused whole, 65, one line naming the rule,
    nothing written."""
    box = template.clone("hostile-import")
    with open(HOSTILE_IMPORTS) as handle:
        documents = json.load(handle)
    for document in documents:
        text = document["json"].replace("ATTACHMENT_ID", attachment_id)
        before = snapshot(box.dir)
        result = box.app("import", "-", stdin=text.encode(), timeout=CORRUPT_DEADLINE)
        changes = diff(before, snapshot(box.dir))
        report.check(f"hostile import [{document['name']}] → 65 naming the rule, nothing written",
                     result.status == 65 and result.one_line_error() and document["message"] in result.err and not changes,
                     result.describe() + (f"; changed: {changes[:6]}" if changes else ""))
    box.remove()


def plant_fifo(box, relative):
    """A FIFO in place of the file at `relative` (to the container); the file is kept outside for
    `undo_fifos`."""
    path = os.path.normpath(os.path.join(box.container, relative))
    if os.path.isfile(path):
        saved = os.path.join(box.dir, "outside", "fifo-" + os.path.basename(path))
        shutil.copyfile(path, saved)
        box.planted_fifos = getattr(box, "planted_fifos", []) + [(path, saved)]
        os.remove(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkfifo(path, 0o600)


def plant_staging_and_cache_fifos(box):
    os.mkfifo(os.path.join(box.container, "tmp", "import.planted.tmp"), 0o600)
    os.mkfifo(os.path.join(box.container, "caches", "thumbnails", "11111111-2222-4333-8444-555555555555.png"), 0o600)


def undo_fifos(box):
    """Puts back the files `plant_fifo` replaced (the repair may have moved the FIFO itself into
    attachments/recovered/: it is removed wherever it is)."""
    for directory, dirs, files in os.walk(box.dir):
        for name in dirs + files:
            path = os.path.join(directory, name)
            if stat.S_ISFIFO(os.lstat(path).st_mode):
                os.remove(path)
    for path, saved in getattr(box, "planted_fifos", []):
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copyfile(saved, path)
            os.chmod(path, 0o600)


def as_another_device(box, what):
    """The commands run as another device: a device directory with no key yet, or the same key
    mixed with another machine id. `real_device` puts the real one back for the invariants."""
    box.real_device = (box.device, box.machine_id)
    if what == "directory":
        box.device = os.path.join(box.dir, "another-device")
    else:
        box.machine_id = os.path.join(box.dir, "another-machine-id")
        with open(box.machine_id, "w") as handle:
            handle.write("fedcba9876543210fedcba9876543210\n")


def reach_through_symlink(box):
    """The container moved into a real directory and named through a symbolic link to its parent,
    as under a symlinked $HOME."""
    real = os.path.join(box.dir, "real-parent")
    os.makedirs(real)
    os.rename(box.container, os.path.join(real, "container"))
    os.symlink(real, os.path.join(box.dir, "linked-parent"))
    box.container = os.path.join(box.dir, "linked-parent", "container")


def replace_with_foreign_directory(box):
    """The container path names a directory of someone else's files (the container moved away)."""
    os.rename(box.container, box.container + "-moved")
    os.makedirs(box.container)
    with open(os.path.join(box.container, "notes.txt"), "w") as handle:
        handle.write("not TripBoard's\n")
    os.chmod(box.container, 0o1777)


def plant_file_link(box, relative):
    path = os.path.join(box.container, relative)
    target = os.path.join(box.dir, "outside", os.path.basename(path))
    shutil.copyfile(path, target)
    os.remove(path)
    os.symlink(target, path)


def plant_shard_links(box):
    attachments = os.path.join(box.container, "attachments")
    for number in range(256):
        shard = os.path.join(attachments, f"{number:02x}")
        if not os.path.exists(shard):
            os.symlink(os.path.join(box.dir, "outside"), shard)


def undo_links(box):
    for directory, dirs, files in os.walk(os.path.join(box.container, "attachments")):
        for name in dirs + files:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                target = os.readlink(path)
                os.remove(path)
                if os.path.isfile(target):
                    shutil.copyfile(target, path)
                    os.chmod(path, 0o600)
