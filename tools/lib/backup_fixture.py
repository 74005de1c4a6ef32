#!/usr/bin/python3
"""Makes one backup fixture of Tests/Fixtures/backups/: a container filled with the same records
by the given build (`--bin`, a directory holding its `app` and `share-extension`), backed up with
that build's own `app backup`. One such archive per store schema, each made by a build of the
days that schema was current, is what `BackupFixtureTests` restores into this build.

    tools/lib/backup_fixture.py --bin DIR --out FILE

Writes FILE (the archive) and FILE's name with `.json` (what the archive holds, as the test
checks it: the build's commit, the store and keychain schema, the ids). The passphrase is
PASSPHRASE below. Only commands every build since `app backup` arrived understands are used.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

PASSPHRASE = "fixture passphrase 2026"
HERE = os.path.dirname(os.path.abspath(__file__))
TICKET = os.path.join(HERE, "..", "..", "Tests", "Fixtures", "hotel-confirmations", "avenida.fpdf2.pdf")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--commit", default="", help="the commit the build was made from (recorded)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tripboard-fixture-") as work:
        container = os.path.join(work, "container")
        environment = dict(os.environ, TRIPBOARD_CONTAINER=container, TRIPBOARD_DEVICE_DIR=os.path.join(work, "device"),
                           TRIPBOARD_LEGACY_DIR=os.path.join(work, "legacy"), TZ="Europe/Lisbon")

        def run(program, *arguments, stdin=None):
            done = subprocess.run([os.path.join(args.bin, program), *arguments], input=stdin, env=environment,
                                  capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                sys.exit(f"{program} {' '.join(arguments)}: exit {done.returncode}: {done.stderr.strip()}")
            return done.stdout.strip()

        lisbon = run("app", "trip", "add", "--name", "Lisboa", "--start", "2027-03-27", "--end", "2027-03-30",
                     "--notes", "Pastéis de Belém, 9:00\nTram 28")
        kyoto = run("app", "trip", "add", "--name", "京都", "--start", "2027-04-02", "--end", "2027-04-10")
        gone = run("app", "trip", "add", "--name", "Porto (deleted)", "--start", "2027-05-01", "--end", "2027-05-02")
        place = run("app", "place", "add", "--trip", lisbon, "--name", "LX Factory", "--city", "Lisboa")
        run("app", "place", "visit", place)
        run("app", "place", "add", "--trip", kyoto, "--name", "伏見稲荷大社", "--city", "京都")
        booking = run("app", "booking", "add", "--trip", lisbon, "--kind", "hotel", "--title", "Memmo Alfama",
                      "--starts-at", "2027-03-27T15:00:00+00:00", "--reference", "MA-1")
        filed = json.loads(run("share-extension", TICKET, "--booking", booking, "--json"))
        run("app", "trip", "delete", gone)
        run("app", "prefs", "set", "currency", "JPY")
        run("app", "prefs", "set", "theme", "dark")
        run("app", "keychain", "set", "api.example.com", "ana@example.com", "--accessibility", "migratable",
            stdin="token-ana\n")
        run("app", "backup", "--output", args.out, stdin=PASSPHRASE + "\n")

        def schema(database, *option):
            """A database's `user_version`: read in place when it is in the clear (a build before
            sealed stores), else through the build's own `app container sqlite`."""
            try:
                return sqlite3.connect(f"file:{container}/{database}?mode=ro", uri=True).execute("PRAGMA user_version").fetchone()[0]
            except sqlite3.DatabaseError:
                return int(run("app", "container", "sqlite", *option, "--readonly", "PRAGMA user_version;"))

        facts = {
            "commit": args.commit,
            "storeSchema": schema("store/TripBoard.sqlite"),
            "keychainSchema": schema("keychain/Keychain.sqlite", "--keychain"),
            "passphrase": PASSPHRASE,
            "trips": {"lisbon": lisbon, "kyoto": kyoto, "trashed": gone},
            "place": place,
            "booking": booking,
            "attachment": filed.get("id") or filed.get("attachmentId") or filed.get("attachment", {}).get("id"),
        }
    with open(os.path.splitext(args.out)[0] + ".json", "w") as out:
        json.dump(facts, out, indent=2, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
