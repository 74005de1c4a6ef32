#!/usr/bin/python3
"""Writes a ticket PDF: Helvetica text lines on page 1, a correct cross-reference table, and
optionally an unreferenced padding stream to reach a given size (for the import benchmarks).

    tools/lib/ticket_pdf.py OUT.pdf [--pages N] [--size BYTES] [--line TEXT]...
"""
import argparse


def ticket_pdf(lines, pages=1, size=0):
    def escape(text):
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               ("<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join("%d 0 R" % (3 + 2 * i) for i in range(pages)), pages)).encode()]
    font = 3 + 2 * pages
    for page in range(pages):
        objects.append(("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> "
                        "/Contents %d 0 R >>" % (font, 4 + 2 * page)).encode())
        shown = lines if page == 0 else ["Page %d of %d" % (page + 1, pages)]
        text = ("BT /F1 14 Tf 50 780 Td 20 TL " + " ".join("(%s) '" % escape(line) for line in shown) + " ET").encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    padding = size - len(out) - 200 - 20 * (len(objects) + 2)
    if padding > 0:
        offsets.append(len(out))
        out += b"%d 0 obj\n<< /Length %d >>\nstream\n" % (len(offsets), padding)
        chunk = bytes(range(256)) * 4096
        remaining = padding
        while remaining > 0:
            out += chunk[:remaining]
            remaining -= len(chunk)
        out += b"\nendstream\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets) + 1, xref)
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--pages", type=int, default=1)
    parser.add_argument("--size", type=int, default=0, help="pad the file to about this many bytes")
    parser.add_argument("--line", action="append", default=[], help="a line of text on page 1")
    args = parser.parse_args()
    with open(args.output, "wb") as handle:
        handle.write(ticket_pdf(args.line or ["Ticket"], args.pages, args.size))


if __name__ == "__main__":
    main()
