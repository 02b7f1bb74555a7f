"""Spreadsheets (``.xlsx`` via openpyxl, ``.csv`` via csv.Sniffer): one block per data row and one
summary block per sheet (seed 003: rows keep their key columns so other files can join on them)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from core.errors import IngestError
from tools.knowledge_base.loaders.base import Loader, SourceInfo, decode_text
from tools.knowledge_base.records import Block, LoadedDocument
from tools.knowledge_base.text_units import detect_language

# Header names that say "this column identifies the row": id, ID, order_id, OrderID, Order Id, sku, 编号.
_KEY_NAME_RE = re.compile(
    r"^(?:id|key|code|sku|uuid|guid)$|[_\s\-](?:id|key|code|sku)$|编号$|代码$", re.IGNORECASE
)
_CAMEL_ID_RE = re.compile(r"[a-z0-9](?:Id|ID|Key|Code)$")
_DETECTION_ROWS = 50  # rows inspected when looking for a unique key column
_EXAMPLE_VALUES = 3
_MAX_KEY_LENGTH = 64


@dataclass
class Sheet:
    name: str
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (1-based data row, cell texts aligned with header)


def cell_text(value: Any) -> str:
    """How a cell reads in a chunk: integral floats without ".0", midnight datetimes as dates."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0, 0) else value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    return " ".join(str(value).split())


def _unique_header(raw_header: Sequence[Any]) -> list[str]:
    names: list[str] = []
    for index, value in enumerate(raw_header, start=1):
        name = cell_text(value) or f"Column {index}"
        candidate, n = name, 2
        while candidate in names:
            candidate = f"{name} ({n})"
            n += 1
        names.append(candidate)
    return names


def build_sheet(name: str, rows: Iterable[Sequence[Any]]) -> Sheet | None:
    """The header (first non-empty row) and data rows of one sheet; None if it has no header."""
    header: list[str] | None = None
    data: list[tuple[int, list[str]]] = []
    data_row = 0
    for raw in rows:
        cells = [cell_text(v) for v in raw]
        if header is None:
            if any(cells):
                # Trailing empty header cells are formatting, not columns.
                while cells and not cells[-1]:
                    cells.pop()
                header = _unique_header(cells)
            continue
        data_row += 1  # counted even when empty, so row n stays the n-th row under the header
        if not any(cells):
            continue
        while len(cells) > len(header) and not cells[-1]:
            cells.pop()
        if len(cells) > len(header):  # a row wider than the header: name the extra columns
            header.extend(f"Column {i}" for i in range(len(header) + 1, len(cells) + 1))
        cells += [""] * (len(header) - len(cells))
        data.append((data_row, cells))
    if header is None:
        return None
    return Sheet(name=name, header=header, rows=data)


def detect_key_columns(sheet: Sheet, configured: Sequence[str]) -> list[str]:
    """Key columns of a sheet: the configured ones present in it; else columns named like identifiers
    whose values are mostly filled; else the first column whose first values are all unique and short."""
    present = [c for c in configured if c in sheet.header]
    if present:
        return present
    sample = [cells for _, cells in sheet.rows[:_DETECTION_ROWS]]
    if not sample:
        return []

    def values(index: int) -> list[str]:
        return [cells[index] if index < len(cells) else "" for cells in sample]

    named = []
    for index, column in enumerate(sheet.header):
        if _KEY_NAME_RE.search(column) or _CAMEL_ID_RE.search(column):
            filled = [v for v in values(index) if v]
            # A key that is mostly blank or very long is not a key (seed 003: validate key columns).
            if len(filled) >= 0.8 * len(sample) and all(len(v) <= _MAX_KEY_LENGTH for v in filled):
                named.append(column)
    if named:
        return named
    for index, column in enumerate(sheet.header):
        column_values = values(index)
        if (
            len(sample) >= 2
            and all(column_values)
            and len(set(column_values)) == len(column_values)
            and all(len(v) <= _MAX_KEY_LENGTH for v in column_values)
        ):
            return [column]
    return []


def sheet_blocks(sheet: Sheet, key_columns: Sequence[str]) -> list[Block]:
    """One ``table_summary`` block, then one ``table_row`` block per data row."""
    blocks = [
        Block(
            text=_summary_text(sheet, key_columns),
            kind="table_summary",
            heading_path=[sheet.name],
            sheet=sheet.name,
        )
    ]
    key_index = {c: sheet.header.index(c) for c in key_columns}
    for row, cells in sheet.rows:
        lines = [f"{column}: {value}" for column, value in zip(sheet.header, cells, strict=False) if value]
        keys = {c: cells[i] for c, i in key_index.items() if i < len(cells) and cells[i]}
        blocks.append(
            Block(
                text="\n".join(lines),
                kind="table_row",
                heading_path=[sheet.name],
                sheet=sheet.name,
                row=row,
                keys=keys,
            )
        )
    return blocks


