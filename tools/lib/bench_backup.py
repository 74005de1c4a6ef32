"""The backup and restore benchmarks, run by tools/bench (`--only backup`, and in the default set).

The container is the migration benchmark's version-1 directory (10,000 attachments of 100 KB and
a store of about 100 MB, 1.1 GB in all) migrated into a container. Then:

- `app backup --output FILE` against what a user would type instead:
  `tar c … | age -p -o FILE && sync` (age reads its passphrase only from a terminal: it runs on a
  pseudo-terminal, tools/lib/age-pty.py; work factor 2^18 on both sides, age's default);
- `app restore FILE` into a new directory against `age -d FILE | tar x && sync`, and (with
  `--baseline DIR`) against another build's `app restore` of the same archive;
- `app backup verify FILE` against `age -d FILE | tar x && diff -rq` of the attachments;
- peak RSS of `app backup` at full size against a tenth of it (memory flat in the container's size).

Before each run the previous output is moved aside (`discard`) and `sync` runs, untimed.
`--backup-scale 0.1` runs everything at a tenth of the size.
"""
import os
import shutil
import subprocess

import bench_migration
from bench_migration import discard, sizes, timed_run

PASSPHRASE = "correct horse battery staple"
AGE_PTY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "age-pty.py")
PATHS = "attachments container.json keychain preferences store"


def make_container(release, work, name, attachments, store_megabytes, device):
    """A version-1 directory migrated into a container on the bench's `device`: the migration
    seals the store and the files under that device's keys, which every `app` run then uses."""
    legacy = os.path.join(work, name + "-legacy")
    container = os.path.join(work, name)
    bench_migration.write_legacy(legacy, attachments, store_megabytes)
    subprocess.run([os.path.join(release, "container-migration"), "--from", legacy, "--container", container],
                   check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **device))
    return container


def on_terminal(script, work):
    """`sh -c script` on a pseudo-terminal that answers age's passphrase prompts."""
    return timed_run(["python3", AGE_PTY, "/bin/sh", "-c", script], work, env=dict(os.environ, AGE_PASSPHRASE=PASSPHRASE))


def app_run(release, work, arguments, environment=None):
    """`app ARGUMENTS` with the passphrase on standard input, under GNU time."""
    return timed_run([os.path.join(release, "app"), *arguments], work, env=dict(os.environ, **(environment or {})),
                     stdin=PASSPHRASE + "\n")


def bench(args, release, work, alternate, Result):
    attachments, store_megabytes, runs = sizes(args, "backup_scale")
    base = os.path.join(work, "backup")
    os.makedirs(base, exist_ok=True)
    device = {"TRIPBOARD_DEVICE_DIR": os.path.join(base, "device")}
    try:
        container = make_container(release, base, "container", attachments, store_megabytes, device)
        small = make_container(release, base, "small", max(10, attachments // 10), max(1, store_megabytes // 10), device)
        subprocess.run([os.path.join(release, "app"), "--container", container, "keychain", "set", "api", "ana"],
                       input="a-token\n", text=True, check=True, env=dict(os.environ, **device))
        size = sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(container) for name in names)
        ours_file, theirs_file = os.path.join(base, "ours.age"), os.path.join(base, "theirs.age")

        def ours_backup(source=container):
            discard(ours_file)
            subprocess.run(["sync"], check=True)
            return app_run(release, base, ["--container", source, "backup", "--output", ours_file], device)

        def theirs_backup():
            discard(theirs_file)
            subprocess.run(["sync"], check=True)
            return on_terminal(f"tar -cf - -C '{container}' {PATHS} | age -p -o '{theirs_file}' && sync", base)

        results = []
        a, b = alternate(runs, ours_backup, theirs_backup)
        results.append(Result(f"`app backup`: {attachments:,} attachments ({size / 1e9:.2f} GB)", "app backup --output FILE",
                              "tar c | age -p -o FILE && sync", a, b, "≤ 1.7× (proposed)",
                              "A: a consistent snapshot (backup API), every attachment hashed against its row, fsynced, renamed; "
                              "both scrypt at 2^18; B through a pseudo-terminal (age reads passphrases only from one)"))
        restored, extracted = os.path.join(base, "restored"), os.path.join(base, "extracted")

        def ours_restore():
            discard(restored)
            subprocess.run(["sync"], check=True)
            return app_run(release, base, ["--container", restored, "restore", ours_file], device)

        def theirs_restore():
            discard(extracted)
            os.makedirs(extracted)
            subprocess.run(["sync"], check=True)
            return on_terminal(f"age -d '{theirs_file}' | tar -x -C '{extracted}' && sync", base)

        a, b = alternate(runs, ours_restore, theirs_restore)
        results.append(Result(f"`app restore`: {attachments:,} attachments", "app restore FILE", "age -d FILE | tar x && sync",
                              a, b, "≤ 1.7× (proposed)", "A verifies every chunk, the store's integrity and every attachment's hash, "
                              "sets the container up for this device, syncs the filesystem and renames it into place"))
        if args.baseline:
            # The same archive restored by another build (`--baseline DIR`): no slower than before.
            def baseline_restore():
                discard(restored)
                subprocess.run(["sync"], check=True)
                return app_run(args.baseline, base, ["--container", restored, "restore", ours_file], device)

            a, b = alternate(runs, ours_restore, baseline_restore)
            results.append(Result(f"`app restore`: {attachments:,} attachments, against the baseline build", "app restore FILE",
                                  "the baseline's app restore FILE", a, b, "≤ 1.05×", "the same archive; both run every check "
                                  "their build has (this one: the exact schema, every row's rules, the keychain before writing)"))
        checked, reference = os.path.join(base, "checked"), os.path.join(base, "reference")
        # The container's files are sealed: B compares what it extracts with the tickets' plaintext
        # as the user has it, taken once (untimed) from the same archive.
        discard(reference)
        os.makedirs(reference)
        on_terminal(f"age -d '{ours_file}' | tar -x -C '{reference}'", base)

        def ours_verify():
            subprocess.run(["sync"], check=True)
            return app_run(release, base, ["--container", container, "backup", "verify", ours_file], device)

        def theirs_verify():
            discard(checked)
            os.makedirs(checked)
            subprocess.run(["sync"], check=True)
            return on_terminal(f"age -d '{ours_file}' | tar -x -C '{checked}' && "
                               f"diff -rq '{checked}/attachments' '{reference}/attachments'", base)

        a, b = alternate(runs, ours_verify, theirs_verify)
        discard(checked)
        results.append(Result(f"`app backup verify`: {attachments:,} attachments", "app backup verify FILE",
                              "age -d FILE | tar x && diff -rq attachments", a, b, "≤ 1.3×",
                              "A: the dry run (every chunk, the schema, every row, every hash, the keychain), the staged store "
                              "upgraded, then every record, preference and keychain item compared; B compares the files only"))
        a, b = alternate(runs, ours_backup, lambda: ours_backup(small))
        results.append(Result(f"`app backup` memory at {attachments:,} vs {max(10, attachments // 10):,} attachments",
                              "full size", "a tenth", a, b, "RSS within 10%", "the RSS column is the one to read"))
        return results
    finally:
        shutil.rmtree(base, ignore_errors=True)
