#!/usr/bin/python3
"""Writes Sources/TripBoardCommandLine/EastAsianWidth.swift: the ranges of Unicode scalars whose
East Asian Width is Wide or Fullwidth (UAX #11), which a terminal shows two columns wide, from
Python's own `unicodedata` (the Unicode version is named in the file). Tables use them to align
CJK text (`TableRow`).

    tools/lib/east_asian_width.py          (rewrites the file; run after a Python upgrade)
"""
import os
import sys
import unicodedata

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Sources", "TripBoardCommandLine", "EastAsianWidth.swift")


def ranges():
    found, start, previous = [], None, None
    for code in range(0x110000):
        wide = unicodedata.east_asian_width(chr(code)) in ("W", "F")
        if wide and start is None:
            start = code
        if not wide and start is not None:
            found.append((start, code - 1))
            start = None
    if start is not None:
        found.append((start, 0x10FFFF))
    return found


def main():
    lines = [f"        (0x{lo:05X}, 0x{hi:05X})," for lo, hi in ranges()]
    text = f"""// Written by tools/lib/east_asian_width.py from Unicode {unicodedata.unidata_version}'s East Asian Width
// property (UAX #11): do not edit by hand.

/// The scalars a terminal shows two columns wide (East Asian Width W or F), as sorted closed
/// ranges of code points.
enum EastAsianWidth {{
    static let wideRanges: [(UInt32, UInt32)] = [
{chr(10).join(lines)}
    ]
}}
"""
    with open(OUT, "w") as out:
        out.write(text)
    print(f"wrote {os.path.relpath(OUT)} ({len(lines)} ranges)", file=sys.stderr)


if __name__ == "__main__":
    main()
