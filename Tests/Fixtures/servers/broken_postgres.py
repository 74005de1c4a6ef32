#!/usr/bin/env python3
"""A PostgreSQL server that breaks the protocol, for SyncServerLimitsTests: it speaks the v3
startup on a Unix socket (DIR/.s.PGSQL.PORT), answers simple queries, and answers the first
extended-protocol query with MODE:

  endless  a row description and then data rows for ever (a result with no end);
  huge     one data row whose header claims almost 2 GiB (a row no client can hold).

Usage: broken_postgres.py DIR PORT MODE. Serves until killed."""
import os
import socket
import struct
import sys
import threading


def message(kind, payload=b""):
    return kind + struct.pack("!I", len(payload) + 4) + payload


def read_exact(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def serve(conn, mode):
    try:
        while True:  # SSL or GSS encryption requests are declined, then the startup comes
            length, code = struct.unpack("!II", read_exact(conn, 8))
            read_exact(conn, length - 8)
            if code in (80877103, 80877104):
                conn.sendall(b"N")
                continue
            break
        reply = message(b"R", struct.pack("!I", 0))
        for key, value in [(b"server_version", b"15.0"), (b"client_encoding", b"UTF8"),
                           (b"standard_conforming_strings", b"on"), (b"integer_datetimes", b"on")]:
            reply += message(b"S", key + b"\0" + value + b"\0")
        reply += message(b"K", struct.pack("!II", 1, 2)) + message(b"Z", b"I")
        conn.sendall(reply)
        while True:
            kind = read_exact(conn, 1)
            (length,) = struct.unpack("!I", read_exact(conn, 4))
            body = read_exact(conn, length - 4)
            if kind == b"Q":
                statements = [part for part in body.rstrip(b"\0").split(b";") if part.strip()]
                conn.sendall(b"".join(message(b"C", b"SET\0") for _ in statements) + message(b"Z", b"I"))
            elif kind == b"S":
                column = b"answer\0" + struct.pack("!IhIhih", 0, 0, 25, -1, -1, 0)
                conn.sendall(message(b"1") + message(b"2") + message(b"T", struct.pack("!h", 1) + column))
                if mode == "huge":
                    conn.sendall(b"D" + struct.pack("!I", 0x7FFFFFF0) + struct.pack("!h", 1) + struct.pack("!I", 0x7FFFFFE0))
                    conn.sendall(b"x" * (1 << 20))
                    threading.Event().wait(60)
                    return
                row = message(b"D", struct.pack("!h", 1) + struct.pack("!I", 1000) + b"y" * 1000)
                burst = row * 256
                while True:
                    conn.sendall(burst)
            elif kind == b"X":
                return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return
    finally:
        conn.close()


def main():
    directory, port, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    path = os.path.join(directory, ".s.PGSQL." + port)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    os.rename(path + ".tmp", path)
    listener.listen(8)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, mode), daemon=True).start()


if __name__ == "__main__":
    main()
