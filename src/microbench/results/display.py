"""How a row reads in a table (the run's summary, the report's Markdown and HTML): one definition of
each displayed column, cells as text, and columns that are empty in every row left out first.

Cells never carry markup: the console escapes them, the HTML writer escapes them, and `markdown_safe`
keeps a cell from breaking out of its Markdown table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from microbench.results.console import (
    distinguishing,
    format_pct,
    format_seconds,
    shape_of,
    significant,
)
from microbench.results.records import Row

Cell = Callable[[Row, str], str]  # (row, the parameters that tell it apart) -> text

HASH = re.compile(r"\b(?=[0-9a-z]*\d)[0-9a-z]{16,}\b")  # compiled-graph and kernel hashes
KERNEL_CHARS = 48


def readable_kernel(name: str) -> str:
    """A kernel or op name a person can read: hashes elided, templates shortened."""
    name = HASH.sub("…", name)
    name = re.sub(r"<[^<>]*>", "<…>", name)
    return name if len(name) <= KERNEL_CHARS else name[: KERNEL_CHARS - 1] + "…"


def top_kernels(row: Row) -> str:
    kernels = row.series.kernels
    if kernels:
        return "; ".join(
            f"{readable_kernel(str(k.get('name', '')))} {100 * float(k.get('share', 0)):.0f}%"
            for k in kernels[:3]
        )
    return readable_kernel(row.timing.top_kernels or row.timing.dominant_kernel or "")


def peak_pct(row: Row) -> float | None:
    """The share of the peak that bounds the op (compute or bandwidth)."""
    roof = row.roofline
    if roof.roofline_bound_by == "compute":
        return roof.compute_of_peak_pct
    return roof.bandwidth_of_peak_pct


def noise(row: Row) -> str:
    """IQR as a share of the median; `noisy` where it is above the threshold."""
    ratio = row.stats.iqr_over_median_ratio
    if ratio is None:
        return ""
    return f"{100 * ratio:.0f}%" + (" noisy" if row.stats.noisy else "")


def spread(row: Row) -> str:
    low, high = row.stats.time_p10_s, row.stats.time_p90_s
    return f"{format_seconds(low)} – {format_seconds(high)}" if low and high else ""


def status(row: Row) -> str:
    error = " ".join(row.identity.error.split())[:80]
    return f"{row.status.value}: {error}" if error else row.status.value


def backend(row: Row) -> str:
    impl = row.identity.implementation
    return f"{row.identity.backend}:{impl}" if impl else row.identity.backend


@dataclass(frozen=True)
class Column:
    title: str
    cell: Cell
    numeric: bool = False
    always: bool = False  # shown even when empty: what a row is


COLUMNS: tuple[Column, ...] = (
    Column("op", lambda r, p: r.identity.op, always=True),
    Column("backend", lambda r, p: backend(r), always=True),
    Column("shape", lambda r, p: shape_of(r)),
    Column("params", lambda r, p: p),
    Column("status", lambda r, p: status(r), always=True),
    Column("median", lambda r, p: format_seconds(r.median_s), numeric=True),
    Column("p10 – p90", lambda r, p: spread(r), numeric=True),
    Column("noise", lambda r, p: noise(r), numeric=True),
    Column("TFLOP/s", lambda r, p: significant(r.derived.tflop_per_s), numeric=True),
    Column("GB/s", lambda r, p: significant(r.derived.gb_per_s), numeric=True),
    Column("% peak", lambda r, p: format_pct(peak_pct(r)), numeric=True),
    Column(
        "speedup",
        lambda r, p: significant(getattr(r.extras, "speedup", None)),
        numeric=True,
    ),
    Column(
        "SQNR dB",
        lambda r, p: significant(getattr(r.extras, "quality_db", None)),
        numeric=True,
    ),
    Column("timing", lambda r, p: r.timing.timing_source or ""),
    Column("top kernels", lambda r, p: top_kernels(r)),
)
CONSOLE = tuple(c for c in COLUMNS if c.title not in ("p10 – p90", "top kernels"))


def cells(
    rows: Sequence[Row], columns: Sequence[Column] = COLUMNS
) -> tuple[list[Column], list[list[str]]]:
    """The columns that say something about these rows, and each row's cells in them."""
    params = distinguishing(rows)
    grid = [[c.cell(r, p) for c in columns] for r, p in zip(rows, params, strict=True)]
    kept = [i for i, c in enumerate(columns) if c.always or any(line[i] for line in grid)]
    return [columns[i] for i in kept], [[line[i] for i in kept] for line in grid]


MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def markdown_safe(text: str) -> str:
    """A cell that stays one cell: one line, Markdown and HTML characters escaped."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
