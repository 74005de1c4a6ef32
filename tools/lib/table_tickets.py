#!/usr/bin/python3
"""Writes the tickets of Tests/Fixtures/table-tickets/: journeys printed as two-column tables
(a label in one cell, its value in the cell beside it), hotel confirmations whose address has no
label, and an Amtrak e-ticket — in English, German, French, Spanish, Portuguese and Greek place
names — laid out by three PDF producers: ReportLab's Table, fpdf2's cells and LibreOffice Writer
(an HTML table through `soffice --headless --convert-to pdf`).

    tools/lib/table_tickets.py [DIR]     (default: Tests/Fixtures/table-tickets)

Needs `pip install reportlab fpdf2` and Debian's libreoffice-writer-nogui; a producer that is
missing is skipped with a note. The files are checked in: the tests do not need the producers.
What each must give is in EXPECTED (`TableTicketTests` carries the same table).
"""
import datetime
import html
import os
import sys

from hotel_confirmations import libreoffice_convert

# name → (lines above the table, table rows (label, value), lines below)
TICKETS = {
    # TAP's e-ticket receipt: every field in the cell beside its label.
    "flight": (["TAP Air Portugal", "Electronic ticket receipt", "Passenger: SILVA/ANA MS"],
               [("Booking reference", "X7K2QP"), ("Flight", "TP 1351"),
                ("Departure", "12 DEC 2026 07:35 Lisbon (LIS)"), ("Arrival", "13 DEC 2026 12:20 Tokyo (HND)"),
                ("Seat", "14C")], []),
    # Deutsche Bahn, in German.
    "zug": (["Deutsche Bahn", "Ihre Fahrkarte"],
            [("Auftragsnummer", "KX4T9P"), ("Zug", "ICE 123"), ("Abfahrt", "14.12.2026 09:13 Köln Hbf"),
             ("Ankunft", "14.12.2026 10:18 Frankfurt(Main)Hbf"), ("Sitzplatz", "45")], []),
    # SNCF, in French.
    "train": (["SNCF Voyageurs", "Votre billet"],
              [("Référence de dossier", "QBX7TR"), ("Train", "TGV INOUI 6201"),
               ("Départ", "15/12/2026 07:43 Paris Gare de Lyon"), ("Arrivée", "15/12/2026 09:41 Lyon Part-Dieu"),
               ("Place", "061")], []),
    # Renfe, in Spanish.
    "tren": (["Renfe", "Billete electrónico"],
             [("Localizador", "MZ4K9P"), ("Tren", "AVE 3073"), ("Salida", "16/12/2026 08:30 Madrid Puerta de Atocha"),
              ("Llegada", "16/12/2026 11:02 Barcelona Sants"), ("Plaza", "8A")], []),
    # A Greek ferry from Heraklion, named in Greek.
    "ferry": (["Minoan Lines", "Boarding card"],
              [("Booking reference", "MN4471Z"), ("From", "Ηράκλειο"), ("To", "Piraeus"),
               ("Departure", "14 Dec 2026 21:00"), ("Arrival", "15 Dec 2026 06:30 Piraeus")], []),
}

# name → lines: confirmations whose address follows the hotel's name without a label, and Amtrak.
LETTERS = {
    # A German hotel's letterhead: name, street, postcode and city, country.
    "sonne": ["Buchungsbestätigung", "Hotel Sonne", "Hohe Straße 12", "50667 Köln", "Deutschland", "",
              "Buchungsnummer: HS48213X", "Anreise: 14.12.2026 15:00", "Abreise: 16.12.2026 11:00"],
    # A guesthouse in Heraklion, in English.
    "minos": ["Booking confirmation", "Casa Minos Guesthouse", "Leoforos Ikarou 5", "71306 Heraklion, Crete",
              "Greece", "", "Confirmation number: CM771204", "Check-in: 14 Dec 2026 14:00", "Check-out: 17 Dec 2026 11:00"],
    # A Portuguese pousada, in Portuguese.
    "pousada": ["Confirmação de reserva", "Pousada Alfama", "Rua de São Miguel 5", "1100-544 Lisboa", "Portugal", "",
                "Número de reserva: PA-5521", "Check-in: 14/12/2026 15:00", "Check-out: 16/12/2026 12:00"],
    # Amtrak: a route joined by a hyphen between a city and a state, a US date, a 12-hour clock.
    "amtrak": ["AMTRAK", "eTicket", "Northeast Regional 171", "NEW YORK (PENN STATION), NY - WASHINGTON, DC",
               "12/05/2026", "DEPARTS 7:05 AM", "ARRIVES 10:35 AM", "RESERVATION NUMBER 4F9A2B", "CAR 5 SEAT 12A"],
}

