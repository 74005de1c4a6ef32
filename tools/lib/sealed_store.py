"""A second implementation of TripBoard's sealed stores, written from docs/security.md ("Sealed
stores") with PyNaCl alone: it opens every page of a sealed database's main file, applies the
committed frames of its WAL (their checksums checked over the opened pages, as SQLite does), and
writes the plain SQLite database they make.

    python3 tools/lib/sealed_store.py DATABASE OUT < key

reads the page key as 96 hexadecimal digits on stdin (the 32-byte key, then the 16-byte file id);
`--device` instead opens DATABASE's key file (`DATABASE-key`, a sealed file) with the keys of the
device the environment names, through tools/lib/sealed_file.py. Exit status 65 when a page does not
open.
"""
import os
import struct
import sys

from nacl import bindings

RESERVE = 40
NONCE = 24
TAG = 16
DOMAIN = b"TBPAGE01"
WAL_HEADER = 32
FRAME_HEADER = 24


class SealedPageError(Exception):
    pass


def open_page(key, file_id, number, page):
    """The plaintext of one sealed page (its last 40 bytes as zeros)."""
    body = len(page) - RESERVE
    nonce = page[body:body + NONCE]
    tag = page[body + NONCE:]
    associated = DOMAIN + file_id + struct.pack(">I", number)
    try:
        plain = bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(page[:body] + tag, associated, nonce, key)
    except Exception as error:  # nacl.exceptions.CryptoError
        raise SealedPageError(f"page {number} does not open") from error
    return plain + bytes(RESERVE)


def wal_checksum(data, s0, s1, big_endian):
    words = struct.unpack((">" if big_endian else "<") + "%dI" % (len(data) // 4), data)
    for index in range(0, len(words), 2):
        s0 = (s0 + words[index] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[index + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def committed_frames(key, file_id, wal, page_size):
    """{page number: plaintext} of the WAL's committed frames, and the database size they leave
    (in pages; None when the WAL commits nothing)."""
    if len(wal) < WAL_HEADER:
        return {}, None
    magic, _version, size, _sequence, salt1, salt2, check1, check2 = struct.unpack(">8I", wal[:WAL_HEADER])
    if magic not in (0x377F0682, 0x377F0683) or size != page_size:
        return {}, None
    big_endian = magic & 1
    s0, s1 = wal_checksum(wal[:24], 0, 0, big_endian)
    if (s0, s1) != (check1, check2):
        return {}, None
    pages, pending, database_pages = {}, {}, None
    offset = WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(wal):
        number, commit, frame_salt1, frame_salt2, frame1, frame2 = struct.unpack(">6I", wal[offset:offset + FRAME_HEADER])
        if (frame_salt1, frame_salt2) != (salt1, salt2) or number == 0:
            break
        try:
            plain = open_page(key, file_id, number, wal[offset + FRAME_HEADER:offset + FRAME_HEADER + page_size])
        except SealedPageError:
            break  # a torn frame: the log ends before it, as SQLite's recovery says
        # SQLite checksums the page as it handed it to the VFS: its reserved bytes are zeros
        # (SQLite never writes there, and the VFS reads them back as zeros).
        s0, s1 = wal_checksum(wal[offset:offset + 8] + plain, s0, s1, big_endian)
        if (s0, s1) != (frame1, frame2):
            break
        pending[number] = plain
        if commit:
            pages.update(pending)
            pending = {}
            database_pages = commit
        offset += FRAME_HEADER + page_size
    return pages, database_pages


def plain_database(key, file_id, main, wal, page_size=4096):
    pages = [open_page(key, file_id, index + 1, main[index * page_size:(index + 1) * page_size])
             for index in range(len(main) // page_size)]
    frames, database_pages = committed_frames(key, file_id, wal, page_size)
    count = database_pages if database_pages is not None else len(pages)
    result = bytearray()
    for number in range(1, count + 1):
        result += frames.get(number) or (pages[number - 1] if number <= len(pages) else bytes(page_size))
    if len(result) >= 100:
        result[18] = result[19] = 1  # a rollback-journal file: opening it makes no -wal
    return bytes(result)


def page_key(database, class_keys):
    """DATABASE's page key and file id, from its key file (`DATABASE-key`, a sealed file) opened
    with `class_keys` (sealed_file.class_keys's answer)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sealed_file  # noqa: E402 (beside this file)
    keybag_id, keys, public_key = class_keys
    with open(database + "-key", "rb") as handle:
        plain = sealed_file.open_sealed(handle.read(), keybag_id, keys, public_key)
    return plain[:32], plain[32:48]


def plain_copy(database, out, class_keys):
    """Writes DATABASE (sealed: its key file beside it; in the clear otherwise, copied with its
    WAL applied the same way) to OUT as a plain SQLite file. For tests and tools that read a
    container's store with Python's sqlite3."""
    with open(database, "rb") as handle:
        main_bytes = handle.read()
    wal_path = database + "-wal"
    wal = open(wal_path, "rb").read() if os.path.exists(wal_path) else b""
    if os.path.exists(database + "-key"):
        key, file_id = page_key(database, class_keys)
        plain = plain_database(key, file_id, main_bytes, wal)
    else:
        plain = main_bytes
    with open(out, "wb") as handle:
        handle.write(plain)
    if not os.path.exists(database + "-key") and wal:
        with open(out + "-wal", "wb") as handle:
            handle.write(wal)


def read_key_from_device(database):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sealed_file  # noqa: E402 (beside this file)
    environment = os.environ
    class_keys = sealed_file.class_keys(sealed_file.device_directory(environment),
                                        environment.get("TRIPBOARD_MACHINE_ID_FILE") or "/etc/machine-id",
                                        environment.get("TRIPBOARD_PASSCODE"))
    return page_key(database, class_keys)


def main(arguments):
    if arguments[:1] == ["--device"]:
        database, out = arguments[1:3]
        key, file_id = read_key_from_device(database)
    else:
        database, out = arguments[:2]
        text = sys.stdin.read().strip()
        key, file_id = bytes.fromhex(text[:64]), bytes.fromhex(text[64:96])
    with open(database, "rb") as handle:
        main_bytes = handle.read()
    wal_path = database + "-wal"
    wal = open(wal_path, "rb").read() if os.path.exists(wal_path) else b""
    try:
        plain = plain_database(key, file_id, main_bytes, wal)
    except SealedPageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 65
    with open(out, "wb") as handle:
        handle.write(plain)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
