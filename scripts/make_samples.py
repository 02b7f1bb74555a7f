"""Regenerate the binary sample files: ``release-notes.pdf`` and ``orders.xlsx``.

A developer tool, run once; its output is committed. It needs ``fpdf2`` (a dev dependency, not
needed at run time) and ``openpyxl``::

    .venv/bin/python scripts/make_samples.py

Every fact here belongs to the fictional company Northwind Robotics and agrees with
``handbook.md`` and ``产品手册.md``, so questions can be asked across files.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "samples"

RELEASE_NOTES: list[tuple[int, str, list[str]]] = [
    (
        0,
        "1 HX-200 Firmware 4.2",
        [
            "Firmware 4.2 for the HX-200 warehouse robot was released on 14 March 2025. It is a free "
            "upgrade for every HX-200 under warranty or extended warranty.",
        ],
    ),
    (
        1,
        "1.1 New features",
        [
            "Obstacle-aware rerouting: when an aisle stays blocked for more than 20 seconds, the robot "
            "plans a new route around the blockage instead of waiting for the aisle to clear.",
            "Longer runtime: smarter idle power management extends the runtime on a full battery from "
            "10 hours to 11 hours. Charging time is unchanged at 90 minutes.",
            "Faster map synchronisation: robots now share map changes with Fleet Manager every 30 "
            "seconds instead of every 120 seconds.",
        ],
    ),
    (
        1,
        "1.2 Fixed issues",
        [
            "Fixed a fault where a robot could stop 3 centimetres short of its charging dock and report "
            "a docking error. Fixed a rare case where the safety lidar reported a false obstacle in "
            "bright sunlight near loading doors.",
        ],
    ),
    (
        1,
        "1.3 Upgrade notes",
        [
            "Firmware 4.2 requires Fleet Manager 2.5 or later; upgrade Fleet Manager first. The "
            "upgrade takes about 15 minutes per robot, and the robot must be on its dock with at least "
            "40 percent battery. Robots can be upgraded in batches of up to 10.",
        ],
    ),
    (
        0,
        "2 AR-7 Controller 3.0",
        [
            "Controller 3.0 for the AR-7 collaborative arm was released on 2 April 2025 and replaces "
            "controller 2.8.",
            "Teach by demonstration now records up to 500 waypoints per program, up from 200. A new "
            "collision sensitivity slider lets the operator choose between five levels; level 3 is the "
            "factory default.",
            "Known limitation: programs recorded with controller 3.0 cannot be loaded on controller "
            "2.8, so upgrade every arm of a work cell together.",
        ],
    ),
    (
        0,
        "3 Fleet Manager 2.5",
        [
            "Fleet Manager 2.5 was released on 10 March 2025. It adds role-based access control with "
            "three roles (viewer, operator and administrator) and an audit log that keeps every command "
            "sent to a robot for 400 days.",
            "Fleet Manager 2.5 is the first version that shows S3 inspection robots next to HX-200 "
            "robots on the same site map.",
        ],
    ),
    (
        0,
        "4 Known issues",
        [
            "S3 inspection robot: the thermal camera may drift by up to 2 degrees after 6 months of "
            "use. A recalibration routine will ship in S3 firmware 1.6, planned for June 2025. Until "
            "then, service engineers recalibrate the camera during the yearly maintenance visit.",
            "Report new issues to support@northwind-robotics.example; remote support answers within 4 hours.",
        ],
    ),
]

CUSTOMERS = [
    ("C-101", "Harbor Logistics", "Portugal", "Porto", "Ana Ribeiro", "Warehousing"),
    ("C-102", "Baltic Cold Storage", "Estonia", "Tallinn", "Jonas Berg", "Warehousing"),
    ("C-103", "Pearl River Electronics", "China", "Guangzhou", "Li Wei", "Manufacturing"),
    ("C-104", "Atlas Data Centers", "Spain", "Madrid", "Ana Ribeiro", "Data centres"),
    ("C-105", "Nordlys Grid", "Norway", "Bergen", "Jonas Berg", "Energy"),
    ("C-106", "Suzhou Precision Parts", "China", "Suzhou", "Li Wei", "Manufacturing"),
]
UNIT_PRICE_EUR = {"HX-200": 48_000, "AR-7": 31_500, "S3": 27_000}
ORDERS = [
    ("NW-1001", date(2025, 1, 8), "C-101", "HX-200", 6, "Delivered"),
    ("NW-1002", date(2025, 1, 15), "C-103", "AR-7", 4, "Delivered"),
    ("NW-1003", date(2025, 1, 22), "C-104", "S3", 2, "Delivered"),
    ("NW-1004", date(2025, 2, 3), "C-102", "HX-200", 10, "Delivered"),
    ("NW-1005", date(2025, 2, 11), "C-106", "AR-7", 8, "Delivered"),
    ("NW-1006", date(2025, 2, 19), "C-105", "S3", 3, "Shipped"),
    ("NW-1007", date(2025, 2, 27), "C-101", "HX-200", 4, "Shipped"),
    ("NW-1008", date(2025, 3, 5), "C-103", "AR-7", 2, "Shipped"),
    ("NW-1009", date(2025, 3, 12), "C-104", "S3", 5, "In production"),
    ("NW-1010", date(2025, 3, 20), "C-106", "HX-200", 3, "In production"),
    ("NW-1011", date(2025, 3, 27), "C-102", "AR-7", 1, "In production"),
    ("NW-1012", date(2025, 4, 2), "C-105", "S3", 2, "In production"),
    ("NW-1013", date(2025, 4, 9), "C-101", "AR-7", 2, "Confirmed"),
    ("NW-1014", date(2025, 4, 16), "C-103", "HX-200", 7, "Confirmed"),
    ("NW-1015", date(2025, 4, 23), "C-104", "HX-200", 2, "Confirmed"),
]


def make_release_notes(path: Path) -> None:
    from fpdf import FPDF

    class ReleaseNotesPdf(FPDF):
        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("Helvetica", size=8)
            self.cell(
                0, 10, f"Northwind Robotics - Release Notes Spring 2025 - page {self.page_no()}", align="C"
            )

    pdf = ReleaseNotesPdf(format="A5")  # small pages: sections run across page breaks
    pdf.set_title("Northwind Robotics Release Notes, Spring 2025")
    pdf.set_author("Northwind Robotics Product Team")
    pdf.set_creation_date(datetime(2025, 4, 30, tzinfo=UTC))  # fixed: regenerating gives the same bytes
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=18)
    pdf.multi_cell(0, 10, "Northwind Robotics Release Notes, Spring 2025", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(
        0,
        6,
        "These notes cover the software released for Northwind products between March and April 2025: "
        "HX-200 firmware, the AR-7 controller and Fleet Manager.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(4)
    for level, heading, paragraphs in RELEASE_NOTES:
        if heading.startswith("3 "):
            pdf.add_page()  # Fleet Manager starts a page, as chapters often do
        pdf.start_section(heading, level=level)
        pdf.set_font("Helvetica", style="B", size=15 if level == 0 else 12)
        pdf.multi_cell(0, 9, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        pdf.ln(2)
    pdf.output(str(path))


def make_orders(path: Path) -> None:
    from openpyxl import Workbook

    workbook = Workbook()
    orders = workbook.active
    orders.title = "Orders"
    orders.append(["OrderID", "OrderDate", "CustomerID", "Product", "Quantity", "UnitPriceEUR", "Status"])
    for order_id, day, customer, product, quantity, status in ORDERS:
        orders.append([order_id, day, customer, product, quantity, UNIT_PRICE_EUR[product], status])
    for row in orders.iter_rows(min_row=2, min_col=2, max_col=2):
        row[0].number_format = "yyyy-mm-dd"
    customers = workbook.create_sheet("Customers")
    customers.append(["CustomerID", "Company", "Country", "City", "AccountManager", "Segment"])
    for customer in CUSTOMERS:
        customers.append(list(customer))
    workbook.properties.creator = "Northwind Robotics"
    workbook.save(path)


if __name__ == "__main__":
    make_release_notes(HERE / "release-notes.pdf")
    make_orders(HERE / "orders.xlsx")
    print("wrote", HERE / "release-notes.pdf", "and", HERE / "orders.xlsx")