# name → (kind, title, startsAt, zone, endsAt, endZone, reference, seat), as shared with TZ=America/New_York.
EXPECTED = {
    "flight": ("flight", "TP 1351 LIS → HND", "2026-12-12T07:35:00+00:00", "Europe/Lisbon",
               "2026-12-13T12:20:00+09:00", "Asia/Tokyo", "X7K2QP", "14C"),
    "zug": ("train", "ICE 123 Köln Hbf → Frankfurt(Main)Hbf", "2026-12-14T09:13:00+01:00", "Europe/Berlin",
            "2026-12-14T10:18:00+01:00", None, "KX4T9P", "45"),
    "train": ("train", "TGV 6201 Paris Gare de Lyon → Lyon Part-Dieu", "2026-12-15T07:43:00+01:00", "Europe/Paris",
              "2026-12-15T09:41:00+01:00", None, "QBX7TR", "061"),
    "tren": ("train", "AVE 3073 Madrid Puerta de Atocha → Barcelona Sants", "2026-12-16T08:30:00+01:00", "Europe/Madrid",
             "2026-12-16T11:02:00+01:00", None, "MZ4K9P", "8A"),
    "ferry": ("other", "Ηράκλειο → Piraeus", "2026-12-14T21:00:00+02:00", "Europe/Athens",
              "2026-12-15T06:30:00+02:00", None, "MN4471Z", None),
    "sonne": ("hotel", "Hotel Sonne", "2026-12-14T15:00:00+01:00", "Europe/Berlin",
              "2026-12-16T11:00:00+01:00", None, "HS48213X", None),
    "minos": ("hotel", "Casa Minos Guesthouse", "2026-12-14T14:00:00+02:00", "Europe/Athens",
              "2026-12-17T11:00:00+02:00", None, "CM771204", None),
    "pousada": ("hotel", "Pousada Alfama", "2026-12-14T15:00:00+00:00", "Europe/Lisbon",
                "2026-12-16T12:00:00+00:00", None, "PA-5521", None),
    "amtrak": ("train", "Northeast Regional 171 NEW YORK (PENN STATION) → WASHINGTON", "2026-12-05T07:05:00-05:00",
               "America/New_York", "2026-12-05T10:35:00-05:00", None, "4F9A2B", "5/12A"),
}


def reportlab_ticket(above, rows, below, path):
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
    pdfmetrics.registerFont(TTFont("DejaVu", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    style = getSampleStyleSheet()["Normal"].clone("ticket", fontName="DejaVu", fontSize=11)
    story = [Paragraph(html.escape(line), style) for line in above if line] + [Spacer(1, 12)]
    if rows:
        table = Table([[Paragraph(html.escape(label), style), Paragraph(html.escape(value), style)] for label, value in rows],
                      colWidths=[150, 330])
        table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, "#888888"), ("VALIGN", (0, 0), (-1, -1), "TOP")]))
        story.append(table)
    story += [Paragraph(html.escape(line), style) for line in below if line]
    SimpleDocTemplate(path, pagesize=A4, invariant=1).build(story)


def fpdf2_ticket(above, rows, below, path):
    from fpdf import FPDF
    pdf = FPDF()
    pdf.set_creation_date(datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc))  # reproducible bytes
    pdf.add_page()
    pdf.add_font("DejaVu", fname="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    pdf.set_font("DejaVu", size=11)
    for line in above:
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    for label, value in rows:
        pdf.cell(60, 9, label, border=1)
        pdf.cell(120, 9, value, border=1, new_x="LMARGIN", new_y="NEXT")
    for line in below:
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(path)


def libreoffice_ticket(above, rows, below, path):
    paragraphs = lambda lines: "".join(f"<p>{html.escape(line)}</p>" for line in lines if line)
    table = "".join(f"<tr><td>{html.escape(label)}</td><td>{html.escape(value)}</td></tr>" for label, value in rows)
    body = paragraphs(above) + (f"<table border='1' cellpadding='4'>{table}</table>" if rows else "") + paragraphs(below)
    libreoffice_convert("ticket.html", f"<html><head><meta charset='utf-8'></head><body>{body}</body></html>", path,
                        infilter="HTML (StarWriter)")


PRODUCERS = {"reportlab": reportlab_ticket, "fpdf2": fpdf2_ticket, "libreoffice": libreoffice_ticket}


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Tests", "Fixtures", "table-tickets")
    os.makedirs(directory, exist_ok=True)
    documents = {name: ticket for name, ticket in TICKETS.items()}
    documents.update({name: (lines, [], []) for name, lines in LETTERS.items()})
    for producer, write in PRODUCERS.items():
        try:
            for name, (above, rows, below) in documents.items():
                write(above, rows, below, os.path.join(directory, f"{name}.{producer}.pdf"))
        except ImportError as missing:
            print(f"table_tickets: skipped {producer}: {missing}", file=sys.stderr)


if __name__ == "__main__":
    main()
