"""Text tables for the CLI's reports: lines fit `$COLUMNS` (100 when unset), numbers
right-aligned, text clipped; shared by every view's text renderer (a view folder's
`text.py`), the doors reaching it through `api.lower`."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

DEFAULT_WIDTH = 100
MIN_WIDTH = 40
MIN_TEXT_COLUMN = 12


UNKNOWN = "-"  # a number the view does not know (null in its JSON: a `ts` of "NaN")

# The step parts' short labels: the Overview's text and the Diff's share them.
PART_LABELS = {
    "kernel": "Kernel",
    "memcpy": "Memcpy",
    "memset": "Memset",
    "communication": "Comms",  # short: the step table must fit 100 columns
    "runtime": "Runtime",
    "dataloader": "DataLoader",
    "cpu_exec": "CPU Exec",
    "other": "Other",
}


def ms(us: float | None) -> str:
    return UNKNOWN if us is None else number(us / 1000, 3)


def number(value: float | None, decimals: int) -> str:
    """`value` with `decimals` decimals; an absurd one (a damaged `dur: 1e300`) in
    exponent form, so a table cell stays a number a person can read; an unknown one
    (null, NaN) as `-`."""
    if value is None or value != value:
        return UNKNOWN
    return f"{value:.{decimals}f}" if abs(value) < 1e12 else f"{value:.3e}"


def report_width() -> int:
    """The terminal's width from `$COLUMNS`, else DEFAULT_WIDTH."""
    try:
        return max(MIN_WIDTH, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return DEFAULT_WIDTH


def is_number(cell: str) -> bool:
    try:
        float(cell.replace(" *", ""))
    except ValueError:
        return cell == UNKNOWN
    return True


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 3, 1)] + "..."


def column_widths(
    header: list[str], rows: list[list[str]], text: list[bool], width: int
) -> list[int]:
    """Natural widths, then the widest text column narrowed until the line fits."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    while excess > 0:
        shrinkable = [i for i, t in enumerate(text) if t and widths[i] > MIN_TEXT_COLUMN]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        cut = min(excess, widths[widest] - MIN_TEXT_COLUMN)
        widths[widest] -= cut
        excess -= cut
    return widths


def table(header: list[str], rows: list[list[str]], width: int = DEFAULT_WIDTH) -> str:
    """Numbers right-aligned, text left-aligned and clipped so a line fits in `width`."""
    text = [any(not is_number(r[i]) for r in rows) for i in range(len(header))]
    widths = column_widths(header, rows, text, width)

    def line(cells: list[str]) -> str:
        out = [
            clip(c, w).ljust(w) if t else clip(c, w).rjust(w)
            for c, w, t in zip(cells, widths, text)
        ]
        return "  ".join(out).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


# A column of a view's rows: its header, the row's key, and how that value prints.
Column = tuple[str, str, Callable[[Any], str]]


def rows_table(columns: Sequence[Column], rows: Sequence[Mapping[str, Any]], width: int) -> str:
    """`table` of a view's rows, one column per (header, key, format)."""
    cells = [[fmt(row[key]) for _, key, fmt in columns] for row in rows]
    return table([header for header, _, _ in columns], cells, width)


def or_dash(fmt: Callable[[Any], str]) -> Callable[[Any], str]:
    """`fmt` of a value, "-" for None (not known)."""
    return lambda v: "-" if v is None else fmt(v)


def wrap(text: str, width: int, lead: str = "  ") -> str:
    """`text` after `lead`, wrapped to `width`, continuation lines indented under it."""
    return textwrap.fill(
        text, width, initial_indent=lead, subsequent_indent=" " * len(lead), break_on_hyphens=False
    )


def short(name: str, width: int = 70) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def mib(n: float | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f}"


_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def binary_bytes(n: float | None) -> str:
    """Bytes in binary units, as the pages write them: "512 B", "1.50 MiB", "32.00 TiB"
    (a column of sizes far apart: an OOM's ask beside the device's free bytes)."""
    if n is None or n != n:
        return "-"
    value, unit = float(n), 0
    while abs(value) >= 1024 and unit < len(_BYTE_UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{value:.0f} B" if unit == 0 else f"{value:.2f} {_BYTE_UNITS[unit]}"
