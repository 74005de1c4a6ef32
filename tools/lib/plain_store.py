"""A sealed store read the supported way, for the tools whose peers are `sqlite3` on a store in the
clear (tools/bench): `app container sqlite` runs `.backup` of the sealed store into a plain file
(docs/cli.md, `app container sqlite`). Nothing here knows the page format (that is
`sealed_store.py`, a second implementation of it)."""

import os
import subprocess


def _remove(path):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def plain_copy(app, container, path, env=None):
    """Writes CONTAINER's store in the clear to PATH, in WAL mode and checkpointed: the same data
    as a store in the clear would hold it. Returns PATH. `env`: the environment naming the
    container's device (`TRIPBOARD_DEVICE_DIR`), when not this process's."""
    _remove(path)
    subprocess.run([app, "--container", container, "container", "sqlite", ".backup '" + path.replace("'", "''") + "'"],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    subprocess.run(["sqlite3", path, "PRAGMA journal_mode=WAL; PRAGMA wal_checkpoint(TRUNCATE);"],
                   check=True, stdout=subprocess.DEVNULL)
    return path


def unseal(app, container, env=None):
    """Puts CONTAINER's store in the clear in place of its sealed one (the layout of a build before
    sealed stores, which `app` still reads): for a peer that writes the store with `sqlite3`."""
    store = os.path.join(container, "store", "TripBoard.sqlite")
    plain = plain_copy(app, container, store + ".plain", env)
    for suffix in ("-wal", "-shm", "-key"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    os.replace(plain, store)
    _remove(plain)
