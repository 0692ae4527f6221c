"""How a row reads in a table: one definition of each displayed column, cells as text (never
markup: the writers escape them)."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeVar

from accelbench.errors import UserError, did_you_mean, visible
from accelbench.results.console import (
    distinguishing,
    format_pct,
    format_seconds,
    op_name,
    shape_of,
    significant,
)
from accelbench.results.records import Row, quality_db, speedup

Cell = Callable[[Row, str], str]  # (row, the parameters that tell it apart) -> text

HASH = re.compile(r"\b(?=[0-9a-z]*\d)[0-9a-z]{16,}\b")  # compiled-graph and kernel hashes
KERNEL_CHARS = 48


def readable_kernel(name: str) -> str:
    name = re.sub(r"<[^<>]*>", "<…>", HASH.sub("…", name))
    return name if len(name) <= KERNEL_CHARS else name[: KERNEL_CHARS - 1] + "…"


def top_kernels(row: Row) -> str:
    kernels = row.series.kernels
    if kernels:
        return "; ".join(f"{readable_kernel(k.name)} {100 * k.share:.0f}%" for k in kernels[:3])
    return readable_kernel(row.timing.top_kernels or row.timing.dominant_kernel or "")


AUDIT_MARK = "!"
AUDITED = f"{AUDIT_MARK}: the audit found something in its timed windows (the audit column)"


def audit_mark(row: Row) -> str:
    """The one marker of a row whose audit has findings, after its time wherever a time is shown."""
    return f" {AUDIT_MARK}" if row.timing.audit else ""


def peak_pct(row: Row) -> float | None:
    roof = row.roofline
    if roof.roofline_bound_by == "compute":
        return roof.compute_of_peak_pct
    return roof.bandwidth_of_peak_pct


def noise(row: Row) -> str:
    ratio = row.stats.iqr_over_median_ratio
    return "" if ratio is None else f"{100 * ratio:.0f}%" + " noisy" * bool(row.stats.noisy)


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
    key: str  # what --columns and --sort call it (and the heading, unless `title` says otherwise)
    cell: Cell
    numeric: bool = False
    always: bool = False  # shown even when empty, and first in any chosen set: what a row is
    identifies: bool = False  # tells rows apart: first in any chosen set, never cut or folded first
    value: Callable[[Row], Any] | None = None  # what --sort orders by and JSON holds (else text)
    default: bool = True  # in the tables unless --columns says otherwise
    title: str = ""
    field: str = ""  # its name in CSV and JSON output: a number's ends in its unit (time_median_s)
    fields: Callable[[Row], dict[str, Any]] | None = None  # several results columns in CSV and JSON

    @property
    def heading(self) -> str:
        return self.title or self.key


def _figure(
    key: str,
    get: str | Callable[[Row], float | None],
    field: str = "",
    title: str = "",
    text: Callable[[float | None], str] = significant,
    default: bool = True,
) -> Column:
    """A number's column; `get` as a path (`stats.sample_count`) also names its CSV and JSON field."""
    if isinstance(get, str):
        field, get = field or get.rpartition(".")[2], attrgetter(get)
    return Column(
        key, lambda r, p: text(get(r)), True, value=get, default=default, title=title, field=field
    )


def _stat(key: str) -> Column:
    """A statistic of the headline samples (TimeStats' `time_KEY_s`), shown on request (--columns)."""
    return _figure(key, f"stats.time_{key}_s", text=format_seconds, default=False)


COLUMNS: tuple[Column, ...] = (
    # several runs or files in one table: which one (empty, so left out, for a single source)
    Column("source", lambda r, p: r.source, identifies=True),
    Column("op", lambda r, p: op_name(r), always=True, identifies=True),
    Column(
        "backend",
        lambda r, p: backend(r),
        always=True,
        identifies=True,
        fields=lambda r: {
            "backend": r.identity.backend,
            "implementation": r.identity.implementation,
        },
    ),
    Column("shape", lambda r, p: shape_of(r), identifies=True),
    Column("params", lambda r, p: p, identifies=True),
    Column("status", lambda r, p: status(r), always=True),
    Column(
        "median",
        lambda r, p: format_seconds(r.median_s) + audit_mark(r),
        True,
        value=lambda r: r.median_s,
        field="time_median_s",
    ),
    *map(_stat, ("min", "mean", "std", "p10", "p90", "max")),
    Column("spread", lambda r, p: spread(r), True, title="p10 – p90", field="p10_to_p90"),
    _figure("samples", "stats.sample_count", text=lambda n: str(n or ""), default=False),
    Column(
        "noise",
        lambda r, p: noise(r),
        True,
        value=lambda r: r.stats.iqr_over_median_ratio,
        field="iqr_over_median_ratio",
    ),
    _figure("tflops", "derived.tflop_per_s", title="TFLOP/s"),
    _figure("gbps", "derived.gb_per_s", title="GB/s"),
    _figure("peak", peak_pct, "of_peak_pct", "% peak", format_pct),
    _figure("speedup", speedup, "speedup_ratio"),
    _figure("sqnr", quality_db, "sqnr_db", "SQNR dB"),
    Column("timing", lambda r, p: r.timing.timing_source or "", field="timing_source"),
    Column("audit", lambda r, p: r.timing.audit or ""),
    Column("kernels", lambda r, p: top_kernels(r), title="top kernels"),
)
BY_KEY = {c.key: c for c in COLUMNS}
REPORT = tuple(c for c in COLUMNS if c.default)
CONSOLE = tuple(c for c in REPORT if c.key not in ("spread", "kernels"))