def _summary_text(sheet: Sheet, key_columns: Sequence[str]) -> str:
    lines = [f"Sheet {sheet.name}: {len(sheet.rows)} rows; columns: {', '.join(sheet.header)}."]
    if key_columns:
        lines.append(f"Key columns: {', '.join(key_columns)}.")
    for index, column in enumerate(sheet.header):
        examples = list(
            dict.fromkeys(cells[index] for _, cells in sheet.rows if index < len(cells) and cells[index])
        )
        if examples:
            lines.append(f"{column}: e.g. {', '.join(examples[:_EXAMPLE_VALUES])}")
    return "\n".join(lines)


def _document(info: SourceInfo, sheets: list[Sheet], configured_keys: Sequence[str]) -> LoadedDocument:
    blocks: list[Block] = []
    for sheet in sheets:
        blocks.extend(sheet_blocks(sheet, detect_key_columns(sheet, configured_keys)))
    if not any(b.kind == "table_row" for b in blocks):
        raise IngestError(info.source, "spreadsheet has no data rows")
    sample = " ".join(b.text for b in blocks[:50])
    return info.document(
        title=info.path.stem,
        blocks=blocks,
        language=detect_language(sample),
        metadata={"sheets": [s.name for s in sheets]},
    )


class XlsxLoader(Loader):
    suffixes = (".xlsx",)

    def __init__(self, key_columns: Sequence[str] = ()) -> None:
        self.key_columns = list(key_columns)

    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        from openpyxl import load_workbook

        try:
            workbook = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
        except Exception as exc:  # BadZipFile, openpyxl's InvalidFileException, XML parser errors
            raise IngestError(info.source, f"unreadable spreadsheet ({type(exc).__name__}: {exc})") from exc
        sheets: list[Sheet] = []
        try:
            for worksheet in workbook.worksheets:
                sheet = build_sheet(worksheet.title, worksheet.iter_rows(values_only=True))
                if sheet is not None:
                    sheets.append(sheet)
        except Exception as exc:
            raise IngestError(info.source, f"unreadable spreadsheet ({type(exc).__name__}: {exc})") from exc
        finally:
            workbook.close()
        _warn_about_formulas_without_values(raw, sheets, info)
        return [_document(info, sheets, self.key_columns)]


def _warn_about_formulas_without_values(raw: bytes, sheets: list[Sheet], info: SourceInfo) -> None:
    """A column whose every value is empty may hold formulas whose results were never saved (files
    written by scripts or converters, not by a spreadsheet program): those values cannot be indexed,
    so say so instead of letting the column vanish. Looked up only for such columns (a second parse)."""
    empty = {
        sheet.name: [i for i in range(len(sheet.header)) if all(not cells[i] for _, cells in sheet.rows)]
        for sheet in sheets
        if sheet.rows
    }
    if not any(empty.values()):
        return
    from openpyxl import load_workbook

    workbook = load_workbook(io.BytesIO(raw), read_only=True, data_only=False)
    try:
        for sheet in sheets:
            columns = empty.get(sheet.name) or []
            if not columns:
                continue
            with_formulas = {
                i
                for row in workbook[sheet.name].iter_rows(values_only=True)
                for i in columns
                if i < len(row) and isinstance(row[i], str) and row[i].startswith("=")
            }
            for i in sorted(with_formulas):
                info.warnings.append(
                    f"{info.source}: sheet {sheet.name!r}, column {sheet.header[i]!r} holds formulas whose "
                    "results were never saved, so it was indexed empty; open and save the file in a "
                    "spreadsheet program to store them"
                )
    finally:
        workbook.close()


class CsvLoader(Loader):
    suffixes = (".csv", ".tsv")

    def __init__(self, key_columns: Sequence[str] = ()) -> None:
        self.key_columns = list(key_columns)

    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        text = decode_text(raw, info.source)
        sample = text[:20_000]
        try:
            dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel_tab if info.path.suffix.lower() == ".tsv" else csv.excel
        try:
            rows = list(csv.reader(io.StringIO(text), dialect))
        except csv.Error as exc:
            raise IngestError(info.source, f"unreadable CSV ({exc})") from exc
        sheet = build_sheet(info.path.stem, rows)
        return [_document(info, [sheet] if sheet else [], self.key_columns)]
