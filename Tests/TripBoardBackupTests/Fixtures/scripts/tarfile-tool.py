"""Python's `tarfile` as a third tar implementation for the interoperability tests.

    python3 tarfile-tool.py list ARCHIVE             one JSON object per member, in order
    python3 tarfile-tool.py extract DIR ARCHIVE      extracts every member under DIR
    python3 tarfile-tool.py create ARCHIVE FORMAT BASE NAME...
                                                     writes NAME... (relative to BASE) in
                                                     FORMAT: pax, ustar or gnu
"""
import json
import os
import sys
import tarfile

FORMATS = {"pax": tarfile.PAX_FORMAT, "ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT}


def list_members(path: str) -> None:
    with tarfile.open(path, "r:") as archive:
        for member in archive:
            print(json.dumps({
                "name": member.name, "type": member.type.decode("latin-1"), "size": member.size,
                "mode": member.mode, "mtime": member.mtime, "uid": member.uid, "gid": member.gid,
                "uname": member.uname, "gname": member.gname, "pax": member.pax_headers,
            }))


def extract(path: str, directory: str) -> None:
    with tarfile.open(path, "r:") as archive:
        # The "data" filter (Python ≥ 3.12, backported to some 3.11 builds) refuses links and
        # absolute paths; our archives have none, so it must accept them as they are.
        if hasattr(tarfile, "data_filter"):
            archive.extractall(directory, filter="data")
        else:
            archive.extractall(directory)


def create(path: str, format_name: str, base: str, names: list) -> None:
    with tarfile.open(path, "w:", format=FORMATS[format_name]) as archive:
        for name in names:
            archive.add(os.path.join(base, name), arcname=name, recursive=False)


def main() -> int:
    command = sys.argv[1]
    if command == "list":
        list_members(sys.argv[2])
    elif command == "extract":
        extract(sys.argv[3], sys.argv[2])
    else:
        create(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
