#!/usr/bin/python3
"""Writes the hotel confirmations of Tests/Fixtures/hotel-confirmations/: the same texts laid out
by three PDF producers other than TripBoard's own test drawer — ReportLab and fpdf2 (PyPI) and
LibreOffice Writer (`soffice --headless --convert-to pdf`) — so the ticket reader is checked on
text as each of them makes poppler see it (line order, spacing, fonts).

    tools/lib/hotel_confirmations.py [DIR]     (default: Tests/Fixtures/hotel-confirmations)

Needs `pip install reportlab fpdf2` and Debian's libreoffice-writer-nogui; a producer that is
missing is skipped with a note. The files are checked in: the tests do not need the producers.
The expected fields of each text are in EXPECTED (the tests carry the same table).
"""
import datetime
import os
import shutil
import subprocess
import sys
import tempfile

TEXTS = {
    # Booking.com's layout: the brand, a heading, then the property's name with no lodging word.
    "booking-com": ["Booking.com", "Booking confirmation", "Pestana Palace Lisboa",
                    "Rua Jau 54, 1300-314 Lisbon, Portugal", "Confirmation number: 4012.345.678", "PIN code: 1234",
                    "Check-in    Saturday, December 12, 2026   from 15:00",
                    "Check-out   Tuesday, December 15, 2026   until 12:00",
                    "Your reservation   3 nights, 1 room", "Total price   EUR 450"],
    # A chain's layout: a loyalty brand over the hotel's name, a numeric confirmation number,
    # 12-hour times under their own labels.
    "marriott": ["Marriott Bonvoy", "Reservation Confirmation", "Lisbon Marriott Hotel",
                 "Av. dos Combatentes 45, Lisbon", "Confirmation Number: 84122394", "Arrival: Sat, Dec 12, 2026",
                 "Check-in time: 4:00 PM", "Departure: Tue, Dec 15, 2026", "Check-out time: 12:00 PM",
                 "Guest name: Ana Silva"],
    # A hostel named in a sentence, a reference with a hyphen, day-first numeric dates.
    "hostel": ["Your stay at Lost Inn Lisbon Hostel", "Reservation number: LX-7731",
               "Check-in: 12/12/2026 14:00", "Check-out: 15/12/2026 11:00", "Guests: 2"],
    # A labelled name.
    "guesthouse": ["Reservation confirmed", "Hotel: Casa do Bairro", "Booking ID: HMQ2T8XK",
                   "Check-in Sat, 12 Dec 2026 after 3:00 PM", "Checkout Tue, 15 Dec 2026 11:00 AM"],
    # The hotel's own confirmation.
    "avenida": ["Hotel Avenida Palace", "Booking confirmation", "Confirmation number: HX48K2Q",
                "Check-in: Sat 12 Dec 2026 (from 15:00)", "Check-out: Tue 15 Dec 2026 (until 12:00)"],
}

# name → (hotel name, reference, check-in date, check-in time)
EXPECTED = {
    "booking-com": ("Pestana Palace Lisboa", "4012.345.678", "2026-12-12", "15:00"),
    "marriott": ("Lisbon Marriott Hotel", "84122394", "2026-12-12", "16:00"),
    "hostel": ("Lost Inn Lisbon Hostel", "LX-7731", "2026-12-12", "14:00"),
    "guesthouse": ("Casa do Bairro", "HMQ2T8XK", "2026-12-12", "15:00"),
    "avenida": ("Hotel Avenida Palace", "HX48K2Q", "2026-12-12", "15:00"),
}


def with_reportlab(lines, path):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas
    page = canvas.Canvas(path, pagesize=A4, invariant=1)  # invariant: no timestamp or random id
    y = 800
    for line in lines:
        page.drawString(60, y, line)
        y -= 22
    page.save()


def with_fpdf2(lines, path):
    from fpdf import FPDF
    pdf = FPDF()
    pdf.set_creation_date(datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc))  # reproducible bytes
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in lines:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(path)


def libreoffice_convert(name, content, path, infilter=None):
    """Writes `content` to a file called `name` and has LibreOffice Writer convert it to the PDF `path`."""
    soffice = shutil.which("soffice")
    if soffice is None:
        raise ImportError("soffice (libreoffice-writer-nogui) is not installed")
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, name)
        with open(source, "w", encoding="utf-8") as file:
            file.write(content)
        subprocess.run([soffice, f"-env:UserInstallation=file://{work}/profile", "--headless"]
                       + ([f"--infilter={infilter}"] if infilter else [])
                       + ["--convert-to", "pdf:writer_pdf_Export", "--outdir", work, source],
                       check=True, capture_output=True, timeout=120)
        shutil.move(os.path.join(work, os.path.splitext(name)[0] + ".pdf"), path)


def with_libreoffice(lines, path):
    libreoffice_convert("confirmation.txt", "\n".join(lines) + "\n", path)


PRODUCERS = {"reportlab": with_reportlab, "fpdf2": with_fpdf2, "libreoffice": with_libreoffice}


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Tests", "Fixtures", "hotel-confirmations")
    os.makedirs(directory, exist_ok=True)
    for producer, write in PRODUCERS.items():
        try:
            for name, lines in TEXTS.items():
                write(lines, os.path.join(directory, f"{name}.{producer}.pdf"))
        except ImportError as missing:
            print(f"hotel_confirmations: skipped {producer}: {missing}", file=sys.stderr)


if __name__ == "__main__":
    main()
