"""Regenerate ``layout-headings.pdf``: a two-page PDF with NO outline, whose headings can only be
recovered from the layout (numbered and title-case lines followed by body text). Needs fpdf2 (dev)::

    .venv/bin/python tests/data/make_test_files.py
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent

PAGES = [
    [
        ("heading", "Warehouse Pilot Report"),
        ("body", "This report summarises the twelve-week pilot of autonomous carts at the Porto warehouse."),
        ("heading", "1 Results"),
        (
            "body",
            "Pick rates rose by 18 percent in the second month. Walking distance per picker fell by a third.",
        ),
        ("heading", "1.1 Battery Use"),
        ("body", "Carts needed one charge per shift. No cart ran out of battery during a shift."),
    ],
    [
        ("heading", "2 Lessons Learned"),
        (
            "body",
            "Narrow aisles caused most of the stops. Wider aisles near the loading doors solved half of them.",
        ),
        ("body", "The pilot team recommends a full rollout in the autumn."),
    ],
]


def make_layout_pdf(path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_creation_date(datetime(2025, 1, 1, tzinfo=UTC))
    for page in PAGES:
        pdf.add_page()
        for kind, text in page:
            pdf.set_font(
                "Helvetica", style="B" if kind == "heading" else "", size=14 if kind == "heading" else 11
            )
            pdf.multi_cell(0, 8, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


if __name__ == "__main__":
    make_layout_pdf(HERE / "layout-headings.pdf")
    print("wrote", HERE / "layout-headings.pdf")
