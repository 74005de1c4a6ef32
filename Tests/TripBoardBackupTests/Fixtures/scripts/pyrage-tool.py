"""Encrypts or decrypts a file with a passphrase using PyPI's `pyrage` (bindings to rage, the
Rust age implementation): an age implementation independent of both TripBoard and Go's age.

    AGE_PASSPHRASE=... python3 pyrage-tool.py encrypt|decrypt INPUT OUTPUT

Exit status 65 when decryption fails (the message on stderr), 0 on success.
"""
import os
import sys

import pyrage


def main() -> int:
    mode, source, destination = sys.argv[1:4]
    passphrase = os.environ["AGE_PASSPHRASE"]
    with open(source, "rb") as file:
        data = file.read()
    if mode == "encrypt":
        result = pyrage.passphrase.encrypt(data, passphrase)
    else:
        try:
            result = pyrage.passphrase.decrypt(data, passphrase)
        except pyrage.DecryptError as error:
            print(f"pyrage: {error}", file=sys.stderr)
            return 65
    with open(destination, "wb") as file:
        file.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
