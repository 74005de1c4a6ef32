"""Runs a command on a pseudo-terminal and answers every passphrase prompt it prints.

`age` reads a passphrase only from a terminal (/dev/tty), never from stdin, so tests drive it
through a pty:

    AGE_PASSPHRASE=... python3 age-pty.py /usr/bin/age -d -o OUT IN
    AGE_PASSPHRASE=... python3 age-pty.py /bin/sh -c 'age -d IN | tar -x -C DIR'

What the command prints on the terminal (its prompts, its errors) is copied to our stderr; our
exit status is the command's (128 + N when signal N ended it). Keep binary output off the
terminal (use `-o FILE` or a pipe): a pty translates line ends.
"""
import os
import pty
import sys


def main() -> int:
    passphrase = os.environ["AGE_PASSPHRASE"].encode()
    pid, terminal = pty.fork()
    if pid == 0:
        os.execv(sys.argv[1], sys.argv[1:])
    seen = b""
    answered = 0
    while True:
        try:
            data = os.read(terminal, 4096)
        except OSError:  # EIO once the command has closed the terminal
            break
        if not data:
            break
        sys.stderr.buffer.write(data)
        seen += data
        # One answer per prompt: "Enter passphrase…" and, when encrypting, "Confirm passphrase".
        # age does not flush pending input when it turns echo off, so an early answer waits.
        while seen.lower().count(b"passphrase") > answered:
            os.write(terminal, passphrase + b"\n")
            answered += 1
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