def choose(keys: Sequence[str], defaults: Sequence[Column]) -> tuple[Column, ...]:
    """`--columns a,b,c`: those columns after what tells rows apart and their status."""
    if not keys:
        return tuple(defaults)
    for key in keys:
        if key not in BY_KEY:
            raise UserError(
                f"unknown column '{key}' (columns: {', '.join(BY_KEY)})",
                key="--columns",
                suggestion=did_you_mean(key, BY_KEY),
            )
    head = [c.key for c in COLUMNS if (c.always or c.identifies) and c.key not in keys]
    return tuple(BY_KEY[k] for k in dict.fromkeys([*head, *keys]))


T = TypeVar("T")


def ordered(
    items: Sequence[T], sort: str | None, values: Mapping[str, Callable[[T], Any]]
) -> list[T]:
    """`--sort NAME` (`--sort=-NAME`: descending) by one of `values`; items without one go last."""
    if not sort:
        return list(items)
    name = sort.removeprefix("-")
    if name not in values:
        raise UserError(
            f"unknown sort key '{name}' (keys: {', '.join(values)})",
            key="--sort",
            suggestion=did_you_mean(name, values),
        )
    value = values[name]
    known = [item for item in items if value(item) not in (None, "")]
    rest = [item for item in items if value(item) in (None, "")]
    return sorted(known, key=value, reverse=sort.startswith("-")) + rest


def sort_rows(rows: Sequence[Row], key: str | None) -> list[Row]:
    if not key:
        return list(rows)
    labels = dict(zip(map(id, rows), distinguishing(rows), strict=True))

    def by(column: Column) -> Callable[[Row], Any]:
        return column.value or (lambda r: column.cell(r, labels[id(r)]))

    return ordered(rows, key, {c.key: by(c) for c in COLUMNS})


def cells(
    rows: Sequence[Row], columns: Sequence[Column] = REPORT
) -> tuple[list[Column], list[list[str]]]:
    params = distinguishing(rows)
    grid = [[c.cell(r, p) for c in columns] for r, p in zip(rows, params, strict=True)]
    kept = [i for i, c in enumerate(columns) if c.always or any(line[i] for line in grid)]
    return [columns[i] for i in kept], [[line[i] for i in kept] for line in grid]


def as_text(rows: Sequence[Row], columns: Sequence[Column], fmt: str) -> str:
    """`--format csv|json|markdown` (CSV and JSON hold numbers, under the results files' names)."""
    params = distinguishing(rows)
    chosen, grid = cells(rows, columns)
    if fmt in ("json", "csv"):
        records = [
            {k: v for c in chosen for k, v in _machine(c, r, p).items()}
            for r, p in zip(rows, params, strict=True)
        ]
        if fmt == "json":
            return json.dumps(records, indent=2, default=str) + "\n"
        return csv_text([list(records[0]) if records else [], *(r.values() for r in records)])
    rule = "|" + "|".join("---:" if c.numeric else "---" for c in chosen) + "|\n"
    return markdown_lines([[c.heading for c in chosen]]) + rule + markdown_lines(grid)


def csv_text(lines: Iterable[Iterable[Any]]) -> str:
    """CSV of these lines, every text cell `visible`."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        [visible(c) if isinstance(c, str) else c for c in line] for line in lines
    )
    return buffer.getvalue()


def _machine(column: Column, row: Row, params: str) -> dict[str, Any]:
    if column.fields:
        return column.fields(row)
    value = column.value(row) if column.value else column.cell(row, params)
    return {column.field or column.key: value}


MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|#&])")


def escaped(frame: Any, escape: Callable[[str], str]) -> Any:
    """A pandas DataFrame with every heading and text cell passed through `escape`."""
    import pandas as pd

    return frame.rename(columns=lambda c: escape(str(c))).map(
        lambda v: v if pd.api.types.is_number(v) else escape(str(v))
    )


def html_safe(text: str) -> str:
    """Text from a file as HTML text: no markup, no control character obeyed."""
    return html.escape(visible(str(text)))


def markdown_lines(lines: Sequence[Sequence[str]]) -> str:
    return "".join("| " + " | ".join(markdown_safe(c) for c in line) + " |\n" for line in lines)


def markdown_safe(text: str) -> str:
    """A cell that stays one cell: one line, Markdown and HTML characters escaped."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", visible(" ".join(str(text).split())))
