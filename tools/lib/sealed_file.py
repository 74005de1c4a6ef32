"""A second implementation of TripBoard's sealed files, written from docs/security.md ("Sealed
files" and "The keybag") with PyNaCl alone: it derives a device's class keys from its device
directory (and passcode, when one is set) and opens a sealed ticket or thumbnail.

The tests use it to prove the format is what the document says, and to look inside sealed files
(the migration's checker, the canary scans); `python3 tools/lib/sealed_file.py FILE` prints a
sealed file's plaintext with the keys of the device that TRIPBOARD_DEVICE_DIR (or
$XDG_STATE_HOME/tripboard, ~/.local/state/tripboard) and TRIPBOARD_MACHINE_ID_FILE name,
reading a passcode from TRIPBOARD_PASSCODE when the keybag has one.
"""
import json
import os
import struct
import sys

from nacl import bindings, encoding, hash as nacl_hash, pwhash

MAGIC = b"TBSEALED"
VERSION = 1
CLASSES = {1: "complete", 2: "complete-unless-open", 3: "until-first-unlock", 4: "always"}
MESSAGE_BYTES = 65536
ABYTES = 17  # crypto_secretstream_xchacha20poly1305_ABYTES
STREAM_HEADER = 24
PREFIX = 26  # magic, version, class, keybag id


class SealedFileError(Exception):
    pass


def blake2b(data, size, key=b"", salt=b"", person=b""):
    return nacl_hash.blake2b(data, digest_size=size, key=key, salt=salt, person=person, encoder=encoding.RawEncoder)


def kdf(master, subkey_id, context):
    """crypto_kdf_derive_from_key: keyed BLAKE2b of nothing, the id as salt, the context as personalisation."""
    return blake2b(b"", 32, key=master, salt=struct.pack("<Q", subkey_id) + bytes(8), person=context.encode() + bytes(8))


def length_prefixed(fields):
    return b"".join(struct.pack(">I", len(field.encode())) + field.encode() for field in fields)


def device_directory(environment):
    if environment.get("TRIPBOARD_DEVICE_DIR"):
        return environment["TRIPBOARD_DEVICE_DIR"]
    if environment.get("XDG_STATE_HOME"):
        return os.path.join(environment["XDG_STATE_HOME"], "tripboard")
    return os.path.join(environment["HOME"], ".local", "state", "tripboard")


def device_key(directory, machine_id_file="/etc/machine-id"):
    """The effective device key: device.key mixed with an app-specific hash of the machine id."""
    try:
        with open(machine_id_file, "rb") as f:
            identifier = f.read(4096)
    except FileNotFoundError:
        identifier = b""
    identifier = identifier.rstrip(b"\n ")
    machine = blake2b(identifier, 32, key=b"TripBoard app-specific machine id"[:32])
    with open(os.path.join(directory, "device.key"), "rb") as f:
        file_key = f.read()
    return blake2b(b"tripboard device key v1" + machine, 32, key=file_key)


def class_keys(directory, machine_id_file="/etc/machine-id", passcode=None):
    """The keybag's id, its class keys (the complete-unless-open private key among them) and
    that class's public key."""
    key = device_key(directory, machine_id_file)
    with open(os.path.join(directory, "keybag.json")) as f:
        keybag = json.load(f)
    device_bag_key = kdf(key, 3, "TBkeybag")
    parameters = keybag.get("passcode")
    if parameters is not None:
        if passcode is None:
            raise SealedFileError("the keybag has a passcode: give it")
        derived = pwhash.argon2id.kdf(32, passcode.encode(), bytes.fromhex(parameters["salt"]),
                                      opslimit=parameters["operationsLimit"], memlimit=parameters["memoryLimit"])
        passcode_wrapping = blake2b(b"tripboard keybag passcode v1" + derived, 32, key=device_bag_key)
    keys = {}
    for entry in keybag["classes"]:
        under_passcode = parameters is not None and entry["class"] != "always"
        ad = length_prefixed(["tripboard-keybag/v1", keybag["id"], keybag["device"], entry["class"], "passcode" if under_passcode else "device"])
        wrapping = passcode_wrapping if under_passcode else device_bag_key
        keys[entry["class"]] = bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(
            bytes.fromhex(entry["wrapped"]), ad, bytes.fromhex(entry["nonce"]), wrapping)
    return keybag["id"], keys, bytes.fromhex(keybag["completeUnlessOpenPublicKey"])


def header(data):
    """(class name, keybag id in hex, length of everything before the first message)."""
    if len(data) < PREFIX or data[:8] != MAGIC:
        raise SealedFileError("not a sealed file")
    if data[8] != VERSION or data[9] not in CLASSES:
        raise SealedFileError("a sealed file of another version or class")
    protection = CLASSES[data[9]]
    block = 80 if protection == "complete-unless-open" else 72
    return protection, data[10:26].hex(), PREFIX + block + STREAM_HEADER


def open_sealed(data, keybag_id, keys, public_key):
    """The plaintext of the sealed file `data`, every message checked."""
    protection, keybag, header_length = header(data)
    if keybag != keybag_id:
        raise SealedFileError("sealed under another keybag")
    bound = data[:header_length - STREAM_HEADER]
    block = bound[PREFIX:]
    if protection == "complete-unless-open":
        file_key = bindings.crypto_box_seal_open(block, public_key, keys[protection])
    else:
        file_key = bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(block[24:], bound[:PREFIX], block[:24], keys[protection])
    state = bindings.crypto_secretstream_xchacha20poly1305_state()
    bindings.crypto_secretstream_xchacha20poly1305_init_pull(state, data[header_length - STREAM_HEADER:header_length], file_key)
    plaintext, offset, ad = [], header_length, bound
    while True:
        message = data[offset:offset + MESSAGE_BYTES + ABYTES]
        if len(message) < ABYTES:
            raise SealedFileError("cut short: no final message")
        piece, tag = bindings.crypto_secretstream_xchacha20poly1305_pull(state, message, ad)
        plaintext.append(piece)
        offset += len(message)
        ad = None
        if tag == bindings.crypto_secretstream_xchacha20poly1305_TAG_FINAL:
            if offset != len(data):
                raise SealedFileError("bytes after the final message")
            return b"".join(plaintext)
        if len(piece) != MESSAGE_BYTES:
            raise SealedFileError("a short message before the last")


def sealed_length(plaintext_length, protection):
    block = 80 if protection == "complete-unless-open" else 72
    return PREFIX + block + STREAM_HEADER + plaintext_length + ABYTES * (plaintext_length // MESSAGE_BYTES + 1)


def main(arguments):
    if len(arguments) != 1:
        print("usage: sealed_file.py FILE", file=sys.stderr)
        return 64
    environment = os.environ
    keybag_id, keys, public_key = class_keys(device_directory(environment),
                                             environment.get("TRIPBOARD_MACHINE_ID_FILE") or "/etc/machine-id",
                                             environment.get("TRIPBOARD_PASSCODE"))
    with open(arguments[0], "rb") as f:
        data = f.read()
    sys.stdout.buffer.write(open_sealed(data, keybag_id, keys, public_key))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
