"""How a row reads in a table (the run's summary, the report's Markdown and HTML): one definition of
each displayed column, cells as text, and columns that are empty in every row left out first.

Cells never carry markup: the console escapes them, the HTML writer escapes them, and `markdown_safe`
keeps a cell from breaking out of its Markdown table.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from microbench.errors import UserError, did_you_mean
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
    key: str  # what --columns and --sort call it
    title: str
    cell: Cell
    numeric: bool = False
    always: bool = False  # shown even when empty: what a row is
    value: Callable[[Row], Any] | None = (
        None  # what --sort orders by and JSON holds (else the text)
    )
    default: bool = True  # in the tables unless --columns says otherwise


def _time(name: str) -> Callable[[Row], Any]:
    return lambda r: getattr(r.stats, name)


def _seconds(name: str) -> Column:
    title = name.removeprefix("time_").removesuffix("_s")
    return Column(
        title,
        title,
        lambda r, p: format_seconds(getattr(r.stats, name)),
        numeric=True,
        value=_time(name),
        default=False,
    )


COLUMNS: tuple[Column, ...] = (
    Column("op", "op", lambda r, p: r.identity.op, always=True),
    Column("backend", "backend", lambda r, p: backend(r), always=True),
    Column("shape", "shape", lambda r, p: shape_of(r)),
    Column("params", "params", lambda r, p: p),
    Column("status", "status", lambda r, p: status(r), always=True),
    Column(
        "median",
        "median",
        lambda r, p: format_seconds(r.median_s),
        numeric=True,
        value=_time("time_median_s"),
    ),
    *(_seconds(name) for name in ("time_min_s", "time_mean_s", "time_std_s")),
    *(_seconds(name) for name in ("time_p10_s", "time_p90_s", "time_max_s")),
    Column("spread", "p10 – p90", lambda r, p: spread(r), numeric=True),
    Column(
        "samples",
        "samples",
        lambda r, p: str(r.stats.sample_count or ""),
        numeric=True,
        value=_time("sample_count"),
        default=False,
    ),
    Column(
        "noise",
        "noise",
        lambda r, p: noise(r),
        numeric=True,
        value=_time("iqr_over_median_ratio"),
    ),
    Column(
        "tflops",
        "TFLOP/s",
        lambda r, p: significant(r.derived.tflop_per_s),
        numeric=True,
        value=lambda r: r.derived.tflop_per_s,
    ),
    Column(
        "gbps",
        "GB/s",
        lambda r, p: significant(r.derived.gb_per_s),
        numeric=True,
        value=lambda r: r.derived.gb_per_s,
    ),
    Column("peak", "% peak", lambda r, p: format_pct(peak_pct(r)), numeric=True, value=peak_pct),
    Column(
        "speedup",
        "speedup",
        lambda r, p: significant(getattr(r.extras, "speedup", None)),
        numeric=True,
        value=lambda r: getattr(r.extras, "speedup", None),
    ),
    Column(
        "sqnr",
        "SQNR dB",
        lambda r, p: significant(getattr(r.extras, "quality_db", None)),
        numeric=True,
        value=lambda r: getattr(r.extras, "quality_db", None),
    ),
    Column("timing", "timing", lambda r, p: r.timing.timing_source or ""),
    Column("kernels", "top kernels", lambda r, p: top_kernels(r)),
)
BY_KEY = {c.key: c for c in COLUMNS}
REPORT = tuple(c for c in COLUMNS if c.default)
CONSOLE = tuple(c for c in REPORT if c.key not in ("spread", "kernels"))
WHAT = ("op", "backend", "params")  # what tells rows apart: first in any chosen set


def choose(keys: Sequence[str], defaults: Sequence[Column]) -> tuple[Column, ...]:
    """`--columns a,b,c`: those columns after what tells rows apart and their status (the defaults
    where none are given); an unknown name is a one-line error naming the choices."""
    if not keys:
        return tuple(defaults)
    for key in keys:
        if key not in BY_KEY:
            raise UserError(
                f"unknown column '{key}' (columns: {', '.join(BY_KEY)})",
                key="--columns",
                suggestion=did_you_mean(key, BY_KEY),
            )
    head = [k for k in (*WHAT, "status") if k not in keys]
    return tuple(BY_KEY[k] for k in dict.fromkeys([*head, *keys]))


def sort_rows(rows: Sequence[Row], key: str | None) -> list[Row]:
    """`--sort NAME` (`-NAME`: descending) by a column's value; rows without one go last."""
    if not key:
        return list(rows)
    name = key.removeprefix("-")
    if name not in BY_KEY:
        raise UserError(
            f"unknown column '{name}' (columns: {', '.join(BY_KEY)})",
            key="--sort",
            suggestion=did_you_mean(name, BY_KEY),
        )
    column = BY_KEY[name]
    params = distinguishing(rows)

    def value(pair: tuple[Row, str]) -> Any:
        row, p = pair
        return column.value(row) if column.value else column.cell(row, p)

    known = [(r, p) for r, p in zip(rows, params, strict=True) if value((r, p)) not in (None, "")]
    unknown = [r for r, p in zip(rows, params, strict=True) if value((r, p)) in (None, "")]
    known.sort(key=value, reverse=key.startswith("-"))
    return [r for r, _ in known] + unknown


def cells(
    rows: Sequence[Row], columns: Sequence[Column] = REPORT
) -> tuple[list[Column], list[list[str]]]:
    """The columns that say something about these rows, and each row's cells in them."""
    params = distinguishing(rows)
    grid = [[c.cell(r, p) for c in columns] for r, p in zip(rows, params, strict=True)]
    kept = [i for i, c in enumerate(columns) if c.always or any(line[i] for line in grid)]
    return [columns[i] for i in kept], [[line[i] for i in kept] for line in grid]


FORMATS = ("table", "csv", "json", "markdown")


def as_text(rows: Sequence[Row], columns: Sequence[Column], fmt: str) -> str:
    """The rows in a machine- or page-readable format (`--format csv|json|markdown`)."""
    params = distinguishing(rows)
    if fmt == "json":
        records = [
            {c.key: (c.value(r) if c.value else c.cell(r, p)) for c in columns}
            for r, p in zip(rows, params, strict=True)
        ]
        return json.dumps(records, indent=2, default=str) + "\n"
    chosen, grid = cells(rows, columns)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([c.title for c in chosen])
        writer.writerows(grid)
        return buffer.getvalue()
    head = "| " + " | ".join(markdown_safe(c.title) for c in chosen) + " |\n"
    rule = "|" + "|".join("---:" if c.numeric else "---" for c in chosen) + "|\n"
    body = "".join("| " + " | ".join(markdown_safe(x) for x in line) + " |\n" for line in grid)
    return head + rule + body


MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def markdown_safe(text: str) -> str:
    """A cell that stays one cell: one line, Markdown and HTML characters escaped."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
